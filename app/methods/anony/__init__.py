"""Anony (design.md §2): one release sanitised alone, the baseline without serial protection."""

from app.core.params import COMMON
from app.methods.family import anony_family

__all__ = ["METHOD"]

METHOD = anony_family(
    "anony",
    1,
    COMMON,
    "app.core.perturbation.sanony:publish_anony",
    summary="Anony on each release alone (no serial protection)",
)
