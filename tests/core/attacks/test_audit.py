"""The auditors' entry point: one call, a JSON-ready report, progress by phase."""

from __future__ import annotations

import json

import pytest

from app.core.attacks.audit import AuditParams, audit_release
from app.core.errors import InvalidParameter
from tests.core.attacks.test_anony_attack import CORPUS, LEDGER, RELEASE
from tests.core.attacks.topics import world


def test_audit_reports_every_attack_and_the_counterfeit_auc() -> None:
    calls: list[tuple[str, float]] = []
    background = [sorted(t.terms) for t in world(400, 4)]
    report = audit_release(
        CORPUS,
        RELEASE,
        LEDGER,
        background,
        AuditParams(selections=("aba",)),
        lambda phase, fraction: calls.append((phase, fraction)),
    )
    assert sorted(report["private_copies"]) == ["aba-ngd", "random"]
    assert report["private_copies"]["aba-ngd"]["share"] == 1.0
    assert report["counterfeit_detection"]["ngd"]["multi_term_rows"] == 1.0
    assert json.loads(json.dumps(report)) == report
    assert [phase for phase, _ in calls][0] == "scoring" and calls[-1] == ("coherence", 1.0)
    assert [f for _, f in calls] == sorted(f for _, f in calls)


def test_audit_with_embeddings_scores_both_ways() -> None:
    background = [sorted(t.terms) for t in world(300, 4)]
    params = AuditParams(selections=("mra",), embeddings=True, window=8)
    report = audit_release(CORPUS, RELEASE, LEDGER, background, params)
    assert sorted(report["private_copies"]) == ["mra-ngd", "mra-we", "random"]
    assert sorted(report["counterfeit_detection"]) == ["ngd", "we"]


def test_unknown_selection_is_refused() -> None:
    with pytest.raises(InvalidParameter):
        AuditParams(selections=("vpa",))  # type: ignore[arg-type]
