"""The thesis's worked examples (chapter 3, Tables 3.1-3.8; chapter 4, Tables 4.2-4.4)."""

from __future__ import annotations

from app.core.model import Transaction

#: Table 3.2 (= Table 3.1's four records, = Table 4.2 reordered): cluster P1.
P1 = (
    ("cancer", "radiotherapy", "lung", "treatment"),
    ("cancer", "lung", "blood", "tumor", "biopsy"),
    ("cancer", "blood", "treatment", "tumor", "biopsy"),
    ("vessel", "blood", "treatment", "lung", "catheterisation"),
)

#: Table 3.4: cluster P2.
P2 = (
    ("kidney", "infection", "failure", "sepsis"),
    ("kidney", "surgery", "catheterisation"),
    ("kidney", "infection", "surgery"),
    ("infection", "failure", "dialysis"),
)


def corpus(*records: tuple[str, ...]) -> list[Transaction]:
    return [Transaction.of(r) for r in records]
