"""Reading public releases as an analyst: loaders, estimates with the bounds a release
guarantees, random reconstruction (Sanony paper, Definition 4) and exports.

The package reads public JSON only; it imports neither the API, the services nor the
database. It needs pandas (``pip install -e '.[analysis]'``).
"""

from app.analysis.bounds import counterfeit_bound, placement_bounds, suppression_bound
from app.analysis.estimates import (
    Estimate,
    itemset_support,
    prevalence_table,
    supports_table,
    term_count,
)
from app.analysis.placement import placement_moments
from app.analysis.reader import (
    GUARANTEES,
    Cluster,
    Release,
    UnsupportedRelease,
    global_bag_table,
    load_api,
    load_release,
    load_series,
    parse_release,
    private_table,
    rows_table,
)
from app.analysis.reconstruct import (
    basket_frame,
    reconstruct,
    reconstruct_cluster,
    reconstruct_series,
)

__all__ = [
    "GUARANTEES",
    "Cluster",
    "Estimate",
    "Release",
    "UnsupportedRelease",
    "basket_frame",
    "counterfeit_bound",
    "global_bag_table",
    "itemset_support",
    "load_api",
    "load_release",
    "load_series",
    "parse_release",
    "placement_bounds",
    "placement_moments",
    "prevalence_table",
    "private_table",
    "reconstruct",
    "reconstruct_cluster",
    "reconstruct_series",
    "rows_table",
    "supports_table",
    "suppression_bound",
    "term_count",
]
