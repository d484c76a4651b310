"""``serialpub export``: an analyst's view of public releases, as baskets or a support table.

    serialpub export releases/ --format baskets-csv --seed 1 --release 3 --out baskets.csv
    serialpub export releases/ --format baskets-fimi --dictionary items.csv --out baskets.dat
    serialpub export releases/ --format supports --min-support 5 --pairs private
    serialpub export http://host:8000/v1/series/prison-health --key KEY --format supports

Baskets are one random reconstruction (Sanony paper, Definition 4) of each release (or of
``--release N``), a line per published row, every row kept: ``baskets-csv`` (``release_no,
cluster_id, row, items``, the terms a JSON array), ``baskets-jsonl`` (JSON Lines) or
``baskets-fimi`` (integer items, what mining tools read, with the dictionary of terms
``--dictionary`` names). ``supports`` (CSV) and ``supports-jsonl``: private terms, frequent
public terms and pairs, the model's expected supports and the bounds the release guarantees
(docs/analysis.md says what they hold). ``app/analysis/export.py`` writes the formats: a term
may hold spaces and stays whole in each.

It reads public JSON only (app.analysis); it needs pandas (``pip install -e '.[analysis]'``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from app.analysis.reader import Release

__all__ = ["FORMATS", "export"]

#: ``--format``'s choices.
FORMATS = ("supports", "supports-jsonl", "baskets-csv", "baskets-jsonl", "baskets-fimi")


def _load(source: str, series: str | None, key: str | None) -> list[Release]:
    try:
        from app.analysis.reader import UnsupportedRelease, load_series
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "pandas":
            raise
        typer.echo(
            "error: serialpub export reads releases with pandas, which the runtime does not "
            "install: pip install -e '.[analysis]'",
            err=True,
        )
        raise typer.Exit(2) from None
    try:
        return load_series(source, series=series, key=key)
    except (UnsupportedRelease, FileNotFoundError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="SOURCE") from exc
    except Exception as exc:  # httpx's, imported only for a URL
        if not type(exc).__module__.startswith("httpx"):
            raise
        response = getattr(exc, "response", None)
        detail = f"{response.status_code} {response.text[:300]}" if response is not None else exc
        raise typer.BadParameter(f"{source}: {detail}", param_hint="SOURCE") from exc


def _baskets(releases: list[Release], kind: str, seed: int, dictionary: Path | None) -> str:
    from app.analysis.export import fimi, to_csv, to_json_lines
    from app.analysis.reconstruct import basket_table

    table = basket_table(releases, seed)
    if kind == "baskets-csv":
        return to_csv(table)
    if kind == "baskets-jsonl":
        return to_json_lines(table)
    if dictionary is None:  # export() refuses it first; this keeps the FIMI path total
        raise typer.BadParameter("baskets-fimi needs it", param_hint="--dictionary")
    out = fimi(list(table["items"]))
    dictionary.write_text(out.dictionary, encoding="utf-8")
    typer.echo(f"dictionary of {out.terms} terms -> {dictionary}", err=True)
    if out.empty_rows:
        records = sum(r.records for r in releases)
        typer.echo(
            f"warning: {out.empty_rows} of {out.rows} rows hold no term; FIMI writes them as "
            "empty lines, which many readers skip: divide supports by the records "
            f"({records}), not by the lines read, or export baskets-csv",
            err=True,
        )
    return out.text


def _supports(releases: list[Release], kind: str, min_support: float, pairs: str) -> str:
    from app.analysis.estimates import supports_table
    from app.analysis.export import to_csv, to_json_lines

    table = supports_table(releases, min_support=min_support, pairs=pairs)
    return to_csv(table) if kind == "supports" else to_json_lines(table)


def export(
    source: Annotated[
        str,
        typer.Argument(
            help="a release JSON file, a directory of them (release-001.json, ...), or a "
            "series URL (http://host/v1/series/NAME)"
        ),
    ],
    format: Annotated[  # noqa: A002 - the option's name
        str,
        typer.Option(
            "--format",
            help="supports (CSV), supports-jsonl, baskets-csv, baskets-jsonl or baskets-fimi "
            "(with --dictionary)",
        ),
    ] = "supports",
    seed: Annotated[int, typer.Option(help="seed of the random reconstruction")] = 0,
    release: Annotated[
        int | None, typer.Option(help="only this release number (default: every release)")
    ] = None,
    min_support: Annotated[
        float,
        typer.Option(help="supports: least expected support, in records (below 1: a share)"),
    ] = 1.0,
    pairs: Annotated[
        str, typer.Option(help="supports: pairs to list: private, public, all or none")
    ] = "private",
    dictionary: Annotated[
        Path | None,
        typer.Option(help="baskets-fimi: write the items' terms here (CSV item,term)"),
    ] = None,
    series: Annotated[
        str | None, typer.Option(help="series name, with an API base URL as SOURCE")
    ] = None,
    key: Annotated[
        str | None, typer.Option(help="reader's API key for a URL", envvar="SERIALPUB_KEY")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="write here instead of stdout")] = None,
) -> None:
    """Export public releases as reconstructed baskets or a table of expected supports."""
    if format not in FORMATS:
        raise typer.BadParameter(
            f"one of {', '.join(FORMATS)}, not {format!r}", param_hint="--format"
        )
    if pairs not in ("private", "public", "all", "none"):
        raise typer.BadParameter("private, public, all or none", param_hint="--pairs")
    if (dictionary is None) == (format == "baskets-fimi"):
        raise typer.BadParameter(
            "baskets-fimi needs it (FIMI items are integers; the dictionary names their "
            "terms), and only baskets-fimi takes it",
            param_hint="--dictionary",
        )
    releases = _load(source, series, key)
    if release is not None:
        releases = [r for r in releases if r.release_no == release]
        if not releases:
            raise typer.BadParameter(f"no release {release} in {source}", param_hint="--release")
    if format.startswith("baskets"):
        text = _baskets(releases, format, seed, dictionary)
    else:
        text = _supports(releases, format, min_support, pairs)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
        typer.echo(f"{format} of {len(releases)} release(s) -> {out}", err=True)
