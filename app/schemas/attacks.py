"""The semantic audit's report (auditors, admins) and background uploads (SPEC 11)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_ATTACK = {"copies": 120, "on_true_row": 31, "share": 0.2583, "prior": 0.1105,
           "random_expected": 0.0917, "lift": 2.82}
_EXAMPLE: dict[str, Any] = {
    "series": "prison-health", "release_no": 2, "status": "done", "reason": None,
    "settings": {"enabled": True, "scoring": "ngd", "selection": ["aba", "mra", "rga"],
                 "background": "published", "seed": None, "window": 5},
    "background_transactions": 1396, "rows": 698, "counterfeit_rows": 198,
    "tracing": "individuals", "ambiguous_rows": 0,
    "private_copies": {"aba-ngd": _ATTACK, "mra-ngd": _ATTACK, "rga-ngd": _ATTACK,
                       "random": {**_ATTACK, "on_true_row": 11, "share": 0.0917, "lift": 1.0}},
    "best": {"attack": "mra-ngd", **_ATTACK, "lift_over_prior": 2.34},
    "counterfeit_detection": {"ngd": {"all_rows": 0.702, "multi_term_rows": 0.687,
                                      "row_size": 0.348, "counterfeits": 198.0,
                                      "true_rows": 500.0}},
    "seconds": 0.41, "created_at": "2026-11-23T09:00:00Z",
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


class AttackReportOut(BaseModel):
    """The report the publication job kept: aggregates only, never a term, row or individual."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})

    series: str
    release_no: int
    status: Literal["done", "skipped"] = Field(
        description="skipped: nothing could be scored (see reason)")
    reason: str | None = Field(
        description="Why it was skipped: no_background, no_background_uploaded, "
                    "untraceable_rows (a published row matches no transaction: generalised "
                    "rows), method_not_supported")
    settings: dict[str, Any] = Field(description="The series' semantic_audit as it ran")
    background_transactions: int = Field(description="Transactions the attacker learnt from")
    rows: int | None = Field(None, description="Rows of the release, counterfeits included")
    counterfeit_rows: int | None = Field(None, description="Counterfeit rows (ledger)")
    tracing: Literal["individuals", "content"] | None = Field(
        None, description="How true rows were traced to their transactions: by the unique "
                          "individual of each, or by content when individuals are missing "
                          "or repeat")
    ambiguous_rows: int | None = Field(
        None, description="Content tracing: true rows equal to a row of another cluster, "
                          "possibly matched to the wrong transaction")
    private_copies: dict[str, PrivateCopiesOut] | None = Field(
        None, description="Per attack (selection-scoring, and the random baseline)")
    best: BestAttackOut | None = Field(None, description="The semantic attack with the "
                                                         "highest share")
    counterfeit_detection: dict[str, dict[str, float | None]] | None = Field(
        None, description="Per scoring: AUC of telling counterfeits from true rows by row "
                          "coherence (all_rows, multi_term_rows), and by row size alone "
                          "(row_size, no semantics); 0.5 is blind, null undefined")
    seconds: float | None = Field(None, description="Run time of the audit in the job")
    created_at: dt.datetime


class BackgroundOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "series": "prison-health", "transactions": 1309,
        "uploaded_at": "2026-11-23T09:00:00Z", "used": True}]})

    series: str
    transactions: int
    uploaded_at: dt.datetime
    used: bool = Field(description="Whether the series' semantic_audit reads it "
                                   "(background: uploaded)")
