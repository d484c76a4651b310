"""sComp (design.md §8): releases checked against composition attacks with other publishers."""

from app.core.params import COMMON
from app.methods.family import anony_family

__all__ = ["METHOD"]

METHOD = anony_family(
    "scomp",
    4,
    (*COMMON, "d", "confidence", "other_releases"),
    "app.core.variants.scomp:publish_scomp",
    summary="Anony guarded against composition with other publishers' releases",
)
