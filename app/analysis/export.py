"""Tables as files: what ``serialpub export`` writes, keeping every term and every row.

A term may hold spaces (``whole milk``) and a reconstructed row may hold no term at all, so
no format here separates terms by white space or drops a line:

- **CSV** (the csv module's quoting, through pandas): a list of terms is one cell holding a
  JSON array (``["whole milk", "HIV"]``, ``[]`` for a row without terms); ``json.loads`` or
  ``pandas.read_csv(...).items.map(json.loads)`` reads it back.
- **JSON Lines**: one object a line, the terms a JSON array.
- **FIMI** (one transaction a line, integer items separated by spaces, what frequent-itemset
  miners read) only with its dictionary, a CSV of ``item,term``: the integers keep a
  multi-word term whole. A row without terms is an empty line, which the format cannot tell
  from no row: many readers skip it (:func:`fimi` counts those rows so the caller can say so).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

__all__ = ["LIST_COLUMN", "Fimi", "fimi", "to_csv", "to_json_lines"]

#: The column of a table that holds terms, as tuples.
LIST_COLUMN = "items"


def _json_ready(value: object) -> object:
    """A cell as JSON holds it: tuples as arrays, infinite floats as null (JSON has none)."""
    if isinstance(value, tuple | list):
        return list(value)
    if isinstance(value, float) and math.isinf(value):
        return None
    return value


def to_csv(table: pd.DataFrame) -> str:
    """``table`` as CSV, its :data:`LIST_COLUMN` as a JSON array per cell.

    >>> frame = pd.DataFrame({"row": [0, 1], "items": [("whole milk", "bread"), ()]})
    >>> print(to_csv(frame), end="")
    row,items
    0,"[""whole milk"", ""bread""]"
    1,[]
    """
    out = table.copy()
    out[LIST_COLUMN] = out[LIST_COLUMN].map(lambda t: json.dumps(list(t), ensure_ascii=False))
    return str(out.to_csv(index=False, lineterminator="\n"))


def to_json_lines(table: pd.DataFrame) -> str:
    """``table`` as JSON Lines, one object a line, its :data:`LIST_COLUMN` an array.

    >>> frame = pd.DataFrame({"row": [0, 1], "items": [("whole milk",), ()]})
    >>> print(to_json_lines(frame), end="")
    {"row": 0, "items": ["whole milk"]}
    {"row": 1, "items": []}
    """
    columns = list(table.columns)
    lines = (
        json.dumps(
            {c: _json_ready(v) for c, v in zip(columns, values, strict=True)},
            ensure_ascii=False,
            default=_numpy_scalar,
        )
        for values in table.itertuples(index=False, name=None)
    )
    return "".join(line + "\n" for line in lines)


def _numpy_scalar(value: object) -> object:
    """numpy's integers, floats and booleans as Python's (what ``json`` writes)."""
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"{type(value).__name__} is not JSON serialisable")
    return _json_ready(item())


@dataclass(frozen=True, slots=True)
class Fimi:
    """A FIMI file's text, its dictionary's (CSV ``item,term``) and how many terms it
    names, the rows and how many of them hold no term (empty lines)."""

    text: str
    dictionary: str
    terms: int
    rows: int
    empty_rows: int


def fimi(baskets: Sequence[Sequence[str]]) -> Fimi:
    """Baskets as FIMI: each term an integer (1, 2, ... in the terms' sorted order), one
    basket a line, every basket a line (an empty one an empty line).

    >>> out = fimi([["whole milk", "bread"], [], ["bread"]])
    >>> print(out.text, end="")
    1 2
    <BLANKLINE>
    1
    >>> print(out.dictionary, end="")
    item,term
    1,bread
    2,whole milk
    >>> out.terms, out.rows, out.empty_rows
    (2, 3, 1)
    """
    terms = sorted({t for basket in baskets for t in basket})
    item = {t: i for i, t in enumerate(terms, start=1)}
    text = "".join(
        " ".join(str(i) for i in sorted(item[t] for t in set(basket))) + "\n" for basket in baskets
    )
    dictionary = pd.DataFrame({"item": range(1, len(terms) + 1), "term": terms})
    return Fimi(
        text=text,
        dictionary=str(dictionary.to_csv(index=False, lineterminator="\n")),
        terms=len(terms),
        rows=len(baskets),
        empty_rows=sum(1 for basket in baskets if not basket),
    )
