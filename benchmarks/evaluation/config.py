"""What an evaluation run covers: settings, sweeps, methods and corpora (design.md §10).

A *setting* is one SeGen configuration ``(sz, rep, r_th)``; a *sweep* varies one of the three
around the defaults (the paper's Figures 6-9 each have an ``sz``, a ``rep`` and an ``r_th``
panel). Every selected method publishes the same SeGen series for a setting and seed, so the
methods are compared on identical data.
"""

from __future__ import annotations

import importlib
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.core.model import Transaction
from app.core.params import PublishParams
from app.io.corpus import read_corpus

__all__ = [
    "ALL_METHODS",
    "DEFAULTS",
    "KNOWN_CORPORA",
    "QUICK",
    "SWEEPS",
    "CorpusSource",
    "Plan",
    "Setting",
    "available_methods",
    "load_corpus",
    "method_params",
    "reads_anony_r_th",
    "synthetic_corpus",
]

#: Display order. ``sanony`` is the paper's mechanism (``guarantee: paper``), whose figures
#: the evaluation reproduces; ``true_rows`` is Sanony's default guarantee (design.md §5.8).
ALL_METHODS: tuple[str, ...] = ("anony", "sanony", "true_rows", "inv", "kanony", "scomp", "wong")
_MODULES = {
    "anony": ("app.core.perturbation.sanony", "publish_anony"),
    "sanony": ("app.core.perturbation.sanony", "publish_sanony"),
    "true_rows": ("app.core.withholding.publish", "publish_true_rows"),
    "wong": ("app.core.variants.wong", "publish_wong"),
    "kanony": ("app.core.variants.kanony", "publish_kanony"),
    "scomp": ("app.core.variants.scomp", "publish_scomp"),
    "inv": ("app.core.variants.inv", "publish_inv"),
}

KNOWN_CORPORA = {"B1": "bms-webview-1.dat", "B2": "bms-webview-2.dat"}
SWEEPS: tuple[str, ...] = ("sz", "rep", "r_th")

#: The paper's grid (section 4.1) and defaults (sz 5%, rep 40%, r_th 8, 5 releases, 10%).
DEFAULTS: dict[str, object] = {
    "sz": 0.05,
    "rep": 0.4,
    "r_th": 8.0,
    "sz_values": [0.0125, 0.025, 0.05, 0.1],
    "rep_values": [0.1, 0.2, 0.4, 0.8],
    "r_th_values": [2.0, 4.0, 8.0, 16.0],
    "releases": 5,
    "private_fraction": 0.1,
    "seeds": 3,
    "reconstructions": 20,
    "pairs_per_band": 10,
}

#: ``--quick``: tiny series for CI, every experiment and figure still produced.
QUICK: dict[str, object] = {
    "sz": 0.005,
    "sz_values": [0.0025, 0.005],
    "rep_values": [0.4, 0.8],
    "r_th_values": [4.0, 8.0],
    "releases": 3,
    "seeds": 1,
    "reconstructions": 5,
}


@dataclass(frozen=True, slots=True, order=True)
class Setting:
    """One SeGen configuration: sample size (fraction of the corpus), repeat rate, r_th."""

    sz: float
    rep: float
    r_th: float

    def label(self) -> str:
        return f"sz {self.sz:.2%}, rep {self.rep:.0%}, r_th {self.r_th:g}"


@dataclass(frozen=True, slots=True)
class CorpusSource:
    """A corpus by label: a FIMI/JSON file, or a seeded synthetic one of ``synthetic`` rows."""

    label: str
    path: str | None = None
    synthetic: int = 0


@dataclass(slots=True)
class Plan:
    """Everything a run needs; JSON-friendly (it is echoed in the results)."""

    corpora: list[CorpusSource]
    default: Setting
    sweeps: dict[str, list[float]]
    methods: list[str]
    seeds: list[int]
    releases: int
    private_fraction: float
    cluster_size: int
    reconstructions: int
    pairs_per_band: int
    experiments: list[str]
    bands_on: str = "source"
    skipped_methods: dict[str, str] = field(default_factory=dict)
    #: ``--anony-r-th``: Sanony's and Kanony's Anony threshold (capped at r_th); None: r_th.
    anony_r_th: float | None = None

    def settings(self) -> list[Setting]:
        """The default setting and every sweep point, without repeats, in a stable order."""
        found = [self.default]
        for name, values in self.sweeps.items():
            for value in values:
                setting = _vary(self.default, name, value)
                if setting not in found:
                    found.append(setting)
        return found

    def sweep_setting(self, name: str, value: float) -> Setting:
        return _vary(self.default, name, value)

    def anony_r_th_note(self) -> str:
        """``anony_r_th 2`` when ``--anony-r-th`` is set and a method reads it, else ``""``."""
        if self.anony_r_th is None or not any(reads_anony_r_th(m) for m in self.methods):
            return ""
        return f"anony_r_th {self.anony_r_th:g}"

    def method_label(self, method: str) -> str:
        """``method``, with ``(anony_r_th X)`` for Sanony and Kanony when the option is set."""
        if self.anony_r_th is None or not reads_anony_r_th(method):
            return method
        return f"{method} (anony_r_th {self.anony_r_th:g})"


def _vary(base: Setting, name: str, value: float) -> Setting:
    values = {"sz": base.sz, "rep": base.rep, "r_th": base.r_th, name: float(value)}
    return Setting(values["sz"], values["rep"], values["r_th"])


def available_methods(requested: list[str]) -> tuple[list[str], dict[str, str]]:
    """The requested methods whose module imports now, and a note for each one skipped.

    kanony, scomp and inv are written beside this harness; until their module exists (or when
    it fails to import) the run goes on without them and says so.
    """
    kept: list[str] = []
    skipped: dict[str, str] = {}
    for method in requested:
        module_name, function = _MODULES[method]
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            skipped[method] = f"skipped: {module_name} does not import ({exc})"
            continue
        if not hasattr(module, function):
            skipped[method] = f"skipped: {module_name} has no {function}"
            continue
        kept.append(method)
    return kept, skipped


def method_params(
    method: str, r_th: float, cluster_size: int, seed: int, anony_r_th: float | None = None
) -> PublishParams:
    """The method's defaults with the run's ``r_th``, ``cluster_size`` and ``seed`` where it
    reads them (Inv keeps m = 2 and Wong l = 2, as in the paper's comparison).

    ``anony_r_th`` (``--anony-r-th``) is the threshold of the Anony step of the methods that
    read it (Sanony, Kanony), capped at ``r_th``; ``None`` keeps their default (3/8 of ``r_th``).
    Anony itself always sanitises to ``r_th``.

    >>> method_params("sanony", 8, 10, 1, anony_r_th=2).anony_r_th
    2.0
    >>> method_params("anony", 8, 10, 1, anony_r_th=2).anony_r_th is None
    True
    """
    reads = PublishParams().for_method("sanony" if method == "true_rows" else method)
    values: dict[str, Any] = {"r_th": float(r_th), "cluster_size": cluster_size, "seed": seed}
    if method in ("sanony", "true_rows", "kanony"):
        values["guarantee"] = "true_rows" if method == "true_rows" else "paper"
    if anony_r_th is not None:
        values["anony_r_th"] = min(float(anony_r_th), float(r_th))
    return replace(
        PublishParams(),
        **{k: v for k, v in values.items() if k in reads or k == "guarantee"},
    )


def reads_anony_r_th(method: str) -> bool:
    """Whether ``method`` has an Anony step with its own threshold (Sanony, Kanony)."""
    return "anony_r_th" in PublishParams().for_method(method)


_CACHE: dict[CorpusSource, list[Transaction]] = {}


def load_corpus(source: CorpusSource) -> list[Transaction]:
    """The corpus of ``source``, read once per process."""
    if source not in _CACHE:
        if source.synthetic:
            _CACHE[source] = synthetic_corpus(source.synthetic)
        else:
            assert source.path is not None
            _CACHE[source] = read_corpus(Path(source.path))
    return _CACHE[source]


def synthetic_corpus(size: int, vocabulary: int = 300, seed: int = 0) -> list[Transaction]:
    """A seeded click-stream-like corpus: Zipf-weighted terms, mostly short transactions.

    Used by the CI test when the benchmark corpora are absent, and by ``--corpora SYN``.

    >>> len(synthetic_corpus(50))
    50
    """
    rng = random.Random(f"synthetic:{size}:{vocabulary}:{seed}")
    terms = [f"t{i}" for i in range(vocabulary)]
    weights = [1 / (rank + 1) ** 1.1 for rank in range(vocabulary)]
    corpus: list[Transaction] = []
    for _ in range(size):
        length = 1
        while length < 12 and rng.random() < 0.55:
            length += 1
        corpus.append(Transaction(frozenset(rng.choices(terms, weights, k=length))))
    return corpus
