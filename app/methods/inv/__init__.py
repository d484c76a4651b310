"""Inv (design.md §9): m-invariance, each individual's signature kept across releases
(:mod:`app.methods.inv.storage`)."""

from app.methods.family import anony_family

__all__ = ["METHOD"]

METHOD = anony_family(
    "inv",
    5,
    ("cluster_size", "seed", "m"),
    "app.core.variants.inv:publish_inv",
    individuals="checked",
    storage="app.methods.inv.storage:STORAGE",
    summary="m-invariance: every individual's buckets keep one signature",
)
