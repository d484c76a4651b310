"""The charts (app/web/charts.py): SVG the page's Content-Security-Policy allows (no inline
style, no script), every label escaped, and the figures they draw on each mark."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from app.web.charts import Bin, RiskColumn, bars, intervals, risk_columns, ticks

SVG = "{http://www.w3.org/2000/svg}"


def _parsed(markup: str) -> ET.Element:
    assert "style=" not in markup and "<script" not in markup
    return ET.fromstring(markup)


def test_ticks_cover_the_range_in_round_steps() -> None:
    assert ticks(0, 11) == [0.0, 5.0, 10.0, 15.0]
    assert ticks(0, 1.714) == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert ticks(3, 3) == [3.0, 3.2, 3.4, 3.6, 3.8, 4.0]


def test_labels_are_escaped_and_values_carried() -> None:
    svg = _parsed(str(bars(["<1>"], [("<s>", [3], "rows")], "a&b", ["/web/x?a=1&b=2"])))
    rect = svg.find(f".//{SVG}rect[@class='bar rows']")
    assert rect is not None and rect.get("data-value") == "3" and rect.get("data-series") == "<s>"
    link = svg.find(f".//{SVG}a")
    assert link is not None and link.get("href") == "/web/x?a=1&b=2"


def test_a_none_value_draws_no_bar() -> None:
    svg = _parsed(str(bars(["1", "2"], [("rows", [4, None], "rows")], "rows")))
    assert [r.get("data-category") for r in svg.iter(f"{SVG}rect") if r.get("data-value")] == ["1"]


def test_the_risk_chart_marks_a_release_over_its_threshold() -> None:
    columns = [
        RiskColumn("1", [Bin(0.0, 1.0, 3), Bin(1.0, 2.0, 1)], 1.5, 2.0, 0),
        RiskColumn("2", [Bin(2.0, 3.0, 2)], 2.5, 2.0, 2),
    ]
    svg = _parsed(str(risk_columns(columns, "risk")))
    dots = {c.get("data-category"): c.get("class") for c in svg.iter(f"{SVG}circle")}
    assert dots == {"1": "max", "2": "max over"}
    over = [r for r in svg.iter(f"{SVG}rect") if "over" in (r.get("class") or "")]
    assert [r.get("data-count") for r in over] == ["2"]


def test_an_interval_without_upper_bound_is_drawn_open() -> None:
    svg = _parsed(str(intervals(["1", "2"], [(5.0, 4.0, 8.0), (6.0, 5.0, None)], "n", "t")))
    whiskers = [line for line in svg.iter(f"{SVG}line") if line.get("data-low")]
    assert [(w.get("data-low"), w.get("data-high")) for w in whiskers] == [
        ("4", "8"),
        ("5", "inf"),
    ]
    assert "open" in (whiskers[1].get("class") or "")
