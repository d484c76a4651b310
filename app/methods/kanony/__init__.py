"""Kanony (design.md §7): Sanony with generalisation by a taxonomy."""

from app.core.params import COMMON, SERIAL
from app.methods.family import anony_family

__all__ = ["METHOD"]

METHOD = anony_family(
    "kanony",
    3,
    (*COMMON, *SERIAL, "taxonomy", "gb_min_terms", "gb_retention"),
    "app.core.variants.kanony:publish_kanony",
    summary="Sanony with terms generalised by a taxonomy",
)
