"""Method parameters and corpus validation: clear errors naming the item at fault."""

from __future__ import annotations

import pytest

from app.core.errors import InvalidCorpus, InvalidParameter
from app.core.model import Transaction
from app.core.params import PublishParams, parse_params
from app.core.validation import validate_corpus


def test_defaults_follow_the_spec() -> None:
    params = parse_params("sanony", None)
    assert params.for_method("sanony") == {
        "r_th": 8.0,
        "cluster_size": 10,
        "seed": None,
        "guarantee": "true_rows",
        "horizon": 20,
        "min_copies": None,
        "level_margin": None,
        "reserve": 2.0,
        "max_generalised": 0.5,
        "anony_r_th": None,
        "max_repair_rounds": 200,
        "backward": "where_needed",
        "global_lift": "least",
        "counterfeits": "blend",
        "forward_perturbation": False,
        "counterfeit_counts": "cluster",
        "align": True,
        "max_suppression": 0.01,
        "suppression_floor": 3,
        "suppression_scope": "series",
        "max_dilution": 0.1,
        "on_infeasible": "escalate",
    }
    # true_rows: holding clusters are overlapped by no later release (design.md §5.8).
    assert params.anony_threshold == 8.0
    assert params.admission == 20  # twenty releases ask for steadier terms
    assert parse_params("sanony", {"horizon": 5}).admission == 5
    assert parse_params("sanony", {"horizon": 5, "min_copies": 2}).admission == 2
    assert params.steady_margin == 3.0  # from the horizon, like the admission
    assert parse_params("sanony", {"horizon": 5}).steady_margin < 2.5
    assert parse_params("sanony", {"level_margin": 0}).steady_margin is None  # no level
    paper = parse_params("sanony", {"guarantee": "paper"})
    assert paper.anony_threshold == 3.0  # ANONY_HEADROOM * r_th
    # A method without the choice runs the paper's mechanism.
    assert parse_params("kanony", None).guarantee == "paper"
    assert parse_params("wong", {}).for_method("wong")["strategy"] == "constant_ratio"
    assert parse_params("scomp", {}).for_method("scomp") == {
        "r_th": 8.0,
        "cluster_size": 10,
        "seed": None,
        "d": 4,
        "confidence": 0.8,
        "other_releases": 1,
    }


@pytest.mark.parametrize(
    ("method", "raw", "fragment"),
    [
        ("sanony", {"r_th": 0.5}, "params.r_th: must be at least 1"),
        ("sanony", {"r_th": "2"}, "params.r_th: must be a finite number"),
        ("sanony", {"cluster_size": 2.5}, "params.cluster_size: must be an integer"),
        ("sanony", {"l": 2}, "params.l: not a parameter of sanony"),
        ("sanony", {"suppression_scope": "year"}, "params.suppression_scope: must be 'release'"),
        ("kanony", {"on_infeasible": "skip"}, "params.on_infeasible: must be 'escalate'"),
        ("sanony", {"max_dilution": 1.5}, "params.max_dilution: must be between 0 and 1"),
        ("sanony", {"level_margin": -1}, "params.level_margin: must be between 0 and 100"),
        ("sanony", {"counterfeit_counts": "row"}, "params.counterfeit_counts: must be 'cluster'"),
        (
            "kanony",
            {"counterfeit_counts": "release", "forward_perturbation": True},
            "params.forward_perturbation: FP1 protects the counts each cluster publishes",
        ),
        ("sanony", {"r_th": 4, "anony_r_th": 5}, "params.anony_r_th: must be between 1 and r_th"),
        ("wong", {"strategy": "fast"}, "params.strategy"),
        ("wong", {"alpha": 1}, "greater than 1"),
        ("scomp", {"confidence": 1.0}, "strictly between 0 and 1"),
        ("inv", {"m": 1}, "params.m"),
        ("magic", {}, "unknown method"),
    ],
)
def test_bad_parameters_are_named(method: str, raw: dict, fragment: str) -> None:
    with pytest.raises(InvalidParameter, match=fragment.replace(".", r"\.")):
        parse_params(method, raw)


def test_params_are_immutable_values() -> None:
    assert parse_params("sanony", {"r_th": 2}) == PublishParams(r_th=2.0)


@pytest.mark.parametrize(
    ("corpus", "item", "fragment"),
    [
        ([], None, "empty"),
        ([Transaction.of(["a"]), Transaction.of([])], 1, "no terms"),
        ([Transaction.of(["a", " "])], 0, "empty term"),
        ([Transaction.of(["x" * 201])], 0, "longer than 200"),
        ([Transaction.of(["a"], cluster="g"), Transaction.of(["b"])], 1, "all or none"),
        # Rows and terms are checked once each (at their first transaction): a repeated good
        # row is not a reason to skip a bad one after it, and a bad one is named where first
        # seen, even when a term it shares with a good row was checked already.
        (
            [Transaction.of(["a"]), Transaction.of(["a"]), Transaction.of(["a", ""])],
            2,
            "empty term",
        ),
        (
            [
                Transaction.of(["b"]),
                Transaction.of(["b", "x" * 201]),
                Transaction.of(["b", "x" * 201]),
            ],
            1,
            "longer than 200",
        ),
    ],
)
def test_bad_corpora_name_the_transaction(corpus: list, item: int | None, fragment: str) -> None:
    with pytest.raises(InvalidCorpus, match=fragment) as error:
        validate_corpus(corpus)
    assert error.value.details.get("item") == item


def test_wong_needs_individuals() -> None:
    with pytest.raises(InvalidCorpus, match="individual"):
        validate_corpus([Transaction.of(["a"])], require_individual=True)
    # Every transaction needs one, repeated rows included.
    with pytest.raises(InvalidCorpus, match="individual") as error:
        validate_corpus(
            [Transaction.of(["a"], "p1"), Transaction.of(["a"])], require_individual=True
        )
    assert error.value.details.get("item") == 1
