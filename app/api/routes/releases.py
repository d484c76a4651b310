"""Releases: publishers post them (202 with a job), analysts read them."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from app.api.access import note
from app.api.body import json_body, request_body
from app.api.deps import (
    AdminDep,
    PublisherDep,
    ReadableDep,
    ReadersDep,
    ReleaseNo,
    RuntimeDep,
    SessionDep,
)
from app.api.openapi import RELEASE_BODY
from app.api.representation import DOCUMENT_RESPONSES, IMMUTABLE, document_response
from app.core.errors import ErrorCode
from app.db.engine import is_transient
from app.errors import (
    AppError,
    InsufficientStorage,
    NotFound,
    PayloadTooLarge,
    ServiceUnavailable,
    Unprocessable,
    stored_code,
)
from app.methods.registry import get_method
from app.runtime import Runtime
from app.schemas.errors import error_responses
from app.schemas.jobs import JobOut
from app.schemas.releases import (
    PublishResult,
    ReleaseListItem,
    WithdrawalIn,
    release_examples,
    release_out_model,
)
from app.schemas.risk import RiskSummary
from app.schemas.terms import Term, Text
from app.services import publishing, releases, renderings, withdrawal
from app.services.auth import Principal
from app.services.ingest import Limits, read_corpus
from app.services.memory import give_back_memory
from app.services.series import get_series, series_warnings
from app.settings import Settings

#: Transactions from which an upload's pages are handed back to the OS once it is stored.
_LARGE_UPLOAD = 100_000
#: Seconds a ``wait=true`` post whose job succeeded keeps trying to read the answer (the
#: release's summary and risk) through a database outage before it answers 503.
_ANSWER_RETRY_S = 30.0
#: How a failed job's code is answered to a ``wait=true`` post: the job's own error, with
#: the status of its family (422 for a refused publication).
_FAILED_JOB_STATUS: dict[ErrorCode, type[AppError]] = {
    ErrorCode.STORAGE_FULL: InsufficientStorage,
    ErrorCode.DATABASE_UNAVAILABLE: ServiceUnavailable,
}

router = APIRouter(
    prefix="/v1/series/{name}/releases", tags=["releases"], responses=error_responses(401, 403, 404)
)


def upload_limits(settings: Settings) -> Limits:
    return Limits(
        max_transactions=settings.max_transactions,
        max_terms_per_transaction=settings.max_terms_per_transaction,
        max_distinct_terms=settings.max_distinct_terms,
        max_terms_per_release=settings.max_terms_per_release,
    )


def _check_length(request: Request, limit: int) -> None:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise PayloadTooLarge(f"the body exceeds the limit of {limit} bytes", {"limit": limit})


@router.post(
    "",
    status_code=202,
    summary="Post a release (a corpus to publish)",
    openapi_extra={"requestBody": RELEASE_BODY},
    responses={
        202: {"model": JobOut, "description": "Queued (a dry run too, without wait=true)"},
        201: {"model": PublishResult, "description": "Published (wait=true)"},
        200: {"model": PublishResult, "description": "Dry run (dry_run=true&wait=true)"},
        **error_responses(400, 409, 413, 415, 422, 503, 507),
    },
)
async def post_release(
    name: str,
    request: Request,
    runtime: RuntimeDep,
    principal: PublisherDep,
    wait: bool = False,
    dry_run: bool = False,
    label: Annotated[Text | None, Query(max_length=200)] = None,
    private_terms: Annotated[list[Term] | None, Query()] = None,
    idempotency_key: Annotated[str | None, Header(max_length=255)] = None,
) -> Response:
    async with runtime.db.session() as session:
        series = await get_series(session, name)
    settings = runtime.settings
    content_type = request.headers.get("content-type")
    json_body = (content_type or "").split(";")[0].strip().lower() == "application/json"
    _check_length(request, settings.max_json_bytes if json_body else settings.max_body_bytes)
    parse_started = time.perf_counter()
    corpus = await read_corpus(
        content_type,
        request.stream(),
        limit=settings.max_body_bytes,
        json_limit=settings.max_json_bytes,
        secret=runtime.secret,
        limits=upload_limits(settings),
        content_encoding=request.headers.get("content-encoding"),
        label=label,
        private_terms=private_terms,
        private_match=series.private_match,  # type: ignore[arg-type]
        require_individual=get_method(series.method).individuals == "required",
    )
    # A dry run is a job too: the worker computes it, as it does a publication, and this
    # process only waits for its answer (docs/performance.md, "Dry runs").
    posted = await publishing.posting_warnings(series, corpus)
    async with runtime.db.session() as session:
        job, _ = await publishing.create_job(
            session,
            principal,
            series,
            corpus,
            idempotency_key,
            time.perf_counter() - parse_started,
            dry_run=dry_run,
        )
    # The trail's event of this post names its job; the job's store names the release.
    note(request.scope, job=str(job.id))
    if len(corpus) >= _LARGE_UPLOAD:
        # The parsed body is garbage now; glibc would keep its pages (app.services.memory).
        del corpus
        await asyncio.to_thread(give_back_memory)
    if wait:
        return await _await_release(runtime, principal, name, job.id, posted, dry_run)
    body = publishing.job_out(job, name, principal, posted)
    return JSONResponse(body.model_dump(mode="json"), status_code=202)


async def _await_release(
    runtime: Runtime,
    principal: Principal,
    name: str,
    job_id: uuid.UUID,
    posted: list[dict[str, str]],
    dry_run: bool,
) -> Response:
    """201 once published; 202 with the job and ``posted`` (the warnings known when it was
    posted) while it still runs."""
    job = await publishing.wait_for_job(runtime.db, job_id, runtime.settings.wait_timeout_s)
    job_body = publishing.job_out(job, name, principal)
    if job.status == "failed":
        error = dict(job.error or {})
        code = stored_code(error.get("code"), ErrorCode.PUBLICATION_FAILED)
        raise _FAILED_JOB_STATUS.get(code, Unprocessable)(
            str(error.get("message", "the publication failed")),
            {**dict(error.get("details") or {}), "job": str(job.id)},
            code=code,
        )
    if job.status == "succeeded" and dry_run:
        answer = publishing.dry_run_answer(job, principal)
        return JSONResponse(answer.model_dump(mode="json"), status_code=200)
    if job.status != "succeeded" or job.release_no is None:
        running = publishing.job_out(job, name, principal, posted)
        return JSONResponse(running.model_dump(mode="json"), status_code=202)
    # Published: the answer is read again through an outage rather than answered 500 (a
    # poster retrying a 500 without an Idempotency-Key published the snapshot twice).
    deadline = time.monotonic() + _ANSWER_RETRY_S
    delay = 0.2
    while True:
        try:
            result = await _published(runtime, principal, name, job.release_no, job_body)
            return JSONResponse(result.model_dump(mode="json"), status_code=201)
        except Exception as exc:
            if not is_transient(exc):
                raise
            if time.monotonic() >= deadline:
                raise ServiceUnavailable(
                    f"release {job.release_no} was published, and the database stopped "
                    "answering before its summary could be read: GET the job, or post again "
                    "with the same Idempotency-Key",
                    {"job": str(job.id), "release_no": job.release_no},
                ) from exc
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)


async def _published(
    runtime: Runtime, principal: Principal, name: str, release_no: int, job_body: JobOut
) -> PublishResult:
    """The 201's body: the release's summary and risk, read in one short session."""
    async with runtime.db.session() as session:
        series = await get_series(session, name)
        # From the release's row and the risk summary its job filed: loading the release,
        # or the series to assess it, cost the API 9.2 GiB at 10,000,000 lines.
        model = await releases.get_release_model(session, series, release_no)
        release_summary = releases.summary_of_model(model)
        if release_summary is None:
            _, release = await releases.get_release(session, series, release_no)
            release_summary = releases.summary(release, series.method)
        risk = RiskSummary.model_validate_json(
            await renderings.risk_summary_bytes(
                session, runtime.db, series, release_no, None, principal.sees_private
            )
        )
    # The series' warnings, then the job's own (a term made private here that earlier
    # releases printed in clear, app.services.in_clear), each once.
    warnings = series_warnings(series)
    warnings += [w for w in job_body.warnings if w not in warnings]
    return PublishResult(
        dry_run=False,
        job=job_body,
        release=release_summary,
        risk=risk,
        warnings=warnings,
    )


@router.get("", response_model=list[ReleaseListItem], summary="The releases of a series")
async def list_releases(
    name: str, principal: ReadersDep, session: SessionDep
) -> list[ReleaseListItem]:
    return await releases.list_releases(session, await get_series(session, name))


_FORMAT = Query(description="`ndjson`: a first line without `clusters`, then one cluster a line")
_READ_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "model": release_out_model(),
        "content": {
            "application/json": {"examples": release_examples()},
            "application/x-ndjson": {
                "example": (
                    '{"series":"prison-health","release_no":2,"label":"2025","method":"sanony",'
                    '"n_rows":6}\n{"cluster_id":"c1","rows":[["arson","theft"]],'
                    '"private_terms":{"HIV":1},"global_share":{},"counterfeits":0}\n'
                )
            },
        },
        "description": "The release as stored bytes: `ETag`, `Cache-Control: immutable`, "
        "gzip when `Accept-Encoding` allows it, `Range` supported",
    },
    **DOCUMENT_RESPONSES,
    **error_responses(410),
}


@router.get("/{release_no}", summary="A published release (public view)", responses=_READ_RESPONSES)
async def read_release(
    name: str,
    release_no: ReleaseNo,
    request: Request,
    reader: ReadableDep,
    runtime: RuntimeDep,
    format: Annotated[Literal["json", "ndjson"], _FORMAT] = "json",  # noqa: A002 - API name
) -> Response:
    # ReadableDep checked the key's role and series before any byte is sent, 304s included.
    principal, series_id = reader
    if series_id is None:
        raise NotFound(f"no series {name!r}", {"series": name})
    # Before the stored bytes, which this process may remember: 410 once withdrawn.
    await withdrawal.ensure_served(runtime.db, principal, series_id, name, release_no)
    document = await renderings.release_document(runtime.db, series_id, name, release_no, format)
    return document_response(request, runtime.db, document, IMMUTABLE)


@router.head(
    "/{release_no}", summary="A published release's headers (size, ETag)", responses=_READ_RESPONSES
)
async def head_release(
    name: str,
    release_no: ReleaseNo,
    request: Request,
    reader: ReadableDep,
    runtime: RuntimeDep,
    format: Annotated[Literal["json", "ndjson"], _FORMAT] = "json",  # noqa: A002 - API name
) -> Response:
    return await read_release(name, release_no, request, reader, runtime, format)


def read_routes() -> dict[str, APIRoute]:
    """The routes of a release's GET and HEAD, by method (app.api.release_reads leaves them
    in the scope of the requests it answers before the router)."""
    endpoints = {read_release: "GET", head_release: "HEAD"}
    found = {
        endpoints[route.endpoint]: route
        for route in router.routes
        if isinstance(route, APIRoute) and route.endpoint in endpoints
    }
    assert len(found) == len(endpoints), "the release's read routes are declared above"
    return found


@router.post(
    "/{release_no}/withdraw",
    response_model=ReleaseListItem,
    summary="Withdraw a release (admin)",
    description="Analysts and publishers get 410 (`release_withdrawn`) for it from then on; it "
    "stays in the history later releases are judged against (it was public), and auditors "
    "and admins still read it, its risk and ledger. The release list marks it with the time "
    "and reason. Logged with the admin's key id.",
    openapi_extra=request_body(WithdrawalIn),
    responses=error_responses(400, 409, 413, 415, 422),
)
async def withdraw_release(
    name: str, release_no: ReleaseNo, request: Request, principal: AdminDep, session: SessionDep
) -> ReleaseListItem:
    body = await json_body(request, WithdrawalIn)
    series = await get_series(session, name)
    model = await withdrawal.withdraw_release(session, principal, series, release_no, body.reason)
    return ReleaseListItem(
        release_no=model.release_no,
        label=model.label,
        method=model.method,
        n_rows=model.n_rows,
        n_clusters=model.n_clusters,
        created_at=model.created_at,
        withdrawn=releases.withdrawn(model),
    )


def _can_read(principal: Principal, name: str) -> None:
    principal.require("analyst", "auditor", "publisher")
    principal.require_series(name)
