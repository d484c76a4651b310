"""Parameters of disassociation (design.md §11; thesis chapter 3) with their checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.core.errors import InvalidParameter

__all__ = ["DisassociationParams", "Strategy", "VerticalMethod"]

#: How horizontal partitioning treats a cluster smaller than ``k`` (thesis 3.3.1,
#: Algorithms 1-3).
Strategy = Literal["suppression", "adding", "remaining_list"]

#: The two readings of k^m-anonymity for record chunks (thesis 3.3.3): ``shared`` (the
#: second method, Table 3.8, used in the thesis's experiments) checks only the combinations
#: that occur in a sub-record; ``all_combinations`` (the first method, Table 3.7) requires
#: every m-combination of a chunk's terms to occur at least ``k`` times.
VerticalMethod = Literal["shared", "all_combinations"]

_STRATEGIES = ("suppression", "adding", "remaining_list")
_VERTICAL = ("shared", "all_combinations")


@dataclass(frozen=True, slots=True)
class DisassociationParams:
    """``k`` and ``m`` of k^m-anonymity (Definition 1), the cluster-size bounds and choices.

    Attributes
    ----------
    k:
        Every combination of up to ``m`` terms visible in a record chunk occurs at least ``k``
        times; also the smallest cluster horizontal partitioning keeps.
    m:
        Largest number of terms the adversary is assumed to know.
    max_cluster_size:
        ``MaxClusterSize``: a cluster at least this large is split again (Algorithms 1-3);
        must exceed ``k``. The thesis fixes it at 5^2 = 25 while it varies ``k``.
    strategy:
        Small-cluster strategy (:data:`Strategy`); the thesis's experiments use ``adding``.
    vertical:
        k^m check for record chunks (:data:`VerticalMethod`).
    refine:
        Build joint clusters with shared chunks (thesis 3.2.3).
    """

    k: int = 5
    m: int = 2
    max_cluster_size: int = 25
    strategy: Strategy = "adding"
    vertical: VerticalMethod = "shared"
    refine: bool = True

    def __post_init__(self) -> None:
        _check("k", self.k >= 2, "must be at least 2")
        _check("m", self.m >= 1, "must be at least 1")
        _check(
            "max_cluster_size",
            self.max_cluster_size > self.k,
            f"must be greater than k ({self.k})",
        )
        _check("strategy", self.strategy in _STRATEGIES, f"must be one of {_STRATEGIES}")
        _check("vertical", self.vertical in _VERTICAL, f"must be one of {_VERTICAL}")


def _check(name: str, ok: bool, why: str) -> None:
    if not ok:
        raise InvalidParameter(f"params.{name}: {why}", {"param": name})
