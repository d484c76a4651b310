"""The worked example of the paper (Tables 1 and 4; design.md §4) as API bodies."""

from __future__ import annotations

from typing import Any

#: Release -> cluster label -> transactions (the partition of Table 4 as ``cluster`` labels).
CORPORA: list[dict[str, list[list[str]]]] = [
    {
        "c1": [["theft", "arson", "fraud", "HIV"], ["theft", "arson", "cancer"]],
        "c2": [["vandal", "arson"], ["abuse", "arson", "cancer"]],
        "c3": [["DUI", "assault", "HIV", "herpes"], ["DUI", "assault"]],
    },
    {
        "c1": [["theft", "arson", "cancer"], ["theft", "arson", "murder"]],
        "c2": [["vandal", "arson"], ["abuse", "arson", "cancer"], ["abuse", "arson", "mansl"]],
    },
    {
        "c1": [
            ["theft", "arson", "cancer"],
            ["theft", "arson", "murder"],
            ["theft", "arson", "HIV"],
        ],
        "c2": [["abuse", "arson", "mansl"], ["abuse", "arson", "mansl", "cancer"]],
    },
]

PRIVATE = ("HIV", "cancer", "herpes")


def body(release: int) -> dict[str, Any]:
    """JSON upload of release ``release`` (1-based)."""
    return {
        "label": str(2022 + release),
        "transactions": [
            {"terms": terms, "cluster": label}
            for label, transactions in CORPORA[release - 1].items()
            for terms in transactions
        ],
    }


def text_plain(release: int) -> str:
    return "".join(
        " ".join(terms) + "\n" for cluster in CORPORA[release - 1].values() for terms in cluster
    )


#: Table 4a: release 1 as published (rows as sorted non-private sets).
TABLE_4A = {
    "clusters": [
        ([["arson", "fraud", "theft"], ["arson", "theft"]], {"HIV": 1, "cancer": 1}),
        ([["abuse", "arson"], ["arson", "vandal"]], {"cancer": 1}),
        ([["DUI", "assault"], ["DUI", "assault"]], {"HIV": 1}),
    ],
    "global_bag": {"herpes": 1},
}
