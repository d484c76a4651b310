"""What a method keeps in PostgreSQL beyond the generic release (I/O; the services use it).

The generic job loads a series' history, publishes, stores the release and then asks the
series' method's storage to keep the rest: its private state between releases (Wong's
statistics file, Inv's signatures) and its public layout (disassociation's chunks). Every
method has one; the default keeps nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import Publication, PublicLayout
from app.methods.base import Method, resolve

__all__ = ["MethodStorage", "storage_of"]


class MethodStorage:
    """Nothing beyond the generic release; methods with state or a layout override."""

    async def load_state(self, session: AsyncSession, series_id: int) -> dict[str, Any]:
        """Fields of :class:`~app.core.history.SeriesHistory` the method reads."""
        return {}

    async def store_state(
        self, session: AsyncSession, series_id: int, publication: Publication
    ) -> None:
        """Keep what ``publication`` adds to the private state (the release is stored)."""

    async def store_layout(
        self, session: AsyncSession, release_id: int, layout: PublicLayout
    ) -> None:
        """Keep the public layout of release ``release_id``.

        Only a method whose releases carry a layout (disassociation) is given one to keep; a
        method that publishes a layout without declaring a storage for it is misdeclared, and
        its publication must fail (inside the release's transaction) rather than drop the
        layout and serve a release without its content."""
        raise TypeError(
            f"{type(self).__name__} cannot keep a public layout: a method whose releases have "
            "one declares a storage that overrides store_layout (app/methods/base.py)"
        )

    async def load_layouts(
        self, session: AsyncSession, release_ids: Sequence[int]
    ) -> dict[int, PublicLayout]:
        """The public layouts of the releases that have one, by release id."""
        return {}


_NOTHING = MethodStorage()


def storage_of(method: Method) -> MethodStorage:
    """The storage ``method`` declares (imported now), or the one that keeps nothing."""
    if method.storage is None:
        return _NOTHING
    found: MethodStorage = resolve(method.storage)
    return found
