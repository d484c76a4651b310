"""PNG figures of the evaluation, laid out like the paper's Figures 6-9.

Each figure has one row of panels per corpus (B1, B2) and one column per sweep (sz, rep,
r_th; the other two parameters at their defaults); Figures 7 and 9 add a column per release
at the default setting. Bars and points are means over seeds, whiskers the min-max range.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from benchmarks.evaluation.config import ALL_METHODS, Plan, Setting  # noqa: E402
from benchmarks.evaluation.summary import lookup  # noqa: E402
from benchmarks.evaluation.utility import BANDS  # noqa: E402

__all__ = ["FIGURES", "write_figures"]

COLOURS = {
    "anony": "#9ecae1",
    "sanony": "#08519c",
    "true_rows": "#41ab5d",
    "inv": "#e6550d",
    "kanony": "#31a354",
    "scomp": "#756bb1",
    "wong": "#8c6d31",
}
NAMES = {
    "anony": "Anony",
    "sanony": "Sanony (paper)",
    "true_rows": "Sanony (true_rows, default)",
    "inv": "Inv (m=2)",
    "kanony": "Kanony",
    "scomp": "sComp",
    "wong": "Wong (l=2)",
}
#: Line styles of the per-release and runtime panels (Kanony often overlays Sanony exactly).
LINES = {
    "anony": ("o", "-"),
    "sanony": ("o", "-"),
    "true_rows": ("P", "-"),
    "inv": ("s", "-"),
    "kanony": ("^", "--"),
    "scomp": ("D", "-"),
    "wong": ("v", "-"),
}
BAND_COLOURS = {
    "low": ("#c6dbef", "#2171b5"),
    "medium": ("#fdd0a2", "#d94801"),
    "high": ("#c7e9c0", "#238b45"),
}
SWEEP_TITLES = {
    "sz": "sample size sz",
    "rep": "repeat rate rep",
    "r_th": "risk-lift threshold r_th",
    "defaults": "defaults",
}

FIGURES = {
    "risk": "fig6_rows_at_risk.png",
    "counterfeits": "fig7_counterfeit_rate.png",
    "utility": "fig8_utility.png",
    "utility_methods": "fig8b_utility_all_methods.png",
    "runtime": "fig9_runtime.png",
}


def _panels(plan: Plan) -> list[tuple[str, list[float]]]:
    """One column per sweep; a single "defaults" column when no parameter is swept."""
    return list(plan.sweeps.items()) or [("defaults", [math.nan])]


def _setting(plan: Plan, sweep: str, value: float) -> Setting:
    return plan.default if sweep == "defaults" else plan.sweep_setting(sweep, value)


def _tick(name: str, value: float) -> str:
    if name == "defaults":
        return "default setting"
    if name in ("sz", "rep"):
        return f"{value * 100:g}%"
    return f"{value:g}"


def _grid(plan: Plan, extra: int, title: str) -> tuple[Figure, np.ndarray]:
    columns = len(_panels(plan)) + extra
    fig, axes = plt.subplots(
        len(plan.corpora),
        columns,
        figsize=(4.6 * columns, 3.6 * len(plan.corpora) + 1.0),
        squeeze=False,
    )
    fig.suptitle(title, fontsize=13, fontweight="bold", y=1 - 0.15 / fig.get_figheight(), va="top")
    return fig, axes


def _subtitle(plan: Plan) -> str:
    d = plan.default
    note = plan.anony_r_th_note()
    return (
        f"defaults sz {d.sz * 100:g}%, rep {d.rep * 100:g}%, r_th {d.r_th:g}; "
        f"{plan.releases} releases, {plan.private_fraction:.0%} of terms private; "
        + (f"{'/'.join(_readers(plan))} {note} (Anony step); " if note else "")
        + f"mean of {len(plan.seeds)} seed(s), whiskers min-max"
    )


def _readers(plan: Plan) -> list[str]:
    """Display names of the methods run whose Anony step takes ``--anony-r-th``."""
    return [NAMES[m] for m in _methods(plan) if plan.method_label(m) != m]


def _name(plan: Plan, method: str) -> str:
    """Legend name of ``method``; Sanony and Kanony carry ``--anony-r-th`` when it is set."""
    if plan.method_label(method) == method:
        return NAMES[method]
    return f"{NAMES[method]} (anony_r_th {plan.anony_r_th:g})"


#: A measure of a setting where every seed failed: drawn as a red cross, not as a bar.
FAILED = (-np.inf, -np.inf, -np.inf)


def _measure(entry: dict[str, Any] | None, key: str, scale: float = 1.0) -> tuple[float, ...]:
    if entry and not entry["seeds"]:
        return FAILED
    stat = entry.get(key) if entry else None
    if not stat:
        return (np.nan, np.nan, np.nan)
    return (stat["mean"] * scale, stat["min"] * scale, stat["max"] * scale)


def _grouped_bars(
    ax: Axes, labels: list[str], series: list[tuple[str, list[tuple[float, ...]], dict[str, Any]]]
) -> list[Any]:
    """Bars grouped by x label; ``series`` = (legend, [(mean, lo, hi) per label], style)."""
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(labels))
    bars = []
    for k, (name, values, style) in enumerate(series):
        shown = [i for i, v in enumerate(values) if np.isfinite(v[0])]
        means = np.array([values[i][0] for i in shown])
        errors = np.array(
            [
                [values[i][0] - values[i][1] for i in shown],
                [values[i][2] - values[i][0] for i in shown],
            ]
        ).reshape(2, len(shown))
        position = x[shown] - 0.4 + width * (k + 0.5)
        for i, value in enumerate(values):
            if value == FAILED:
                ax.plot(
                    x[i] - 0.4 + width * (k + 0.5),
                    0,
                    "x",
                    color="red",
                    mew=2,
                    markersize=8,
                    clip_on=False,
                    zorder=5,
                )
        bars.append(
            ax.bar(
                position,
                means,
                width,
                label=name,
                yerr=errors,
                capsize=2,
                error_kw={"lw": 0.8},
                **style,
            )
        )
    ax.set_xticks(x, labels)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return bars


def _methods(plan: Plan, wanted: tuple[str, ...] = ALL_METHODS) -> list[str]:
    return [m for m in ALL_METHODS if m in plan.methods and m in wanted]


def _plain_log(ax: Axes) -> None:
    """Log y axis labelled 0.01, 0.02, 0.05, 0.1 ... instead of powers of ten."""
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(
        FuncFormatter(
            lambda v, _: (
                f"{v:g}" if v > 0 and round(v / 10 ** np.floor(np.log10(v))) in (2, 5) else ""
            )
        )
    )
    ax.grid(alpha=0.3, which="both")


def _label_panel(ax: Axes, corpus: str, sweep: str, ylabel: str) -> None:
    what = "default setting" if sweep == "defaults" else f"vs {SWEEP_TITLES.get(sweep, sweep)}"
    ax.set_title(f"{corpus}: {what}", fontsize=11)
    ax.set_xlabel(SWEEP_TITLES.get(sweep, sweep))
    ax.set_ylabel(ylabel)


def _finish(fig: Figure, plan: Plan, path: Path, handles: list[Artist] | None = None) -> None:
    if handles is None:
        handles, _ = fig.axes[0].get_legend_handles_labels()
    if any(line.get_marker() == "x" for ax in fig.axes for line in ax.lines):
        handles = [
            *handles,
            Line2D([], [], color="red", marker="x", ls="", mew=2, label="failed (every seed)"),
        ]
    labels = [str(h.get_label()) for h in handles]
    # One legend row when it fits the width (about 9 characters an inch), else several.
    width = sum(len(label) + 6 for label in labels) / 9
    ncol = len(labels) if width < fig.get_figwidth() else math.ceil(len(labels) / 2)
    rows = math.ceil(len(labels) / ncol)
    fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False, fontsize=10)
    height = fig.get_figheight()
    # The subtitle on as many lines as the width needs (about 14 characters an inch at 9 pt).
    subtitle = textwrap.wrap(_subtitle(plan), max(40, int(fig.get_figwidth() * 14)))
    fig.text(
        0.5,
        1 - 0.5 / height,
        "\n".join(subtitle),
        ha="center",
        va="top",
        fontsize=9,
        color="#444444",
    )
    top = 0.75 + 0.16 * (len(subtitle) - 1)
    fig.tight_layout(rect=(0, (0.15 + 0.3 * rows) / height, 1, 1 - top / height))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure_rows_at_risk(plan: Plan, summaries: list[dict[str, Any]], path: Path) -> None:
    """Fig. 6: rows whose serial risk exceeds r_th over the whole series, per method."""
    fig, axes = _grid(plan, 0, "Fig. 6 - rows at risk (serial risk > r_th, whole series)")
    methods = _methods(plan)
    for r, source in enumerate(plan.corpora):
        for c, (sweep, values) in enumerate(_panels(plan)):
            ax = axes[r, c]
            settings = [_setting(plan, sweep, v) for v in values]
            series = []
            for m in methods:
                found = [
                    _measure(lookup(summaries, source.label, s, m), "rows_at_risk")
                    for s in settings
                ]
                series.append((_name(plan, m), found, {"color": COLOURS[m]}))
            bars = _grouped_bars(ax, [_tick(sweep, v) for v in values], series)
            for group, (_, found, _) in zip(bars, series, strict=True):
                shown = [v for v in found if np.isfinite(v[0])]
                for bar, value in zip(group, shown, strict=True):
                    if value[0] == 0:
                        ax.annotate(
                            "0",
                            (bar.get_x() + bar.get_width() / 2, 0),
                            ha="center",
                            va="bottom",
                            fontsize=7,
                            xytext=(0, 1),
                            textcoords="offset points",
                        )
            _label_panel(ax, source.label, sweep, "rows at risk")
    _finish(fig, plan, path)


def _counterfeit_methods(plan: Plan) -> list[str]:
    return _methods(plan, ("sanony", "inv", "kanony"))


def figure_counterfeits(plan: Plan, summaries: list[dict[str, Any]], path: Path) -> None:
    """Fig. 7: counterfeit rows / published rows over the series (bars) and the worst
    release (black ticks), per method with counterfeits; last column per release."""
    fig, axes = _grid(plan, 1, "Fig. 7 - counterfeit rate (counterfeit rows / published rows)")
    methods = _counterfeit_methods(plan)
    for r, source in enumerate(plan.corpora):
        for c, (sweep, values) in enumerate(_panels(plan)):
            ax = axes[r, c]
            settings = [_setting(plan, sweep, v) for v in values]
            series = []
            for m in methods:
                found = [
                    _measure(lookup(summaries, source.label, s, m), "counterfeit_rate", 100)
                    for s in settings
                ]
                series.append((_name(plan, m), found, {"color": COLOURS[m]}))
            bars = _grouped_bars(ax, [_tick(sweep, v) for v in values], series)
            for group, m in zip(bars, methods, strict=True):
                worst = [
                    _measure(lookup(summaries, source.label, s, m), "worst_release_rate", 100)[0]
                    for s in settings
                ]
                centres = [b.get_x() + b.get_width() / 2 for b in group]
                worst = [w for w in worst if np.isfinite(w)]
                ax.plot(
                    centres,
                    worst,
                    "D",
                    color="black",
                    mfc="white",
                    markersize=4.5,
                    mew=1.2,
                    ls="",
                    zorder=4,
                )
            _paper_lines(ax)
            _label_panel(ax, source.label, sweep, "counterfeit rows (%)")
        _per_release_panel(
            axes[r, -1],
            plan,
            summaries,
            source.label,
            methods,
            "counterfeit_rate",
            100,
            "counterfeit rows (%)",
        )
        _paper_lines(axes[r, -1])
    handles: list[Artist] = [Patch(color=COLOURS[m], label=_name(plan, m)) for m in methods]
    handles += [
        Line2D(
            [],
            [],
            color="black",
            marker="D",
            mfc="white",
            ls="",
            markersize=4.5,
            mew=1.2,
            label="worst release",
        ),
        Line2D([], [], color="grey", ls=":", label="paper: Sanony mean 1%"),
        Line2D([], [], color="grey", ls="--", label="paper: Sanony worst 4%"),
    ]
    _finish(fig, plan, path, handles)


def _paper_lines(ax: Axes) -> None:
    ax.axhline(1.0, color="grey", ls=":", lw=1)
    ax.axhline(4.0, color="grey", ls="--", lw=1)


def _per_release_panel(
    ax: Axes,
    plan: Plan,
    summaries: list[dict[str, Any]],
    corpus: str,
    methods: list[str],
    key: str,
    scale: float,
    ylabel: str,
) -> None:
    releases = np.arange(1, plan.releases + 1)
    for m in methods:
        entry = lookup(summaries, corpus, plan.default, m)
        if not entry or not entry["per_release"]:
            continue
        stats = [e.get(key) for e in entry["per_release"]]
        means = np.array([s["mean"] * scale if s else np.nan for s in stats])
        lows = np.array([s["min"] * scale if s else np.nan for s in stats])
        highs = np.array([s["max"] * scale if s else np.nan for s in stats])
        shown = releases[: len(means)]
        marker, style = LINES[m]
        ax.plot(
            shown,
            means,
            marker=marker,
            ls=style,
            color=COLOURS[m],
            label=_name(plan, m),
            mfc="none" if style == "--" else COLOURS[m],
        )
        ax.fill_between(shown, lows, highs, color=COLOURS[m], alpha=0.15, lw=0)
    ax.set_xticks(releases)
    ax.set_title(f"{corpus}: per release (defaults)", fontsize=11)
    ax.set_xlabel("release")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


def figure_utility(plan: Plan, summaries: list[dict[str, Any]], path: Path) -> None:
    """Fig. 8: mean relative error (formula 21) per support band, Anony (light, hatched)
    against Sanony (dark)."""
    where = "source corpus" if plan.bands_on == "source" else "snapshot"
    fig, axes = _grid(
        plan, 0, f"Fig. 8 - relative error of term-pair supports (formula 21; bands on the {where})"
    )
    pairs = [(band, m) for band in BANDS for m in ("anony", "sanony") if m in plan.methods]
    for r, source in enumerate(plan.corpora):
        for c, (sweep, values) in enumerate(_panels(plan)):
            settings = [_setting(plan, sweep, v) for v in values]
            series = []
            for band, m in pairs:
                found = [_utility(lookup(summaries, source.label, s, m), band) for s in settings]
                light, dark = BAND_COLOURS[band]
                style = (
                    {"color": light, "hatch": "//", "edgecolor": dark, "lw": 0}
                    if m == "anony"
                    else {"color": dark}
                )
                series.append(
                    (f"{_name(plan, m)}, {band} ({BANDS[band][0]}-{BANDS[band][1]})", found, style)
                )
            _grouped_bars(axes[r, c], [_tick(sweep, v) for v in values], series)
            _label_panel(axes[r, c], source.label, sweep, "relative error re")
    _finish(fig, plan, path)


def _utility(entry: dict[str, Any] | None, band: str) -> tuple[float, ...]:
    if entry and not entry["seeds"]:
        return FAILED
    stat = entry["utility"][band]["re"] if entry and entry.get("utility") else None
    return (stat["mean"], stat["min"], stat["max"]) if stat else (np.nan, np.nan, np.nan)


def figure_utility_methods(plan: Plan, summaries: list[dict[str, Any]], path: Path) -> None:
    """Fig. 8b: relative error per band of every method run, at the default setting."""
    methods = _methods(plan)
    fig, axes = plt.subplots(
        1, len(plan.corpora), figsize=(6.2 * len(plan.corpora), 4.6), squeeze=False
    )
    fig.suptitle(
        "Fig. 8b - relative error per support band, every method (defaults)",
        fontsize=13,
        fontweight="bold",
        y=1 - 0.15 / fig.get_figheight(),
        va="top",
    )
    labels = [f"{band} ({lo}-{hi})" for band, (lo, hi) in BANDS.items()]
    for c, source in enumerate(plan.corpora):
        series = [
            (
                _name(plan, m),
                [
                    _utility(lookup(summaries, source.label, plan.default, m), band)
                    for band in BANDS
                ],
                {"color": COLOURS[m]},
            )
            for m in methods
        ]
        ax = axes[0, c]
        _grouped_bars(ax, labels, series)
        ax.set_title(source.label, fontsize=11)
        where = "source corpus" if plan.bands_on == "source" else "original snapshot"
        ax.set_xlabel(f"support band of the pair in the {where}")
        ax.set_ylabel("relative error re")
    _finish(fig, plan, path)


def figure_runtime(plan: Plan, summaries: list[dict[str, Any]], path: Path) -> None:
    """Fig. 9: mean publish time of one release against each parameter, and per release."""
    fig, axes = _grid(plan, 1, "Fig. 9 - publish time per release")
    methods = _methods(plan)
    for r, source in enumerate(plan.corpora):
        for c, (sweep, values) in enumerate(_panels(plan)):
            ax = axes[r, c]
            failures: list[int] = []
            for m in methods:
                found = np.array(
                    [
                        _measure(
                            lookup(summaries, source.label, _setting(plan, sweep, v), m),
                            "mean_publish_seconds",
                        )
                        for v in values
                    ]
                )
                failed = [i for i, row in enumerate(found) if row[0] == -np.inf]
                found[~np.isfinite(found)] = np.nan
                x = np.arange(len(values))
                marker, style = LINES[m]
                ax.plot(
                    x,
                    found[:, 0],
                    marker=marker,
                    ls=style,
                    color=COLOURS[m],
                    label=_name(plan, m),
                    mfc="none" if style == "--" else COLOURS[m],
                )
                ax.fill_between(x, found[:, 1], found[:, 2], color=COLOURS[m], alpha=0.15, lw=0)
                failures.extend(failed)
            ax.set_xticks(np.arange(len(values)), [_tick(sweep, v) for v in values])
            _plain_log(ax)
            for i in sorted(set(failures)):
                ax.plot(
                    i,
                    ax.get_ylim()[0],
                    "x",
                    color="red",
                    mew=2,
                    markersize=8,
                    clip_on=False,
                    zorder=5,
                )
            _label_panel(ax, source.label, sweep, "seconds per release (log)")
        _per_release_panel(
            axes[r, -1],
            plan,
            summaries,
            source.label,
            methods,
            "publish_seconds",
            1.0,
            "seconds (log)",
        )
        _plain_log(axes[r, -1])
    _finish(fig, plan, path)


def write_figures(plan: Plan, summaries: list[dict[str, Any]], directory: Path) -> dict[str, Path]:
    """Write the figures of the experiments run; returns experiment -> PNG path."""
    directory.mkdir(parents=True, exist_ok=True)
    makers = {
        "risk": figure_rows_at_risk,
        "counterfeits": figure_counterfeits,
        "utility": figure_utility,
        "utility_methods": figure_utility_methods,
        "runtime": figure_runtime,
    }
    written: dict[str, Path] = {}
    for name, maker in makers.items():
        experiment = "utility" if name == "utility_methods" else name
        if experiment not in plan.experiments:
            continue
        if name == "counterfeits" and not _counterfeit_methods(plan):
            continue
        path = directory / FIGURES[name]
        maker(plan, summaries, path)
        written[name] = path
    return written
