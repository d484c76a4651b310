"""The FastAPI application: ``create_app(settings)``; the lifespan opens the database, keeps
the runtime and, unless disabled, runs the job worker in-process."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import AsyncIterator

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from app.api.access import AccessTrailMiddleware
from app.api.drain import DrainUnreadBody
from app.api.errors import install_error_handlers
from app.api.metrics import MetricsMiddleware
from app.api.openapi import install_openapi
from app.api.release_reads import HeldReleaseReads
from app.api.routes import (
    access_trail,
    attacks,
    health,
    jobs,
    keys,
    ledger,
    releases,
    risk,
    series,
)
from app.observability import (
    configure_logging,
    end_metrics_process,
    logger,
    start_metrics_process,
)
from app.runtime import Runtime, start_runtime
from app.services.access_trail import TRAIL
from app.settings import Settings, get_settings
from app.version import serialpub_version
from app.web import router as web_router

__all__ = ["create_app"]

_log = logger("serialpub.api")


#: Seconds before the in-process worker starts again after it stopped on an error.
WORKER_RESTART_S = (1.0, 2.0, 5.0, 10.0)


async def _in_process_worker(runtime: Runtime) -> None:
    """The API's own job worker, started again whenever it stops on an error.

    A ``serialpub worker`` that stops ends its process, and its container restarts it. The
    in-process worker has no such keeper: it stopped, and the API went on taking posts that
    nobody ran (every later ``wait=true`` post of a full test run answered 202, its job
    ``queued``, with no worker beating for the test database). Each stop is logged with its
    cause."""
    from app.jobs.worker import run_worker

    restarts = 0
    while True:
        try:
            await run_worker(runtime)
            return
        except Exception:
            delay = WORKER_RESTART_S[min(restarts, len(WORKER_RESTART_S) - 1)]
            _log.exception("the in-process worker stopped; restarting", after=delay)
            restarts += 1
            await asyncio.sleep(delay)


def _lifespan(settings: Settings):  # type: ignore[no-untyped-def]
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        configure_logging(settings.log_level, settings.log_format)
        start_metrics_process()
        runtime = await start_runtime(settings)
        app.state.runtime = runtime
        worker = None
        if settings.in_process_worker:
            # Before the service answers, so that its first job computes at once rather than
            # wait for the compute fork server's imports; the worker's start finds it done.
            from app.jobs.compute import ready_to_compute

            await ready_to_compute()
            worker = asyncio.create_task(_in_process_worker(runtime))
        trail = asyncio.create_task(
            TRAIL.run(
                runtime.db, settings.access_trail_flush_s, settings.access_trail_retention_days
            )
        )
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
                # Bounded: a worker that does not end once cancelled must not keep the process
                # up after SIGTERM (app.jobs.worker._stop_side_tasks says when it did not).
                done, _ = await asyncio.wait({worker}, timeout=settings.shutdown_grace_s + 10)
                if not done:
                    _log.warning("the in-process worker did not stop; leaving it")
                else:
                    with contextlib.suppress(asyncio.CancelledError):
                        worker.result()
            # After the worker and the HTTP server: the last requests' events are written.
            trail.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await trail
            await runtime.db.dispose()
            end_metrics_process()

    return lifespan


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    # Swagger UI and ReDoc from assets the package ships (fastapi-offline), not a CDN: hospital
    # networks are often offline, and /docs was a blank page there.
    app = FastAPIOffline(
        title="Serialpub",
        version=serialpub_version(),
        description="Privacy-preserving serial publication of transactional data.",
        lifespan=_lifespan(settings),
    )
    app.state.settings = settings
    install_error_handlers(app)
    # A release's GET answered from memory when it can, before the router (it goes on to the
    # route otherwise); inside the metrics and the access trail, which record it the same.
    app.add_middleware(HeldReleaseReads, routes=releases.read_routes())
    # A refused upload's answer reaches a client still sending (app.api.drain): twice the
    # body cap covers a body refused by a Content-Length just over it.
    app.add_middleware(DrainUnreadBody, limit=2 * settings.max_body_bytes)
    app.add_middleware(AccessTrailMiddleware)
    app.add_middleware(MetricsMiddleware)
    for module in (health, keys, access_trail, series, releases, jobs, risk, ledger, attacks):
        app.include_router(module.router)
    # The web view (docs/web.md): pages under /web, outside the OpenAPI document.
    app.include_router(web_router)
    install_openapi(app)
    return app
