"""Term spelling over HTTP: no spelling of a private term is
published in clear; NUL, lone surrogates and invisible characters are refused at validation,
naming the line or item, the same in a dry run and a real post."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.conftest import ADMIN, create_key, create_series, wait_job
from tests.api.test_bad_input import _stored

pytestmark = [pytest.mark.anyio, pytest.mark.db]

URL = "/v1/series/{}/releases"
FILLER = ["theft", "arson", "fraud", "vandal", "abuse", "murder"]


def _json(transactions: list[list[str]], **extra: Any) -> bytes:
    return json.dumps({"transactions": [{"terms": t} for t in transactions], **extra}).encode()


def _public_terms(release: dict[str, Any]) -> set[str]:
    return {term for cluster in release["clusters"] for row in cluster["rows"] for term in row}


async def _publish(
    client: httpx.AsyncClient, name: str, content: bytes, content_type: str = "application/json"
) -> dict[str, Any]:
    publisher = await create_key(client, "publisher", name)
    response = await client.post(
        f"{URL.format(name)}?wait=true",
        content=content,
        headers={**publisher, "Content-Type": content_type},
    )
    assert response.status_code == 201, response.text
    number = response.json()["release"]["release_no"]
    release = await client.get(f"{URL.format(name)}/{number}", headers=ADMIN)
    return dict(release.json())


async def test_spellings_of_private_terms_are_private(client: httpx.AsyncClient) -> None:
    await create_series(
        client,
        name="s",
        private_terms=["HIV", "cancér"],
        # min_copies 1 and no steady level: each term holds a copy or two (design.md §5.8).
        params={"r_th": 2, "cluster_size": 2, "seed": 7, "min_copies": 1, "level_margin": 0},
    )
    nfd = unicodedata.normalize("NFD", "cancér")
    spellings = [" HIV", "HIV ", "hiv", "ＨＩＶ", nfd, "CANCÉR"]
    corpus = [
        [FILLER[i % 6], FILLER[(i + 1) % 6], spellings[i % len(spellings)]] for i in range(24)
    ] + [[FILLER[i % 6]] for i in range(12)]
    release = await _publish(client, "s", _json(corpus))
    public = _public_terms(release)
    assert public <= set(FILLER), public - set(FILLER)
    assert set(release["population_rates"]) == {"HIV", "cancér"}
    assert sum(release["population_rates"].values()) > 0.5
    job = (await client.get("/v1/series/s", headers=ADMIN)).json()
    assert job["private_match"] == "casefold"


async def test_a_space_inside_a_private_term_is_that_private_term(
    client: httpx.AsyncClient,
) -> None:
    """``H`` + U+00A0 + ``IV`` reads as ``HIV`` and stays one term where a text upload splits
    on white space; it was published in clear, with no warning. It is ``HIV`` now, in JSON and
    CSV alike, and said so."""
    await create_series(
        client,
        name="s",
        private_terms=["HIV"],
        params={"r_th": 2, "cluster_size": 2, "seed": 7, "min_copies": 1, "level_margin": 0},
    )
    spaced = ["H\u00a0IV", "H\u2009IV", "h iv"]
    corpus = [[FILLER[i % 6], FILLER[(i + 1) % 6], spaced[i % 3]] for i in range(18)] + [
        [FILLER[i % 6]] for i in range(12)
    ]
    publisher = await create_key(client, "publisher", "s")
    posted = await client.post(
        f"{URL.format('s')}?wait=true",
        content=_json(corpus),
        headers={**publisher, "Content-Type": "application/json"},
    )
    assert posted.status_code == 201, posted.text
    warned = {
        (w["term"], w["private_term"], w["treated_as"])
        for w in posted.json()["warnings"]
        if w["code"] == "term_folds_onto_private_term"
    }
    assert warned == {(t, "HIV", "private") for t in spaced}
    release = (await client.get(f"{URL.format('s')}/1", headers=ADMIN)).json()
    assert _public_terms(release) <= set(FILLER), _public_terms(release) - set(FILLER)
    assert set(release["population_rates"]) == {"HIV"}
    csv = "terms\n" + "".join(";".join(row) + "\n" for row in corpus)
    again = await _publish(client, "s", csv.encode(), "text/csv")
    assert _public_terms(again) <= set(FILLER), _public_terms(again) - set(FILLER)
    assert set(again["population_rates"]) == {"HIV"}


async def test_exact_match_keeps_other_spellings_and_warns(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/series",
        headers=ADMIN,
        json={
            "name": "e",
            "private_terms": ["HIV"],
            "private_match": "exact",
            "params": {"r_th": 2, "cluster_size": 2, "seed": 7},
        },
    )
    assert response.status_code == 201, response.text
    publisher = await create_key(client, "publisher", "e")
    corpus = [["theft", "hiv"], ["arson", "HIV"], ["theft", "arson"], ["fraud", "ＨＩＶ"]] * 3
    posted = await client.post(
        f"{URL.format('e')}?wait=true",
        content=_json(corpus),
        headers={**publisher, "Content-Type": "application/json"},
    )
    assert posted.status_code == 201, posted.text
    job = (await client.get(f"/v1/jobs/{posted.json()['job']['id']}", headers=ADMIN)).json()
    warned = {(w["term"], w["treated_as"]) for w in job["report"]["ingest_warnings"]}
    assert warned == {("hiv", "public"), ("ＨＩＶ", "public")}


async def test_exact_match_takes_a_joiner_spelling_as_the_private_term(
    client: httpx.AsyncClient,
) -> None:
    """Under exact, ``HI\u200dV`` (the zero-width joiner, allowed for Persian, Indic and
    emoji words) was published in clear, and reads as ``HIV``; a joiner spelling of a private
    term is now that private term, in the corpus, in extra and in the series' private terms."""
    params = {"r_th": 2, "cluster_size": 2, "seed": 7, "min_copies": 1, "level_margin": 0}
    response = await client.post(
        "/v1/series",
        headers=ADMIN,
        json={"name": "e", "private_terms": ["HIV"], "private_match": "exact", "params": params},
    )
    assert response.status_code == 201, response.text
    publisher = await create_key(client, "publisher", "e")
    joined = ["HI\u200dV", "\u200cHIV", "H\u200dI\u200cV", "mans\u200dl"]
    corpus = [["theft", t] for t in joined] + [["theft", "arson"], ["fraud"], ["arson", "fraud"]]
    posted = await client.post(
        f"{URL.format('e')}?wait=true",
        # The extra private term is the series' HIV and another one, mansl.
        content=_json(corpus * 2, private_terms=["H\u200dIV", "mansl"]),
        headers={**publisher, "Content-Type": "application/json"},
    )
    assert posted.status_code == 201, posted.text
    release = (await client.get(f"{URL.format('e')}/1", headers=ADMIN)).json()
    assert _public_terms(release) <= {"theft", "arson", "fraud"}, _public_terms(release)
    assert set(release["population_rates"]) == {"HIV", "mansl"}
    job = (await client.get(f"/v1/jobs/{posted.json()['job']['id']}", headers=ADMIN)).json()
    warned = {(w["term"], w["treated_as"]) for w in job["report"]["ingest_warnings"]}
    assert warned == {(t, "private") for t in joined}
    for same in (["HIV", "HI\u200dV"], ["HI\u200cV", "HIV"]):
        twice = await client.post(
            "/v1/series",
            headers=ADMIN,
            json={"name": "f", "private_terms": same, "private_match": "exact"},
        )
        assert twice.status_code == 422, (same, twice.text)
        assert twice.json()["error"]["details"]["same_as"] == 0


async def test_dry_run_reports_folded_terms(client: httpx.AsyncClient) -> None:
    await create_series(client, name="d")
    publisher = await create_key(client, "publisher", "d")
    response = await client.post(
        f"{URL.format('d')}?dry_run=true&wait=true",
        content=b"theft Hiv\narson\ntheft arson\nfraud\n",
        headers={**publisher, "Content-Type": "text/plain"},
    )
    assert response.status_code == 200, response.text
    warnings = response.json()["warnings"]
    assert [w for w in warnings if w["code"] == "term_folds_onto_private_term"] == [
        {
            "code": "term_folds_onto_private_term",
            "term": "Hiv",
            "private_term": "HIV",
            "treated_as": "private",
            "message": "'Hiv' is a spelling of the private term 'HIV' (case, width, spacing, "
            "accents or look-alike letters): published as that private term",
        }
    ]
    # The series' other private terms occur nowhere in the snapshot, and nothing is near.
    absent = [w for w in warnings if w["code"] == "private_term_not_in_snapshot"]
    assert [(w["term"], w.get("nearest")) for w in absent] == [("cancer", None), ("herpes", None)]


def _folds(warnings: list[dict[str, str]]) -> set[tuple[str, str, str]]:
    return {
        (w["term"], w["private_term"], w["treated_as"])
        for w in warnings
        if w["code"] == "term_folds_onto_private_term"
    }


async def test_look_alike_spellings_are_private_and_every_one_is_told(
    client: httpx.AsyncClient,
) -> None:
    """Cyrillic, Greek, dotted and accented spellings of a private term were published in
    clear under casefold, and a private term the snapshot spelt otherwise (``canser`` for
    ``cancer``) matched nothing, silently: the first are that private term now (TR39), and
    the publisher is told of each, with the published term nearest the missing one."""
    await create_series(
        client,
        name="l",
        private_terms=["HIV", "herpes", "canser"],
        params={"r_th": 2, "cluster_size": 2, "seed": 7, "min_copies": 1, "level_margin": 0},
    )
    spellings = ["\u041dIV", "H\u0399V", "H\u0130V", "HIV\u0307", "herpe\u0455"]
    corpus = [[FILLER[i % 6], spellings[i % 5]] for i in range(20)]
    corpus += [[FILLER[i % 6], "cancer"] for i in range(4)] + [[t] for t in FILLER] * 2
    release = await _publish(client, "l", _json(corpus))
    assert _public_terms(release) == {*FILLER, "cancer"}
    assert {"HIV", "herpes"} <= set(release["population_rates"])
    posted = await client.post(
        f"{URL.format('l')}?dry_run=true",
        content=_json(corpus),
        headers={**ADMIN, "Content-Type": "application/json"},
    )
    warnings = posted.json()["warnings"]
    assert _folds(warnings) == {
        ("\u041dIV", "HIV", "private"),
        ("H\u0399V", "HIV", "private"),
        ("H\u0130V", "HIV", "private"),
        ("HIV\u0307", "HIV", "private"),
        ("herpe\u0455", "herpes", "private"),
    }
    (absent,) = [w for w in warnings if w["code"] == "private_term_not_in_snapshot"]
    assert (absent["term"], absent["nearest"], absent["similarity"]) == ("canser", "cancer", "0.83")


async def test_every_warning_about_terms_reaches_the_publisher(client: httpx.AsyncClient) -> None:
    """Under exact, ``hiv`` and ``ＨＩＶ`` were published in clear and only the auditors'
    report said so: the 202, the job's warnings and the 201 were silent."""
    response = await client.post(
        "/v1/series",
        headers=ADMIN,
        json={
            "name": "x",
            "private_terms": ["HIV"],
            "private_match": "exact",
            "params": {"r_th": 2, "cluster_size": 2, "seed": 7},
        },
    )
    assert response.status_code == 201, response.text
    publisher = {**await create_key(client, "publisher", "x"), "Content-Type": "text/plain"}
    body = "theft hiv\narson HIV\ntheft arson\nfraud ＨＩＶ\n".encode() * 3
    told = {("hiv", "HIV", "public"), ("ＨＩＶ", "HIV", "public")}
    queued = await client.post(URL.format("x"), content=body, headers=publisher)
    assert queued.status_code == 202, queued.text
    assert _folds(queued.json()["warnings"]) == told
    job = await wait_job(client, queued.json()["id"], publisher)
    assert job["status"] == "succeeded", job
    assert _folds(job["warnings"]) == told
    waited = await client.post(f"{URL.format('x')}?wait=true", content=body, headers=publisher)
    assert waited.status_code == 201, waited.text
    assert _folds(waited.json()["warnings"]) == told
    assert _folds(waited.json()["job"]["warnings"]) == told


def _case_variant(term: str) -> st.SearchStrategy[str]:
    return st.lists(st.booleans(), min_size=len(term), max_size=len(term)).map(
        lambda flags: "".join(
            c.upper() if f else c.lower() for c, f in zip(term, flags, strict=True)
        )
    )


def _spelling(term: str) -> st.SearchStrategy[str]:
    """A spelling of ``term`` a hospital might send: case, padding, NFD, full width."""
    pad = st.sampled_from(["", " ", "\u3000", "\u00a0"])
    base = st.one_of(
        _case_variant(term),
        st.just(unicodedata.normalize("NFD", term)),
        st.just("".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in term)),
    )
    return st.tuples(pad, base, pad).map("".join)


def _draw_corpora(n: int) -> list[list[list[str]]]:
    """``n`` corpora drawn by hypothesis (the posts run afterwards, on the test's loop)."""
    drawn: list[list[list[str]]] = []
    spelling = st.sampled_from(["HIV", "cancér", "Herpès"]).flatmap(_spelling)
    transaction = st.tuples(
        st.lists(st.sampled_from(FILLER), min_size=1, max_size=3, unique=True), spelling
    ).map(lambda t: [*t[0], t[1]])
    corpus = st.lists(transaction, min_size=6, max_size=30)

    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(corpus)
    def collect(value: list[list[str]]) -> None:
        drawn.append(value)

    collect()
    return drawn[-n:]


async def test_property_no_spelling_of_a_private_term_is_published(
    client: httpx.AsyncClient,
) -> None:
    # Anony: what is checked is ingestion, and every drawn row holds a private term, a density
    # at which serial protection may rightly refuse a release (tests/core for that).
    await create_series(
        client,
        name="p",
        method="anony",
        private_terms=["HIV", "cancér", "Herpès"],
        params={"r_th": 2, "cluster_size": 2, "seed": 7},
    )
    publisher = await create_key(client, "publisher", "p")
    folded = {"hiv", "cancér", "herpès"}
    for corpus in _draw_corpora(6):
        # Lines are separated by white space in text/plain: pad only inside JSON.
        corpus = corpus + [[FILLER[0]], [FILLER[1]], [FILLER[2], FILLER[3]]]
        posted = await client.post(
            f"{URL.format('p')}?wait=true",
            content=_json(corpus),
            headers={**publisher, "Content-Type": "application/json"},
        )
        assert posted.status_code == 201, posted.text
    listed = (await client.get(URL.format("p"), headers=ADMIN)).json()
    assert len(listed) >= 6
    for item in listed:
        release = (
            await client.get(f"{URL.format('p')}/{item['release_no']}", headers=ADMIN)
        ).json()
        leaked = {
            t
            for t in _public_terms(release)
            if unicodedata.normalize("NFKC", t).casefold().strip() in folded
        }
        assert not leaked, (item["release_no"], leaked)


BAD = [
    ("NUL in a JSON term", "application/json", _json([["a"], ["b\u0000"]]), {"item": 1}),
    (
        "lone surrogate in a JSON term",
        "application/json",
        b'{"transactions": [{"terms": ["a"]}, {"terms": ["ok", "b\\ud800"]}]}',
        {"item": 1},
    ),
    ("zero-width space in a JSON term", "application/json", _json([["HIV\u200b"]]), {"item": 0}),
    ("NUL in a text line", "text/plain", b"a b\nc\x00d e\n", {"line": 2, "column": 2}),
    ("unit separator in a text line", "text/plain", b"a b\nc\x1fd\n", {"line": 2}),
    ("NUL in a CSV term", "text/csv", b"terms\na;b\nc;d\x00\n", {"line": 3}),
    ("NUL in a CSV individual", "text/csv", b"terms,individual\na;b,p\x001\n", {"line": 2}),
    (
        "NUL in a JSON cluster",
        "application/json",
        json.dumps({"transactions": [{"terms": ["a"], "cluster": "g\u0000"}]}).encode(),
        {"item": 0},
    ),
    (
        "NUL in the JSON label",
        "application/json",
        _json([["a"]], label="2024\u0000"),
        {"field": "label"},
    ),
    (
        "NUL in an extra private term",
        "application/json",
        _json([["a"]], private_terms=["x\u0000"]),
        {"item": 0},
    ),
    # Default_Ignorable code points render as nothing: each spelling looks like "HIV".
    (
        "variation selector in a JSON term",
        "application/json",
        _json([["a"], ["HIV\ufe0f"]]),
        {"item": 1},
    ),
    ("grapheme joiner in a text line", "text/plain", "a b\nHI\u034fV c\n".encode(), {"line": 2}),
    ("Hangul filler in a CSV term", "text/csv", "terms\na;b\nHIV\u3164;c\n".encode(), {"line": 3}),
    ("soft hyphen in a text line", "text/plain", "H\u00adIV\n".encode(), {"line": 1}),
    ("tag character in a JSON term", "application/json", _json([["HIV\U000e0041"]]), {"item": 0}),
    # Not Default_Ignorable, but blank all the same.
    ("Braille blank in a text line", "text/plain", "a b\nHIV\u2800 c\n".encode(), {"line": 2}),
    ("Braille blank in a JSON term", "application/json", _json([["HIV\u2800"]]), {"item": 0}),
    (
        "variation selector in an extra private term",
        "application/json",
        _json([["a"]], private_terms=["HIV\ufe0e"]),
        {"item": 0},
    ),
]


@pytest.mark.parametrize(
    ("content_type", "content", "details"), [c[1:] for c in BAD], ids=[c[0] for c in BAD]
)
@pytest.mark.parametrize("dry_run", [False, True], ids=["post", "dry-run"])
async def test_unprintable_characters_are_refused(
    client: httpx.AsyncClient,
    database_url: str,
    content_type: str,
    content: bytes,
    details: dict[str, Any],
    dry_run: bool,
) -> None:
    await create_series(client)
    publisher = await create_key(client, "publisher", "prison-health")
    response = await client.post(
        f"{URL.format('prison-health')}?dry_run={str(dry_run).lower()}",
        content=content,
        headers={**publisher, "Content-Type": content_type},
    )
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert details.items() <= error["details"].items(), error
    # The code point is named: an invisible one cannot be found by looking at the term.
    assert re.search(r"U\+[0-9A-F]{4,6} \(", error["message"]), error
    assert await _stored(database_url) == (0, 0, 0)


async def test_nul_in_path_or_query_answers_the_error_body(client: httpx.AsyncClient) -> None:
    await create_series(client)
    path = await client.get("/v1/series/a%00b", headers=ADMIN)
    assert path.status_code == 404 and path.json()["error"]["code"] == "not_found"
    query = await client.get("/v1/series/prison-health/statistics?individual=p%001", headers=ADMIN)
    assert query.status_code == 422 and query.json()["error"]["code"] == "invalid_request"
    # An invisible spelling of a private term in the query is refused, never taken as new.
    for spelling in ("HIV%EF%B8%8F", "HI%CD%8FV", "HIV%E3%85%A4"):
        query_term = await client.post(
            f"{URL.format('prison-health')}?private_terms={spelling}",
            content=b"a b\n",
            headers={**ADMIN, "Content-Type": "text/plain"},
        )
        assert query_term.status_code == 422, (spelling, query_term.text)
    label = await client.post(
        f"{URL.format('prison-health')}?label=x%00",
        content=b"a b\n",
        headers={**ADMIN, "Content-Type": "text/plain"},
    )
    assert label.status_code == 422 and label.json()["error"]["message"]


async def test_private_terms_of_a_series_are_normalised(client: httpx.AsyncClient) -> None:
    nfd = unicodedata.normalize("NFD", "cancér")
    created = await client.post(
        "/v1/series", headers=ADMIN, json={"name": "n", "private_terms": [f" {nfd} ", "HIV"]}
    )
    assert created.status_code == 201, created.text
    assert created.json()["private_terms"] == ["HIV", "cancér"]
    for bad in (
        [],
        ["HIV", "hiv"],
        ["HIV\u200b"],
        ["a\u0000"],
        ["HIV\ufe0f"],
        ["HI\u034fV"],
        ["HIV\u3164"],
    ):
        response = await client.post(
            "/v1/series", headers=ADMIN, json={"name": "m", "private_terms": bad}
        )
        assert response.status_code == 422, (bad, response.text)
        assert response.json()["error"]["details"]
