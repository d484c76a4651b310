"""API keys (stored as sha256 digests only), the web view's sign-ins and service secrets."""

from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import DateTime, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, TimestampMixin


class ApiKey(TimestampMixin, Base):
    __tablename__ = "api_keys"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    #: sha256 hex digest of the key; the key itself is never stored.
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(20))
    #: For publishers: the series the key may post to (``None``: all series).
    series_name: Mapped[str | None] = mapped_column(String(200))
    revoked_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    #: From then on the key answers 401 (``None``: it never expires). Rotation sets it to the
    #: end of the old key's grace period.
    expires_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    #: The last request made with it, to within the access trail's flush interval.
    last_used_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    #: The key that replaced it (``POST /v1/keys/{key_id}/rotate``).
    replaced_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("api_keys.id", ondelete="SET NULL")
    )

    def expired(self, now: dt.datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


class WebSignIn(TimestampMixin, Base):
    """A key signed in to the web view in one browser (:mod:`app.services.sessions`).

    Its session cookie names this row: signing out deletes it, and the key's revocation or
    expiry (a rotation's end of grace) ends it as they end the key, since every page reads
    the two together."""

    __tablename__ = "web_sign_ins"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    key_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("api_keys.id", ondelete="CASCADE"), index=True
    )
    #: The end of the working day it was opened for, or of its key, whichever is first.
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), index=True)


class AppSecret(TimestampMixin, Base):
    """Secrets the service generates once and keeps (e.g. the individual-id HMAC key)."""

    __tablename__ = "app_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
