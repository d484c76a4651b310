"""Keyed hashing of individual pseudonyms: raw pseudonyms never reach storage."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.core.model import Transaction
from app.db.models import AppSecret

__all__ = ["resolve_secret", "individual_key", "key_individuals"]

_SECRET_NAME = "individual_hmac"


async def resolve_secret(session: AsyncSession, configured: str | None) -> bytes:
    """``SERIALPUB_SECRET``, or the one generated on first start and kept in the database."""
    if configured:
        return configured.encode()
    await session.execute(
        insert(AppSecret)
        .values(name=_SECRET_NAME, value=secrets.token_hex(32))
        .on_conflict_do_nothing(index_elements=["name"])
    )
    value = await session.scalar(select(AppSecret.value).where(AppSecret.name == _SECRET_NAME))
    assert value is not None
    return value.encode()


def individual_key(secret: bytes, pseudonym: str) -> str:
    """HMAC-SHA256 of a pseudonym, hex (64 characters)."""
    return hmac.new(secret, pseudonym.encode(), hashlib.sha256).hexdigest()


def key_individuals(secret: bytes, corpus: list[Transaction]) -> list[Transaction]:
    """The corpus with every pseudonym replaced by its key (same order)."""
    cache: dict[str, str] = {}

    def key(p: str) -> str:
        k = cache.get(p)
        if k is None:
            k = cache[p] = individual_key(secret, p)
        return k

    return [
        t if t.individual is None else Transaction(t.terms, key(t.individual), t.cluster)
        for t in corpus
    ]
