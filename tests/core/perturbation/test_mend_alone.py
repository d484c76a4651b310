"""The repair mends one cluster alone between full rounds, and stays sound.

When a round's rows over ``r_th`` are all of one cluster of the new release, the repair mends it
again round after round judging that cluster alone, while its worst row falls
(``Repairer._mend_alone``); a full round, judging the whole series, always follows. On the
benchmark series this happens to pinned clusters, which small random series rarely make. Here
the batch of s̄-counterfeits is cut to one row (``least_dilution_rows`` patched), so that a
cluster of a small series is mended a row at a time and the loop runs; after every publication
the independent oracle (``tests/oracle``, design.md §4 in exact fractions) must find no row of
any release over ``r_th``, and the loop must have run on some of these series.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import HealthCheck, given, settings

from app.core.perturbation import repair
from tests.core.paper_mode import parse_params
from tests.core.series_strategies import (
    SmallSeries,
    fixed_hard_series,
    hard_series,
    publish_each,
)
from tests.oracle.serial_risk import violations

_original = repair.Repairer._mend_alone


def _publish_judged(series: SmallSeries, spent: list[tuple[int, int]]) -> None:
    """Publish ``series`` with Sanony, one s̄-counterfeit per batch, the oracle judging the whole
    series after every publication; ``spent`` gets each loop's (rounds spent, rounds left)."""

    def recorded(
        self: repair.Repairer, found: list, rounds_left: int, pinned: bool
    ) -> tuple[int, int]:
        added, used = _original(self, found, rounds_left, pinned)
        spent.append((used, rounds_left))
        return added, used

    raw = {"r_th": series.r_th, "cluster_size": series.cluster_size, "seed": series.seed % 7}
    params = parse_params("sanony", raw)
    with (
        mock.patch.object(repair, "least_dilution_rows", lambda *args: 1),
        mock.patch.object(repair.Repairer, "_mend_alone", recorded),
    ):
        for history in publish_each("sanony", series, params):
            assert violations(history.releases, series.r_th) == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hard_series())
def test_mending_one_cluster_alone_leaves_the_series_sound(series: SmallSeries) -> None:
    spent: list[tuple[int, int]] = []
    _publish_judged(series, spent)
    # A full round always follows the loop: it spends fewer rounds than were left.
    assert all(0 <= used <= max(left, 0) for used, left in spent)


def test_the_loop_runs_on_fixed_hard_series() -> None:
    spent: list[tuple[int, int]] = []
    for trial in range(12):
        series, _ = fixed_hard_series(trial)
        _publish_judged(series, spent)
    assert sum(used for used, _ in spent) > 0
