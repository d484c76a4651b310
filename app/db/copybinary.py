"""Writing PostgreSQL's binary ``COPY`` format without a Python object per field.

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

__all__ = ["HEADER", "TRAILER", "row_fields", "rows_blocks", "copy_binary"]

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


def rows_blocks(
    keys: Iterable[tuple[int, int, bytes]], block_rows: int = 20_000
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


async def copy_binary(
    connection: psycopg.AsyncConnection[object], statement: str, blocks: Iterable[bytes]
) -> None:
    """``COPY ... FROM STDIN (FORMAT BINARY)`` of preformatted blocks."""
    async with connection.cursor() as cur, cur.copy(statement) as copy:
        for block in blocks:
            await copy.write(block)
