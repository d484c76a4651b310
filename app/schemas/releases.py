"""Releases: the JSON upload body, the public release and the publish result."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.core.errors import WarningCode
from app.schemas.jobs import SUMMARY_EXAMPLE, JobOut, ReleaseSummary
from app.schemas.risk import RiskSummary
from app.schemas.terms import Term, Text


class TransactionIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"terms": ["theft", "arson", "HIV"], "individual": "p-17", "cluster": "g1"}
            ]
        },
    )

    terms: list[Term] = Field(json_schema_extra={"minItems": 1, "maxItems": 1000})
    individual: Text | None = Field(None, max_length=500, description="A stable pseudonym")
    cluster: Text | None = Field(None, max_length=200, description="All or none")


class ReleaseBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "label": "2024",
                    "private_terms": ["mansl"],
                    "transactions": [
                        {"terms": ["theft", "arson", "HIV"], "individual": "p-17", "cluster": "g1"},
                        {"terms": ["theft", "arson"], "individual": "p-18", "cluster": "g1"},
                    ],
                }
            ]
        },
    )

    label: Text | None = Field(None, max_length=200)
    private_terms: list[Term] = Field(default_factory=list)
    transactions: list[TransactionIn] = Field(json_schema_extra={"minItems": 1})


_REASON = "the 2023 snapshot was uploaded as 2024; the 2024 one follows as release 3"


class Withdrawal(BaseModel):
    """When and why an admin withdrew a release."""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"at": "2025-02-01T09:30:00Z", "reason": _REASON}]}
    )

    at: dt.datetime
    reason: str


class WithdrawalIn(BaseModel):
    """``POST /v1/series/{name}/releases/{release_no}/withdraw``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"reason": _REASON}]})

    reason: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)
    ] = Field(
        description="Why: shown to every reader of the series (the release list, the 410 "
        "answer), and logged"
    )


class ReleaseListItem(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "release_no": 1,
                    "label": "2024",
                    "method": "sanony",
                    "n_rows": 6,
                    "n_clusters": 3,
                    "created_at": "2025-01-01T00:00:00Z",
                    "withdrawn": None,
                }
            ]
        }
    )

    release_no: int
    label: str | None
    method: str
    n_rows: int
    n_clusters: int
    created_at: dt.datetime
    withdrawn: Withdrawal | None = Field(
        None,
        description="Set once an admin withdrew the release: analysts and publishers get 410 "
        "for it; it stays in the history later releases are judged against, and auditors and "
        "admins still read it, its risk and its ledger",
    )


class ClusterOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "cluster_id": "c1",
                    "rows": [["arson", "theft"], ["arson", "murder", "theft"]],
                    "private_terms": {"cancer": 1},
                    "global_share": {},
                    "counterfeits": 0,
                }
            ]
        }
    )

    cluster_id: str
    rows: list[list[str]]
    private_terms: dict[str, int]
    global_share: dict[str, int]
    counterfeits: int = Field(
        description="Under guarantee paper, how many of the cluster's rows are BP's and FP1's "
        "counterfeits, never which (the paper's section 3.2); FP2's and the repair's are "
        "counted only in the release's counterfeit_rows. Always 0 under true_rows"
    )


class ReleaseOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "series": "prison-health",
                    "release_no": 2,
                    "label": "2025",
                    "method": "sanony",
                    "params": {
                        "r_th": 2.0,
                        "cluster_size": 2,
                        "guarantee": "true_rows",
                        "horizon": 3,
                        "randomness": "secret",
                    },
                    "guarantee": "true_rows",
                    "n_rows": 6,
                    "population_rates": {"HIV": 0.1667, "cancer": 0.3333},
                    "global_bag": {"HIV": 1, "cancer": 1},
                    "global_counterfeits": 0,
                    "counterfeit_rows": 0,
                    "suppression_beyond_budget": False,
                    "clusters": [
                        {
                            "cluster_id": "c1",
                            "rows": [["arson", "theft"], ["arson", "murder", "theft"]],
                            "private_terms": {"cancer": 1},
                            "global_share": {},
                            "counterfeits": 0,
                        }
                    ],
                }
            ]
        }
    )

    series: str
    release_no: int
    label: str | None
    method: str
    params: dict[str, Any]
    guarantee: str = Field(
        description="What the release promises (docs/methods.md): true_rows (no counterfeit, "
        "no count above the true one: the public files are the whole proof), paper (the "
        "paper's counterfeits, safe only while they are not told apart), wong, or none"
    )
    n_rows: int
    population_rates: dict[str, float] = Field(
        description="Per private term s, ss(s, T^μ) of design.md §3: every published copy of s "
        "(cluster segments and global bag, counterfeit copies included) over every "
        "published row (counterfeit rows included), fixed after FP1 (FP2's rows come after; "
        "a term the repair lifts has its rate raised to follow). The base of the serial risk "
        "(r_th bounds a row's lift over it), not the true prevalence (docs/analysis.md "
        "estimates that); public, so a high rate discloses by "
        "itself (warning disclosing_population_rate, at 0.5 or more)"
    )
    global_bag: dict[str, int]
    global_counterfeits: int = Field(
        description="Kanony: counterfeit copies in the global bag (copies, not rows); 0 else"
    )
    counterfeit_rows: int | None = Field(
        description="Every counterfeit row of the release (BP, FP1, FP2 and the repair's "
        "alike): n_rows minus it is the snapshot's row count. The clusters' counterfeits "
        "sum to BP's and FP1's only (releases stored before this total print that sum). "
        "null when the series publishes the clusters' counts only "
        "(params.counterfeit_counts = paper: FP2's rows in no public figure)"
    )
    suppression_beyond_budget: bool = Field(
        False,
        description="The release escalated to suppression beyond max_suppression "
        "(params.on_infeasible = escalate): published counts of private terms have no upper "
        "bound from the suppression budget (docs/analysis.md)",
    )
    clusters: list[ClusterOut]


class PublishResult(BaseModel):
    """``wait=true`` (201) and ``dry_run=true&wait=true`` (200)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "dry_run": True,
                    "job": None,
                    "release": SUMMARY_EXAMPLE,
                    "risk": RiskSummary.model_config["json_schema_extra"]["examples"][0],  # type: ignore
                    "warnings": [],
                }
            ]
        }
    )

    dry_run: bool
    job: JobOut | None
    release: ReleaseSummary
    risk: RiskSummary
    warnings: list[dict[str, str]] = Field(
        default_factory=list,
        description="Terms that fold onto a private term (term_folds_onto_private_term: case, "
        "width, accents, look-alike letters) and private terms that no term of the snapshot "
        "spells (private_term_not_in_snapshot, with the nearest published term when one is "
        "close), "
        "publisher_seed when the series' params.seed is set, and "
        "private_term_published_earlier when this release makes private a term "
        "that earlier releases printed in clear in their rows (releases: their "
        "numbers, comma-separated; rows: how many rows printed it), and "
        "disclosing_population_rate when a private term's published population rate is 0.5 "
        "or more (term, rate: whoever knows a person is in the snapshot learns they have it "
        "with that probability, whatever r_th; a one-line snapshot prints rate 1), and "
        "escalated when the release was published only by escalating (step: "
        "certified_counterfeits, coarser_clusters or suppression_beyond_budget; "
        "params.on_infeasible)",
        examples=[
            [
                {
                    "code": WarningCode.TERM_FOLDS_ONTO_PRIVATE_TERM,
                    "term": "hiv",
                    "private_term": "HIV",
                    "treated_as": "private",
                },
                {
                    "code": WarningCode.PRIVATE_TERM_PUBLISHED_EARLIER,
                    "term": "mansl",
                    "releases": "1,2",
                    "rows": "3",
                    "message": "'mansl' is private from this release on, but release(s) 1, 2 "
                    "published it in clear in 3 row(s) before it was; this release "
                    "and later ones print it in no row, and what was published "
                    "stays public",
                },
            ]
        ],
    )


def _method_release_models() -> dict[str, type[BaseModel]]:
    """Public release models of methods with their own layout (:mod:`app.methods`)."""
    from app.methods.base import resolve
    from app.methods.registry import all_methods

    return {m.name: resolve(m.release_schema) for m in all_methods() if m.release_schema}


def release_out_model() -> Any:
    """The public release's OpenAPI model: Anony-style rows, or a method's own layout."""
    models = (ReleaseOut, *_method_release_models().values())
    return models[0] if len(models) == 1 else Union[models]  # noqa: UP007 - built at run time


def release_examples() -> dict[str, dict[str, Any]]:
    """One example per layout, named by the method it shows."""
    examples: dict[str, dict[str, Any]] = {
        "sanony": {
            "summary": "Anony-style rows (sanony, anony, wong, kanony, scomp, inv)",
            "value": ReleaseOut.model_config["json_schema_extra"]["examples"][0],  # type: ignore[index]
        }
    }
    for name, model in _method_release_models().items():
        extra: Any = model.model_config.get("json_schema_extra") or {}
        examples[name] = {
            "summary": model.__doc__.splitlines()[0] if model.__doc__ else name,
            "value": extra["examples"][0],
        }
    return examples
