"""Means over seeds of the unit records: one summary per (corpus, setting, method)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from benchmarks.evaluation.config import Setting
from benchmarks.evaluation.utility import BANDS

__all__ = ["Stat", "summarise", "lookup"]

#: A measure over seeds: mean, min, max and how many seeds gave it.
Stat = dict[str, float]

_SCALARS = (
    "rows_at_risk",
    "judge_rows_at_risk",
    "suppressed",
    "suppression_rate",
    "rows",
    "true_rows",
    "counterfeits",
    "counterfeit_rate",
    "mean_release_rate",
    "worst_release_rate",
    "mean_publish_seconds",
    "total_publish_seconds",
    "risk_seconds",
)


def _stat(values: list[float]) -> Stat | None:
    if not values:
        return None
    return {
        "mean": statistics.fmean(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def summarise(units: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Group unit records by corpus, setting and method; average each measure over seeds.

    Per-release measures (counterfeit rate, publish seconds, rows at risk) are averaged
    release by release, so ``per_release`` keeps the shape of one series.
    """
    groups: dict[tuple[str, float, float, float, str], list[dict[str, Any]]] = {}
    for unit in units:
        key = (unit["corpus"], unit["sz"], unit["rep"], unit["r_th"], unit["method"])
        groups.setdefault(key, []).append(unit)
    summaries = []
    for (corpus, sz, rep, r_th, method), members in groups.items():
        ok = [m for m in members if m["status"] == "ok"]
        entry: dict[str, Any] = {
            "corpus": corpus,
            "sz": sz,
            "rep": rep,
            "r_th": r_th,
            "method": method,
            "seeds": len(ok),
            "failed": [f"seed {m['seed']}: {m.get('error', '')}" for m in members if m not in ok],
        }
        for name in _SCALARS:
            entry[name] = _stat([m[name] for m in ok if name in m])
        if ok and "utility" in ok[0]:
            entry["utility"] = {
                band: {
                    key: _stat(
                        [m["utility"][band][key] for m in ok if m["utility"][band][key] is not None]
                    )
                    for key in ("re", "re_private")
                }
                for band in BANDS
            }
        entry["per_release"] = _per_release(ok)
        summaries.append(entry)
    return summaries


def _per_release(units: list[dict[str, Any]]) -> list[dict[str, Stat | None]]:
    if not units:
        return []
    count = min(len(u["releases"]) for u in units)
    keys = ("counterfeit_rate", "publish_seconds", "rows_at_risk", "rows")
    return [
        {
            key: _stat([u["releases"][i][key] for u in units if key in u["releases"][i]])
            for key in keys
        }
        for i in range(count)
    ]


def lookup(
    summaries: list[dict[str, Any]], corpus: str, setting: Setting, method: str
) -> dict[str, Any] | None:
    """The summary of one corpus, setting and method, if it was run."""
    wanted = (corpus, setting.sz, setting.rep, setting.r_th, method)
    for entry in summaries:
        if (entry["corpus"], entry["sz"], entry["rep"], entry["r_th"], entry["method"]) == wanted:
            return entry
    return None
