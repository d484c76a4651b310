"""Charts as inline SVG, drawn on the server: they need no script, so the pages keep a
Content-Security-Policy without inline scripts or styles, and read the same without
JavaScript.

Colours and fonts come from the stylesheet (classes), never from ``style`` attributes, which
that policy refuses. Each mark carries a ``<title>`` (the browser shows it on hover), a link
where it has a page, and ``data-`` attributes with the figure it draws (``tests/web`` reads
them back against the API's figures).

>>> ticks(0, 7)
[0.0, 2.0, 4.0, 6.0, 8.0]
>>> ticks(0, 11)
[0.0, 5.0, 10.0, 15.0]
>>> "<svg" in str(bars(["1", "2"], [("rows", [40, 42], "rows")], "Rows"))
True
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

__all__ = ["Bin", "RiskColumn", "bars", "intervals", "risk_columns", "ticks"]

_W, _H = 720, 260
_LEFT, _RIGHT, _TOP, _BOTTOM = 56, 16, 16, 44


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round values from at or below ``low`` to at or above ``high``, about ``count`` of
    them (steps of 1, 2 or 5 times a power of ten)."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    out, value = [], math.floor(low / step) * step
    while True:
        out.append(round(value, 10))
        if value >= high - step * 1e-9:
            return out
        value += step


@dataclass(frozen=True, slots=True)
class _Frame:
    """The plot area and its y scale."""

    svg: ET.Element
    plot: ET.Element
    y_low: float
    y_high: float
    n: int

    def y(self, value: float) -> float:
        span = self.y_high - self.y_low or 1.0
        return _TOP + (_H - _TOP - _BOTTOM) * (1 - (value - self.y_low) / span)

    def slot(self, i: int) -> tuple[float, float]:
        """The left edge and width of category ``i``'s slot."""
        width = (_W - _LEFT - _RIGHT) / max(self.n, 1)
        return _LEFT + i * width, width


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: object) -> ET.Element:
    element = ET.SubElement(
        parent, tag, {k.rstrip("_").replace("_", "-"): _fmt(v) for k, v in attrs.items()}
    )
    if text is not None:
        element.text = text
    return element


def _fmt(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _frame(
    title: str, categories: Sequence[str], y_values: Sequence[float], y_label: str
) -> _Frame:
    svg = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {_W} {_H}",
            "class": "chart",
            "role": "img",
            "aria-label": title,
        },
    )
    _el(svg, "title", title)
    marks = ticks(min(0.0, *y_values) if y_values else 0.0, max(y_values, default=1.0))
    frame = _Frame(svg, ET.Element("g"), marks[0], marks[-1], len(categories))
    for value in marks:
        y = frame.y(value)
        _el(svg, "line", x1=_LEFT, x2=_W - _RIGHT, y1=y, y2=y, class_="grid")
        _el(svg, "text", f"{value:g}", x=_LEFT - 6, y=y + 4, class_="tick y")
    for i, name in enumerate(categories):
        left, width = frame.slot(i)
        _el(svg, "text", name, x=left + width / 2, y=_H - _BOTTOM + 16, class_="tick x")
    _el(
        svg,
        "text",
        y_label,
        x=14,
        y=_TOP + (_H - _TOP - _BOTTOM) / 2,
        class_="axis-label",
        transform=f"rotate(-90 14 {_TOP + (_H - _TOP - _BOTTOM) / 2:.1f})",
    )
    svg.append(frame.plot)
    return frame


def _legend(svg: ET.Element, entries: Sequence[tuple[str, str]]) -> None:
    x = float(_LEFT)
    for name, css in entries:
        _el(svg, "rect", x=x, y=_H - 16, width=10, height=10, class_=f"swatch {css}")
        _el(svg, "text", name, x=x + 14, y=_H - 7, class_="legend")
        x += 14 + 7.5 * len(name) + 18


def _markup(svg: ET.Element) -> Markup:
    return Markup(ET.tostring(svg, encoding="unicode", short_empty_elements=True))


def _linked(parent: ET.Element, href: str | None) -> ET.Element:
    return _el(parent, "a", href=href) if href else parent


def bars(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None], str]],
    y_label: str,
    links: Sequence[str] | None = None,
    title: str | None = None,
) -> Markup:
    """Grouped bars: for each category, one bar per ``(name, values, css class)``; a
    ``None`` value draws nothing."""
    values = [v for _, vs, _ in series for v in vs if v is not None]
    frame = _frame(title or y_label, categories, values, y_label)
    for i, category in enumerate(categories):
        left, width = frame.slot(i)
        inner = width * 0.8 / max(len(series), 1)
        group = _linked(frame.plot, links[i] if links else None)
        for j, (name, vs, css) in enumerate(series):
            value = vs[i]
            if value is None:
                continue
            top, base = frame.y(value), frame.y(max(frame.y_low, 0.0))
            bar = _el(
                group,
                "rect",
                x=left + width * 0.1 + j * inner,
                y=min(top, base),
                width=max(inner - 2, 1.0),
                height=max(abs(base - top), 0.5),
                class_=f"bar {css}",
                data_category=category,
                data_series=name,
                data_value=f"{value:g}",
            )
            _el(bar, "title", f"{category}: {name} {value:g}")
    _legend(frame.svg, [(name, css) for name, _, css in series])
    return _markup(frame.svg)


@dataclass(frozen=True, slots=True)
class Bin:
    lo: float
    hi: float
    count: int


@dataclass(frozen=True, slots=True)
class RiskColumn:
    """One release in the risk chart: its rows' serial risks as histogram bins, its
    largest risk and the threshold it is judged at."""

    category: str
    bins: Sequence[Bin]
    max_risk: float
    r_th: float
    rows_over: int
    href: str | None = None


def risk_columns(columns: Sequence[RiskColumn], title: str) -> Markup:
    """Each release's distribution of serial risk (shaded by the share of its rows in each
    bin), its largest risk (a dot, red when over ``r_th``) and ``r_th`` (a dashed line)."""
    top = max([c.max_risk for c in columns] + [c.r_th for c in columns] + [1.0])
    frame = _frame(title, [c.category for c in columns], [0.0, top * 1.05], "serial risk")
    for i, column in enumerate(columns):
        left, width = frame.slot(i)
        group = _linked(frame.plot, column.href)
        rows = sum(b.count for b in column.bins) or 1
        for b in column.bins:
            if not b.count:
                continue
            share = b.count / rows
            # Eight shades, by share of the release's rows: a class each (no inline style).
            shade = min(7, int(share * 8))
            y_hi, y_lo = frame.y(min(b.hi, frame.y_high)), frame.y(b.lo)
            cell = _el(
                group,
                "rect",
                x=left + width * 0.2,
                y=y_hi,
                width=width * 0.6,
                height=max(y_lo - y_hi, 1.0),
                class_=f"bin shade{shade}{' over' if b.lo >= column.r_th else ''}",
                data_count=b.count,
            )
            _el(cell, "title", f"{column.category}: {b.count} rows with risk {b.lo:g}-{b.hi:g}")
        dot = _el(
            group,
            "circle",
            cx=left + width / 2,
            cy=frame.y(column.max_risk),
            r=5,
            class_="max over" if column.rows_over else "max",
            data_category=column.category,
            data_value=f"{column.max_risk:.6g}",
        )
        _el(dot, "title", f"{column.category}: largest serial risk {column.max_risk:.4g}")
        y = frame.y(column.r_th)
        _el(
            frame.plot,
            "line",
            x1=left,
            x2=left + width,
            y1=y,
            y2=y,
            class_="threshold",
            data_value=f"{column.r_th:g}",
        )
    _legend(
        frame.svg,
        [("rows by risk", "shade4"), ("largest risk", "max"), ("r_th", "threshold-swatch")],
    )
    return _markup(frame.svg)


def intervals(
    categories: Sequence[str],
    points: Sequence[tuple[float, float, float | None]],
    y_label: str,
    title: str,
) -> Markup:
    """A count per category with its interval ``(value, low, high)``: a line through the
    values, a bar from low to high (an arrow to the top when ``high`` is ``None``, no
    upper bound)."""
    finite = [v for value, low, high in points for v in (value, low, high) if v is not None]
    frame = _frame(title, categories, [0.0, *finite], y_label)
    centres = []
    for i, (category, (value, low, high)) in enumerate(zip(categories, points, strict=True)):
        left, width = frame.slot(i)
        x = left + width / 2
        centres.append(f"{x:.2f},{frame.y(value):.2f}")
        y_high = frame.y(high) if high is not None else _TOP
        whisker = _el(
            frame.plot,
            "line",
            x1=x,
            x2=x,
            y1=frame.y(low),
            y2=y_high,
            class_="interval" if high is not None else "interval open",
            data_category=category,
            data_low=f"{low:g}",
            data_high="inf" if high is None else f"{high:g}",
        )
        upper = "no upper bound" if high is None else f"{high:g}"
        _el(whisker, "title", f"{category}: true count in [{low:g}, {upper}]")
        for end in (frame.y(low), *(() if high is None else (y_high,))):
            _el(frame.plot, "line", x1=x - 6, x2=x + 6, y1=end, y2=end, class_="interval")
        if high is None:
            _el(
                frame.plot,
                "path",
                d=f"M{x - 5:.2f},{_TOP + 8} L{x:.2f},{_TOP} L{x + 5:.2f},{_TOP + 8}",
                class_="interval open",
            )
    _el(frame.plot, "polyline", points=" ".join(centres), class_="trend")
    for i, (category, (value, _, _)) in enumerate(zip(categories, points, strict=True)):
        left, width = frame.slot(i)
        dot = _el(
            frame.plot,
            "circle",
            cx=left + width / 2,
            cy=frame.y(value),
            r=4,
            class_="point",
            data_category=category,
            data_value=f"{value:g}",
        )
        _el(dot, "title", f"{category}: {value:g} published")
    _legend(frame.svg, [("published", "point"), ("interval of the true count", "interval")])
    return _markup(frame.svg)
