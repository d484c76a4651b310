"""The risk to an adversary who reads a release's published counterfeit total: a first-order
estimate (docs/lab/counterfeits.md, "What the published total gives away").

The paper's adversary (design.md §4) treats every published row as a candidate for its
target. A release that publishes how many of its rows are counterfeits (``counterfeit_rows``)
tells it more. Each cluster's own count ``k_c`` is where the paper puts it. The rest
of the total is the *unattributed* counterfeits, R = K - Σ k_c: FP2's and the repair's rows,
most of them s̄-counterfeits that dilute.

An adversary who spreads those R rows evenly over the M = N - Σ k_c rows no cluster count
names expects a share R / M of each cluster's rows to be counterfeit. It discounts each cluster
by that share, and a row's posterior rises by up to the factor

    φ = M / (M - R)

for an s̄-dilution: N(s, C*) copies over (1 - R/M) of the rows.

The estimate scales each row's serial risk (formula 15 over formulas 12-14, as the paper
computes it) by φ. A cluster that publishes its own count keeps those rows out of the spread
and loses a little less, so φ bounds the even spread from above there
(``tests/core/risk/test_total_exposure.py`` takes the rows out and compares). It is
first-order: the even spread is the adversary's expectation, not one hypothesis. The Monte
Carlo mixture of :mod:`app.core.attacks.mixture_risk` (the ``blind`` adversary) averages the
paper's posterior over the hypotheses themselves.

Measured on the 20 x 20,000 BMS-WebView-2 series (rep 40%, r_th 8), releases 5, 10, 15 and 19:
- φ: 1.009, 1.037, 1.135 and 1.265;
- rows over r_th by this estimate: 226, 622, 3,525 and 6,481;
- the mixture's mean rows over at 8 draws: 103, 841, 3,593 and 6,374.

The mixture's largest means are higher (9.3-36.8 against 8.07-10.12 here): it draws the
spread, and a small cluster that draws many counterfeits loses most of its rows. A release
that publishes no total (``counterfeit_counts = "paper"``) or whose total the clusters'
counts account for entirely has no estimate (``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.errors import WarningCode

__all__ = [
    "EXPOSURE_MARGIN",
    "TotalExposure",
    "estimate_total_exposure",
    "exposure_warning",
]

#: A release's estimated largest risk beyond ``r_th`` by more than this share is warned of
#: (:func:`exposure_warning`). Below it the estimate only moves rows that sit at r_th: on the
#: series above, release 5 (φ 1.009, largest 8.07) has 1 row beyond the mixture's Monte Carlo
#: noise; release 10 (φ 1.037, largest 8.29) has 116.
EXPOSURE_MARGIN = 0.02


@dataclass(frozen=True, slots=True)
class TotalExposure:
    """The estimate for one release (docs/api.md, risk endpoint ``published_total``)."""

    #: K: counterfeit rows the release publishes in its total.
    published_total: int
    #: R = K - Σ k_c: counterfeit rows the total counts and no cluster's count places.
    unattributed: int
    #: M = N - Σ k_c: the rows among which the adversary looks for them.
    among: int
    #: φ = M / (M - R).
    factor: float
    #: Rows whose serial risk times φ is over r_th.
    rows_over_threshold: int
    #: The largest serial risk times φ.
    max_serial_risk: float


def estimate_total_exposure(
    published_total: int | None,
    attributed: int,
    risks: Sequence[float],
    r_th: float,
) -> TotalExposure | None:
    """The estimate for a release of ``len(risks)`` rows whose serial risks are ``risks``;
    ``published_total``: K (``None`` when the release publishes no total); ``attributed``:
    Σ k_c, the counterfeits its clusters' counts place. ``None`` when no counterfeit is left
    unattributed.

    >>> e = estimate_total_exposure(20, 4, [8.0, 4.0, 1.0] * 40, 8.0)
    >>> (e.unattributed, e.among, round(e.factor, 4), e.rows_over_threshold)
    (16, 116, 1.16, 40)
    >>> estimate_total_exposure(None, 4, [8.0], 8.0) is None
    True
    """
    if published_total is None:
        return None
    unattributed = published_total - attributed
    among = len(risks) - attributed
    if unattributed <= 0 or among <= unattributed:
        return None
    factor = among / (among - unattributed)
    limit = r_th * (1 + 1e-9)
    scaled = [risk * factor for risk in risks]
    return TotalExposure(
        published_total=published_total,
        unattributed=unattributed,
        among=among,
        factor=factor,
        rows_over_threshold=sum(1 for risk in scaled if risk > limit),
        max_serial_risk=max(scaled, default=0.0),
    )


def exposure_warning(exposure: TotalExposure | None, r_th: float) -> dict[str, str] | None:
    """The warning of a release whose estimate puts a row beyond ``r_th`` by more than
    :data:`EXPOSURE_MARGIN`; ``None`` otherwise.

    >>> warning = exposure_warning(estimate_total_exposure(20, 4, [8.0] * 100, 8.0), 8.0)
    >>> warning["code"] == "published_total_exposure", warning["rows"]
    (True, '100')
    >>> exposure_warning(estimate_total_exposure(2, 0, [8.0] * 1000, 8.0), 8.0) is None
    True
    """
    if exposure is None or exposure.max_serial_risk <= r_th * (1 + EXPOSURE_MARGIN):
        return None
    return {
        "code": WarningCode.PUBLISHED_TOTAL_EXPOSURE,
        "rows": str(exposure.rows_over_threshold),
        "max_serial_risk": f"{exposure.max_serial_risk:.4g}",
        "message": f"the release publishes its counterfeit total ({exposure.published_total} "
        f"rows), {exposure.unattributed} of them in no cluster's count: an adversary who "
        f"spreads those over the {exposure.among} rows no cluster's count names expects "
        f"{exposure.unattributed / exposure.among:.1%} of each cluster to be counterfeit and "
        f"puts an estimated {exposure.rows_over_threshold} rows "
        f"over r_th = {r_th:g} (largest {exposure.max_serial_risk:.3g}; first-order estimate, "
        "docs/attacks.md). Publishing the clusters' counts only (params.counterfeit_counts = "
        "'paper') withholds the total, at the price of the analysts' bound on supports.",
    }
