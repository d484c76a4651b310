"""Checks on a raw corpus before anything is computed (docs/api-audit.md, "Errors")."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.errors import InvalidCorpus
from app.core.model import Transaction

__all__ = ["MAX_TERM_LENGTH", "individual_keys", "validate_corpus"]

MAX_TERM_LENGTH = 200


def validate_corpus(corpus: Sequence[Transaction], *, require_individual: bool = False) -> None:
    """Raise :class:`InvalidCorpus` naming the first transaction at fault.

    ``details`` carries ``item`` (0-based index) so that the API can name the line.
    """
    if not corpus:
        raise InvalidCorpus("the corpus is empty: a release needs at least one transaction")
    labelled = sum(1 for t in corpus if t.cluster is not None)
    if 0 < labelled < len(corpus):
        first = next(i for i, t in enumerate(corpus) if t.cluster is None)
        raise InvalidCorpus(
            f"transaction {first}: 'cluster' is given on {labelled} of {len(corpus)} "
            "transactions; give it on all or none",
            {"item": first, "field": "cluster"},
        )
    # Each distinct row and term is checked once, at its first transaction (the one an error
    # names): corpora repeat rows (a million lines hold 77,512 distinct ones in the benchmark).
    rows_checked: set[frozenset[str]] = set()
    terms_checked: set[str] = set()
    for i, transaction in enumerate(corpus):
        if require_individual and not transaction.individual:
            raise InvalidCorpus(
                f"transaction {i}: 'individual' is required by method wong",
                {"item": i, "field": "individual"},
            )
        if transaction.terms in rows_checked:
            continue
        if not transaction.terms:
            raise InvalidCorpus(f"transaction {i} has no terms", {"item": i, "field": "terms"})
        for term in transaction.terms:
            if term in terms_checked:
                continue
            if not term or not term.strip():
                raise InvalidCorpus(f"transaction {i}: empty term", {"item": i, "field": "terms"})
            if len(term) > MAX_TERM_LENGTH:
                raise InvalidCorpus(
                    f"transaction {i}: term longer than {MAX_TERM_LENGTH} characters",
                    {"item": i, "field": "terms"},
                )
            terms_checked.add(term)
        rows_checked.add(transaction.terms)


def individual_keys(corpus: Sequence[Transaction], method: str) -> list[str]:
    """The individuals' keys, one per transaction (Wong and Inv assume one record per
    individual per release); names the transaction at fault otherwise."""
    seen: dict[str, int] = {}
    for i, transaction in enumerate(corpus):
        key = transaction.individual
        if not key:
            raise InvalidCorpus(
                f"transaction {i}: 'individual' is required by method {method}",
                {"item": i, "field": "individual"},
            )
        if key in seen:
            raise InvalidCorpus(
                f"transaction {i}: individual also on transaction {seen[key]}; method {method} "
                "allows one transaction per individual per release",
                {"item": i, "field": "individual"},
            )
        seen[key] = i
    return [str(t.individual) for t in corpus]
