"""Corpus readers: FIMI/SPMF text and JSON, from files or line iterators."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from app.core.errors import InvalidCorpus
from app.core.model import Transaction

__all__ = ["parse_fimi_lines", "read_corpus", "transactions_from_json"]


def parse_fimi_lines(lines: Iterable[str]) -> Iterator[Transaction]:
    """One transaction a line, terms separated by white space; blank lines are skipped."""
    for line in lines:
        terms = line.split()
        if terms:
            yield Transaction(frozenset(terms))


def transactions_from_json(items: Iterable[Any]) -> list[Transaction]:
    """Transactions from ``[{"terms": [...], "individual"?: str, "cluster"?: str}, ...]``
    or from plain lists of terms."""
    corpus: list[Transaction] = []
    for i, item in enumerate(items):
        if isinstance(item, list):
            item = {"terms": item}
        if not isinstance(item, dict) or not isinstance(item.get("terms"), list):
            raise InvalidCorpus(
                f"transaction {i}: expected an object with a 'terms' list", {"item": i}
            )
        if not all(isinstance(t, str) for t in item["terms"]):
            raise InvalidCorpus(f"transaction {i}: every term must be a string", {"item": i})
        corpus.append(
            Transaction(frozenset(item["terms"]), item.get("individual"), item.get("cluster"))
        )
    return corpus


def read_corpus(path: Path) -> list[Transaction]:
    """A corpus from a ``.json`` file (list of transactions) or a FIMI text file."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        items = data.get("transactions", []) if isinstance(data, dict) else data
        return transactions_from_json(items)
    with path.open(encoding="utf-8") as handle:
        return list(parse_fimi_lines(handle))
