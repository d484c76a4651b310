"""ORM models, all in one package so that Alembic sees every table (Polar's layout)."""

from app.db.models.access import AccessEvent
from app.db.models.attacks import AttackReport, AuditBackground
from app.db.models.auth import ApiKey, AppSecret, WebSignIn
from app.db.models.disassociation import DisassociationPart
from app.db.models.job import IdempotencyKey, Job, JobInput
from app.db.models.release import (
    Cluster,
    ClusterLedger,
    PublishedRow,
    Release,
    ReleaseLedger,
    ReleasePack,
    Term,
)
from app.db.models.rendering import RenderedChunk, RenderedDocument
from app.db.models.series import Series
from app.db.models.signatures import InvSignature
from app.db.models.statistics import WongStatistic
from app.db.models.storage import StorageState

__all__ = [
    "AccessEvent",
    "ApiKey",
    "AppSecret",
    "AttackReport",
    "AuditBackground",
    "Cluster",
    "ClusterLedger",
    "DisassociationPart",
    "IdempotencyKey",
    "InvSignature",
    "Job",
    "JobInput",
    "PublishedRow",
    "Release",
    "ReleaseLedger",
    "ReleasePack",
    "RenderedChunk",
    "RenderedDocument",
    "Series",
    "StorageState",
    "Term",
    "WebSignIn",
    "WongStatistic",
]
