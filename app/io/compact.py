"""A corpus as integer term ids: what an upload is parsed into as it streams.

Memory is the point. A transaction as a :class:`~app.core.model.Transaction` costs about
1.5 KB of Python objects (a frozenset, its strings, the dataclass); here it costs 8 bytes of
offset plus 4 bytes per term, plus 32 bytes when it names an individual and 4 when it names a
cluster. Each distinct term is kept once, in the dictionary ``terms``. The arrays grow
amortised (``array.array``) and are handed to numpy without a copy.

Individuals are keyed (HMAC-SHA256, :func:`app.services.identity.individual_key`) as they are
read: a raw pseudonym is never kept, and a key is a fixed 32 bytes.

The transient payload of a queued job (:func:`encode`, :func:`decode`) is the same arrays,
zlib-compressed, behind a small JSON header with the dictionary.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from app.core.errors import InvalidCorpus
from app.core.model import Transaction
from app.io.terms import bad_character, describe, normalize_term

__all__ = ["CompactCorpus", "CorpusBuilder", "Limits", "encode", "decode", "MAGIC"]

MAGIC = b"SPC1"
_NO_INDIVIDUAL = bytes(32)
_BLOCK = 1 << 16


@dataclass(frozen=True, slots=True)
class Limits:
    """Caps that bound a parse whatever the body (docs/settings.md)."""

    max_transactions: int = 1_000_000
    max_terms_per_transaction: int = 1_000
    max_distinct_terms: int = 200_000
    #: Term occurrences of a whole release (the sum of its transactions' terms): with the
    #: row cap, what bounds the arrays here and the core's transactions in the job.
    max_terms_per_release: int = 11_000_000


@dataclass(slots=True)
class CompactCorpus:
    """Transactions as term ids: transaction ``k`` holds ``ids[ends[k-1]:ends[k]]``."""

    terms: list[str]
    ids: npt.NDArray[np.int32]
    ends: npt.NDArray[np.int64]
    #: 32 bytes per transaction (HMAC-SHA256 of the pseudonym; zeros: none), or ``None``.
    individuals: bytes | None = None
    #: Cluster label id per transaction (into ``cluster_labels``), or ``None``.
    clusters: npt.NDArray[np.int32] | None = None
    cluster_labels: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ends)

    def nbytes(self) -> int:
        """Bytes held by the arrays (the dictionary's strings not counted)."""
        extra = 0 if self.clusters is None else self.clusters.nbytes
        return self.ids.nbytes + self.ends.nbytes + len(self.individuals or b"") + extra

    def individual(self, k: int) -> str | None:
        if self.individuals is None:
            return None
        key = self.individuals[32 * k : 32 * k + 32]
        return None if key == _NO_INDIVIDUAL else key.hex()

    def transactions(self, terms: Sequence[str] | None = None) -> list[Transaction]:
        """The core's transactions, reading ``terms`` (default: the dictionary) for the ids;
        a remapped dictionary (private spellings) may merge two ids of one transaction.

        Converted a block of rows at a time: the ids as Python ints exist for one block
        only (a whole corpus' worth would cost 28 bytes an id). Equal rows share their
        ``frozenset``."""
        words = list(self.terms if terms is None else terms)
        if self.individuals is None and self.clusters is None:
            return self._anonymous_transactions(words)
        labels = self.cluster_labels
        out: list[Transaction] = []
        # Equal rows share one frozenset: built once per distinct row, and pickled once
        # (by reference) when the transactions cross to the compute child. The key is the
        # row's ids as bytes (:func:`_row_keys`).
        shared: dict[bytes, frozenset[str]] = {}
        for first in range(0, len(self), _BLOCK):
            last = min(first + _BLOCK, len(self))
            begin = int(self.ends[first - 1]) if first else 0
            ids, keys = _row_keys(self.ids[begin : int(self.ends[last - 1])])
            ends = (self.ends[first:last] - begin).tolist()
            clusters = None if self.clusters is None else self.clusters[first:last].tolist()
            start = 0
            for k, end in enumerate(ends):
                key = keys[4 * start : 4 * end]
                row = shared.get(key)
                if row is None:
                    row = shared[key] = frozenset([words[i] for i in ids[start:end]])
                out.append(
                    Transaction(
                        row,
                        self.individual(first + k),
                        None if clusters is None else labels[clusters[k]],
                    )
                )
                start = end
        return out

    def _anonymous_transactions(self, words: Sequence[str]) -> list[Transaction]:
        """:meth:`transactions` of a corpus without individuals or cluster labels: equal rows
        are equal transactions, so they share one (immutable) :class:`Transaction`, built once
        per distinct row. Building a frozen dataclass per row was most of the ``prepare``
        phase: 6.4 s of CPU for 2,000,000 FIMI lines, and 56 bytes a row held by the child."""
        out: list[Transaction] = []
        shared: dict[bytes, Transaction] = {}
        for first in range(0, len(self), _BLOCK):
            last = min(first + _BLOCK, len(self))
            begin = int(self.ends[first - 1]) if first else 0
            ids, keys = _row_keys(self.ids[begin : int(self.ends[last - 1])])
            start = 0
            for end in (self.ends[first:last] - begin).tolist():
                key = keys[4 * start : 4 * end]
                transaction = shared.get(key)
                if transaction is None:
                    row = frozenset([words[i] for i in ids[start:end]])
                    transaction = shared[key] = Transaction(row)
                out.append(transaction)
                start = end
        return out


def _row_keys(ids: npt.NDArray[np.int32]) -> tuple[list[int], bytes]:
    """A block's ids as Python ints (for this block only) and as bytes, whose slices key the
    rows met so far. A tuple of ints kept each id alive as an int object for the whole
    conversion: 28 bytes an id plus the tuple's 8, against the 4 of a bytes key. On a million
    distinct rows of 10 terms that was about 0.4 GB held until the last row was read."""
    return ids.tolist(), ids.tobytes()


class CorpusBuilder:
    """Appends transactions as they are parsed; every fault names its line or item.

    Terms are looked up by their raw spelling first (one dict probe per term on the hot
    path); only a spelling not seen before is normalised and checked, and two spellings with
    one NFC form share an id.
    """

    def __init__(self, secret: bytes, limits: Limits) -> None:
        self.limits = limits
        self._secret = secret
        self._by_spelling: dict[str, int] = {}
        self._by_term: dict[str, int] = {}
        self.terms: list[str] = []
        self._ids: array[int] = array("i")
        self._ends: array[int] = array("q")
        self._individuals: bytearray | None = None
        self._clusters: array[int] | None = None
        self._labels: dict[str, int] = {}
        #: The first transaction without an individual, and without / with a cluster label.
        self.missing_individual: dict[str, int] | None = None
        self.missing_cluster: dict[str, int] | None = None
        self.with_cluster: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._ends)

    def _term_id(self, raw: str, where: dict[str, int]) -> int:
        term = normalize_term(raw, where)
        term_id = self._by_term.get(term)
        if term_id is None:
            if len(self.terms) >= self.limits.max_distinct_terms:
                raise _fault(
                    where,
                    f"more than {self.limits.max_distinct_terms} distinct terms "
                    "in one release (SERIALPUB_MAX_DISTINCT_TERMS)",
                    field="terms",
                    limit=self.limits.max_distinct_terms,
                )
            term_id = self._by_term[term] = len(self.terms)
            self.terms.append(term)
        self._by_spelling[raw] = term_id
        return term_id

    def add(
        self,
        raw_terms: list[str],
        where: dict[str, int],
        individual: str | None = None,
        cluster: str | None = None,
    ) -> None:
        """Append one transaction given its raw terms (already split)."""
        if len(self._ends) >= self.limits.max_transactions:
            raise _fault(
                where,
                f"more than {self.limits.max_transactions} transactions in one "
                "release (SERIALPUB_MAX_TRANSACTIONS)",
                limit=self.limits.max_transactions,
            )
        get = self._by_spelling.get
        ids = [get(t, -1) for t in raw_terms]
        if -1 in ids:
            ids = [
                i if i >= 0 else self._term_id(t, where)
                for i, t in zip(ids, raw_terms, strict=True)
            ]
        if not ids:
            raise _fault(where, "no terms", field="terms")
        if len(ids) > 1 and len(set(ids)) != len(ids):
            ids = list(dict.fromkeys(ids))
        if len(ids) > self.limits.max_terms_per_transaction:
            raise _fault(
                where,
                f"{len(ids)} terms, more than "
                f"{self.limits.max_terms_per_transaction} (SERIALPUB_MAX_TERMS_PER_"
                "TRANSACTION)",
                field="terms",
                limit=self.limits.max_terms_per_transaction,
            )
        if len(self._ids) + len(ids) > self.limits.max_terms_per_release:
            raise _fault(
                where,
                f"more than {self.limits.max_terms_per_release} terms in one "
                "release, counted over its transactions (SERIALPUB_MAX_TERMS_PER_"
                "RELEASE)",
                field="terms",
                limit=self.limits.max_terms_per_release,
            )
        self._ids.extend(ids)
        self._ends.append(len(self._ids))
        self._add_individual(individual, where)
        self._add_cluster(cluster, where)

    def add_lines(
        self, lines: list[str], first: int, check: Callable[[str], int | None] | None
    ) -> int | None:
        """Append text lines (terms separated by white space), numbered from ``first``; the
        offset of the first line ``check`` refuses, else ``None`` (``check`` is ``None``
        when the caller has checked the whole block at once).

        The hot path of a FIMI upload: a line whose spellings are all known, within the caps,
        costs a split, one dict probe per term and two array appends. Anything else goes
        through :meth:`add`, which names the fault.
        """
        get, ids_out, ends_out = self._by_spelling.get, self._ids, self._ends
        max_terms = self.limits.max_terms_per_transaction
        room = self.limits.max_transactions - len(ends_out)
        max_ids = self.limits.max_terms_per_release
        if self.missing_individual is None and lines:
            self.missing_individual = self.missing_cluster = {"line": first}
        for offset, line in enumerate(lines):
            if check is not None and check(line.removesuffix("\r")) is not None:
                return offset
            raw = line.split()
            ids = list(map(get, raw))
            if (
                not ids
                or None in ids
                or len(ids) > max_terms
                or room <= 0
                or len(ids_out) + len(ids) > max_ids
            ):
                self.add(raw, {"line": first + offset})
            else:
                if len(ids) > 1 and len(set(ids)) != len(ids):
                    ids = list(dict.fromkeys(ids))
                ids_out.extend(ids)  # type: ignore[arg-type]  # no None: checked above
                ends_out.append(len(ids_out))
            room -= 1
        return None

    def _add_individual(self, individual: str | None, where: dict[str, int]) -> None:
        if individual is None:
            self.missing_individual = self.missing_individual or where
        if individual is None and self._individuals is None:
            return
        if self._individuals is None:
            self._individuals = bytearray(_NO_INDIVIDUAL * (len(self._ends) - 1))
        if individual is None:
            self._individuals += _NO_INDIVIDUAL
            return
        _check_label(individual, where, "individual")
        self._individuals += hmac.new(self._secret, individual.encode(), hashlib.sha256).digest()

    def _add_cluster(self, cluster: str | None, where: dict[str, int]) -> None:
        # 'cluster' is all or none: remember the first transaction with and without it.
        if cluster is None:
            self.missing_cluster = self.missing_cluster or where
            return
        self.with_cluster = self.with_cluster or where
        _check_label(cluster, where, "cluster")
        label = self._labels.setdefault(cluster, len(self._labels))
        if self._clusters is None:
            self._clusters = array("i", [0] * (len(self._ends) - 1))
        self._clusters.append(label)

    def build(self) -> CompactCorpus:
        """The corpus (the arrays are shared with numpy, not copied)."""
        if self.with_cluster is not None and self.missing_cluster is not None:
            where = self.missing_cluster
            raise _fault(
                where,
                "'cluster' is given on some transactions only; give it on all or none",
                field="cluster",
            )
        clusters = None if self._clusters is None else np.frombuffer(self._clusters, np.int32)
        return CompactCorpus(
            terms=self.terms,
            ids=np.frombuffer(self._ids, dtype=np.int32),
            ends=np.frombuffer(self._ends, dtype=np.int64),
            individuals=None if self._individuals is None else bytes(self._individuals),
            clusters=clusters,
            cluster_labels=list(self._labels),
        )


def _check_label(value: str, where: dict[str, int], name: str) -> None:
    index = bad_character(value)
    if index is not None:
        raise _fault(
            where, f"{name} contains {describe(value[index])}", field=name, column=index + 1
        )


def _fault(where: dict[str, int], message: str, **details: object) -> InvalidCorpus:
    name, value = next(iter(where.items()))
    return InvalidCorpus(f"{name} {value}: {message}", {**where, **details})


# -- the transient payload of a queued job ---------------------------------------------------


def encode(corpus: CompactCorpus, header: dict[str, object] | None = None) -> bytes:
    """``MAGIC``, a length-prefixed zlib'd JSON header (dictionary, labels, sizes, ``header``)
    and the zlib'd arrays, compressed in slices so that no second full copy is made."""
    head = {
        "terms": corpus.terms,
        "labels": corpus.cluster_labels,
        "n": len(corpus),
        "n_ids": len(corpus.ids),
        "individuals": corpus.individuals is not None,
        "clusters": corpus.clusters is not None,
        **(header or {}),
    }
    head_bytes = zlib.compress(json.dumps(head, ensure_ascii=False).encode(), 1)
    packer = zlib.compressobj(1)
    parts = [MAGIC, struct.pack("<Q", len(head_bytes)), head_bytes]
    for block in _blocks(corpus):
        parts.append(packer.compress(block))
    parts.append(packer.flush())
    return b"".join(parts)


def _blocks(corpus: CompactCorpus, size: int = 1 << 22) -> Iterator[bytes | memoryview]:
    arrays: list[bytes | memoryview] = [corpus.ends.data.cast("B"), corpus.ids.data.cast("B")]
    if corpus.individuals is not None:
        arrays.append(corpus.individuals)
    if corpus.clusters is not None:
        arrays.append(corpus.clusters.data.cast("B"))
    for data in arrays:
        for start in range(0, len(data), size):
            yield data[start : start + size]


def decode(payload: bytes) -> tuple[CompactCorpus, dict[str, object]]:
    """The corpus and the header of :func:`encode`."""
    if not payload.startswith(MAGIC):
        raise ValueError("not a compact corpus payload")
    (length,) = struct.unpack_from("<Q", payload, len(MAGIC))
    start = len(MAGIC) + 8
    head = json.loads(zlib.decompress(payload[start : start + length]))
    body = zlib.decompress(payload[start + length :])
    n, n_ids = int(head["n"]), int(head["n_ids"])
    take = _reader(body)
    ends = np.frombuffer(take(8 * n), np.int64)
    ids = np.frombuffer(take(4 * n_ids), np.int32)
    individuals = bytes(take(32 * n)) if head["individuals"] else None
    clusters = np.frombuffer(take(4 * n), np.int32) if head["clusters"] else None
    corpus = CompactCorpus(
        list(head["terms"]), ids, ends, individuals, clusters, list(head["labels"])
    )
    return corpus, head


def _reader(body: bytes) -> Callable[[int], memoryview]:
    view = memoryview(body)
    position = [0]

    def take(size: int) -> memoryview:
        chunk = view[position[0] : position[0] + size]
        position[0] += size
        return chunk

    return take
