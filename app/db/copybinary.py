"""PostgreSQL's binary ``COPY`` format, written and read without a Python object per field.

The rows of a release are ``(cluster_pk int8, position int4, term_ids int4[], terms_hash
int8)``. In the binary format the array and the hash of a row are fixed bytes once its terms
are known, so they are built once per distinct row and every row costs one ``struct`` pack
of its key and a join: no text formatting here, no text parsing (``array_in``) on the server.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

import numpy as np
import psycopg

__all__ = ["HEADER", "TRAILER", "row_fields", "rows_blocks", "copy_binary", "read_copy",
           "split_int4_array_rows", "int4_elements"]

#: Signature, flags (no OIDs) and an empty header extension.
HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
TRAILER = struct.pack("!h", -1)
_INT4_OID = 23
_KEY = struct.Struct("!hiqii")  # 4 fields; int8 cluster_pk; int4 position
_EMPTY_ARRAY = struct.pack("!iiii", 12, 0, 0, _INT4_OID)


def row_fields(term_ids: Sequence[int], terms_hash: int) -> bytes:
    """The ``term_ids int4[]`` and ``terms_hash int8`` fields of a row, binary."""
    n = len(term_ids)
    if n == 0:
        array = _EMPTY_ARRAY
    else:
        body = np.empty((n, 2), dtype=">i4")
        body[:, 0] = 4
        body[:, 1] = term_ids
        array = struct.pack("!iiiiii", 20 + 8 * n, 1, 0, _INT4_OID, n, 1) + body.tobytes()
    return array + struct.pack("!iq", 8, terms_hash)


def rows_blocks(keys: Iterable[tuple[int, int, bytes]], block_rows: int = 20_000
                ) -> Iterable[bytes]:
    """The binary COPY stream of ``(cluster_pk, position, fields)`` rows, in blocks."""
    pack = _KEY.pack
    parts: list[bytes] = [HEADER]
    for pk, position, fields in keys:
        parts.append(pack(4, 8, pk, 4, position))
        parts.append(fields)
        if len(parts) >= 2 * block_rows:
            yield b"".join(parts)
            parts = []
    parts.append(TRAILER)
    yield b"".join(parts)


async def copy_binary(connection: psycopg.AsyncConnection[object], statement: str,
                      blocks: Iterable[bytes]) -> None:
    """``COPY ... FROM STDIN (FORMAT BINARY)`` of preformatted blocks."""
    async with connection.cursor() as cur, cur.copy(statement) as copy:  # type: ignore[arg-type]
        for block in blocks:
            await copy.write(block)


async def read_copy(connection: psycopg.AsyncConnection[object], statement: str) -> bytes:
    """The whole output of ``COPY ... TO STDOUT`` as one buffer."""
    blocks: list[bytes] = []
    async with connection.cursor() as cur, cur.copy(statement) as copy:  # type: ignore[arg-type]
        async for block in copy:
            blocks.append(bytes(block))
    return b"".join(blocks)


def split_int4_array_rows(data: bytes) -> tuple[list[int], list[bytes]]:
    """Parse a binary COPY of ``(int8, int4[])`` rows: the keys and, per row, the raw bytes
    of the array's elements (each a 4-byte length and a big-endian ``int4``). Equal arrays
    give equal bytes: a caller decodes each distinct one once (:func:`int4_elements`)."""
    view = memoryview(data)
    pos = len(HEADER)
    keys: list[int] = []
    elements: list[bytes] = []
    unpack = struct.Struct("!hiqii").unpack_from
    end = len(data) - len(TRAILER)
    while pos < end:
        ncols, _, key, size, ndim = unpack(view, pos)
        if ncols != 2:
            raise ValueError(f"expected 2 columns, got {ncols}")
        keys.append(key)
        # After the field's length: ndim, has-null, element type, then (size, lower bound)
        # per dimension: 12 bytes, plus 8 for a one-dimensional array.
        start = pos + 18 + (20 if ndim else 12)
        pos += 18 + size
        elements.append(data[start:pos])
    return keys, elements


def int4_elements(elements: bytes) -> list[int]:
    """The values of one array's raw elements (:func:`split_int4_array_rows`)."""
    return np.frombuffer(elements, dtype=">i4")[1::2].tolist()  # type: ignore[no-any-return]
