"""One enumeration of codes: no layer names an error or warning code as a string literal."""

from __future__ import annotations

import ast
import io
import json
import tokenize
from pathlib import Path

import pytest

from app.core.errors import CoreError, ErrorCode, InvalidCorpus, WarningCode

_APP = Path(__file__).resolve().parents[2] / "app"
_CODES = {member.value for member in ErrorCode} | {member.value for member in WarningCode}
#: Strings equal to a code that mean something else: a message kind on the pipe of the
#: compute process, and the randomness ``source`` of a release with a publisher's seed.
_HOMONYMS = {
    ("jobs/compute.py", "core_error"),
    ("core/randomness.py", "publisher_seed"),
}


def _literals(path: Path) -> list[tuple[int, str]]:
    found = []
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
    for token in tokens:
        if token.type != tokenize.STRING:
            continue
        try:
            value = ast.literal_eval(token.string)
        except (ValueError, SyntaxError):
            continue  # an f-string
        if isinstance(value, str) and value in _CODES:
            found.append((token.start[0], value))
    return found


def test_no_code_is_spelled_as_a_literal_outside_the_enumeration() -> None:
    offenders = [
        f"app/{rel}:{line}: {value!r}"
        for path in sorted(_APP.rglob("*.py"))
        if (rel := path.relative_to(_APP).as_posix()) != "core/errors.py"
        for line, value in _literals(path)
        if (rel, value) not in _HOMONYMS
    ]
    assert offenders == [], "use ErrorCode / WarningCode:\n" + "\n".join(offenders)


def test_the_homonyms_still_exist() -> None:
    # An allowance for a literal that is gone would hide a new one of the same spelling.
    for rel, value in _HOMONYMS:
        assert value in {v for _, v in _literals(_APP / rel)}, (rel, value)


def test_codes_are_distinct_snake_case_and_render_as_plain_strings() -> None:
    assert not {m.value for m in ErrorCode} & {m.value for m in WarningCode}
    for member in [*ErrorCode, *WarningCode]:
        assert member.value == member.name.lower()
        assert json.dumps({"code": member}) == json.dumps({"code": member.value})
        assert f"{member}" == str(member) == member.value


@pytest.mark.parametrize(
    ("error", "code"),
    [(CoreError("x"), "core_error"), (InvalidCorpus("x"), "invalid_corpus")],
)
def test_core_errors_carry_members(error: CoreError, code: str) -> None:
    assert isinstance(error.code, ErrorCode)
    assert error.code == code
