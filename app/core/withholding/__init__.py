"""Serial publication that adds nothing: the ``true_rows`` guarantee (design.md §5.8).

Every row published is a true row and every published count is at most the true count, so
the paper's adversary (design.md §4), computed from the public files alone, is the whole
story: there is no counterfeit whose discovery would change a posterior. The levers are the
ones no detector undoes: copies moved from a cluster to the release's global bag, copies
suppressed, and the clustering itself (coarser clusters as the last step).

Modules: :mod:`~app.core.withholding.copies` (where each true copy of the new release sits),
:mod:`~app.core.withholding.totals` (the published total of each term, global composition),
:mod:`~app.core.withholding.placement` (clusters against their covers), and
:mod:`~app.core.withholding.publish` (the pipeline and its escalation).
"""
