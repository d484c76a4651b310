"""Service settings: one pydantic-settings class read from the environment.

Every variable is listed in docs/settings.md.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

__all__ = [
    "MEMORY_FLOOR_MIB",
    "MEMORY_PER_JSON_BYTE",
    "MEMORY_PER_TERM",
    "SEED_REFUSED",
    "Settings",
    "get_settings",
]

_PLACEHOLDERS = frozenset({"changeme", "change-me", "secret", "admin", "password", "xxx", ""})

#: Why a publisher seed is refused where :attr:`Settings.publisher_seed_allowed` is false (the
#: service's 422 and ``publish-local``): whoever learns a seed replays every random choice of
#: every release from the public JSON and finds the counterfeit rows.
SEED_REFUSED = (
    "params.seed: a publisher seed is refused in production (SERIALPUB_ENV=production): "
    "anyone who learns it replays every random choice and finds the counterfeit rows. Leave "
    "it out: each release then draws a secret kept in its private ledger"
)

#: Resident memory a term of an upload costs at its peak, in bytes, by process, and each
#: process's floor in MiB; the sizing rule of docs/lab/uploads.md and
#: tests/deploy/test_memory_limits.py use them. Measured at 1,000,000 lines of 10 distinct
#: terms each (10M terms, nearly every line distinct: the worst case per term;
#: benchmarks/upload_caps.py): the API parses ``text/plain`` and ``text/csv`` as they stream
#: into 4 bytes a term and its job input, 18 bytes a term at the peak; the compute child peaked
#: at 248 bytes a term (the core's transactions and clusters), the worker at 130 (the release
#: it stores and caches). BMS-WebView-2 lines, which repeat, cost the child 160.
MEMORY_PER_TERM: dict[str, int] = {"api": 24, "compute_child": 250, "worker": 130}
#: A JSON body is parsed whole (Python objects): bytes of the API's memory per body byte.
MEMORY_PER_JSON_BYTE = 25
MEMORY_FLOOR_MIB: dict[str, int] = {"api": 200, "worker": 250}


class Settings(BaseSettings):
    """Everything the service reads from its environment.

    ``database_url`` unset means: start an embedded PostgreSQL under ``data_dir``.
    """

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    environment: Literal["development", "test", "production"] = Field(
        "development", alias="SERIALPUB_ENV"
    )
    database_url: str | None = Field(None, alias="DATABASE_URL")
    #: Accept a publisher ``seed`` (``params.seed``) in production too: for a test or benchmark
    #: deployment only. Whoever learns a seed replays every random choice of every release and
    #: finds its counterfeits, so production refuses one by default.
    allow_publisher_seed: bool = Field(False, alias="SERIALPUB_ALLOW_PUBLISHER_SEED")
    data_dir: Path = Field(Path("./.serialpub"), alias="SERIALPUB_DATA_DIR")
    admin_token: str | None = Field(None, alias="SERIALPUB_ADMIN_TOKEN")
    secret: str | None = Field(None, alias="SERIALPUB_SECRET")
    # The upload caps are sized to the shipped container limits (docker-compose.yml) with the
    # memory a term costs (MEMORY_PER_TERM): raise them together (docs/lab/uploads.md). The
    # defaults take a hospital's yearly snapshot: 1,000,000 lines of 10 terms. The body cap
    # bounds time on the wire, not memory: text is parsed as it streams, a chunk at a time.
    max_body_bytes: int = Field(128 * 1024 * 1024, alias="SERIALPUB_MAX_BODY_BYTES", gt=0)
    #: JSON bodies are parsed whole (Python objects, ~25 bytes per body byte): their own cap.
    max_json_bytes: int = Field(16 * 1024 * 1024, alias="SERIALPUB_MAX_JSON_BYTES", gt=0)
    max_transactions: int = Field(1_000_000, alias="SERIALPUB_MAX_TRANSACTIONS", gt=0)
    max_terms_per_transaction: int = Field(1_000, alias="SERIALPUB_MAX_TERMS_PER_TRANSACTION", gt=0)
    max_distinct_terms: int = Field(200_000, alias="SERIALPUB_MAX_DISTINCT_TERMS", gt=0)
    max_terms_per_release: int = Field(11_000_000, alias="SERIALPUB_MAX_TERMS_PER_RELEASE", gt=0)
    in_process_worker: bool = Field(True, alias="SERIALPUB_IN_PROCESS_WORKER")
    #: Jobs (of different series) a worker runs at once; unset: one per CPU core.
    worker_concurrency: int | None = Field(None, alias="SERIALPUB_WORKER_CONCURRENCY", ge=1)
    #: Seconds a stopping worker lets running jobs finish before it requeues them.
    shutdown_grace_s: float = Field(5.0, alias="SERIALPUB_SHUTDOWN_GRACE", ge=0)
    #: Seconds a stopping ``serve`` lets open HTTP connections finish before it closes them:
    #: without a bound, one client holding a keep-alive connection keeps a worker (and the
    #: parent that joins it) alive after SIGTERM for as long as it likes.
    http_shutdown_grace_s: int = Field(30, alias="SERIALPUB_HTTP_SHUTDOWN_GRACE", ge=0)
    wait_timeout_s: float = Field(900.0, alias="SERIALPUB_WAIT_TIMEOUT", gt=0)
    job_max_attempts: int = Field(3, alias="SERIALPUB_JOB_MAX_ATTEMPTS", ge=1)
    stalled_after_s: float = Field(30.0, alias="SERIALPUB_STALLED_AFTER", gt=0)
    #: Per process: rendered releases and risk summaries held in memory (gzip and identity
    #: bytes); a document above an eighth of it is streamed from PostgreSQL instead.
    render_cache_bytes: int = Field(256 * 1024 * 1024, alias="SERIALPUB_RENDER_CACHE_BYTES", ge=0)
    #: Per process: rows of loaded releases (with their ledgers) a worker keeps for the next
    #: jobs of their series; hold a series' history (about 1 GiB per 6M rows).
    release_cache_rows: int = Field(6_000_000, alias="SERIALPUB_RELEASE_CACHE_ROWS", ge=0)
    #: Seconds a reader's key and series stay trusted without a query (0: ask every time); a
    #: revoked key can still read releases that long through other server processes.
    read_auth_cache_s: float = Field(1.0, alias="SERIALPUB_READ_AUTH_CACHE_SECONDS", ge=0)
    db_pool_size: int = Field(10, alias="SERIALPUB_DB_POOL_SIZE", ge=1)
    #: Per process: how often the access trail's buffered events are written (changes of
    #: state, such as a publication or a new key, are written at once).
    access_trail_flush_s: float = Field(
        0.25, alias="SERIALPUB_ACCESS_TRAIL_FLUSH_SECONDS", gt=0, le=60
    )
    #: Access-trail events older than this many days are deleted (0: kept for good).
    access_trail_retention_days: int = Field(0, alias="SERIALPUB_ACCESS_TRAIL_RETENTION_DAYS", ge=0)
    #: Where ``serialpub backup`` and ``restore`` look first for ``pg_dump`` and
    #: ``pg_restore`` (app.services.backup).
    pg_bin_dir: Path | None = Field(None, alias="SERIALPUB_PG_BIN_DIR")
    log_format: Literal["console", "json"] = Field("console", alias="SERIALPUB_LOG_FORMAT")
    log_level: str = Field("INFO", alias="SERIALPUB_LOG_LEVEL")
    #: A file ``serialpub worker`` touches while it is alive (``serialpub healthcheck --worker``).
    worker_heartbeat_file: Path | None = Field(None, alias="SERIALPUB_WORKER_HEARTBEAT_FILE")
    #: Where ``serialpub worker`` serves its Prometheus ``/metrics`` (``None``: nowhere); the
    #: API's ``/metrics`` sums its own processes only (app.observability).
    worker_metrics_port: int | None = Field(
        None, alias="SERIALPUB_WORKER_METRICS_PORT", ge=1, le=65535
    )
    worker_metrics_host: str = Field("127.0.0.1", alias="SERIALPUB_WORKER_METRICS_HOST")
    # Secrets as files (compose/Kubernetes secrets), never as literals in the environment.
    secret_file: Path | None = Field(None, alias="SERIALPUB_SECRET_FILE")
    admin_token_file: Path | None = Field(None, alias="SERIALPUB_ADMIN_TOKEN_FILE")
    #: The password of ``DATABASE_URL``'s user, put into the URL (which then holds none).
    database_password_file: Path | None = Field(None, alias="DATABASE_PASSWORD_FILE")

    @property
    def job_concurrency(self) -> int:
        """``SERIALPUB_WORKER_CONCURRENCY``, else the CPU cores this process may use (two at
        least: on one core the OS still shares time, so a small job never waits for a big one).
        """
        if self.worker_concurrency is not None:
            return self.worker_concurrency
        cores = (
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else (os.cpu_count() or 1)
        )
        return max(2, cores)

    @property
    def publisher_seed_allowed(self) -> bool:
        """Whether a series may be given ``params.seed``: outside production, or where
        ``SERIALPUB_ALLOW_PUBLISHER_SEED`` says so."""
        return self.environment != "production" or self.allow_publisher_seed

    @model_validator(mode="after")
    def _read_secret_files(self) -> Settings:
        """``*_FILE`` settings: the value is the file's content (trailing newline dropped)."""
        if self.secret_file is not None and self.secret is None:
            self.secret = _read_secret(self.secret_file, "SERIALPUB_SECRET_FILE")
        if self.admin_token_file is not None and self.admin_token is None:
            self.admin_token = _read_secret(self.admin_token_file, "SERIALPUB_ADMIN_TOKEN_FILE")
        if self.database_password_file is not None:
            if not self.database_url:
                raise ValueError("DATABASE_PASSWORD_FILE needs DATABASE_URL (user and host)")
            password = _read_secret(self.database_password_file, "DATABASE_PASSWORD_FILE")
            url = make_url(self.database_url)
            if url.password is not None:
                raise ValueError(
                    "DATABASE_URL holds a password and DATABASE_PASSWORD_FILE is "
                    "set: keep the password in the file only"
                )
            self.database_url = url.set(password=password).render_as_string(hide_password=False)
        return self

    @model_validator(mode="after")
    def _no_placeholders_in_production(self) -> Settings:
        if self.environment != "production":
            return self
        for name, value in (
            ("SERIALPUB_SECRET", self.secret),
            ("SERIALPUB_ADMIN_TOKEN", self.admin_token),
        ):
            if value is not None and (value.lower() in _PLACEHOLDERS or len(value) < 16):
                raise ValueError(f"{name} is a placeholder or too short for production")
        if self.database_url is None:
            raise ValueError("DATABASE_URL must be set in production (no embedded PostgreSQL)")
        return self


def _read_secret(path: Path, name: str) -> str:
    try:
        value = path.read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as exc:
        raise ValueError(f"{name}: cannot read {path} ({exc.strerror})") from None
    if not value:
        raise ValueError(f"{name}: {path} is empty")
    return value


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process' settings (cached; tests build their own :class:`Settings`)."""
    return Settings()
