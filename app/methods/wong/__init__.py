"""Wong et al. (design.md §6): l-diversity of groups across releases, with the statistics file
m(o, s) kept per series (:mod:`app.methods.wong.storage`)."""

from app.methods.family import anony_family

__all__ = ["METHOD"]

METHOD = anony_family(
    "wong",
    2,
    ("cluster_size", "seed", "l", "strategy", "k_prime", "alpha"),
    "app.core.variants.wong:publish_wong",
    individuals="required",
    storage="app.methods.wong.storage:STORAGE",
    summary="Groups whose breach probability over the series stays under 1/l",
)
