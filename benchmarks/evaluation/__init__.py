"""The evaluation of design.md §10 (the Sanony paper's section 4), in parts.

:mod:`~benchmarks.evaluation.config` (settings, methods, corpora), :mod:`~.experiments` (one
series per method and setting), :mod:`~.utility` (formula 21 over random reconstructions),
:mod:`~.summary` (means over seeds), :mod:`~.figures` and :mod:`~.report` (PNG and markdown).
The command line is :mod:`benchmarks.evaluate`.
"""
