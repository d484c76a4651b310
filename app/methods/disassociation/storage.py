"""Disassociation's public layout in PostgreSQL (``disassociation_parts``), one JSON document
per cluster and joint cluster, streamed with ``COPY``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.disassociation.model import DisassociatedRelease
from app.core.model import PublicLayout
from app.db import copytext as ct
from app.db.copytext import copy_rows
from app.db.raw import driver_connection
from app.methods.storage import MethodStorage

__all__ = ["STORAGE"]


def _parts(layout: dict[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    yield "header", 0, {"k": layout["k"], "m": layout["m"]}
    for i, cluster in enumerate(layout["clusters"]):
        yield "cluster", i, cluster
    for i, joint in enumerate(layout["joint_clusters"]):
        yield "joint", i, joint


class DisassociationStorage(MethodStorage):
    async def store_layout(
        self, session: AsyncSession, release_id: int, layout: PublicLayout
    ) -> None:
        lines = (
            f"{release_id}\t{kind}\t{position}\t{ct.jsonb(body)}"
            for kind, position, body in _parts(layout.to_json())
        )
        await copy_rows(
            await driver_connection(session),
            "COPY disassociation_parts (release_id, kind, position, body) FROM STDIN",
            lines,
        )

    async def load_layouts(
        self, session: AsyncSession, release_ids: Sequence[int]
    ) -> dict[int, PublicLayout]:
        if not release_ids:
            return {}
        conn = await driver_connection(session)
        documents: dict[int, dict[str, Any]] = {}
        async with conn.cursor() as cur:
            await cur.execute(
                "SELECT release_id, kind, body FROM disassociation_parts "
                "WHERE release_id = ANY(%s::int8[]) ORDER BY release_id, kind, position",
                (list(release_ids),),
            )
            for row in await cur.fetchall():
                release_id, kind, body = cast(tuple[int, str, dict[str, Any]], row)
                document = documents.setdefault(release_id, {"clusters": [], "joint_clusters": []})
                if kind == "header":
                    document.update(body)
                else:
                    document["clusters" if kind == "cluster" else "joint_clusters"].append(body)
        return {i: DisassociatedRelease.from_json(d) for i, d in documents.items()}


STORAGE = DisassociationStorage()
