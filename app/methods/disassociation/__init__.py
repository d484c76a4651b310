"""Disassociation (design.md §11; thesis chapter 3): k^m-anonymity of record chunks.

Single-release privacy: each release is disassociated alone and the method keeps no state
between releases. Its public release is the chunk layout (``storage``, ``schema``), not rows.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from app.core.disassociation.params import DisassociationParams
from app.core.params import parse_fields
from app.methods.base import Method, lazy_publisher

__all__ = ["METHOD", "PARAMETERS"]

PARAMETERS = ("k", "m", "max_cluster_size", "strategy", "vertical", "refine")


def _parse(raw: Any) -> DisassociationParams:
    # DisassociationParams checks its ranges itself (InvalidParameter naming the field).
    return parse_fields(DisassociationParams, "disassociation", PARAMETERS, raw)


def _echo(params: DisassociationParams) -> dict[str, Any]:
    return {name: value for name, value in asdict(params).items() if name in PARAMETERS}


METHOD = Method(
    name="disassociation",
    rank=6,
    parameters=PARAMETERS,
    parse=_parse,
    echo=_echo,
    publish=lazy_publisher("app.core.disassociation.publish:publish_disassociation"),
    modules=("app.core.disassociation.publish",),
    storage="app.methods.disassociation.storage:STORAGE",
    release_schema="app.methods.disassociation.schema:DisassociatedReleaseOut",
    summary="k^m-anonymous record chunks and a term chunk per cluster (one release alone)",
)
