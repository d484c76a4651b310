"""The FastAPI application: ``create_app(settings)``; the lifespan opens the database, keeps
the runtime and, unless disabled, runs the job worker in-process."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from app.api.errors import install_error_handlers
from app.api.metrics import MetricsMiddleware
from app.api.openapi import install_openapi
from app.api.routes import attacks, health, jobs, keys, ledger, releases, risk, series
from app.db.engine import Database, resolve_database_url
from app.db.repositories.release_load import RELEASE_CACHE
from app.observability import configure_logging, logger
from app.runtime import Runtime, set_runtime
from app.services.auth import configure_reader_cache, ensure_admin_token
from app.services.identity import resolve_secret
from app.services.renderings import configure_memory
from app.settings import Settings, get_settings

__all__ = ["create_app", "start_runtime"]

_log = logger("serialpub.api")


async def start_runtime(settings: Settings) -> Runtime:
    """Open the database, resolve the secret, make the admin token a key."""
    # A running job holds up to two connections (its transaction, its progress writes): a
    # pool smaller than the worker's concurrency would make parallel jobs queue for it.
    pool_size = max(settings.db_pool_size, settings.job_concurrency + 2)
    db = Database(resolve_database_url(settings), pool_size=pool_size)
    configure_memory(settings.render_cache_bytes)
    RELEASE_CACHE.resize(settings.release_cache_rows)
    configure_reader_cache(settings.read_auth_cache_s)
    async with db.session() as session:
        secret = await resolve_secret(session, settings.secret)
        if settings.admin_token and not await ensure_admin_token(session, settings.admin_token):
            _log.warning(
                "SERIALPUB_ADMIN_TOKEN was revoked and stays revoked; set a new value "
                "to bootstrap an admin key"
            )
    return Runtime(settings=settings, db=db, secret=secret)


def _lifespan(settings: Settings):  # type: ignore[no-untyped-def]
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging(settings.log_level, settings.log_format)
        runtime = await start_runtime(settings)
        app.state.runtime = runtime
        set_runtime(runtime)
        worker = None
        if settings.in_process_worker:
            from app.jobs.worker import run_worker

            worker = asyncio.create_task(run_worker(runtime))
        # Everything built so far (modules, the app, the runtime) lives as long as the
        # process: keep it out of the collector's full passes, which otherwise scan it all
        # and stall every request in flight (the read path's p99).
        gc.freeze()
        _log.info("service started", in_process_worker=settings.in_process_worker)
        try:
            yield
        finally:
            if worker is not None:
                worker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await worker
            await runtime.db.dispose()
            set_runtime(None)

    return lifespan


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    # Swagger UI and ReDoc from assets the package ships (fastapi-offline), not a CDN: hospital
    # networks are often offline, and /docs was a blank page there.
    app = FastAPIOffline(
        title="Serialpub",
        version="0.1.0",
        description="Privacy-preserving serial publication of transactional data.",
        lifespan=_lifespan(settings),
    )
    app.state.settings = settings
    install_error_handlers(app)
    app.add_middleware(MetricsMiddleware)
    for module in (health, keys, series, releases, jobs, risk, ledger, attacks):
        app.include_router(module.router)
    install_openapi(app)
    return app
