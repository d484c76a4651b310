"""Sanony (design.md §§2-5): Anony plus backward and forward perturbation, serially preserving."""

from app.core.params import COMMON, GUARANTEE, SERIAL
from app.methods.family import anony_family

__all__ = ["METHOD"]

METHOD = anony_family(
    "sanony",
    0,
    (*COMMON, *GUARANTEE, *SERIAL),
    "app.core.serial:publish_serial",
    summary="Anony, then the serial risk of every release kept under r_th: by withholding "
    "copies (guarantee true_rows, the default) or by counterfeits (guarantee paper)",
)
