"""The semantic audit's report (auditors, admins) and background uploads (design.md §11)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_ATTACK: dict[str, Any] = {
    "copies": 120,
    "on_true_row": 31,
    "share": 0.2583,
    "prior": 0.1105,
    "random_expected": 0.0917,
    "lift": 2.82,
}
_EXAMPLE: dict[str, Any] = {
    "series": "prison-health",
    "release_no": 2,
    "status": "done",
    "reason": None,
    "settings": {
        "enabled": True,
        "scoring": "ngd",
        "selection": ["aba", "mra", "rga"],
        "background": "published",
        "seed": None,
        "window": 5,
        "mixture_draws": 16,
    },
    "background_transactions": 1396,
    "rows": 698,
    "counterfeit_rows": 198,
    "tracing": "individuals",
    "ambiguous_rows": 0,
    "private_copies": {
        "aba-ngd": _ATTACK,
        "mra-ngd": _ATTACK,
        "rga-ngd": _ATTACK,
        "random": {**_ATTACK, "on_true_row": 11, "share": 0.0917, "lift": 1.0},
    },
    "best": {"attack": "mra-ngd", **_ATTACK, "lift_over_prior": 2.34},
    "counterfeit_detection": {
        "ngd": {
            "all_rows": 0.702,
            "multi_term_rows": 0.687,
            "row_size": 0.348,
            "counterfeits": 198.0,
            "true_rows": 500.0,
        }
    },
    "frequency": {
        "score": "rarity",
        "detection": {
            "release_no": 2,
            "rows": 698,
            "counterfeits": 198,
            "auc": {
                "log_series_count": 0.93,
                "rarity": 0.93,
                "logistic": 0.95,
                "logistic_with_counts": 0.99,
            },
            "top_k": {"rarity": {"picked": 198.0, "precision": 0.81, "chance": 0.3}},
            "pooled": {"logistic": 0.95, "logistic_with_counts": 0.99},
        },
        "r_th": 8.0,
        "risk": {
            "blind": {
                "release_no": 2,
                "removed": 198,
                "rows": 500,
                "rows_over_threshold": 0,
                "max_serial_risk": 7.2,
            },
            "detector": {
                "release_no": 2,
                "removed": 198,
                "rows": 500,
                "rows_over_threshold": 3,
                "max_serial_risk": 9.1,
            },
        },
    },
    "seconds": 0.41,
    "created_at": "2026-11-23T09:00:00Z",
}

_CHUNKS: dict[str, Any] = {
    "accuracy": 0.5004,
    "accuracy_record_chunks": 0.3125,
    "accuracy_term_chunk": 0.5071,
    "transactions_breakage": 0.8903,
    "km_breakage": 0.3341,
    "precision": 0.1431,
    "records": 1309,
    "protected_itemsets": 20315,
}
_RANDOM_CHUNKS = {
    **_CHUNKS,
    "accuracy": 0.4512,
    "transactions_breakage": 0.8712,
    "km_breakage": 0.2604,
    "precision": 0.1290,
}
#: A disassociation series' report (method ``disassociation``): chunks reassociated.
_CHUNK_EXAMPLE: dict[str, Any] = {
    "series": "news",
    "release_no": 1,
    "status": "done",
    "reason": None,
    "settings": {**_EXAMPLE["settings"], "selection": ["aba"]},
    "background_transactions": 1412,
    "rows": 1310,
    "counterfeit_rows": 0,
    "reassociation": {
        "aba-ngd": {**_CHUNKS, "accuracy": 0.4612},
        "aba+update-ngd": _CHUNKS,
        "random": _RANDOM_CHUNKS,
    },
    "best_reassociation": {"attack": "aba+update-ngd", **_CHUNKS, "lift_over_random": 1.109},
    "disassociation": {
        "k": 5,
        "m": 2,
        "records": 1310,
        "clusters": 58,
        "joint_clusters": 3,
        "suppressed_records": 0,
        "tlost": 0.997,
    },
    "seconds": 2.9,
    "created_at": "2026-11-23T09:00:00Z",
}


class PrivateCopiesOut(BaseModel):
    """How many private copies one attack put on a row truly holding the term."""

    model_config = ConfigDict(json_schema_extra={"examples": [_ATTACK]})

    copies: int = Field(description="Private copies the attack placed")
    on_true_row: int = Field(description="Of those, placed on a row whose transaction holds it")
    share: float = Field(description="on_true_row / copies: the reassociation accuracy")
    prior: float = Field(description="The risk model's random reconstruction N(s,C*)/N(C*)")
    random_expected: float = Field(description="Expected share of random placement")
    lift: float = Field(description="share / random_expected")


class BestAttackOut(PrivateCopiesOut):
    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE["best"]]})

    attack: str = Field(description="Selection and scoring, e.g. mra-ngd")
    lift_over_prior: float | None = Field(description="share / prior")


class ReassociationOut(BaseModel):
    """One attack on a disassociated release, scored (thesis chapter 5), each share in
    [0, 1] over the records with a disassociated part."""

    model_config = ConfigDict(json_schema_extra={"examples": [_CHUNKS]})

    accuracy: float = Field(
        description="Ac(D): formula 5.4 averaged, the share of each "
        "record's disassociated terms put back on it"
    )
    accuracy_record_chunks: float = Field(description="The same over record-chunk terms")
    accuracy_term_chunk: float = Field(description="The same over term-chunk terms")
    transactions_breakage: float = Field(
        description="Formulas 5.2-5.3: records with at least one disassociated term put back"
    )
    km_breakage: float = Field(
        description="Protected itemsets (2 to m terms of one record split over chunks, "
        "support below k in the cluster) rebuilt on their record"
    )
    precision: float = Field(
        description="Share of the terms placed that are right (not a "
        "thesis measure: what over-placing costs)"
    )
    records: int = Field(description="Records with a disassociated part")
    protected_itemsets: int


class BestReassociationOut(ReassociationOut):
    model_config = ConfigDict(
        json_schema_extra={"examples": [_CHUNK_EXAMPLE["best_reassociation"]]}
    )

    attack: str = Field(description="Selection, reading and scoring, e.g. aba+update-ngd")
    lift_over_random: float | None = Field(description="accuracy / the random baseline's")


class DisassociationAuditOut(BaseModel):
    """What the audit of a disassociated release attacked, and its information loss."""

    model_config = ConfigDict(json_schema_extra={"examples": [_CHUNK_EXAMPLE["disassociation"]]})

    k: int
    m: int
    records: int = Field(description="Records published (in clusters)")
    clusters: int
    joint_clusters: int
    suppressed_records: int
    tlost: float = Field(
        description="The thesis's information loss (3.4): share of the "
        "terms of support at least k that some cluster "
        "publishes in its term chunk"
    )


class AttackReportOut(BaseModel):
    """The report the publication job kept: aggregates only, never a term, row or individual.

    Anony-style releases fill ``private_copies``, ``best`` and ``counterfeit_detection``;
    disassociated releases ``reassociation``, ``best_reassociation`` and ``disassociation``.
    """

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE, _CHUNK_EXAMPLE]})

    series: str
    release_no: int
    status: Literal["done", "skipped"] = Field(
        description="skipped: nothing could be scored (see reason)"
    )
    reason: str | None = Field(
        description="Why it was skipped: no_background, no_background_uploaded, "
        "untraceable_rows (a published row matches no transaction: generalised "
        "rows), no_ground_truth (a disassociated release without the "
        "publisher's result), method_not_supported"
    )
    settings: dict[str, Any] = Field(description="The series' semantic_audit as it ran")
    background_transactions: int = Field(description="Transactions the attacker learnt from")
    rows: int | None = Field(
        None,
        description="Rows of the release, counterfeits included; "
        "records of a disassociated release",
    )
    counterfeit_rows: int | None = Field(None, description="Counterfeit rows (ledger)")
    tracing: Literal["individuals", "content"] | None = Field(
        None,
        description="How true rows were traced to their transactions: by the unique "
        "individual of each, or by content when individuals are missing "
        "or repeat",
    )
    ambiguous_rows: int | None = Field(
        None,
        description="Content tracing: true rows equal to a row of another cluster, "
        "possibly matched to the wrong transaction",
    )
    private_copies: dict[str, PrivateCopiesOut] | None = Field(
        None, description="Per attack (selection-scoring, and the random baseline)"
    )
    best: BestAttackOut | None = Field(
        None, description="The semantic attack with the highest share"
    )
    counterfeit_detection: dict[str, dict[str, float | None]] | None = Field(
        None,
        description="Per scoring: AUC of telling counterfeits from true rows by row "
        "coherence (all_rows, multi_term_rows), and by row size alone "
        "(row_size, no semantics); 0.5 is blind, null undefined",
    )
    frequency: dict[str, Any] | None = Field(
        None,
        description="The frequency detector (docs/attacks.md): ``detection`` the "
        "AUC of telling counterfeits from true rows by how rare a row's set is across the "
        "series and within the release, term co-occurrence (NPMI), length, and a "
        "cross-validated logistic model on them without and with the published counts, "
        "and the top-k precision against chance (null without counterfeits); ``risk`` per "
        "adversary (blind: k random rows per cluster removed; detector: the k rarest; "
        "with every ledger at hand, control: k true rows removed, and perfect: every "
        "counterfeit removed) the rows over r_th and maximum serial risk of this release "
        "once each cluster's published counterfeits are discounted; ``mixture`` per "
        "adversary (blind: equal odds; logistic: the cross-validated detector's odds, with "
        "every ledger at hand) the Bayesian adversary's rows over r_th (mean over the "
        "hypotheses of which rows are the counterfeits), rows surely over (beyond two "
        "standard errors) and maximum mean risk",
    )
    reassociation: dict[str, ReassociationOut] | None = Field(
        None,
        description="Disassociation: per attack (selection, +update for Algorithm 5 "
        "line 6 read literally, scoring; and the random baseline), the "
        "chunks reassociated, scored against the publisher's result",
    )
    best_reassociation: BestReassociationOut | None = Field(
        None, description="Disassociation: the semantic attack with the highest accuracy"
    )
    disassociation: DisassociationAuditOut | None = Field(
        None, description="Disassociation: what was attacked, and tlost"
    )
    seconds: float | None = Field(None, description="Run time of the audit in the job")
    created_at: dt.datetime


class BackgroundOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "series": "prison-health",
                    "transactions": 1309,
                    "uploaded_at": "2026-11-23T09:00:00Z",
                    "used": True,
                }
            ]
        }
    )

    series: str
    transactions: int
    uploaded_at: dt.datetime
    used: bool = Field(
        description="Whether the series' semantic_audit reads it (background: uploaded)"
    )
