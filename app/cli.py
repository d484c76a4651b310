"""The ``serialpub`` command line (docs/settings.md, "Command line").

It calls the same services as the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Annotated

import pydantic
import sqlalchemy.exc
import typer

from app import cli_attack, cli_backup, cli_export, cli_keys, cli_trail, cli_verify
from app.cli_database import database_url as _database_url
from app.cli_database import migrate as _migrate
from app.observability import (
    configure_logging,
    end_metrics_process,
    logging_config,
    serve_worker_metrics,
    start_metrics_process,
)
from app.settings import Settings, get_settings
from app.version import serialpub_version

__all__ = ["cli", "main"]

cli = typer.Typer(
    name="serialpub",
    help="Privacy-preserving serial publication service.",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"serialpub {serialpub_version()}")
        raise typer.Exit()


@cli.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit"
        ),
    ] = False,
) -> None:
    """Privacy-preserving serial publication service."""


@cli.command()
def migrate() -> None:
    """Apply the database migrations (Alembic) up to head."""
    _migrate(_database_url())
    typer.echo("migrations applied")


@cli.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="uvicorn worker processes")] = 1,
) -> None:
    """Apply migrations, then serve the API (with an in-process job worker by default)."""
    import uvicorn

    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    _migrate(_database_url())
    with _shared_metrics(workers):
        # One formatter for uvicorn's own lines and the access log (no query strings) in
        # every worker process: JSON lines with SERIALPUB_LOG_FORMAT=json.
        uvicorn.run(
            "app.api.main:create_app",
            factory=True,
            host=host,
            port=port,
            workers=workers,
            proxy_headers=True,
            timeout_graceful_shutdown=settings.http_shutdown_grace_s,
            log_level=settings.log_level.lower(),
            log_config=logging_config(settings.log_level, settings.log_format),
        )


@contextlib.contextmanager
def _shared_metrics(workers: int) -> Iterator[None]:
    """With several worker processes, one ``PROMETHEUS_MULTIPROC_DIR`` for all of them, so
    that ``/metrics`` sums them whichever answers (app.observability): the operator's, or a
    temporary directory removed when ``serve`` ends. uvicorn spawns its workers, which read
    the variable when they import prometheus-client; one worker runs in this process, which
    imported it already and counts for itself alone, as it should."""
    if workers < 2 or os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        yield
        return
    directory = tempfile.mkdtemp(prefix="serialpub-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    try:
        yield
    finally:
        os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
        shutil.rmtree(directory, ignore_errors=True)


@cli.command()
def worker(
    concurrency: Annotated[int | None, typer.Option(min=1, help="Jobs at once")] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            help="Serve Prometheus /metrics on this port (SERIALPUB_WORKER_METRICS_PORT; "
            "address: SERIALPUB_WORKER_METRICS_HOST, default 127.0.0.1)",
        ),
    ] = None,
) -> None:
    """Run a job worker (for more machines; the API runs one in-process by default)."""
    from app.jobs.worker import run_worker
    from app.runtime import start_runtime

    _database_url()
    settings = get_settings()
    if concurrency is not None:
        settings = settings.model_copy(update={"worker_concurrency": concurrency})
    if metrics_port is not None:
        settings = settings.model_copy(update={"worker_metrics_port": metrics_port})
    configure_logging(settings.log_level, settings.log_format)
    start_metrics_process()
    metrics = None
    if settings.worker_metrics_port is not None:
        metrics = serve_worker_metrics(settings.worker_metrics_host, settings.worker_metrics_port)

    async def run() -> None:
        runtime = await start_runtime(settings)
        try:
            await run_worker(runtime, install_signal_handlers=True)
        finally:
            await runtime.db.dispose()

    try:
        asyncio.run(run())
    finally:
        if metrics is not None:
            metrics[0].shutdown()
        end_metrics_process()


@cli.command()
def healthcheck(
    worker: Annotated[
        bool,
        typer.Option(
            "--worker", help="Check a worker (SERIALPUB_WORKER_HEARTBEAT_FILE), not the API"
        ),
    ] = False,
    url: Annotated[
        str, typer.Option(help="The API's readiness URL")
    ] = "http://127.0.0.1:8000/readyz",
    max_age: Annotated[float, typer.Option(help="Worker: seconds since its last beat")] = 60.0,
) -> None:
    """Exit 0 when healthy (container health checks): the API's /readyz, or a worker's beat."""
    import time
    import urllib.error
    import urllib.request

    if worker:
        path = get_settings().worker_heartbeat_file
        if path is None:
            typer.echo(
                "error: set SERIALPUB_WORKER_HEARTBEAT_FILE (the worker touches it)", err=True
            )
            raise typer.Exit(2)
        try:
            age = time.time() - path.stat().st_mtime
        except OSError:
            typer.echo(f"unhealthy: {path} does not exist (worker not started?)", err=True)
            raise typer.Exit(1) from None
        if age > max_age:
            typer.echo(f"unhealthy: last beat {age:.0f} s ago (> {max_age:.0f} s)", err=True)
            raise typer.Exit(1)
        typer.echo(f"healthy: last beat {age:.0f} s ago")
        return
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            typer.echo(f"healthy: {url} answered {response.status}")
    except (urllib.error.URLError, OSError) as exc:
        typer.echo(f"unhealthy: {url}: {exc}", err=True)
        raise typer.Exit(1) from None


@cli.command()
def render() -> None:
    """Render (JSON, NDJSON, gzip) the stored releases that have no renderings yet: those
    published before migration 0004_reads. Reads would render each on its first request."""
    from app.db.engine import Database
    from app.services.renderings import render_missing

    url = _database_url()
    _migrate(url)
    db = Database(url, pool_size=2)

    async def run() -> int:
        try:
            return await render_missing(db, typer.echo)
        finally:
            await db.dispose()

    typer.echo(f"{asyncio.run(run())} release(s) rendered")


# Paragraphs without line breaks: typer's help keeps those after the first paragraph, and
# rich then wraps each line of the docstring again (lines cut in two).
_DEMO_HELP = (
    "Publish a few generated yearly snapshots end to end and print each step.\n\n"
    "It runs in a throw-away database of its own, never in the service's: with DATABASE_URL "
    "a new database (serialpub_demo_<random>) on that server, which needs CREATE DATABASE, "
    "else a temporary embedded server. Its admin token, keys and series name are random. "
    "That database is removed at the end, also after an error, Ctrl-C or SIGTERM: nothing of "
    "the demo remains (docs/settings.md, 'The demo')."
)


@cli.command(help=_DEMO_HELP)
def demo(
    years: Annotated[int, typer.Option(min=1, max=10)] = 3,
    serve: Annotated[
        bool, typer.Option(help="then keep serving its web view until Ctrl-C (docs/web.md)")
    ] = False,
) -> None:
    """:func:`app.demo.run_demo` with its outcome as an exit code (help: above)."""
    from app.demo import DemoError, run_demo

    try:
        asyncio.run(run_demo(get_settings(), typer.echo, years, migrate=_migrate, serve=serve))
    except DemoError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        # The demo's finally blocks have run by now (a failed drop would be a DemoError).
        typer.echo("interrupted: the demo's throw-away database is gone", err=True)
        raise typer.Exit(128 + signal.SIGINT) from None
    except SystemExit as exc:
        if exc.code == 128 + signal.SIGTERM:  # _exit_on_sigterm
            typer.echo("stopped: the demo's throw-away database is gone", err=True)
        raise


@cli.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def bench(ctx: typer.Context) -> None:
    """Run the evaluation of design.md §10 (``benchmarks.evaluate``), from the repository."""
    # The harness lives beside the package, not in it: an installed console script does not
    # have the repository on sys.path, so look for it from here up to the package's checkout.
    for root in (Path.cwd(), Path(__file__).resolve().parents[1]):
        if (root / "benchmarks" / "evaluate.py").exists() and str(root) not in sys.path:
            sys.path.insert(0, str(root))
            break
    try:
        evaluate = importlib.import_module("benchmarks.evaluate")
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] == "matplotlib":
            typer.echo(
                "error: serialpub bench draws its figures with matplotlib, which the "
                "runtime does not install: pip install -e '.[bench]'",
                err=True,
            )
            raise typer.Exit(2) from None
        if exc.name not in ("benchmarks", "benchmarks.evaluate"):
            raise
        typer.echo("benchmarks.evaluate is not available (run from the repository root)", err=True)
        raise typer.Exit(2) from None
    try:
        result = evaluate.main(ctx.args) if ctx.args else evaluate.main()
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "matplotlib":
            raise
        typer.echo(
            "error: serialpub bench draws its figures with matplotlib, which the runtime "
            "does not install: pip install -e '.[bench]'",
            err=True,
        )
        raise typer.Exit(2) from None
    raise typer.Exit(int(result or 0))


def _register_local_commands() -> None:
    """``publish-local`` and friends live in :mod:`app.cli_local` when present."""
    try:
        local = importlib.import_module("app.cli_local")
    except ModuleNotFoundError as exc:
        if exc.name != "app.cli_local":
            raise
        return
    if hasattr(local, "register"):
        local.register(cli)
    elif hasattr(local, "app"):
        cli.add_typer(local.app)
    elif hasattr(local, "publish_local"):
        cli.command("publish-local")(local.publish_local)


_register_local_commands()
cli.command("attack")(cli_attack.attack)
cli.command("verify")(cli_verify.verify)
cli.command("export")(cli_export.export)
cli.command("create-key")(cli_keys.create_key)
cli.command("backup")(cli_backup.backup_command)
cli.command("restore")(cli_backup.restore_command)
cli.command("trail")(cli_trail.trail)


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (``docker stop``, systemd, ``kill``) ends the process like Ctrl-C does.

    Python's default SIGTERM kills the process without ``atexit`` hooks: the embedded
    PostgreSQL was never stopped. uvicorn and procrastinate catch SIGTERM while they run and
    shut down gracefully; uvicorn then raises it again, and this handler makes it an exit.
    """
    raise SystemExit(128 + signum)


def main() -> None:
    """The console script: SIGTERM as an exit, and the faults of the environment (settings
    that cannot start, a database that refuses the connection) as one line and exit 2, not a
    traceback. Those are the operator's to fix, and a traceback of a settings error printed
    the values it was given, secrets and the database URL's password among them."""
    import psycopg

    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        cli()
    except pydantic.ValidationError as exc:
        if exc.title != Settings.__name__:
            raise
        typer.echo(f"error: settings: {settings_fault(exc)}", err=True)
        raise SystemExit(2) from None
    except (sqlalchemy.exc.OperationalError, psycopg.OperationalError) as exc:
        typer.echo(f"error: cannot connect to the database: {database_fault(exc)}", err=True)
        raise SystemExit(2) from None


def settings_fault(exc: pydantic.ValidationError) -> str:
    """What is wrong with the settings, on one line, naming the variables but never their
    values (pydantic's message repeats the input, which holds the secrets)."""
    faults = []
    for error in exc.errors(include_input=False, include_url=False):
        message = error["msg"].removeprefix("Value error, ")
        where = ".".join(str(part) for part in error["loc"])
        faults.append(f"{where}: {message}" if where else message)
    return "; ".join(faults)


def database_fault(exc: Exception) -> str:
    """libpq's reason (wrong password, unknown role, no server) on one line, and what to check.

    libpq never repeats the password; the URL itself is not printed."""
    reason = exc.orig if isinstance(exc, sqlalchemy.exc.DBAPIError) and exc.orig else exc
    text = " ".join(str(reason).split())
    return f"{text} (check DATABASE_URL, and DATABASE_PASSWORD_FILE where it is set)"
