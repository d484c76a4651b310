"""Reading an uploaded corpus: JSON, text/plain (FIMI lines) or text/csv, streamed.

Line formats are parsed as the body arrives (``request.stream()``), so a million-line upload
is never held as one bytes object; every fault names its line (1-based) or, for JSON, its
item (0-based index into ``transactions``). Nothing here touches the database.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from pydantic import ValidationError

from app.core.errors import InvalidCorpus
from app.core.model import Transaction
from app.core.validation import MAX_TERM_LENGTH, validate_corpus
from app.errors import BadRequest, PayloadTooLarge, Unprocessable, UnsupportedMediaType
from app.schemas.releases import ReleaseBody

__all__ = ["Corpus", "read_corpus", "check_terms", "CONTENT_TYPES"]

CONTENT_TYPES = ("application/json", "text/plain", "text/csv")
_CSV_COLUMNS = frozenset({"terms", "individual", "cluster"})


@dataclass(slots=True)
class Corpus:
    """A parsed upload: transactions (raw pseudonyms), label, extra private terms, body hash."""

    transactions: list[Transaction]
    label: str | None
    private_terms: list[str]
    body_hash: str
    #: Line of each transaction (text formats); ``None`` for JSON, where items are indexes.
    lines: list[int] | None = field(default=None)

    def where(self, item: int) -> dict[str, int]:
        """How to name transaction ``item`` in an error (``line`` or ``item``)."""
        if self.lines is not None and 0 <= item < len(self.lines):
            return {"line": self.lines[item]}
        return {"item": item}


class _Body:
    """Counts and hashes the body as it streams; refuses it past ``limit`` bytes (413)."""

    def __init__(self, chunks: AsyncIterator[bytes], limit: int, salt: str) -> None:
        self._chunks = chunks
        self._limit = limit
        self.size = 0
        self.hash = hashlib.sha256(salt.encode())

    async def chunks(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            self.size += len(chunk)
            if self.size > self._limit:
                raise PayloadTooLarge(
                    f"the body exceeds the limit of {self._limit} bytes",
                    {"limit": self._limit},
                )
            self.hash.update(chunk)
            yield chunk

    async def lines(self) -> AsyncIterator[tuple[int, str]]:
        """Decoded lines with their 1-based numbers; a final empty piece is not a line."""
        pending = b""
        number = 0
        async for chunk in self.chunks():
            pieces = (pending + chunk).split(b"\n")
            pending = pieces.pop()
            for raw in pieces:
                number += 1
                yield number, _decode(raw, number)
        if pending:
            yield number + 1, _decode(pending, number + 1)


def _decode(raw: bytes, number: int) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(
            f"line {number}: bytes that are not UTF-8 at column {exc.start + 1}",
            {"line": number, "column": exc.start + 1},
            code="invalid_encoding",
        ) from None


def check_terms(terms: list[str], where: dict[str, int], what: str = "terms") -> None:
    """Refuse an empty term or one longer than MAX_TERM_LENGTH characters (422)."""
    place = f"{next(iter(where))} {next(iter(where.values()))}"
    for term in terms:
        if not term.strip():
            raise Unprocessable(f"{place}: empty term", {**where, "field": what},
                                code="invalid_corpus")
        if len(term) > MAX_TERM_LENGTH:
            raise Unprocessable(
                f"{place}: term longer than {MAX_TERM_LENGTH} characters",
                {**where, "field": what, "length": len(term)},
                code="invalid_corpus",
            )


def media_type(content_type: str | None) -> str:
    base = (content_type or "").split(";")[0].strip().lower()
    if base not in CONTENT_TYPES:
        raise UnsupportedMediaType(
            f"content type {base or '(none)'!r} is not accepted; use one of "
            f"{', '.join(CONTENT_TYPES)}",
            {"content_type": base, "accepted": list(CONTENT_TYPES)},
        )
    return base


async def read_corpus(
    content_type: str | None,
    chunks: AsyncIterator[bytes],
    *,
    limit: int,
    label: str | None = None,
    private_terms: list[str] | None = None,
    require_individual: bool = False,
) -> Corpus:
    """Parse and validate an upload; raise the service error naming the fault."""
    kind = media_type(content_type)
    extra = list(private_terms or [])
    body = _Body(chunks, limit, f"{kind}\n{label}\n{sorted(extra)}\n")
    if kind == "application/json":
        corpus = await _read_json(body)
    elif kind == "text/plain":
        corpus = await _read_plain(body, label, extra)
    else:
        corpus = await _read_csv(body, label, extra)
    if corpus.label is not None and len(corpus.label) > 200:
        raise Unprocessable("label longer than 200 characters", {"field": "label"})
    check_terms(corpus.private_terms, {"item": 0}, "private_terms")
    _validate(corpus, require_individual)
    return corpus


def _validate(corpus: Corpus, require_individual: bool) -> None:
    try:
        validate_corpus(corpus.transactions, require_individual=require_individual)
    except InvalidCorpus as exc:
        details = dict(exc.details)
        item = details.pop("item", None)
        if not isinstance(item, int):
            raise Unprocessable(exc.message, details, code=exc.code) from None
        where = corpus.where(item)
        name, value = next(iter(where.items()))
        reason = exc.message.split(": ", 1)[-1] if ": " in exc.message else exc.message
        raise Unprocessable(f"{name} {value}: {reason}", {**where, **details},
                            code=exc.code) from None


async def _read_plain(body: _Body, label: str | None, extra: list[str]) -> Corpus:
    transactions: list[Transaction] = []
    lines: list[int] = []
    async for number, line in body.lines():
        terms = line.split()
        if not terms:
            raise Unprocessable(f"line {number} has no terms", {"line": number, "field": "terms"},
                                code="invalid_corpus")
        check_terms(terms, {"line": number})
        transactions.append(Transaction(frozenset(terms)))
        lines.append(number)
    return Corpus(transactions, label, extra, body.hash.hexdigest(), lines)


async def _read_csv(body: _Body, label: str | None, extra: list[str]) -> Corpus:
    transactions: list[Transaction] = []
    lines: list[int] = []
    columns: list[str] | None = None
    async for number, line in body.lines():
        cells = _csv_cells(line, number)
        if columns is None:
            columns = _csv_header(cells)
            continue
        if cells == [] or cells == [""]:
            raise Unprocessable(f"line {number} has no terms", {"line": number, "field": "terms"},
                                code="invalid_corpus")
        record = _csv_record(columns, cells, number)
        transactions.append(record)
        lines.append(number)
    if columns is None:
        raise Unprocessable("the corpus is empty: a CSV header and at least one row are needed",
                            {"line": 1}, code="invalid_corpus")
    return Corpus(transactions, label, extra, body.hash.hexdigest(), lines)


def _csv_cells(line: str, number: int) -> list[str]:
    try:
        return next(csv.reader([line], strict=True), [])
    except csv.Error as exc:
        raise BadRequest(f"line {number}: {exc}", {"line": number}, code="invalid_csv") from None


def _csv_header(cells: list[str]) -> list[str]:
    columns = [c.strip().lower() for c in cells]
    unknown = [c for c in columns if c not in _CSV_COLUMNS]
    if "terms" not in columns or unknown or len(set(columns)) != len(columns):
        raise BadRequest(
            "line 1: the CSV header needs a 'terms' column and may add 'individual' and "
            f"'cluster', each once (got {', '.join(columns) or 'nothing'})",
            {"line": 1, "columns": columns},
            code="invalid_csv",
        )
    return columns


def _csv_record(columns: list[str], cells: list[str], number: int) -> Transaction:
    if len(cells) != len(columns):
        raise BadRequest(
            f"line {number}: {len(cells)} fields, the header has {len(columns)}",
            {"line": number},
            code="invalid_csv",
        )
    record = dict(zip(columns, cells, strict=True))
    terms = [t.strip() for t in record["terms"].split(";")]
    if terms == [""]:
        raise Unprocessable(f"line {number} has no terms", {"line": number, "field": "terms"},
                            code="invalid_corpus")
    check_terms(terms, {"line": number})
    return Transaction(
        frozenset(terms), record.get("individual") or None, record.get("cluster") or None
    )


async def _read_json(body: _Body) -> Corpus:
    parts = [chunk async for chunk in body.chunks()]
    raw = b"".join(parts)
    del parts
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise BadRequest(f"line {line}: bytes that are not UTF-8", {"line": line},
                         code="invalid_encoding") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                         {"line": exc.lineno, "column": exc.colno}, code="invalid_json") from None
    try:
        parsed = ReleaseBody.model_validate(data)
    except ValidationError as exc:
        raise _json_error(exc) from None
    transactions = []
    for i, t in enumerate(parsed.transactions):
        check_terms(t.terms, {"item": i})
        transactions.append(Transaction(frozenset(t.terms), t.individual, t.cluster))
    return Corpus(transactions, parsed.label, parsed.private_terms, body.hash.hexdigest())


def _json_error(exc: ValidationError) -> Unprocessable:
    first = exc.errors()[0]
    loc = list(first["loc"])
    details: dict[str, object] = {"loc": loc}
    if len(loc) >= 2 and loc[0] == "transactions" and isinstance(loc[1], int):
        details["item"] = loc[1]
    where = ".".join(str(p) for p in loc) or "body"
    return Unprocessable(f"{where}: {first['msg']}", details, code="invalid_body")
