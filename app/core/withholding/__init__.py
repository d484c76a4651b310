"""Serial publication that adds nothing: the ``true_rows`` guarantee (design.md §5.8).

Every row published is a true row and every published total is at most the true one, so the
paper's adversary (design.md §4), computed from the public files alone, is the whole story:
there is no counterfeit whose discovery would change a posterior. The levers are the ones no
detector undoes: copies moved from a cluster to the release's global bag, copies suppressed,
public terms of recurring rows generalised, and the clustering itself.

Modules: :mod:`~app.core.withholding.clustering` (holding and copy-free clusters),
:mod:`~app.core.withholding.delinking` (recurring rows generalised away from holding clusters),
:mod:`~app.core.withholding.copies` (where each true copy of the new release sits),
:mod:`~app.core.withholding.totals` (the published total of each term, global composition),
:mod:`~app.core.withholding.decoupling` (rows out of a fallen term's overlap),
:mod:`~app.core.withholding.placement` (clusters against their covers), and
:mod:`~app.core.withholding.publish` (the pipeline and its escalation).
"""
