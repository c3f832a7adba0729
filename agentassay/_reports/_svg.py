"""Inline SVG for the HTML report: a handful of primitives that escape everything they print.

The report's charts are drawn here in Python, so the page needs no script and no chart library:
a chart is markup made of numbers we computed and text we escaped. Tag and attribute names come
from this code only; every attribute value and every text node goes through ``html.escape``, so a
scenario or agent name can never leave its text node or its attribute. No ``style`` attribute is
ever written: the page's Content-Security-Policy admits its one hashed ``<style>`` block only, and
presentation attributes (``fill``, ``stroke`` …) are not styles. No ``id`` either, so any number
of charts can share a page, and no ``href``: nothing in a chart links anywhere.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
MONO = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace"

# Colours shared by the charts and the page (the page's CSS uses the same values).
GREEN, RED, AMBER, GREY, BLUE, INK, MUTED, GRID = (
    "#1a7f37", "#cf222e", "#b35900", "#8c959f", "#0969da", "#1f2328", "#57606a", "#d0d7de",
)
ORANGE = "#d97706"

_TAGS = frozenset({"g", "title", "line", "rect", "circle", "polyline", "polygon", "path", "text"})


def num(x: float) -> str:
    """A coordinate as short text (two decimals at most); refuses NaN and infinities, which would
    make the whole picture invalid."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"not a finite coordinate: {x!r}")
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def points(xy: Iterable[tuple[float, float]]) -> str:
    """``x,y x,y …`` for a polyline or polygon."""
    return " ".join(f"{num(x)},{num(y)}" for x, y in xy)


def _value(v: object) -> str:
    if isinstance(v, bool):
        raise TypeError("an SVG attribute cannot be a bool")
    if isinstance(v, int | float):
        return num(v)
    return html.escape(str(v), quote=True)


def _attrs(attrs: dict[str, object]) -> str:
    # class_ -> class, stroke_width -> stroke-width; None leaves the attribute out
    return "".join(f' {k.rstrip("_").replace("_", "-")}="{_value(v)}"' for k, v in attrs.items() if v is not None)


class Svg:
    """One ``<svg>`` picture. ``label`` is its title and accessible name (escaped, like every other text)."""

    def __init__(self, width: float, height: float, *, label: str, class_: str = "chart") -> None:
        self.width, self.height, self.label, self.class_ = width, height, label, class_
        self._parts: list[str] = []
        self._open: list[str] = []

    def el(self, tag: str, text: str | None = None, **attrs: object) -> None:
        """An element; ``text`` (escaped) makes it a container of that text."""
        if tag not in _TAGS:
            raise ValueError(f"SVG element <{tag}> is not one this module writes")
        if text is None:
            self._parts.append(f"<{tag}{_attrs(attrs)}/>")
        else:
            self._parts.append(f"<{tag}{_attrs(attrs)}>{html.escape(str(text), quote=True)}</{tag}>")

    def group(self, tooltip: str | None = None, **attrs: object) -> None:
        """Opens a ``<g>``; a ``tooltip`` (escaped) becomes its ``<title>``, which browsers show on hover."""
        self._parts.append(f"<g{_attrs(attrs)}>")
        self._open.append("g")
        if tooltip:
            self.el("title", tooltip)

    def end(self) -> None:
        self._parts.append(f"</{self._open.pop()}>")

    def line(self, x1: float, y1: float, x2: float, y2: float, **attrs: object) -> None:
        self.el("line", x1=x1, y1=y1, x2=x2, y2=y2, **attrs)

    def rect(self, x: float, y: float, w: float, h: float, **attrs: object) -> None:
        self.el("rect", x=x, y=y, width=max(w, 0.0), height=max(h, 0.0), **attrs)

    def circle(self, cx: float, cy: float, r: float, **attrs: object) -> None:
        self.el("circle", cx=cx, cy=cy, r=r, **attrs)

    def polyline(self, xy: Sequence[tuple[float, float]], **attrs: object) -> None:
        self.el("polyline", points=points(xy), fill="none", **attrs)

    def polygon(self, xy: Sequence[tuple[float, float]], **attrs: object) -> None:
        self.el("polygon", points=points(xy), **attrs)

    def path(self, d: str, **attrs: object) -> None:
        """``d`` must be built from :func:`num` values and path letters by the caller."""
        self.el("path", d=d, **attrs)

    def text(self, x: float, y: float, text: str, *, size: float = 12, anchor: str = "start", **attrs: object) -> None:
        attrs.setdefault("fill", INK)
        attrs.setdefault("font_family", FONT)
        self.el("text", text, x=x, y=y, font_size=size, text_anchor=anchor, **attrs)

    def render(self) -> str:
        """The picture's markup; every text in it is escaped."""
        while self._open:
            self.end()
        w, h = num(self.width), num(self.height)
        # The label is the picture's <title> (its accessible name), a text node: names in it never sit in
        # an attribute, escaped or not.
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="{_value(self.class_)}" viewBox="0 0 {w} {h}" '
            f'width="{w}" height="{h}" role="img">'
        )
        return head + f"<title>{html.escape(self.label)}</title>" + "".join(self._parts) + "</svg>"


def arrowhead(tip: tuple[float, float], tail: tuple[float, float], size: float = 7.0) -> list[tuple[float, float]]:
    """The three corners of an arrowhead at ``tip``, pointing away from ``tail`` (drawn as a polygon,
    so no ``<marker>`` and no id is needed)."""
    dx, dy = tip[0] - tail[0], tip[1] - tail[1]
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    bx, by = tip[0] - ux * size, tip[1] - uy * size
    px, py = -uy * size * 0.5, ux * size * 0.5
    return [tip, (bx + px, by + py), (bx - px, by - py)]
