"""``serialpub attack``: the semantic audit of design.md §11 on local files, no service needed.

    serialpub publish-local y1.dat y2.dat --private HIV,cancer --out releases/
    serialpub attack y1.dat y2.dat --published releases/ [--background world.txt]

The raw files are the snapshots ``publish-local`` published, in the same order; the
directory is its output (``release-001.json``, ...), and the ledgers are in
``--ledger-dir``, by default where ``publish-local`` writes them (``releases.private/``
beside ``releases/``, :func:`app.io.ledger.default_ledger_dir`). Each
release is attacked as a publication job would (:func:`app.core.attacks.audit_report`, the
same settings as the series parameter ``semantic_audit``) and the reports are printed as
JSON on stdout; progress goes to stderr. Each report carries the frequency detector's
section (``frequency``) over the releases up to it, scored against their ledgers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from app.core.attacks.settings import AuditSettings
    from app.core.disassociation.model import Disassociation
    from app.core.model import PublishedRelease, ReleaseLedger, Transaction

__all__ = ["attack"]


Loaded = tuple[dict[str, Any], "ReleaseLedger", frozenset[str]]


def _load(directory: Path, ledgers: Path, count: int) -> list[Loaded]:
    """The first ``count`` public documents, their ledgers and private terms."""
    from app.io.ledger import read_ledger

    loaded = []
    for number in range(1, count + 1):
        public = directory / f"release-{number:03d}.json"
        private = ledgers / f"ledger-{number:03d}.json"
        if not public.exists():
            raise typer.BadParameter(
                f"{public} is missing: one raw file per release", param_hint="--published"
            )
        if not private.exists():
            raise typer.BadParameter(
                f"{private} is missing: the attack is scored against the ledgers, which "
                f"publish-local writes beside the public folder ({ledgers.name} by default)",
                param_hint="--ledger-dir",
            )
        document = json.loads(public.read_text(encoding="utf-8"))
        loaded.append((document, *read_ledger(json.loads(private.read_text(encoding="utf-8")))))
    return loaded


def _settings(
    scoring: str, selection: str, seed: int | None, window: int, mixture_draws: int
) -> AuditSettings:
    from app.core.attacks.settings import parse_audit_settings
    from app.core.errors import CoreError

    raw = {
        "scoring": scoring,
        "selection": selection.split(",") if "," in selection else selection,
        "seed": seed,
        "window": window,
        "mixture_draws": mixture_draws,
    }
    try:
        return parse_audit_settings(raw)
    except CoreError as exc:
        raise typer.BadParameter(exc.message) from exc


def _disassociated(
    document: dict[str, Any], corpus: list[Transaction], path: Path
) -> tuple[PublishedRelease, Disassociation]:
    """A disassociated release and its ground truth, which publish-local does not write
    (it is what the chunks hide): the raw snapshot disassociated again with the release's
    parameters. Disassociation draws nothing at random, so that gives the published chunks
    back, or the raw file is not this release's snapshot."""
    from app.core.disassociation.model import DisassociatedRelease, Disassociation
    from app.core.disassociation.publish import publish_disassociation
    from app.core.history import SeriesHistory
    from app.core.model import PublishedRelease
    from app.methods.registry import get_method

    layout = DisassociatedRelease.from_json(document)
    params = get_method("disassociation").parse(document.get("params", {}))
    again = publish_disassociation(SeriesHistory(), corpus, frozenset(), params)
    truth = again.extra(Disassociation)
    if again.release.layout != layout or truth is None:
        raise typer.BadParameter(
            f"{path} is not the snapshot of release {document['release_no']}: disassociated "
            "again, it does not give the published chunks",
            param_hint="RAW",
        )
    release = PublishedRelease(
        release_no=int(document["release_no"]),
        clusters=[],
        global_bag={},
        population_rates={},
        label=document.get("label"),
        layout=layout,
    )
    return release, truth


def _r_th(document: dict[str, Any]) -> float | None:
    """The release's own threshold, for the frequency detector's discounted risk."""
    value = document.get("params", {}).get("r_th")
    return float(value) if value is not None else None


def attack(
    raw: Annotated[list[Path], typer.Argument(help="raw snapshots, oldest first", exists=True)],
    published: Annotated[
        Path, typer.Option(help="publish-local's output directory", exists=True, file_okay=False)
    ],
    ledger_dir: Annotated[
        Path | None,
        typer.Option(
            help="publish-local's ledgers (default: the folder beside --published named as "
            "private, releases.private for releases)",
            file_okay=False,
        ),
    ] = None,
    background: Annotated[
        Path | None,
        typer.Option(
            help="background corpus (FIMI or JSON); default: the published rows up to each release",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    scoring: Annotated[str, typer.Option(help="ngd, or embedding (NGD and skip-gram)")] = "ngd",
    selection: Annotated[str, typer.Option(help="all, or aba, mra, rga (comma separated)")] = (
        "all"
    ),
    seed: Annotated[int | None, typer.Option(help="default: the release's seed")] = None,
    window: Annotated[int, typer.Option(help="skip-gram context window")] = 5,
    mixture_draws: Annotated[
        int, typer.Option(help="hypotheses the Bayesian adversary draws, 0-256 (0: none)")
    ] = 16,
) -> None:
    """Attack each locally published release with a background corpus; print the reports."""
    # Imported here: every other command starts without loading the attack's numerics.
    from app.core.attacks.release_audit import audit_report, published_background
    from app.io.corpus import read_corpus
    from app.io.ledger import default_ledger_dir, read_release

    settings = _settings(scoring, selection, seed, window, mixture_draws)
    folder = ledger_dir if ledger_dir is not None else default_ledger_dir(published)
    loaded = _load(published, folder, len(raw))
    uploaded = None
    if background is not None:
        uploaded = [sorted(t.terms) for t in read_corpus(background)]
    releases: list[PublishedRelease] = []
    ledgers: list[ReleaseLedger | None] = []
    reports = []
    for path, (document, ledger, private_terms) in zip(raw, loaded, strict=True):
        corpus = read_corpus(path)
        method = str(document.get("method", "sanony"))
        truth = None
        if method == "disassociation":
            release, truth = _disassociated(document, corpus, path)
        else:
            release = read_release(document)
        release.private_terms = private_terms
        releases.append(release)
        ledgers.append(ledger)
        known = uploaded if uploaded is not None else published_background(releases)

        def show(phase: str, fraction: float, name: str = path.name) -> None:
            typer.echo(f"\r{name}: {phase:<9} {fraction:6.1%}", nl=False, err=True)

        report = audit_report(
            corpus,
            release,
            ledger,
            known,
            settings,
            method=method,
            series_seed=int(document.get("params", {}).get("seed") or 0),
            progress=show,
            disassociation=truth,
            series=None if truth is not None else releases,
            series_ledgers=ledgers,
            r_th=_r_th(document),
        )
        typer.echo(
            f"\r{path.name}: {report['status']}, {report.get('seconds', 0) or 0:.2f} s" + " " * 12,
            err=True,
        )
        reports.append({"file": str(path), "release_no": release.release_no, **report})
    typer.echo(json.dumps({"releases": reports}, indent=2))
