"""Semantic attacks (design.md §11; thesis chapters 4-5): what knowing which terms go together in
the world reveals of a release.

Modules, one concept each:

- :mod:`~app.core.attacks.scoring`: relatedness from a background corpus (offline NGD,
  formula 4.1; skip-gram embeddings).
- :mod:`~app.core.attacks.selection`: ABA, RGA, MRA (Algorithms 6-8, formulas 4.3, 4.5).
- :mod:`~app.core.attacks.reconstruct`: the attack on disassociated releases (Algorithm 5),
  with :mod:`~app.core.attacks.vpa` (Algorithm 9) and the random baseline.
- :mod:`~app.core.attacks.breakage`: accuracy (5.4), transactions and k^m-anonymity breakage.
- :mod:`~app.core.attacks.anony`: private copies and row coherence on Anony-style releases.
- :mod:`~app.core.attacks.anony_measures`: their ground truth, share against the random
  reconstruction, counterfeit-detection AUC.
- :mod:`~app.core.attacks.frequency`: counterfeits told from true rows by counting public
  rows (set rarity across the series, NPMI, length; a cross-validated logistic model), and
  :mod:`~app.core.attacks.frequency_risk`: the serial risk once an adversary discounts each
  cluster's published counterfeits by such a detector, on releases without the
  rows it takes out (:mod:`~app.core.attacks.discount`), and
  :mod:`~app.core.attacks.mixture_risk`: the posterior of a Bayesian adversary who weighs
  every hypothesis of which rows are the counterfeits by a detector's odds.
- :mod:`~app.core.attacks.audit`: ``audit_release``, the whole audit in one call.
- :mod:`~app.core.attacks.chunk_audit`: ``audit_disassociation``, the same for a
  disassociated release, and its published background.
- :mod:`~app.core.attacks.settings`: the series parameter ``semantic_audit``.
- :mod:`~app.core.attacks.tracing`: published rows traced to transactions by content.
- :mod:`~app.core.attacks.release_audit`: the report a publication job keeps (background
  from the published rows, skip reasons, aggregates only).
"""

from app.core.attacks.anony import PrivateGuess, reassociate_private, row_coherence
from app.core.attacks.anony_measures import (
    PrivateReport,
    auc,
    counterfeit_auc,
    measure_private,
    row_sources,
)
from app.core.attacks.audit import AUDIT_PHASES, AuditParams, audit_release
from app.core.attacks.breakage import BreakageReport, measure_reconstruction
from app.core.attacks.chunk_audit import audit_disassociation, chunk_background
from app.core.attacks.reconstruct import (
    METHODS,
    Method,
    ReconstructedCluster,
    Reconstruction,
    reconstruct,
)
from app.core.attacks.scoring import (
    CooccurrenceRelatedness,
    EmbeddingRelatedness,
    Relatedness,
    TableRelatedness,
    ngd,
)
from app.core.attacks.selection import SELECTIONS, Selection

__all__ = [
    "AUDIT_PHASES",
    "AuditParams",
    "METHODS",
    "SELECTIONS",
    "BreakageReport",
    "CooccurrenceRelatedness",
    "EmbeddingRelatedness",
    "Method",
    "PrivateGuess",
    "PrivateReport",
    "ReconstructedCluster",
    "Reconstruction",
    "Relatedness",
    "Selection",
    "TableRelatedness",
    "audit_disassociation",
    "audit_release",
    "auc",
    "chunk_background",
    "counterfeit_auc",
    "measure_private",
    "measure_reconstruction",
    "ngd",
    "reassociate_private",
    "reconstruct",
    "row_coherence",
    "row_sources",
]
