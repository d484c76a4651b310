"""Service settings: one pydantic-settings class read from the environment (API.md "Running it")."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "get_settings"]

_PLACEHOLDERS = frozenset({"changeme", "change-me", "secret", "admin", "password", "xxx", ""})


class Settings(BaseSettings):
    """Everything the service reads from its environment.

    ``database_url`` unset means: start an embedded PostgreSQL under ``data_dir``.
    """

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    environment: Literal["development", "test", "production"] = Field(
        "development", alias="SERIALPUB_ENV"
    )
    database_url: str | None = Field(None, alias="DATABASE_URL")
    data_dir: Path = Field(Path("./.serialpub"), alias="SERIALPUB_DATA_DIR")
    admin_token: str | None = Field(None, alias="SERIALPUB_ADMIN_TOKEN")
    secret: str | None = Field(None, alias="SERIALPUB_SECRET")
    max_body_bytes: int = Field(256 * 1024 * 1024, alias="SERIALPUB_MAX_BODY_BYTES", gt=0)
    #: JSON bodies are parsed whole (Python objects, ~25 bytes per body byte): their own cap.
    max_json_bytes: int = Field(16 * 1024 * 1024, alias="SERIALPUB_MAX_JSON_BYTES", gt=0)
    max_transactions: int = Field(2_000_000, alias="SERIALPUB_MAX_TRANSACTIONS", gt=0)
    max_terms_per_transaction: int = Field(1_000, alias="SERIALPUB_MAX_TERMS_PER_TRANSACTION",
                                           gt=0)
    max_distinct_terms: int = Field(200_000, alias="SERIALPUB_MAX_DISTINCT_TERMS", gt=0)
    max_terms_per_release: int = Field(20_000_000, alias="SERIALPUB_MAX_TERMS_PER_RELEASE", gt=0)
    in_process_worker: bool = Field(True, alias="SERIALPUB_IN_PROCESS_WORKER")
    worker_concurrency: int = Field(1, alias="SERIALPUB_WORKER_CONCURRENCY", ge=1)
    wait_timeout_s: float = Field(900.0, alias="SERIALPUB_WAIT_TIMEOUT", gt=0)
    job_max_attempts: int = Field(3, alias="SERIALPUB_JOB_MAX_ATTEMPTS", ge=1)
    stalled_after_s: float = Field(30.0, alias="SERIALPUB_STALLED_AFTER", gt=0)
    #: Per process: rendered releases and risk summaries held in memory (gzip and identity
    #: bytes); a document above an eighth of it is streamed from PostgreSQL instead.
    render_cache_bytes: int = Field(256 * 1024 * 1024, alias="SERIALPUB_RENDER_CACHE_BYTES",
                                    ge=0)
    #: Seconds a reader's key and series stay trusted without a query (0: ask every time); a
    #: revoked key can still read releases that long through other server processes.
    read_auth_cache_s: float = Field(1.0, alias="SERIALPUB_READ_AUTH_CACHE_SECONDS", ge=0)
    db_pool_size: int = Field(10, alias="SERIALPUB_DB_POOL_SIZE", ge=1)
    log_format: Literal["console", "json"] = Field("console", alias="SERIALPUB_LOG_FORMAT")
    log_level: str = Field("INFO", alias="SERIALPUB_LOG_LEVEL")

    @model_validator(mode="after")
    def _no_placeholders_in_production(self) -> Settings:
        if self.environment != "production":
            return self
        for name, value in (("SERIALPUB_SECRET", self.secret),
                            ("SERIALPUB_ADMIN_TOKEN", self.admin_token)):
            if value is not None and (value.lower() in _PLACEHOLDERS or len(value) < 16):
                raise ValueError(f"{name} is a placeholder or too short for production")
        if self.database_url is None:
            raise ValueError("DATABASE_URL must be set in production (no embedded PostgreSQL)")
        return self


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process' settings (cached; tests build their own :class:`Settings`)."""
    return Settings()
