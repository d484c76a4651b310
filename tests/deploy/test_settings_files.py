"""Secrets as files: SERIALPUB_SECRET_FILE, SERIALPUB_ADMIN_TOKEN_FILE, DATABASE_PASSWORD_FILE."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.settings import Settings


def _file(tmp_path: Path, name: str, value: str) -> str:
    path = tmp_path / name
    path.write_text(value + "\n")
    return str(path)


def test_secrets_are_read_from_files(tmp_path: Path) -> None:
    settings = Settings(
        SERIALPUB_ENV="production",
        DATABASE_URL="postgresql+psycopg://serialpub@db:5432/serialpub",
        DATABASE_PASSWORD_FILE=_file(tmp_path, "pw", "p@ss:w/rd"),
        SERIALPUB_SECRET_FILE=_file(tmp_path, "secret", "s" * 32),
        SERIALPUB_ADMIN_TOKEN_FILE=_file(tmp_path, "token", "t" * 32),
    )
    assert settings.secret == "s" * 32 and settings.admin_token == "t" * 32
    # The password is quoted into the URL (its @, : and / do not break it).
    assert (
        settings.database_url == "postgresql+psycopg://serialpub:p%40ss%3Aw%2Frd@db:5432/serialpub"
    )


def test_a_password_in_both_places_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="keep the password in the file only"):
        Settings(
            DATABASE_URL="postgresql+psycopg://u:literal@db/x",
            DATABASE_PASSWORD_FILE=_file(tmp_path, "pw", "secret"),
        )


def test_a_missing_secret_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="SERIALPUB_SECRET_FILE: cannot read"):
        Settings(SERIALPUB_SECRET_FILE=str(tmp_path / "absent"))


def test_placeholder_from_a_file_is_refused_in_production(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="placeholder"):
        Settings(
            SERIALPUB_ENV="production",
            DATABASE_URL="postgresql+psycopg://u@db/x",
            SERIALPUB_SECRET_FILE=_file(tmp_path, "secret", "changeme"),
        )
