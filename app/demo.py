"""The ``serialpub demo``: a few generated yearly snapshots published end to end over HTTP.

Snapshots are made the SeGen way (design.md §10): each year keeps 40% of the previous one
and adds fresh transactions, so the releases overlap and serial risk has something to do.

The service runs in this process (uvicorn on a free loopback port) and the demo calls it with
the standard library: it needs nothing beyond the runtime dependencies (``pip install -e .``).

It leaves nothing behind (:func:`throwaway_database`): it runs against a database of its own,
created for the run and dropped after it, even when a step fails or the run is interrupted.
With ``DATABASE_URL`` set that is a new database on the same server (the user needs CREATE
DATABASE); without it, a second embedded PostgreSQL in a temporary directory. Its admin key is
random and lives only in that database: the live one never sees the demo's keys or series.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import secrets
import shutil
import signal
import socket
import tempfile
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import uvicorn
from psycopg import sql
from sqlalchemy.engine import make_url

from app.api.main import create_app
from app.db.embedded import libpq_url, start_embedded, stop_embedded
from app.jobs.compute import ready_to_compute
from app.settings import Settings

__all__ = ["DemoError", "generate_snapshots", "run_demo", "throwaway_database"]

#: Seconds an interrupted demo lets the request in flight finish before it stops the server.
_GRACE_S = 5

_PRIVATE = ["HIV", "cancer", "herpes"]
_OFFENCES = [
    "theft",
    "arson",
    "fraud",
    "vandal",
    "abuse",
    "DUI",
    "assault",
    "murder",
    "mansl",
    "burglary",
    "robbery",
    "forgery",
    "smuggling",
    "trespass",
    "bribery",
    "perjury",
]


def _transaction(rng: random.Random) -> list[str]:
    terms = rng.sample(_OFFENCES, rng.randint(1, 4))
    if rng.random() < 0.3:
        terms.append(rng.choice(_PRIVATE))
    return terms


def generate_snapshots(
    years: int = 3, size: int = 60, keep: float = 0.4, seed: int = 7
) -> list[list[list[str]]]:
    """``years`` corpora of ``size`` transactions; each keeps ``keep`` of the previous one."""
    rng = random.Random(seed)
    snapshots = [[_transaction(rng) for _ in range(size)]]
    for _ in range(years - 1):
        kept = rng.sample(snapshots[-1], int(size * keep))
        snapshots.append(kept + [_transaction(rng) for _ in range(size - len(kept))])
    return snapshots


class DemoError(RuntimeError):
    """A step of the demo did not answer as expected (the message has the response)."""


class _Client:
    """Just enough of an HTTP client for the demo: JSON or text bodies, JSON answers."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def _send(
        self, method: str, url: str, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, Any, float | None]:
        request = urllib.request.Request(
            self.base_url + url, data=body, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                return response.status, json.loads(response.read() or b"null"), None
        except urllib.error.HTTPError as error:
            retry_after = error.headers.get("Retry-After")
            wait = float(retry_after) if retry_after and retry_after.isdigit() else None
            return error.code, json.loads(error.read() or b"null"), wait

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        json_body: Any = None,
        content: str | None = None,
    ) -> tuple[int, Any, float | None]:
        """The status, the JSON answer and, for an error, its ``Retry-After`` seconds."""
        headers = dict(headers)
        body = None
        if json_body is not None:
            body, headers["Content-Type"] = json.dumps(json_body).encode(), "application/json"
        elif content is not None:
            body = content.encode()
        return await asyncio.to_thread(self._send, method, url, headers, body)


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: Ctrl-C and SIGTERM belong to the demo.

    uvicorn's own handlers caught them to shut the server down gracefully, and the demo went
    on with its next step (one more release posted after Ctrl-C), then ended without a word.
    Without them, the signal cancels the demo where it is and its ``finally`` blocks clean up.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def _served(settings: Settings) -> AsyncIterator[str]:
    """The service on a free loopback port, for the duration of the block; yields its URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # An interrupted demo does not wait for the request it abandoned (a publication) to end.
    server = _Server(
        uvicorn.Config(
            create_app(settings),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=_GRACE_S,
        )
    )
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if serving.done():
                serving.result()  # raises the startup error
                raise DemoError("the service stopped while starting")
            await asyncio.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
        sock.close()


@contextlib.contextmanager
def throwaway_database(settings: Settings) -> Iterator[tuple[str, str]]:
    """A database for the demo alone, gone afterwards; yields its SQLAlchemy URL and what it
    is, in words (its name, for whoever has to drop it by hand should the drop fail).

    With ``DATABASE_URL``: ``serialpub_demo_<random>`` on that server, dropped. Without: an
    embedded server in a temporary directory, stopped and deleted.
    """
    if not settings.database_url:
        directory = Path(tempfile.mkdtemp(prefix="serialpub-demo-"))
        try:
            url = start_embedded(directory, cleanup="delete")
            try:
                yield url, f"embedded server in {directory}"
            finally:
                # Now, not at exit: the library's exit hook deleted the data but left the
                # (empty) temporary directory behind, one per run.
                stop_embedded(directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        return
    server = make_url(settings.database_url)
    name = f"serialpub_demo_{secrets.token_hex(6)}"
    admin = libpq_url(server.render_as_string(hide_password=False))
    try:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        raise DemoError(
            f"the demo runs in a database of its own and could not create one "
            f"({exc}); grant CREATE DATABASE or unset DATABASE_URL to use an "
            "embedded server"
        ) from None
    try:
        yield (
            server.set(database=name).render_as_string(hide_password=False),
            f"database {name} on DATABASE_URL's server",
        )
    finally:
        try:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
        except psycopg.Error as exc:
            # Said rather than lost behind the error that ended the demo, if any.
            raise DemoError(
                f"the demo's database {name} could not be dropped ({exc}): "
                f"drop it by hand (DROP DATABASE {name})"
            ) from exc


async def run_demo(
    settings: Settings,
    say: Callable[[str], None],
    years: int = 3,
    migrate: Callable[[str], None] | None = None,
    serve: bool = False,
) -> None:
    """In a throw-away database (:func:`throwaway_database`, migrated with ``migrate``):
    create a series and keys, post ``years`` snapshots (``wait=true``), print each step and
    the series page's address. ``serve``: then keep the service up, printing keys to sign
    in to that page with, until Ctrl-C or SIGTERM.

    SIGTERM cancels it where it waits, as Ctrl-C does (:func:`_sigterm_cancels`); once its
    database is gone it raises ``SystemExit(128 + SIGTERM)``."""
    with _sigterm_cancels() as received:
        try:
            await _run_demo(settings, say, years, migrate, serve)
        except asyncio.CancelledError:
            if received:
                raise SystemExit(128 + signal.SIGTERM) from None
            raise


@contextlib.contextmanager
def _sigterm_cancels() -> Iterator[list[int]]:
    """While the block runs, SIGTERM cancels the current task (the list it yields then holds
    the signal), as :func:`asyncio.run` does for the first Ctrl-C.

    The process-wide handler (``app.cli._exit_on_sigterm``) raises ``SystemExit`` in whatever
    frame runs when the signal comes. The service runs in this event loop, and a signal that
    came while it served the demo's request was caught by uvicorn as an error of that request:
    the demo read a 500 without JSON and exited 1 with its database left to a ``finally``
    (``tests/cli/test_demo.py`` failed so once on 2026-11-27). Cancelled, the demo stops at
    its own await. Off the main thread (no signal handlers there) the block runs unchanged."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []

    def cancel() -> None:
        received.append(signal.SIGTERM)
        if task is not None:
            task.cancel()

    previous = signal.getsignal(signal.SIGTERM)
    try:
        loop.add_signal_handler(signal.SIGTERM, cancel)
    except (NotImplementedError, RuntimeError, ValueError):
        yield received
        return
    try:
        yield received
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
        if previous is not None:  # None: a handler not set from Python, left as it is
            signal.signal(signal.SIGTERM, previous)


async def _run_demo(
    settings: Settings,
    say: Callable[[str], None],
    years: int,
    migrate: Callable[[str], None] | None,
    serve: bool = False,
) -> None:
    # The compute process imports the core while the database is made and migrated, rather
    # than after, when the service's start waits for it (app.jobs.compute.start_server).
    warming = asyncio.ensure_future(ready_to_compute())
    await asyncio.sleep(0)  # its thread started, before the database's creation blocks
    try:
        await _demo_in_database(settings, say, years, migrate, serve)
    finally:
        warming.cancel()  # its threads end by themselves, once the server is up
        await asyncio.wait([warming])
        if not warming.cancelled():
            warming.exception()  # the service's start raised it already, if any


async def _demo_in_database(
    settings: Settings,
    say: Callable[[str], None],
    years: int,
    migrate: Callable[[str], None] | None,
    serve: bool,
) -> None:
    with throwaway_database(settings) as (url, where):
        say(f"(in a throw-away {where}, removed at the end: nothing the demo creates outlives it)")
        if migrate is not None:
            await asyncio.to_thread(migrate, url)
        token = secrets.token_urlsafe(32)
        settings = settings.model_copy(
            update={"database_url": url, "admin_token": token, "in_process_worker": True}
        )
        async with _served(settings) as base_url:
            name, keys = await _steps(
                _Client(base_url), {"Authorization": f"Bearer {token}"}, say, years
            )
            page = f"{base_url}/web/series/{name}"
            if not serve:
                say(
                    f"the series at a glance: {page} (`serialpub demo --serve` keeps it up, "
                    "with keys to sign in)"
                )
                return
            say(f"the series at a glance: {page}")
            _say_keys(say, keys)
            say("serving until Ctrl-C, which ends the demo, its keys and its database")
            await asyncio.Event().wait()


def _say_keys(say: Callable[[str], None], keys: dict[str, str]) -> None:
    """The keys to sign in with, each named by its role. Printed only while they work: they
    live in the throw-away database alone, and end with the demo."""
    say("keys to sign in with there (or to send as 'Authorization: Bearer KEY'):")
    width = max(len(role) for role in _SIGN_IN)
    for role, reads in _SIGN_IN.items():
        say(f"  {role} key: {' ' * (width - len(role))}{keys[role]}  ({reads})")


#: The roles a demo user signs in as, and what each reads there.
_SIGN_IN = {
    "auditor": "releases, their serial risk, what verify concludes, the jobs",
    "analyst": "the public releases and a private term's counts",
    "publisher": "the series' releases and the jobs its key posted",
}


#: Tries of a request the service answered 503 (its database restarting): the demo's posts
#: carry an Idempotency-Key, so a retry after a lost answer returns the same release.
_TRIES = 5
#: Seconds between two tries when the 503 does not say (``Retry-After``).
_RETRY_S = 5.0


async def _call(
    client: _Client,
    method: str,
    url: str,
    say: Callable[[str], None],
    headers: dict[str, str],
    json: Any = None,
    content: str | None = None,
) -> Any:
    for attempt in range(1, _TRIES + 1):
        status, body, retry_after = await client.request(
            method, url, headers=headers, json_body=json, content=content
        )
        say(f"{method} {url} -> {status}")
        repeatable = method == "GET" or "Idempotency-Key" in headers
        if status != 503 or not repeatable or attempt == _TRIES:
            break
        wait = _RETRY_S if retry_after is None else retry_after
        say(f"  the service's database is unavailable; trying again in {wait:g} s")
        await asyncio.sleep(wait)
    if status >= 400:
        raise DemoError(f"{method} {url} answered {status}: {body}")
    return body


async def _steps(
    client: _Client, admin: dict[str, str], say: Callable[[str], None], years: int
) -> tuple[str, dict[str, str]]:
    """The demo's calls; the series' name and each role's key."""
    name = f"demo-{secrets.token_hex(4)}"
    series = await _call(
        client,
        "POST",
        "/v1/series",
        say,
        headers=admin,
        json={
            "name": name,
            "method": "sanony",
            "private_terms": _PRIVATE,
            # The default guarantee (true_rows), sized for the demo's own number of years.
            "params": {"r_th": 2, "cluster_size": 4, "horizon": years},
        },
    )
    say(f"  series {name}: method {series['method']}, params {series['params']}")
    keys = {}
    for role in ("publisher", "analyst", "auditor"):
        body = {"role": role, "series": name}
        created = await _call(client, "POST", "/v1/keys", say, headers=admin, json=body)
        keys[role] = {"Authorization": f"Bearer {created['key']}"}
        # Not the key's id: a random string printed as "key ..." reads as one, and is none.
        say(f"  {role}'s key created (scoped to {name})")
    for year, corpus in enumerate(generate_snapshots(years), start=2021):
        lines = "".join(" ".join(t) + "\n" for t in corpus)
        result = await _call(
            client,
            "POST",
            f"/v1/series/{name}/releases?wait=true&label={year}",
            say,
            # One key per snapshot: a post tried again after a lost answer (a 503 while the
            # database restarts) gets the same job and release, never a second release.
            headers={
                **keys["publisher"],
                "Content-Type": "text/plain",
                "Idempotency-Key": f"{name}-{year}",
            },
            content=lines,
        )
        release, risk = result["release"], result["risk"]
        say(
            f"  release {release['release_no']} ({year}): {release['n_rows']} rows in "
            f"{release['n_clusters']} clusters, {release['counterfeits']} counterfeit rows, "
            f"max serial risk {risk['max_serial_risk']:.3f} (r_th {risk['r_th']}), guarantee "
            f"{risk['guarantee']['name']}"
        )
    say(f"  guarantee {risk['guarantee']['name']}: {risk['guarantee']['promise']}")
    risks = await _call(client, "GET", f"/v1/series/{name}/risk", say, headers=keys["auditor"])
    for r in risks:
        say(
            f"  release {r['release_no']} as of now: max serial risk {r['max_serial_risk']:.3f}, "
            f"{r['rows_over_threshold']} rows over r_th, counterfeit rate "
            f"{r['perturbation']['rate']:.4f}"
        )
    first = await _call(
        client, "GET", f"/v1/series/{name}/releases/1", say, headers=keys["analyst"]
    )
    cluster = first["clusters"][0]
    say(
        f"  analyst view of release 1, cluster {cluster['cluster_id']}: rows {cluster['rows']}, "
        f"private terms {cluster['private_terms']}"
    )
    return name, {
        role: header["Authorization"].removeprefix("Bearer ") for role, header in keys.items()
    }
