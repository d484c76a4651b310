"""Tables and figures of the semantic-attack benchmark, from the rows of ``attack_runs``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["markdown", "figures"]

Rows = list[dict[str, Any]]
_LABEL = {"aba": "ABA", "mra": "MRA", "rga": "RGA", "vpa": "VPA", "random": "random"}


def _name(row: dict[str, Any]) -> str:
    label = _LABEL.get(row["method"], row["method"])
    if row.get("update"):
        label += "+update"
    return label if row["scoring"] == "-" else f"{label}-{row['scoring'].upper()}"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _table(header: Sequence[str], body: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cells) + " |" for cells in body]


def _disassociation(rows: Rows, k: int, m: int) -> list[str]:
    out = []
    for corpus in sorted({r["corpus"] for r in rows}):
        chosen = [r for r in rows if (r["corpus"], r["k"], r["m"]) == (corpus, k, m)]
        if not chosen:
            continue
        out += [
            f"**{corpus}, k = {k}, m = {m}** ({chosen[0]['records']} records with a "
            f"disassociated part, tlost {_pct(chosen[0]['tlost'])}):",
            "",
        ]
        body = [
            [
                _name(r),
                _pct(r["accuracy"]),
                _pct(r["accuracy_record_chunks"]),
                _pct(r["accuracy_term_chunk"]),
                _pct(r["transactions_breakage"]),
                _pct(r["km_breakage"]),
                _pct(r["precision"]),
                f"{r['attack_s']:.2f}",
            ]
            for r in chosen
        ]
        header = ["attack", "accuracy (5.4)", "record chunks", "term chunk"]
        header += ["transactions breakage", "k^m breakage", "precision", "attack s"]
        out += _table(header, body) + [""]
    return out


def _sweep(rows: Rows, measure: str) -> list[str]:
    out = []
    for corpus in sorted({r["corpus"] for r in rows}):
        for m in sorted({r["m"] for r in rows}):
            chosen = [r for r in rows if r["corpus"] == corpus and r["m"] == m]
            names = list(dict.fromkeys(_name(r) for r in chosen))
            ks = sorted({r["k"] for r in chosen})
            body = []
            for k in ks:
                cells = {_name(r): _pct(r[measure]) for r in chosen if r["k"] == k}
                body.append([str(k)] + [cells.get(n, "") for n in names])
            out += [f"**{corpus}, m = {m}: {measure.replace('_', ' ')}**", ""]
            out += _table(["k", *names], body) + [""]
    return out


def _anony(rows: Rows) -> list[str]:
    private = [r for r in rows if r.get("kind") == "private"]
    body = []
    for key in dict.fromkeys((r["corpus"], r["method"]) for r in private):
        group = [r for r in private if (r["corpus"], r["method"]) == key]
        semantic = [r for r in group if r["selection"] != "random"]
        best = max(semantic, key=lambda r: r["share"])
        random_row = next(r for r in group if r["selection"] == "random")
        aba = {r["scoring"]: r["share"] for r in group if r["selection"] == "aba"}
        body.append(
            [
                *key,
                str(group[0]["rows"]),
                str(group[0]["counterfeits"]),
                str(best["copies"]),
                _pct(aba.get("ngd", float("nan"))),
                _pct(aba.get("we", float("nan"))),
                f"{_pct(best['share'])} ({_name({**best, 'method': best['selection']})})",
                _pct(random_row["share"]),
                _pct(best["random_expected"]),
                _pct(best["prior"]),
                f"{best['share'] / best['random_expected']:.2f}" if best["random_expected"] else "",
            ]
        )
    header = ["corpus", "method", "rows", "counterfeits", "private copies", "ABA-NGD", "ABA-WE"]
    header += ["best attack", "random (measured)", "random (expected)", "prior N(s,C*)/N(C*)"]
    return _table(header + ["lift of best"], body)


def _auc(rows: Rows) -> list[str]:
    chosen = [r for r in rows if r.get("kind") == "auc"]
    body = [
        [
            r["corpus"],
            r["method"],
            r["scoring"].upper(),
            str(int(r["counterfeits"])),
            str(int(r["true_rows"])),
            f"{r['all_rows']:.3f}",
            f"{r['multi_term_rows']:.3f}",
            f"{r['row_size']:.3f}",
            *(f"{r[k]:.3f}" if k in r else "" for k in _MORE_DETECTORS),
        ]
        for r in chosen
    ]
    header = ["corpus", "method", "scoring", "counterfeits", "true rows", "AUC coherence"]
    header += ["AUC, rows of 2+ terms", "AUC row size (no semantics)", "size, either way"]
    return _table(header + ["size off the cluster's", "nearest row", "unique in cluster"], body)


#: Detectors of :func:`app.core.attacks.counterfeit_auc` beyond coherence and row size.
_MORE_DETECTORS = ("row_size_either", "size_in_cluster", "nearest_row", "unique_in_cluster")


def _spread(rows: Rows) -> list[str]:
    body = [
        [
            r["corpus"],
            _name(r),
            str(r["seeds"]),
            f"{_pct(r['accuracy'])} ± {_pct(r['accuracy_sd'])}",
            f"{_pct(r['km_breakage'])} ± {_pct(r['km_breakage_sd'])}",
        ]
        for r in rows
    ]
    return _table(["corpus", "attack", "seeds", "accuracy", "k^m breakage"], body)


def markdown(results: dict[str, Any]) -> str:
    """The results section of ``docs/attacks.md``."""
    rows: Rows = results["disassociation"]
    out = [f"Command: `{results['command']}` (seed {results['seed']}, {results['when']}).", ""]
    if rows:
        out += ["### Against disassociation", ""]
        out += _disassociation(rows, 5, 2)
        out += _sweep(rows, "accuracy") + _sweep(rows, "km_breakage")
    if results.get("spread"):
        out += ["**Spread over seeds** (k = 5, m = 2; mean ± sd):", ""]
        out += _spread(results["spread"]) + [""]
    if results.get("scorer_seconds"):
        out += ["**Building the scorers** from the background (seconds, once per corpus):", ""]
        seconds = results["scorer_seconds"].items()
        body = [[c, f"{s['ngd']:.2f}", f"{s['we']:.2f}"] for c, s in seconds]
        out += _table(["corpus", "NGD index", "skip-gram training"], body) + [""]
    if results["anony"]:
        out += ["### Against Anony-style releases: private copies", ""]
        out += _anony(results["anony"]) + [""]
        out += ["### Counterfeit detection", ""]
        out += _auc(results["anony"]) + [""]
    if results.get("timing"):
        t = results["timing"]
        out += ["### Speed", ""]
        out += _table(
            ["release rows", "method", "publish s", "attack s", "private copies s",
             "coherence s", "background index s"],
            [[str(t["rows"]), t["method"], f"{t['publish_s']:.2f}", f"{t['attack_s']:.2f}",
              f"{t['private_s']:.2f}", f"{t['coherence_s']:.2f}", f"{t['background_s']:.2f}"]],
        ) + [""]  # fmt: skip
    return "\n".join(out)


def figures(results: dict[str, Any], folder: Path) -> list[str]:
    """PNG figures; returns their file names."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    rows: Rows = results["disassociation"]
    for measure in ("accuracy", "km_breakage"):
        for corpus in sorted({r["corpus"] for r in rows}):
            for m in sorted({r["m"] for r in rows if r["corpus"] == corpus}):
                chosen = [r for r in rows if r["corpus"] == corpus and r["m"] == m]
                fig, ax = plt.subplots(figsize=(6.4, 4))
                for name in dict.fromkeys(_name(r) for r in chosen):
                    line = sorted((r["k"], r[measure]) for r in chosen if _name(r) == name)
                    style = "k--" if name == "random" else "-o"
                    ax.plot([k for k, _ in line], [100 * v for _, v in line], style, label=name)
                ax.set_xlabel("k")
                ax.set_ylabel(f"{measure.replace('_', ' ')} (%)")
                ax.set_title(f"Disassociation of {corpus}, m = {m}")
                ax.legend(fontsize=7, ncol=2)
                file = f"attacks-{corpus.lower()}-m{m}-{measure}.png"
                fig.savefig(folder / file, dpi=110, bbox_inches="tight")
                plt.close(fig)
                names.append(file)
    names += _anony_figures(results["anony"], folder)
    return names


def _anony_figures(rows: Rows, folder: Path) -> list[str]:
    names = []
    for corpus in sorted({r["corpus"] for r in rows if r.get("kind") == "private"}):
        chosen = [r for r in rows if r.get("corpus") == corpus and r.get("kind") == "private"]
        methods = list(dict.fromkeys(r["method"] for r in chosen))
        series = list(dict.fromkeys((r["selection"], r["scoring"]) for r in chosen))
        fig, ax = plt.subplots(figsize=(7.5, 4))
        width = 0.8 / max(len(series), 1)
        for n, (selection, scoring) in enumerate(series):
            values = [
                next((r["share"] for r in chosen if (r["method"], r["selection"], r["scoring"])
                      == (m, selection, scoring)), 0.0) * 100
                for m in methods
            ]  # fmt: skip
            xs = [i + n * width for i in range(len(methods))]
            ax.bar(xs, values, width, label=_name({"method": selection, "scoring": scoring}))
        expected = [
            next(r["random_expected"] for r in chosen if r["method"] == m) * 100 for m in methods
        ]
        ax.plot([i + 0.4 - width / 2 for i in range(len(methods))], expected, "k_", ms=30,
                mew=2, label="random (expected)")  # fmt: skip
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(methods))], methods)
        ax.set_ylabel("private copies on a true row (%)")
        ax.set_title(f"Private-copy reassociation, last release of a series of {corpus}")
        ax.legend(fontsize=7, ncol=3)
        file = f"attacks-{corpus.lower()}-private.png"
        fig.savefig(folder / file, dpi=110, bbox_inches="tight")
        plt.close(fig)
        names.append(file)
    return names
