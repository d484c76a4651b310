"""Reading public releases as an analyst (issue 19): loaders, estimates with intervals and
random reconstruction (Sanony paper, Definition 4).

The package reads public JSON only; it imports neither the API, the services nor the
database. It needs pandas (``pip install -e '.[analysis]'``).
"""

from app.analysis.estimates import (
    Estimate,
    counterfeit_bound,
    itemset_support,
    prevalence_table,
    supports_table,
    suppression_bound,
    term_count,
)
from app.analysis.reader import (
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
