"""Parameters for the tests of the paper's mechanism (Anony, BP, FP1, FP2 with counterfeits).

Sanony's default is the ``true_rows`` guarantee (design.md §5.8), which places no counterfeit;
the tests of BP, FP1, FP2, the repair, the escalation and the counterfeits themselves test the
paper's mechanism, ``guarantee: "paper"``. This ``parse_params`` is the core's with that
choice made for Sanony unless the test makes another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.params import PublishParams
from app.core.params import parse_params as _parse_params

__all__ = ["parse_params"]


def parse_params(method: str, raw: Mapping[str, Any] | None = None) -> PublishParams:
    """:func:`app.core.params.parse_params`, Sanony under the paper's guarantee by default."""
    if method == "sanony":
        raw = {"guarantee": "paper", **(raw or {})}
    return _parse_params(method, raw)
