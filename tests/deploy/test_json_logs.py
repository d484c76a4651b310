"""With SERIALPUB_LOG_FORMAT=json every line ``serve`` writes is one JSON object (uvicorn's,
alembic's, the access log, tracebacks), and no access line carries a query string: queries hold
private terms (``?private_terms=HIV``). Tested through the CLI, with two uvicorn workers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.support.database import ROOT, fresh_database

pytestmark = [pytest.mark.db, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def _output_after_shutdown(process: subprocess.Popen[str]) -> str:
    """Everything the server wrote, once it has stopped. Two workers shut down in turn: over a
    minute at a load of 9 on two cores (seen), and once (CI, the whole suite beside it) not
    within 240 s. This test is about what the lines say, so a slow stop is reported on
    stderr with the processes still there, and the group is killed; how ``serve`` stops is
    tested in ``tests/deploy/test_password_file.py`` and ``tests/db/test_embedded_lifecycle.py``."""
    try:
        output, _ = process.communicate(timeout=240)
        return output
    except subprocess.TimeoutExpired:
        left = subprocess.run(
            ["ps", "-o", "pid,stat,etime,args", "-g", str(process.pid)],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        # Not a warning: the suite turns warnings into errors (pyproject's filterwarnings).
        print(f"serve did not stop within 240 s of SIGTERM; killed:\n{left}", file=sys.stderr)
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate(timeout=60)
        return output


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_serve_logs_json_lines_without_query_strings(fmt: str) -> None:
    port = _free_port()
    with fresh_database() as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "SERIALPUB_"))}
        env.update(
            {
                "DATABASE_URL": url,
                "SERIALPUB_LOG_FORMAT": fmt,
                "SERIALPUB_LOG_LEVEL": "INFO",
                "PYTHONPATH": str(ROOT),
            }
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port), "--workers", "2"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: the workers go with it
        )
        try:
            # Migrations, then two workers importing the service: about a minute at a load
            # average of 12 on two cores (seen), so the wait is by the clock, not by polls.
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                if process.poll() is not None or _get(f"http://127.0.0.1:{port}/readyz") == 200:
                    break
                time.sleep(0.25)
            base = f"http://127.0.0.1:{port}"
            assert _get(f"{base}/v1/series?private_terms=HIV&label=secret-label") == 401
            assert _get(f"{base}/healthz?private_terms=HIV") == 200
        finally:
            process.send_signal(signal.SIGTERM)
            output = _output_after_shutdown(process)
    lines = [line for line in output.splitlines() if line.strip()]
    assert any("/healthz" in line for line in lines), output  # the access log is there
    for line in lines:
        assert "private_terms" not in line and "HIV" not in line, line
        assert "secret-label" not in line, line
        if fmt == "json":
            event = json.loads(line)  # every line, uvicorn's and alembic's included
            assert isinstance(event, dict) and "event" in event, line


def test_a_traceback_is_one_json_line(capsys: pytest.CaptureFixture[str]) -> None:
    import logging
    import logging.config

    from app.observability import logging_config

    logging.config.dictConfig(logging_config("INFO", "json"))
    try:
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("uvicorn.error").exception("Exception in ASGI application")
        logging.getLogger("alembic.runtime.migration").info("Running upgrade a -> b")
    finally:
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    events = [json.loads(line) for line in lines]
    assert [e["event"] for e in events] == [
        "Exception in ASGI application",
        "Running upgrade a -> b",
    ]
    assert "ValueError: boom" in events[0]["exception"]
    assert events[1]["logger"] == "alembic.runtime.migration"


def test_stdlib_records_and_structlog_events_are_alike(capsys: pytest.CaptureFixture[str]) -> None:
    """A stdlib record (procrastinate's, SQLAlchemy's, uvicorn's) is one JSON line with the
    keys of structlog's own events, the job id bound in the context included."""
    import logging
    import logging.config

    import structlog

    from app.observability import configure_structlog, logging_config

    saved = structlog.get_config()
    logging.config.dictConfig(logging_config("INFO", "json"))
    configure_structlog("INFO")
    try:
        with structlog.contextvars.bound_contextvars(job_id="j-1"):
            structlog.get_logger("serialpub.jobs").info("job started", rows=3)
            logging.getLogger("procrastinate.worker").info("Starting job %s", "j-1")
            logging.getLogger("sqlalchemy.pool").warning("pool %s", "overflow")
            logging.getLogger("uvicorn.error").info("line one\nline two")
    finally:
        structlog.configure(**saved)
        logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 4, lines
    ours, procrastinate, sqlalchemy, uvicorn = (json.loads(line) for line in lines)
    assert ours.pop("rows") == 3
    keys = {"event", "level", "logger", "timestamp", "job_id"}
    assert set(ours) == set(procrastinate) == set(sqlalchemy) == set(uvicorn) == keys
    assert ours["logger"] == "serialpub.jobs" and ours["level"] == "info"
    assert procrastinate == {**procrastinate, "event": "Starting job j-1", "job_id": "j-1"}
    assert procrastinate["logger"] == "procrastinate.worker" and procrastinate["level"] == "info"
    assert sqlalchemy["level"] == "warning" and uvicorn["event"] == "line one\nline two"
