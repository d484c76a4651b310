"""The pure algorithmic core of Serialpub: no I/O, no web framework, no database.

Modules, one concept each:

- :mod:`app.core.model`: corpora, published releases, private ledgers.
- :mod:`app.core.params`: method parameters with their defaults.
- :mod:`app.core.clustering`: partitioning a corpus by similarity (SPEC 2.1).
- :mod:`app.core.anony`: segregation, sanitisation, refining (SPEC 2).
- :mod:`app.core.overlap`: the overlap index and s-ranges (SPEC 4, formulas 5-6).
- :mod:`app.core.likelihood`: formulas 13 and 14 in log space.
- :mod:`app.core.risk`: posterior (12), serial risk (15) and summaries.
- :mod:`app.core.counterfeit`: counterfeit synthesis (Definition 14).
- :mod:`app.core.perturbation`: BP, FP1, FP2 (SPEC 5).
- :mod:`app.core.sanony`: the whole Sanony mechanism with its post-condition.
- :mod:`app.core.pipeline`: one entry point for every method.
"""
