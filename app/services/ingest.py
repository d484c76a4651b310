"""Reading an uploaded corpus: JSON, text/plain (FIMI lines) or text/csv, streamed.

Line formats are parsed as the body arrives (``request.stream()``) straight into a
:class:`~app.io.compact.CompactCorpus` (term ids in arrays, one dictionary of terms), so
memory grows with the rows and distinct terms kept, never with the body: a body is decoded
a chunk at a time, and a line may not grow past a bound. JSON is parsed whole, under its own
smaller limit (``SERIALPUB_MAX_JSON_BYTES``). Every fault names its line (1-based) or, for
JSON, its item (0-based index into ``transactions``). Nothing here touches the database.

Every term is normalised (:mod:`app.io.terms`): trimmed, NFC, refused when it holds NUL, a
control, zero-width or format character, or a lone surrogate. Matching private terms is the
publication's business (:mod:`app.services.payload`), done with the series' terms as of then.
"""

from __future__ import annotations

import csv
import hashlib
import json
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.errors import ErrorCode, InvalidCorpus
from app.core.validation import MAX_TERM_LENGTH
from app.errors import BadRequest, PayloadTooLarge, Unprocessable, UnsupportedMediaType, from_core
from app.io.compact import CompactCorpus, CorpusBuilder, Limits
from app.io.terms import (
    PrivateMatch,
    bad_character,
    block_is_clean,
    describe,
    normalize_private_terms,
    text_line_check,
)
from app.schemas.releases import TransactionIn

__all__ = ["Corpus", "Limits", "read_corpus", "media_type", "CONTENT_TYPES", "CHARSETS"]

CONTENT_TYPES = ("application/json", "text/plain", "text/csv")
CHARSETS = ("utf-8", "utf8", "us-ascii", "ascii")
_CSV_COLUMNS = frozenset({"terms", "individual", "cluster"})
_JSON_KEYS = frozenset({"label", "private_terms", "transactions"})
_INFLATE_STEP = 1 << 20


@dataclass(slots=True)
class Corpus:
    """A parsed upload: the compact corpus (individuals keyed), label, extra private terms
    (normalised) and the body hash (idempotency)."""

    compact: CompactCorpus
    label: str | None
    private_terms: list[str]
    body_hash: str

    def __len__(self) -> int:
        return len(self.compact)


def media_type(content_type: str | None) -> str:
    """The accepted media type of ``content_type`` (415 otherwise, or for a charset other
    than UTF-8: the parser reads UTF-8 only, and guessing would mangle terms)."""
    base, _, params = (content_type or "").partition(";")
    base = base.strip().lower()
    if base not in CONTENT_TYPES:
        raise UnsupportedMediaType(
            f"content type {base or '(none)'!r} is not accepted; use one of "
            f"{', '.join(CONTENT_TYPES)}",
            {"content_type": base, "accepted": list(CONTENT_TYPES)},
        )
    for param in params.split(";"):
        name, _, value = param.partition("=")
        charset = value.strip().strip('"').lower()
        if name.strip().lower() == "charset" and charset not in CHARSETS:
            raise UnsupportedMediaType(
                f"charset {charset!r} is not accepted; send UTF-8 (charset=utf-8)",
                {"charset": charset, "accepted": ["utf-8"]},
                code=ErrorCode.UNSUPPORTED_CHARSET,
            )
    return base


def _inflater(content_encoding: str | None) -> Any:
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(wbits=31)
    raise UnsupportedMediaType(
        f"content encoding {encoding!r} is not accepted; use gzip or none",
        {"content_encoding": encoding, "accepted": ["gzip", "identity"]},
        code=ErrorCode.UNSUPPORTED_CONTENT_ENCODING,
    )


class _Body:
    """Counts, inflates (gzip) and hashes the body as it streams; refuses it past ``limit``
    bytes, on the wire or once decoded (413), so a small gzip bomb is refused too."""

    def __init__(
        self, chunks: AsyncIterator[bytes], limit: int, salt: str, content_encoding: str | None
    ) -> None:
        self._chunks = chunks
        self._limit = limit
        self._inflate = _inflater(content_encoding)
        self.wire = 0
        self.size = 0
        self.hash = hashlib.sha256(salt.encode())

    def _too_large(self) -> PayloadTooLarge:
        return PayloadTooLarge(
            f"the body exceeds the limit of {self._limit} bytes", {"limit": self._limit}
        )

    def _decoded(self, chunk: bytes) -> Iterator[bytes]:
        if self._inflate is None:
            yield chunk
            return
        try:
            data = self._inflate.decompress(chunk, _INFLATE_STEP)
            yield data
            while self._inflate.unconsumed_tail:
                yield self._inflate.decompress(self._inflate.unconsumed_tail, _INFLATE_STEP)
        except zlib.error as exc:
            raise BadRequest(
                f"the gzip body cannot be decoded: {exc}", {}, code=ErrorCode.INVALID_ENCODING
            ) from None

    async def chunks(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            self.wire += len(chunk)
            if self.wire > self._limit:
                raise self._too_large()
            for data in self._decoded(chunk):
                self.size += len(data)
                if self.size > self._limit:
                    raise self._too_large()
                self.hash.update(data)
                yield data
        if self._inflate is not None and not self._inflate.eof:
            raise BadRequest("the gzip body is truncated", {}, code=ErrorCode.INVALID_ENCODING)

    async def blocks(self, max_line: int) -> AsyncIterator[tuple[int, str]]:
        """Decoded complete lines (joined by newlines), a chunk at a time, with the number of
        the first; a final empty piece is not a line. A line longer than ``max_line`` bytes
        is refused as soon as it is, so that one endless line cannot hold the body."""
        pending = bytearray()
        number = 0
        async for chunk in self.chunks():
            pending += chunk
            cut = pending.rfind(b"\n")
            if cut >= 0:
                block = bytes(pending[:cut])
                del pending[: cut + 1]
                text = _decode(block, number)
                yield number + 1, text
                number += text.count("\n") + 1
            if len(pending) > max_line:
                raise Unprocessable(
                    f"line {number + 1}: longer than {max_line} bytes",
                    {"line": number + 1, "limit": max_line},
                    code=ErrorCode.INVALID_CORPUS,
                )
        if pending:
            yield number + 1, _decode(bytes(pending), number)


def _decode(block: bytes, before: int) -> str:
    """``block`` as UTF-8 (a BOM opening the body dropped); ``before`` lines precede it."""
    if before == 0 and block.startswith(b"\xef\xbb\xbf"):
        block = block[3:]
    try:
        return block.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = before + block.count(b"\n", 0, exc.start) + 1
        column = exc.start - (block.rfind(b"\n", 0, exc.start) + 1) + 1
        raise BadRequest(
            f"line {line}: bytes that are not UTF-8 at column {column}",
            {"line": line, "column": column},
            code=ErrorCode.INVALID_ENCODING,
        ) from None


def _check_text(value: str | None, field: str, *, limit: int = 200) -> None:
    """A label or query value: no NUL or other unprintable character, at most ``limit``."""
    if value is None:
        return
    index = bad_character(value)
    if index is not None:
        raise Unprocessable(
            f"{field} contains {describe(value[index])}", {"field": field, "column": index + 1}
        )
    if len(value) > limit:
        raise Unprocessable(f"{field} longer than {limit} characters", {"field": field})


async def read_corpus(
    content_type: str | None,
    chunks: AsyncIterator[bytes],
    *,
    limit: int,
    json_limit: int | None = None,
    secret: bytes = b"",
    limits: Limits | None = None,
    content_encoding: str | None = None,
    label: str | None = None,
    private_terms: list[str] | None = None,
    private_match: PrivateMatch = "casefold",
    require_individual: bool = False,
) -> Corpus:
    """Parse and validate an upload; raise the service error naming the fault."""
    kind = media_type(content_type)
    extra = list(private_terms or [])
    limits = limits or Limits()
    salt = f"{kind}\n{label}\n{sorted(extra)}\n"
    body = _Body(
        chunks,
        limit if kind != "application/json" else min(limit, json_limit or limit),
        salt,
        content_encoding,
    )
    builder = CorpusBuilder(secret, limits)
    try:
        if kind == "application/json":
            label, extra = await _read_json(body, builder)
        elif kind == "text/plain":
            await _read_plain(body, builder, _max_line(limits))
        else:
            await _read_csv(body, builder, _max_line(limits))
        _check_text(label, "label")
        extra = normalize_private_terms(extra, private_match)
        compact = _finish(builder, require_individual)
    except InvalidCorpus as exc:
        raise from_core(exc) from None
    return Corpus(compact, label, extra, body.hash.hexdigest())


def _max_line(limits: Limits) -> int:
    # The longest line the caps allow (4 bytes a character, one separator a term), and room.
    return limits.max_terms_per_transaction * (4 * MAX_TERM_LENGTH + 1) + 4096


def _finish(builder: CorpusBuilder, require_individual: bool) -> CompactCorpus:
    if len(builder) == 0:
        raise InvalidCorpus("the corpus is empty: a release needs at least one transaction")
    corpus = builder.build()
    if require_individual:
        where = builder.missing_individual
        if where is not None:
            name, value = next(iter(where.items()))
            raise InvalidCorpus(
                f"{name} {value}: 'individual' is required by method wong",
                {**where, "field": "individual"},
            )
    return corpus


async def _read_plain(body: _Body, builder: CorpusBuilder, max_line: int) -> None:
    async for first, text in body.blocks(max_line):
        lines = text.split("\n")
        bad = builder.add_lines(lines, first, None if block_is_clean(text) else text_line_check)
        if bad is not None:
            line = lines[bad].removesuffix("\r")
            raise _bad_line(line, text_line_check(line) or 0, first + bad)


def _bad_line(line: str, index: int, number: int) -> Unprocessable:
    return Unprocessable(
        f"line {number}: {describe(line[index])} at column {index + 1}",
        {"line": number, "column": index + 1},
        code=ErrorCode.INVALID_CORPUS,
    )


async def _read_csv(body: _Body, builder: CorpusBuilder, max_line: int) -> None:
    columns: list[str] | None = None
    async for first, text in body.blocks(max_line):
        for offset, line in enumerate(text.split("\n")):
            number = first + offset
            if line.endswith("\r"):
                line = line[:-1]
            bad = text_line_check(line)
            if bad is not None:
                raise _bad_line(line, bad, number)
            cells = _csv_cells(line, number)
            if columns is None:
                columns = _csv_header(cells)
                continue
            _csv_record(builder, columns, cells, number)
    if columns is None:
        raise InvalidCorpus(
            "the corpus is empty: a CSV header and at least one row are needed", {"line": 1}
        )


def _csv_cells(line: str, number: int) -> list[str]:
    try:
        return next(csv.reader([line], strict=True), [])
    except csv.Error as exc:
        raise BadRequest(
            f"line {number}: {exc}", {"line": number}, code=ErrorCode.INVALID_CSV
        ) from None


def _csv_header(cells: list[str]) -> list[str]:
    columns = [c.strip().lower() for c in cells]
    unknown = [c for c in columns if c not in _CSV_COLUMNS]
    if "terms" not in columns or unknown or len(set(columns)) != len(columns):
        raise BadRequest(
            "line 1: the CSV header needs a 'terms' column and may add 'individual' and "
            f"'cluster', each once (got {', '.join(columns) or 'nothing'})",
            {"line": 1, "columns": columns},
            code=ErrorCode.INVALID_CSV,
        )
    return columns


def _csv_record(builder: CorpusBuilder, columns: list[str], cells: list[str], number: int) -> None:
    if cells == [] or cells == [""]:
        raise InvalidCorpus(f"line {number}: no terms", {"line": number, "field": "terms"})
    if len(cells) != len(columns):
        raise BadRequest(
            f"line {number}: {len(cells)} fields, the header has {len(columns)}",
            {"line": number},
            code=ErrorCode.INVALID_CSV,
        )
    record = dict(zip(columns, cells, strict=True))
    terms = record["terms"].split(";")
    if terms == [""]:
        raise InvalidCorpus(f"line {number}: no terms", {"line": number, "field": "terms"})
    builder.add(
        terms, {"line": number}, record.get("individual") or None, record.get("cluster") or None
    )


class _JsonHeader(BaseModel):
    """The fields of a JSON body beside ``transactions`` (:class:`ReleaseBody`)."""

    model_config = ConfigDict(extra="forbid")

    label: str | None = Field(None, max_length=200)
    private_terms: list[str] = Field(default_factory=list)


async def _read_json(body: _Body, builder: CorpusBuilder) -> tuple[str | None, list[str]]:
    raw = b"".join([chunk async for chunk in body.chunks()])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise BadRequest(
            f"line {line}: bytes that are not UTF-8",
            {"line": line},
            code=ErrorCode.INVALID_ENCODING,
        ) from None
    del raw
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRequest(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            {"line": exc.lineno, "column": exc.colno},
            code=ErrorCode.INVALID_JSON,
        ) from None
    except RecursionError:
        # The C decoder recurses once per level: a body of 100,000 brackets is refused as
        # such (it answered 500), and nothing the API reads is nested that deep.
        raise BadRequest(
            "invalid JSON: nested too deeply", {"reason": "nesting"}, code=ErrorCode.INVALID_JSON
        ) from None
    del text
    items = _json_shape(data)
    try:
        header = _JsonHeader.model_validate({k: v for k, v in data.items() if k != "transactions"})
    except ValidationError as exc:
        raise _json_error(exc, []) from None
    for i, item in enumerate(items):
        try:
            transaction = TransactionIn.model_validate(item)
        except ValidationError as exc:
            raise _json_error(exc, ["transactions", i]) from None
        builder.add(transaction.terms, {"item": i}, transaction.individual, transaction.cluster)
        items[i] = None  # the parsed item is no longer needed: free it as we go
    return header.label, header.private_terms


def _json_shape(data: object) -> list[Any]:
    """The ``transactions`` list of a JSON body; 422 naming the field otherwise."""
    if not isinstance(data, dict):
        raise Unprocessable(
            "body: expected a JSON object with 'transactions'",
            {"loc": []},
            code=ErrorCode.INVALID_BODY,
        )
    unknown = sorted(set(data) - _JSON_KEYS)
    if unknown:
        raise Unprocessable(
            f"{unknown[0]}: extra inputs are not permitted",
            {"loc": [unknown[0]]},
            code=ErrorCode.INVALID_BODY,
        )
    items = data.get("transactions")
    if not isinstance(items, list):
        message = "field required" if items is None else "input should be a valid list"
        raise Unprocessable(
            f"transactions: {message}", {"loc": ["transactions"]}, code=ErrorCode.INVALID_BODY
        )
    return items


def _json_error(exc: ValidationError, prefix: list[str | int]) -> Unprocessable:
    first = exc.errors()[0]
    loc = [*prefix, *first["loc"]]
    details: dict[str, object] = {"loc": loc}
    if len(loc) >= 2 and loc[0] == "transactions" and isinstance(loc[1], int):
        details["item"] = loc[1]
    where = ".".join(str(p) for p in loc) or "body"
    return Unprocessable(f"{where}: {first['msg']}", details, code=ErrorCode.INVALID_BODY)
