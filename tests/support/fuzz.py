"""Schemathesis against the ASGI app, in-process: every operation of ``/openapi.json`` with
generated (valid and invalid) requests, every response checked against the document.

    python -m tests.support.fuzz [--max-examples 40] [--database-url URL] [--seed N]

Without ``--database-url`` a throw-away database is made as for the tests
(``TEST_DATABASE_URL``, else an embedded PostgreSQL). Runs in its own process: the app's
lifespan (database pool, in-process worker) lives on schemathesis' event loop thread.
Exits 1 and prints each failing operation with its reproduction when anything is found.

Every check of schemathesis runs except ``positive_data_acceptance`` (ST202, "schema-valid
request rejected"): some rules of the API cannot be written in JSON Schema — a method's
parameters and their ranges, ``cluster`` on all transactions or none, ``individual`` for
wong, one spelling per private term — so a schema-valid request can rightly answer 422. The
rest (no 5xx, documented status codes, content types, headers and bodies, invalid data
refused) applies to every operation.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

ADMIN_TOKEN = "fuzz-admin-token-0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def _app(database_url: str) -> Any:
    from app.api.main import create_app
    from app.settings import Settings

    return create_app(
        Settings(
            DATABASE_URL=database_url,
            SERIALPUB_ENV="test",
            SERIALPUB_SECRET="fuzz-secret-for-hmac",
            SERIALPUB_ADMIN_TOKEN=ADMIN_TOKEN,
            SERIALPUB_WAIT_TIMEOUT=5,
            SERIALPUB_MAX_BODY_BYTES=1_000_000,
            SERIALPUB_LOG_LEVEL="ERROR",
        )
    )


def run(database_url: str, max_examples: int, seed: int | None) -> list[str]:
    """Failures as text (operation, error), one per failing operation."""
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    app = _app(database_url)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    failures: list[str] = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(
            max_examples=max_examples,
            deadline=None,
            database=None,
            derandomize=seed is not None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.explicit, Phase.generate, Phase.shrink],
        )
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            case.call_and_validate(headers=ADMIN, excluded_checks=[positive_data_acceptance])

        try:
            check()
            status = "ok"
        except (Exception, BaseExceptionGroup) as exc:  # report every operation's finding
            failures.append(f"{operation.label}: {exc!r}\n{exc}")
            status = "FAILED"
        print(f"{operation.label}: {status}", flush=True)
    # Stop the app (its worker, its pool) before its database goes.
    from schemathesis.python.asgi import shutdown_lifespans

    shutdown_lifespans()
    return failures


@contextlib.contextmanager
def _database(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from tests.support.database import fresh_database

    with fresh_database() as fresh:
        yield fresh


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=40)
    parser.add_argument("--database-url")
    parser.add_argument("--seed", type=int)
    args = parser.parse_args(argv)
    with _database(args.database_url) as url:
        failures = run(url, args.max_examples, args.seed)
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
