"""What a process holds while it runs: settings, database, the individual-id secret, and
opening it (:func:`start_runtime`).

The API keeps it on ``app.state.runtime``; a job worker hands it to the jobs it runs (their
job context), so two apps in one process never share one. Opening it needs the services (the
secret, the admin key, the caches), so it stands above them, beside the job worker, and a
worker process (``serialpub worker``) opens it without importing the API.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.db.engine import Database, resolve_database_url
from app.db.repositories.release_load import RELEASE_CACHE
from app.observability import logger
from app.services.auth import configure_reader_cache, ensure_admin_token
from app.services.identity import resolve_secret
from app.services.renderings import configure_memory
from app.services.withdrawal import configure_withdrawn_cache
from app.settings import Settings

__all__ = ["Runtime", "start_runtime"]

_log = logger("serialpub.runtime")


@dataclass(slots=True)
class Runtime:
    settings: Settings
    db: Database
    secret: bytes


async def start_runtime(settings: Settings) -> Runtime:
    """Open the database, resolve the secret, make the admin token a key."""
    # A running job holds up to two connections (its transaction, its progress writes): a
    # pool smaller than the worker's concurrency would make parallel jobs queue for it.
    pool_size = max(settings.db_pool_size, settings.job_concurrency + 2)
    db = Database(resolve_database_url(settings), pool_size=pool_size)
    configure_memory(settings.render_cache_bytes)
    RELEASE_CACHE.resize(settings.release_cache_rows)
    configure_reader_cache(settings.read_auth_cache_s)
    configure_withdrawn_cache(settings.read_auth_cache_s)
    async with db.session() as session:
        secret = await resolve_secret(session, settings.secret)
        if settings.admin_token and not await ensure_admin_token(session, settings.admin_token):
            _log.warning(
                "SERIALPUB_ADMIN_TOKEN was revoked and stays revoked; set a new value "
                "to bootstrap an admin key"
            )
    return Runtime(settings=settings, db=db, secret=secret)
