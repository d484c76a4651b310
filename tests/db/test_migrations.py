"""The migrations build exactly the models' schema (``alembic check``), and go down and up."""

from __future__ import annotations

import pytest
from alembic import command
from alembic.config import Config

from tests.support.database import ROOT, fresh_database

pytestmark = [pytest.mark.db]


def _config(url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.attributes["url"] = url
    config.attributes["configure_logger"] = False
    return config


def test_models_match_migrations(database_url: str) -> None:
    command.check(_config(database_url))


def test_downgrade_and_upgrade_again() -> None:
    with fresh_database() as url:
        command.downgrade(_config(url), "base")
        command.upgrade(_config(url), "head")
        command.check(_config(url))
