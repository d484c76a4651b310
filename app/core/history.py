"""What the core needs to know of a series' past releases when it publishes the next one."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.model import PublishedRelease, ReleaseLedger

__all__ = ["SeriesHistory", "WongEntry"]

#: One past release's group statistics for an (individual, term): ``(n_j, n_{j,s})``.
WongEntry = tuple[int, int]


@dataclass(slots=True)
class SeriesHistory:
    """Published releases of a series, oldest first, with the private state methods keep.

    ``ledgers`` parallels ``releases`` (private side; Inv uses it). ``statistics`` is Wong's
    statistics file m(o, s): individual key (a keyed hash, never the pseudonym) -> term ->
    list of ``(n_j, n_{j,s})`` over the past releases where o's group held s (design.md §6).
    ``signatures`` is Inv's individual key -> signature (frozen set of private terms, or the
    empty set for NULL) and bucket history.
    """

    releases: list[PublishedRelease] = field(default_factory=list)
    ledgers: list[ReleaseLedger] = field(default_factory=list)
    statistics: dict[str, dict[str, list[WongEntry]]] = field(default_factory=dict)
    signatures: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def next_release_no(self) -> int:
        return len(self.releases) + 1

    def add(self, release: PublishedRelease, ledger: ReleaseLedger) -> None:
        """Append a release just published, keeping of its ledger what a later publication
        reads (:meth:`ReleaseLedger.totals_only`), as the service's compute child does."""
        self.releases.append(release)
        self.ledgers.append(ledger.totals_only())
