"""Series: create, read, and the effective parameters they echo."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.attacks.settings import parse_audit_settings
from app.core.errors import ErrorCode, InvalidCorpus, InvalidParameter
from app.core.methods import Method
from app.core.randomness import seed_warning
from app.db.locks import LockSpace, xact_lock
from app.db.models import Series
from app.db.repositories.series import SeriesRepository
from app.errors import Conflict, NotFound, from_core
from app.io.terms import normalize_private_terms
from app.methods.registry import get_method
from app.observability import logger
from app.schemas.series import SeriesCreate, SeriesOut
from app.services.auth import Principal, clear_reader_cache
from app.settings import SEED_REFUSED

_log = logger("serialpub.admin")

__all__ = [
    "create_series",
    "delete_series",
    "get_series",
    "list_series",
    "series_out",
    "effective_params",
    "echoed_params",
    "risk_threshold",
    "series_warnings",
]


#: The series parameter that is not a method's (design.md §11): validated and echoed on its own.
AUDIT_PARAM = "semantic_audit"


def _method_params(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != AUDIT_PARAM}


def effective_params(series: Series, method: Method | None = None) -> Any:
    """The series' effective parameters, as its method parses them (``method``: its registry
    entry, when the caller already holds it, e.g. a job's context)."""
    return (method or get_method(series.method)).parse(_method_params(series.params))


def echoed_params(series: Series, method: Method | None = None) -> dict[str, Any]:
    """The effective method parameters the API echoes (series, releases)."""
    method = method or get_method(series.method)
    return method.echo(method.parse(_method_params(series.params)))


def risk_threshold(series: Series) -> float | None:
    """The series' method's ``r_th``; ``None`` when it makes no serial claim."""
    method = get_method(series.method)
    return method.risk_threshold(method.parse(_method_params(series.params)))


def series_warnings(series: Series) -> list[dict[str, str]]:
    """Warnings every response about the series carries (a publisher-given seed)."""
    warning = seed_warning(getattr(effective_params(series), "seed", None))
    return [] if warning is None else [warning]


def series_out(series: Series, n_releases: int) -> SeriesOut:
    return SeriesOut(
        name=series.name,
        method=series.method,
        private_terms=list(series.private_terms),
        private_match=series.private_match,
        params={
            **echoed_params(series),
            AUDIT_PARAM: parse_audit_settings(series.params.get(AUDIT_PARAM)).as_dict(),
        },
        n_releases=n_releases,
        created_at=series.created_at,
        warnings=series_warnings(series),
    )


async def create_series(
    session: AsyncSession, body: SeriesCreate, *, allow_seed: bool = True
) -> Series:
    """Store a new series; ``allow_seed=False`` (production) refuses ``params.seed``."""
    try:
        effective = get_method(body.method).parse(_method_params(body.params))
        parse_audit_settings(body.params.get(AUDIT_PARAM))
    except InvalidParameter as exc:
        raise from_core(exc) from None
    if not allow_seed and getattr(effective, "seed", None) is not None:
        raise from_core(InvalidParameter(SEED_REFUSED, {"param": "seed"}))
    try:
        private_terms = normalize_private_terms(body.private_terms, body.private_match)
    except InvalidCorpus as exc:
        raise from_core(exc) from None
    repo = SeriesRepository(session)
    await xact_lock(session, LockSpace.POST, f"series-name:{body.name}")
    if await repo.get_by_name(body.name) is not None:
        raise Conflict(
            f"series {body.name!r} exists", {"name": body.name}, code=ErrorCode.NAME_TAKEN
        )
    series = Series(
        name=body.name,
        method=body.method,
        private_terms=sorted(private_terms),
        private_match=body.private_match,
        params=dict(body.params),
    )
    try:
        return await repo.add(series)
    except IntegrityError:
        raise Conflict(
            f"series {body.name!r} exists", {"name": body.name}, code=ErrorCode.NAME_TAKEN
        ) from None


async def get_series(session: AsyncSession, name: str) -> Series:
    series = await SeriesRepository(session).get_by_name(name)
    if series is None:
        raise NotFound(f"no series {name!r}", {"series": name})
    return series


async def list_series(session: AsyncSession) -> Sequence[tuple[Series, int]]:
    repo = SeriesRepository(session)
    counts = await repo.release_counts()
    return [(s, counts.get(s.id, 0)) for s in await repo.list()]


async def delete_series(session: AsyncSession, principal: Principal, name: str) -> None:
    """Delete a series that has published nothing (docs/api.md "DELETE /v1/series/{name}").

    409 ``series_has_releases`` once it has a release (withdrawn ones included: they were
    public, and later releases are judged against them), and ``series_has_jobs`` while a job
    of it is queued or running (it may yet publish; cancel it first). Under the series' post
    lock no job is created meanwhile (:func:`app.services.publishing.create_job` then finds
    the series gone: 404). Its finished jobs, idempotency keys and background corpus go with
    it; keys scoped to its name stay, and apply to a series created again under that name.
    Logged with the admin's key id and role."""
    series = await get_series(session, name)
    await xact_lock(session, LockSpace.POST, series.id)
    repo = SeriesRepository(session)
    releases = await repo.release_count(series.id)
    if releases:
        raise Conflict(
            f"series {name!r} has {releases} release(s); a series that published cannot be "
            "deleted (withdraw a mistaken release instead)",
            {"series": name, "releases": releases},
            code=ErrorCode.SERIES_HAS_RELEASES,
        )
    jobs = await repo.jobs_in_flight(series.id)
    if jobs:
        raise Conflict(
            f"series {name!r} has {len(jobs)} queued or running job(s); cancel them first",
            {"series": name, "jobs": [str(job) for job in jobs]},
            code=ErrorCode.SERIES_HAS_JOBS,
        )
    await repo.delete(series.id)
    await session.flush()
    # A reader's cached id of this name must not outlive it (a series may be created again).
    clear_reader_cache()
    _log.info("series deleted", series=name, key_id=str(principal.key_id), role=principal.role)
