"""The method registry: the seven methods, their declarations, discovery of a new package."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

import app.methods
from app.core.errors import InvalidParameter
from app.core.history import SeriesHistory
from app.core.methods import unregister
from app.core.model import Transaction
from app.core.pipeline import publish
from app.methods.base import resolve
from app.methods.registry import all_methods, get_method, method_names
from app.methods.storage import MethodStorage, storage_of

SEVEN = ("sanony", "anony", "wong", "kanony", "scomp", "inv", "disassociation")


def test_registry_lists_the_seven_methods_in_order() -> None:
    assert method_names() == SEVEN
    assert [m.name for m in all_methods()] == list(SEVEN)


@pytest.mark.parametrize("name", SEVEN)
def test_declaration_parses_echoes_and_resolves(name: str) -> None:
    method = get_method(name)
    params = method.parse(None)
    # Every parameter but the seed, which whoever reads it could replay: the echo
    # says only where the randomness comes from.
    declared = [p for p in method.parameters if p != "seed"]
    randomness = ["randomness"] if "seed" in method.parameters else []
    assert list(method.echo(params)) == declared + randomness
    if randomness:
        assert method.echo(params)["randomness"] == "secret"
        assert method.echo(method.parse({"seed": 3}))["randomness"] == "publisher_seed"
    assert isinstance(storage_of(method), MethodStorage)
    if method.release_schema is not None:
        assert issubclass(resolve(method.release_schema), BaseModel)
    with pytest.raises(InvalidParameter) as raised:
        method.parse({"no_such_param": 1})
    assert raised.value.details == {"param": "no_such_param"}


def test_state_and_layout_are_declared_where_kept() -> None:
    kept = {m.name for m in all_methods() if m.storage is not None}
    assert kept == {"wong", "inv", "disassociation"}
    assert {m.name for m in all_methods() if m.release_schema} == {"disassociation"}
    assert get_method("sanony").risk_threshold(get_method("sanony").parse({"r_th": 3})) == 3.0
    assert (
        get_method("disassociation").risk_threshold(get_method("disassociation").parse({})) is None
    )


def test_unknown_method_names_the_field() -> None:
    with pytest.raises(InvalidParameter) as raised:
        publish("nope", SeriesHistory(), [Transaction.of({"a"})], frozenset(), None)
    assert raised.value.details == {"param": "method"}
    assert "disassociation" in raised.value.message


def test_declarations_need_no_database_or_web_stack() -> None:
    """The core's pipeline reads the registry: loading every declaration must keep the core's
    process free of sqlalchemy, fastapi and pydantic (STYLE: the core is pure)."""
    code = (
        "import sys, app.core.pipeline, app.methods.registry as r; r.all_methods(); "
        "print(sorted(m for m in ('sqlalchemy', 'fastapi', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.fixture
def toy_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    package = tmp_path / "toy"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent("""
        from app.methods.family import anony_family

        METHOD = anony_family("toy", 99, ("cluster_size", "seed"),
                              "app.core.perturbation.sanony:publish_anony")
    """)
    )
    monkeypatch.setattr(app.methods, "__path__", [*app.methods.__path__, str(tmp_path)])
    app.methods.discover()
    yield "toy"
    sys.modules.pop("app.methods.toy", None)
    unregister("toy")


def test_a_new_method_is_one_package(toy_package: str) -> None:
    assert method_names() == (*SEVEN, toy_package)
    corpus = [Transaction.of({"a", "HIV"}), Transaction.of({"a", "b"})]
    params = get_method(toy_package).parse({"cluster_size": 2})
    publication = publish(toy_package, SeriesHistory(), corpus, frozenset({"HIV"}), params)
    assert publication.release.n_rows == 2


def test_a_layout_without_a_storage_for_it_fails_the_publication() -> None:
    """The storage that keeps nothing refuses a layout instead of dropping it silently."""
    import asyncio

    from app.methods.storage import MethodStorage

    with pytest.raises(TypeError, match="cannot keep a public layout"):
        asyncio.run(MethodStorage().store_layout(None, 1, None))  # type: ignore[arg-type]
