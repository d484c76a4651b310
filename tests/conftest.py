"""Shared fixtures of the service tests (the core's tests need none of them).

A real PostgreSQL (see :mod:`tests.support.database`), migrated once per session. API tests
share one application (lifespan and in-process worker running) and are isolated by emptying
every table after each test: jobs commit on the worker's own connections, so a per-test
rollback cannot contain them.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from tests.support.database import fresh_database

# CI explores the same examples on every run (a red build is then reproducible); developers
# get fresh random examples each run.
# The machines are shared: speed is not what the tests judge (benchmarks do), so the too_slow
# health check (a flake under load, seen at a load average of 11) and the per-example
# deadline (tests/io/test_compact.py's first example took 257-618 ms at a load average of 5,
# 0.1 ms the next) are off in both profiles.
hypothesis_settings.register_profile(
    "ci",
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
    deadline=None,
)
hypothesis_settings.register_profile(
    "dev", suppress_health_check=[HealthCheck.too_slow], deadline=None
)
hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    with fresh_database() as url:
        yield url


@pytest.fixture(scope="session")
def settings(database_url: str):  # type: ignore[no-untyped-def]
    from app.settings import Settings

    return Settings(
        DATABASE_URL=database_url,
        SERIALPUB_ENV="test",
        SERIALPUB_SECRET="test-secret-for-hmac",
        SERIALPUB_ADMIN_TOKEN="test-admin-token",
        SERIALPUB_MAX_BODY_BYTES=200_000,
        SERIALPUB_WAIT_TIMEOUT=60,
        SERIALPUB_STALLED_AFTER=2,
        SERIALPUB_DB_POOL_SIZE=5,
    )


@pytest.fixture(scope="session")
async def app_client(settings) -> AsyncIterator[object]:  # type: ignore[no-untyped-def]
    from tests.support.app import app_client_for

    async with app_client_for(settings) as client:
        yield client
