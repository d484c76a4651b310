"""Small hand-made public releases for the analysis tests."""

from __future__ import annotations

from typing import Any


def release_doc(release_no: int = 1, **extra: Any) -> dict[str, Any]:
    """Two clusters of 4 and 2 rows; HIV 2 + 1 (share) in c1, 1 in c2, 1 more in the bag."""
    doc: dict[str, Any] = {
        "series": "toy",
        "release_no": release_no,
        "label": f"y{release_no}",
        "method": "sanony",
        "params": {"r_th": 8, "max_suppression": 0.01, "suppression_floor": 3},
        "n_rows": 6,
        "population_rates": {"HIV": 0.5, "flu": 1 / 6},
        "global_bag": {"HIV": 2},
        "global_counterfeits": 0,
        "clusters": [
            {
                "cluster_id": "c1",
                "rows": [["a", "b"], ["a"], ["b", "c"], ["a", "c"]],
                "private_terms": {"HIV": 2},
                "global_share": {"HIV": 1},
                "counterfeits": 1,
            },
            {
                "cluster_id": "c2",
                "rows": [["c"], ["a", "b"]],
                "private_terms": {"HIV": 1, "flu": 1},
                "global_share": {},
                "counterfeits": 0,
            },
        ],
    }
    doc.update(extra)
    return doc
