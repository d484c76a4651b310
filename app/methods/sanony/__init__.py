"""Sanony (design.md §§2-5): Anony plus backward and forward perturbation, serially preserving."""

from app.core.params import COMMON, SERIAL
from app.methods.family import anony_family

__all__ = ["METHOD"]

METHOD = anony_family(
    "sanony",
    0,
    (*COMMON, *SERIAL),
    "app.core.perturbation.sanony:publish_sanony",
    summary="Anony with counterfeits that keep the serial risk of every release under r_th",
)
