"""The pure algorithmic core of Serialpub: no I/O, no web framework, no database.

Grouped by the papers' families, one concept per module:

- shared types and entry points: :mod:`app.core.model` (corpora, releases, ledgers),
  :mod:`app.core.params`, :mod:`app.core.history`, :mod:`app.core.validation`,
  :mod:`app.core.pipeline` (one entry point for every method), :mod:`app.core.segen`
  (design.md §10).
- :mod:`app.core.anonymisation`: clustering (design.md §2.1) and Anony (design.md §2); change the
  clustering here.
- :mod:`app.core.risk`: the adversary (design.md §4): overlaps, s-ranges, likelihoods (13, 14),
  posterior (12), serial risk (15); change the adversary here.
- :mod:`app.core.perturbation`: counterfeits (Definition 14), BP, FP1, FP2, the checked
  post-condition and Sanony as a whole (design.md §5).
- :mod:`app.core.variants`: Wong, Kanony, sComp and Inv (design.md §§6-9).
"""
