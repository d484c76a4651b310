"""Serial risk (auditors)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def _example(value: dict[str, Any]) -> ConfigDict:
    return ConfigDict(json_schema_extra={"examples": [value]})


class HistogramBin(BaseModel):
    model_config = _example({"lo": 0.0, "hi": 0.5, "count": 2})

    lo: float
    hi: float
    count: int


class Perturbation(BaseModel):
    model_config = _example({"counterfeits": 1, "rate": 0.1667, "published_only": False})

    counterfeits: int
    rate: float
    published_only: bool = Field(
        description="True when only the published (BP+FP1, global bag) counterfeits are counted"
    )


class PublishedTotalExposure(BaseModel):
    model_config = _example(
        {
            "published_total": 5316,
            "unattributed": 5295,
            "among": 25295,
            "factor": 1.265,
            "rows_over_threshold": 6481,
            "max_serial_risk": 10.12,
        }
    )

    published_total: int = Field(description="K: counterfeit rows the release's total counts")
    unattributed: int = Field(description="R = K - the clusters' counts: placed by no cluster")
    among: int = Field(description="M = rows - the clusters' counts: where R may sit")
    factor: float = Field(description="φ = M / (M - R), the largest lift of a row's posterior")
    rows_over_threshold: int = Field(description="rows whose serial risk times φ is over r_th")
    max_serial_risk: float = Field(description="the largest serial risk times φ")


class GuaranteeOut(BaseModel):
    """What the release promises, and what that promise assumes (design.md §5.8)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "paper",
                    "promise": "every row, counterfeit rows included, is within r_th under "
                    "the paper's adversary (design.md §4)",
                    "assumes": "the counterfeit rows are not told apart from true ones: a "
                    "logistic detector trained on other series tells them apart with AUC "
                    "0.70-0.88, and with every counterfeit found 86-1,539 true rows of a "
                    "five-release series are over r_th (docs/attacks.md)",
                }
            ]
        }
    )

    name: str = Field(description="true_rows, paper, wong or none (docs/methods.md)")
    promise: str
    assumes: str | None = Field(
        None,
        description="What must hold for the promise to hold; null: nothing beyond the "
        "published files (true_rows)",
    )


class RiskSummary(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "release_no": 1,
                    "r_th": 2.0,
                    "max_serial_risk": 1.5,
                    "n_rows": 6,
                    "rows_over_threshold": 0,
                    "by_term": {"HIV": 1.5, "cancer": 1.0},
                    "histogram": [{"lo": 0.0, "hi": 0.5, "count": 2}],
                    "perturbation": {"counterfeits": 1, "rate": 0.1667, "published_only": False},
                    "suppressed": {"HIV": 0},
                    "private_terms_in_clear": {},
                    "guarantee": {
                        "name": "true_rows",
                        "promise": "every row is a true row and no published count exceeds "
                        "the true one; every row of every release is within r_th under the "
                        "paper's adversary (design.md §4), computed from the public files "
                        "alone, which are the whole proof",
                        "assumes": None,
                    },
                }
            ]
        }
    )

    release_no: int
    r_th: float
    max_serial_risk: float
    n_rows: int
    rows_over_threshold: int
    by_term: dict[str, float]
    histogram: list[HistogramBin]
    perturbation: Perturbation
    guarantee: GuaranteeOut = Field(
        description="The guarantee this risk is measured against: a paper-mode release's "
        "figures hold only while its counterfeits are not told apart (assumes)"
    )
    suppressed: dict[str, int] | None = Field(
        None,
        description="Copies of each private term suppressed as the last resort (design.md §5); "
        "auditors and admins only, null for other roles",
    )
    private_terms_in_clear: dict[str, int] = Field(
        default_factory=dict,
        description="Terms private now that this release printed in clear, before a later "
        "release made them private (docs/api.md: private terms may grow): rows that print each. "
        "Those rows stay public; releases from the one that made a term private on print it "
        "in no row",
        examples=[{"mansl": 2}],
    )
    published_total: PublishedTotalExposure | None = Field(
        None,
        description="A first-order estimate of the risk to an adversary who reads the "
        "release's published counterfeit total and spreads the counterfeits no cluster's "
        "count places evenly over the other rows (docs/attacks.md); null when the release "
        "publishes no total (counterfeit_counts 'paper') or its clusters' counts place it all",
    )


class RowRiskOut(BaseModel):
    model_config = _example(
        {"cluster_id": "c1", "row": ["arson", "theft"], "serial_risk": 0.5, "term": "HIV"}
    )

    cluster_id: str
    row: list[str]
    serial_risk: float
    term: str | None


class RowRiskPage(BaseModel):
    model_config = _example(
        {
            "release_no": 1,
            "offset": 0,
            "limit": 100,
            "total": 1,
            "rows": [
                {"cluster_id": "c1", "row": ["arson", "theft"], "serial_risk": 0.5, "term": "HIV"}
            ],
        }
    )

    release_no: int
    offset: int
    limit: int
    total: int
    rows: list[RowRiskOut]


class CoverEntryOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "cluster_id": "c1",
                    "other_release": 2,
                    "other_cluster_id": "c1",
                    "size": 1,
                    "ranges": {"HIV": [0, 1]},
                }
            ]
        }
    )

    cluster_id: str
    other_release: int
    other_cluster_id: str
    size: int
    ranges: dict[str, tuple[int, int]]


class StatisticsEntry(BaseModel):
    model_config = _example({"release_no": 1, "n": 4, "n_s": 1})

    release_no: int
    n: int = Field(description="n_j, the group size")
    n_s: int = Field(description="n_{j,s}, rows of the group holding s")


class TermStatistics(BaseModel):
    model_config = _example(
        {"entries": [{"release_no": 1, "n": 4, "n_s": 1}], "breach_probability": 0.25}
    )

    entries: list[StatisticsEntry]
    breach_probability: float = Field(description="p(o, s, k) = 1 - prod(1 - n_js / n_j)")


class StatisticsOut(BaseModel):
    model_config = _example(
        {
            "individual": "p-17",
            "l": 2,
            "threshold": 0.5,
            "terms": {
                "HIV": {
                    "entries": [{"release_no": 1, "n": 4, "n_s": 1}],
                    "breach_probability": 0.25,
                }
            },
        }
    )

    individual: str
    l: int  # noqa: E741 - the paper's symbol
    threshold: float = Field(description="1 / l")
    terms: dict[str, TermStatistics]
