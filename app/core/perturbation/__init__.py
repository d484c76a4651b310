"""Serial protection by counterfeits and suppression: Sanony (design.md §5; section 3).

``counterfeit`` makes counterfeit rows (Definition 14), ``perturber`` applies BP, FP1 and FP2,
``repair`` enforces the checked post-condition, ``sanony`` runs the whole mechanism.
"""
