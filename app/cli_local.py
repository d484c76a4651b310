"""``serialpub publish-local``: run a method over a series of corpus files, no service needed.

    serialpub publish-local y1.dat y2.dat y3.dat --private HIV,cancer --params '{"r_th": 2}' \\
        --out releases/

Each corpus is read as the service reads a posted body, by the same code: a FIMI text file
(``.dat``, ``.fimi``: one transaction a line, terms separated by white space), a CSV file
(``.csv``: a header with ``terms``, terms separated by ``;``, and optionally ``individual`` and
``cluster``) or a JSON file (``.json``: the body of ``POST .../releases``, or its list of
transactions alone); ``--format`` names the format of files whose extension does not. Terms are
validated and private terms matched as the service does (``--private-match``, ``casefold`` by
default), and the warnings about terms are printed with each release. ``--private-file`` holds
one private term a line. Each release is written as the public JSON of docs/api.md
(``release-001.json``, ...); ``risk.json`` holds the serial risk of every release once the
whole series is out, and ``report.json`` what each publication did (counterfeits by phase,
timings, warnings). The ledgers (counterfeit rows, individuals, and the secret each release's
random choices were drawn from, ``randomness``) go to ``--ledger-dir``, by default
``releases.private/`` beside ``releases/``, never inside it (:mod:`app.cli_folders`): keep
them, never publish them; ``serialpub verify --ledger`` and ``serialpub attack`` read them
there. Both folders must be empty (``--replace`` empties them first). A ``seed`` in
``--params`` makes every random choice follow from it (tests, benchmarks): a warning says so,
the public files never print it, and production refuses it.

The exit status is ``verify``'s on the same folder for a method that keeps the serial risk
(Sanony, Kanony): 1 when a row of the series is over ``r_th``, else 0. A method that makes no
serial claim (``anony``, ``scomp``, ``wong``, ``inv``) says so, with its rows over ``r_th``,
and exits 0.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from app.cli_folders import OutputFolders, plan_folders
from app.core.errors import CoreError, InvalidCorpus
from app.core.guarantees import guarantee_of
from app.core.history import SeriesHistory
from app.core.methods import Method
from app.core.model import PublishedRelease
from app.core.pipeline import publish
from app.core.risk.assess import ReleaseRisk, assess_series
from app.core.risk.total_exposure import exposure_warning
from app.core.segen import choose_private_terms
from app.errors import AppError
from app.io.ledger import ledger_document
from app.io.public import release_document, risk_document
from app.io.terms import PRIVATE_MATCH, PrivateMatch, normalize_private_terms
from app.io.terms import private_terms_from_lines as _terms_from_lines
from app.methods.registry import get_method, method_names
from app.services.corpus_file import FORMATS, corpus_format, read_corpus_file
from app.services.in_clear import published_earlier_warnings
from app.services.ingest import Corpus
from app.services.payload import publication_input
from app.settings import SEED_REFUSED, get_settings

__all__ = ["publish_local"]


def _private_terms(
    private: str | None,
    private_file: Path | None,
    fraction: float | None,
    corpora: list[Corpus],
    mode: PrivateMatch,
) -> frozenset[str]:
    """The private terms, normalised and checked as the service checks a series' own."""
    try:
        if private:
            return frozenset(
                normalize_private_terms([t for t in private.split(",") if t.strip()], mode)
            )
        if private_file:
            text = private_file.read_text(encoding="utf-8-sig")
            return frozenset(_terms_from_lines(text, mode))
    except (InvalidCorpus, UnicodeDecodeError) as exc:
        hint = "--private" if private else "--private-file"
        raise typer.BadParameter(str(exc), param_hint=hint) from exc
    if fraction:
        terms = {t for corpus in corpora for t in corpus.compact.terms}
        return choose_private_terms(sorted(terms), fraction, seed=0)
    raise typer.BadParameter("give --private, --private-file or --private-fraction")


def _read(path: Path, given: str | None, mode: PrivateMatch, individuals: bool) -> Corpus:
    """``path`` as the service reads a body (:mod:`app.services.corpus_file`)."""
    try:
        form = corpus_format(path, given)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--format") from exc
    try:
        return read_corpus_file(path, form, private_match=mode, require_individual=individuals)
    except AppError as exc:
        raise typer.BadParameter(f"{path}: {exc.message}", param_hint="CORPORA") from exc


def _size(release: PublishedRelease, report: dict[str, object]) -> str:
    if release.layout is not None:  # chunks, not rows
        return f"{report.get('records', 0)} records in chunks"
    return f"{release.n_rows} rows"


def _loss(report: dict[str, object]) -> str:
    """The information loss of methods that report one (disassociation's ``tlost``)."""
    return f", tlost {report['tlost']}" if "tlost" in report else ""


def publish_local(
    corpora: Annotated[list[Path], typer.Argument(help="corpus files, oldest first", exists=True)],
    out: Annotated[
        Path, typer.Option(help="an empty folder for the public release JSON files")
    ] = Path("releases"),
    ledger_dir: Annotated[
        Path | None,
        typer.Option(
            help="an empty folder for the private ledgers, outside --out (default: the "
            "folder beside it named as private, releases.private for releases)"
        ),
    ] = None,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="empty both folders first (they may hold only an earlier run's output)",
        ),
    ] = False,
    method: Annotated[str, typer.Option(help=f"one of {', '.join(method_names())}")] = ("sanony"),
    private: Annotated[str | None, typer.Option(help="private terms, comma separated")] = None,
    private_file: Annotated[Path | None, typer.Option(help="file of private terms")] = None,
    private_fraction: Annotated[
        float | None, typer.Option(help="choose this fraction of the terms at random (seed 0)")
    ] = None,
    params: Annotated[str, typer.Option(help='method parameters as JSON, e.g. {"r_th": 2}')] = (
        "{}"
    ),
    series: Annotated[str, typer.Option(help="series name written in the JSON")] = "local",
    form: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=f"format of every corpus ({', '.join(FORMATS)}); default: by extension "
            "(.dat, .fimi: fimi; .csv; .json)",
        ),
    ] = None,
    private_match: Annotated[
        str, typer.Option(help=f"how private terms match spellings: {', '.join(PRIVATE_MATCH)}")
    ] = "casefold",
) -> None:
    """Publish a series of corpora with a method and write each release as public JSON."""
    try:
        declared = get_method(method)
    except CoreError as exc:
        raise typer.BadParameter(str(exc), param_hint="--method") from exc
    try:
        effective = declared.parse(json.loads(params))
    except (json.JSONDecodeError, CoreError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--params") from exc
    if private_match not in PRIVATE_MATCH:
        raise typer.BadParameter(
            f"use one of {', '.join(PRIVATE_MATCH)}", param_hint="--private-match"
        )
    if getattr(effective, "seed", None) is not None and not get_settings().publisher_seed_allowed:
        raise typer.BadParameter(SEED_REFUSED, param_hint="--params")
    mode: PrivateMatch = "exact" if private_match == "exact" else "casefold"
    folders = plan_folders(out, ledger_dir, replace)
    individuals = declared.individuals == "required"
    loaded = [_read(path, form, mode, individuals) for path in corpora]
    private_terms = _private_terms(private, private_file, private_fraction, loaded, mode)
    folders.make()
    history = SeriesHistory()
    reports = []
    for path, upload in zip(corpora, loaded, strict=True):
        started = time.perf_counter()
        # Matched as the service matches a release: a JSON file's own private terms are
        # private from its release on, as a post's are.
        corpus, private_terms, term_warnings = publication_input(
            upload.compact, private_terms, upload.private_terms, mode
        )
        term_warnings += published_earlier_warnings(history.releases, private_terms, mode)

        def show(phase: str, fraction: float, name: str = path.name) -> None:
            typer.echo(f"\r{name}: {phase:<7} {fraction:6.1%}", nl=False, err=True)

        try:
            publication = publish(method, history, corpus, private_terms, effective, show)
        except CoreError as exc:
            typer.echo(f"\n{path}: {exc.message}", err=True)
            raise typer.Exit(1) from exc
        publication.release.label = upload.label or path.stem
        history.add(publication.release, publication.ledger)
        document = release_document(publication.release, series, method, declared.echo(effective))
        target = out / f"release-{publication.release.release_no:03d}.json"
        target.write_text(json.dumps(document), encoding="utf-8")
        # The ledger (``verify --ledger`` and ``attack`` read it) apart from the public files.
        (folders.ledgers / target.name.replace("release-", "ledger-")).write_text(
            json.dumps(ledger_document(publication.release, publication.ledger)), encoding="utf-8"
        )
        found = publication.report.get("warnings")
        warnings = [*term_warnings, *(found if isinstance(found, list) else [])]
        if warnings:
            publication.report["warnings"] = warnings
        reports.append({"file": str(path), **publication.report})
        for warning in warnings:
            typer.echo(f"\nwarning: {warning['message']}", err=True)
        typer.echo(
            f"\r{path.name}: release {publication.release.release_no}, "
            f"{_size(publication.release, publication.report)}, "
            f"{publication.report.get('counterfeits', 0)} "
            f"counterfeits{_loss(publication.report)}, {time.perf_counter() - started:.2f} s "
            f"-> {target}",
            err=True,
        )
    (out / "report.json").write_text(json.dumps(reports, indent=2), encoding="utf-8")
    r_th = declared.risk_threshold(effective)
    if r_th is None:
        _echo_ledgers(folders)
        return  # a single-release method (disassociation): no serial risk to assess
    assessed = assess_series(history.releases, r_th, with_rows=False)
    for risk in assessed:
        warning = exposure_warning(risk.published_total, r_th)
        if warning is not None:
            typer.echo(f"warning: release {risk.release_no}: {warning['message']}", err=True)
    risks = [risk_document(r) for r in assessed]
    (out / "risk.json").write_text(json.dumps(risks, indent=2), encoding="utf-8")
    worst = max((r["max_serial_risk"] for r in risks), default=0.0)
    typer.echo(f"max serial risk over the series: {worst:.4f} (r_th = {r_th})")
    _echo_ledgers(folders)
    _exit_as_verify(declared, declared.echo(effective), assessed)


def _echo_ledgers(folders: OutputFolders) -> None:
    typer.echo(
        f"ledgers -> {folders.ledgers} (private: which rows are counterfeits and each "
        f"release's secret; keep this folder apart from {folders.public} and never publish it)",
        err=True,
    )


def _claims_serial_risk(method: Method, echoed: dict[str, object]) -> bool:
    """Whether ``method`` keeps every row's serial risk (design.md §4) under ``r_th``: Sanony
    under either guarantee and Kanony (app/core/guarantees.py). The others judge each release
    alone (``anony``, ``scomp``) or bound another quantity (``wong``, ``inv``)."""
    return guarantee_of(method.name, echoed).name in ("true_rows", "paper")


def _exit_as_verify(method: Method, echoed: dict[str, object], assessed: list[ReleaseRisk]) -> None:
    """What ``serialpub verify`` says of the folder: a method that keeps the serial risk
    exits 1 when a row is over ``r_th``, as ``verify`` does; a method that makes no serial
    claim says so, with the rows over, and exits 0 (its releases are what was asked for)."""
    over = sum(risk.rows_over_threshold for risk in assessed)
    if not over:
        return
    for risk in assessed:
        if risk.rows_over_threshold:
            typer.echo(
                f"release {risk.release_no}: {risk.rows_over_threshold} of {risk.n_rows} rows "
                f"over r_th (max serial risk {risk.max_serial_risk:.4f})",
                err=True,
            )
    if _claims_serial_risk(method, echoed):
        typer.echo(f"BREACH: {over} rows over r_th", err=True)
        raise typer.Exit(1)
    typer.echo(
        f"{method.name} makes no serial claim: it does not protect a series against "
        f"composition across its releases ({over} rows over r_th here, which serialpub verify "
        "reports as a breach; sanony keeps every row within r_th)",
        err=True,
    )
