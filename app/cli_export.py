"""``serialpub export``: an analyst's view of public releases, as baskets or a support table.

    serialpub export releases/ --format baskets --seed 1 --release 3 --out baskets.dat
    serialpub export releases/ --format supports --min-support 5 --pairs private
    serialpub export http://host:8000/v1/series/prison-health --key KEY --format supports

``baskets``: one random reconstruction (Sanony paper, Definition 4) of each release (or of
``--release N``), one row a line, terms separated by spaces (FIMI, what mining tools read).
``supports``: CSV of the expected supports of private terms, frequent public terms and pairs,
with the intervals the release allows (docs/analysis.md says what they hold).

It reads public JSON only (app.analysis); it needs pandas (``pip install -e '.[analysis]'``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from app.analysis.reader import Release

__all__ = ["export"]


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


def export(
    source: Annotated[
        str,
        typer.Argument(
            help="a release JSON file, a directory of them (release-001.json, ...), or a "
            "series URL (http://host/v1/series/NAME)"
        ),
    ],
    format: Annotated[  # noqa: A002 - the option's name
        str, typer.Option("--format", help="baskets (reconstructed rows) or supports (CSV)")
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
    z: Annotated[float, typer.Option(help="supports: interval half-width in sd")] = 1.96,
    series: Annotated[
        str | None, typer.Option(help="series name, with an API base URL as SOURCE")
    ] = None,
    key: Annotated[
        str | None, typer.Option(help="reader's API key for a URL", envvar="SERIALPUB_KEY")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="write here instead of stdout")] = None,
) -> None:
    """Export public releases as reconstructed baskets or a table of expected supports."""
    if format not in ("baskets", "supports"):
        raise typer.BadParameter("baskets or supports", param_hint="--format")
    if pairs not in ("private", "public", "all", "none"):
        raise typer.BadParameter("private, public, all or none", param_hint="--pairs")
    releases = _load(source, series, key)
    if release is not None:
        releases = [r for r in releases if r.release_no == release]
        if not releases:
            raise typer.BadParameter(f"no release {release} in {source}", param_hint="--release")
    if format == "baskets":
        from app.analysis.reconstruct import reconstruct

        text = "".join(" ".join(basket) + "\n" for r in releases for basket in reconstruct(r, seed))
    else:
        from app.analysis.estimates import supports_table

        table = supports_table(releases, min_support=min_support, pairs=pairs, z=z)
        text = table.to_csv(index=False)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
        typer.echo(f"{format} of {len(releases)} release(s) -> {out}", err=True)
