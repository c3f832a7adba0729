"""The HTML report's charts, as inline SVG (:mod:`._svg`): pass rates with intervals, a sequential
test's path. A plugin draws its own charts with :mod:`._svg` and the helpers here.

Every figure drawn comes from the results file; where the file does not hold what a picture would
need (the calibrated boundaries of the sequential regression test), the picture shows less and its
caption says so rather than approximating. Names reach these functions already redacted and
clipped; :class:`._svg.Svg` escapes them.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ._svg import AMBER, BLUE, GREEN, GREY, GRID, INK, MUTED, RED, Svg

TONE = {"pass": GREEN, "fail": RED, "inconclusive": AMBER}
_BASE = "#6e7781"  # the baseline's points: a neutral grey beside the candidate's verdict colour


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart)."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out, x = [], first
    while x <= hi + 1e-9:
        out.append(round(x, 10))
        x += step
    return out


def label_width(names: Iterable[str]) -> float:
    """Room for the row labels at 12px (about 7px a character, wide characters twice that)."""
    longest = max((sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in n) for n in names), default=8)
    return min(max(7.2 * longest + 24, 110), 300)


def _fmt(x: float) -> str:
    """A tick label: integers without decimals, others with up to two."""
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}".rstrip("0").rstrip(".")


def _minus(text: str) -> str:
    return text.replace("-", "−")


# -- (a) pass rates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateRow:
    """One scenario in the pass-rate chart: counts and 95% Wilson intervals, already computed."""

    name: str
    tone: str  # pass | fail | inconclusive
    baseline: tuple[float, float, float] | None  # (rate, low, high)
    candidate: tuple[float, float, float] | None
    threshold: float | None  # drawn for `run` results
    right: str  # "95% → 62%"


def rates_chart(rows: Sequence[RateRow]) -> str:
    """Baseline (grey) beside candidate (the verdict's colour), each a point on its 95% interval; a
    scenario's threshold as an amber tick. The axis starts at the lowest interval or threshold shown,
    rounded down to ten percent, so differences near 100% stay visible (the axis says where)."""
    label_w, plot_w, right_w, row_h, top = label_width(r.name for r in rows), 440, 130, 34, 28
    lows = [r[1] for row in rows for r in (row.baseline, row.candidate) if r is not None]
    lows += [row.threshold for row in rows if row.threshold is not None]
    x0 = max(0.0, math.floor(min(lows, default=0.0) * 10 - 1e-9) / 10)
    x0 = min(x0, 0.9)
    height = top + row_h * len(rows) + 30

    def x(p: float) -> float:
        return label_w + (p - x0) / (1 - x0) * plot_w

    svg = Svg(label_w + plot_w + right_w, height, label="Pass rates with 95% intervals, baseline beside candidate")
    ticks = [t for t in nice_ticks(x0, 1.0, 5) if x0 - 1e-9 <= t <= 1 + 1e-9]
    bottom = top + row_h * len(rows)
    for t in ticks:
        svg.line(x(t), top - 6, x(t), bottom, stroke=GRID, stroke_width=1)
        svg.text(x(t), bottom + 16, f"{_fmt(t * 100)}%", size=11, anchor="middle", fill=MUTED)
    has_base = any(r.baseline is not None for r in rows)
    # legend
    lx = label_w
    if has_base:
        svg.circle(lx + 4, 12, 4, fill=_BASE)
        svg.text(lx + 12, 16, "baseline", size=11, fill=MUTED)
        lx += 80
    svg.circle(lx + 4, 12, 4, fill=INK)
    svg.text(lx + 12, 16, "candidate (colour: verdict)", size=11, fill=MUTED)
    lx += 190
    if any(r.threshold is not None for r in rows):
        svg.line(lx + 4, 6, lx + 4, 18, stroke=AMBER, stroke_width=2, stroke_dasharray="3 2")
        svg.text(lx + 12, 16, "threshold", size=11, fill=MUTED)

    for i, row in enumerate(rows):
        y = top + row_h * i + row_h / 2
        if i % 2 == 0:
            svg.rect(0, y - row_h / 2, label_w + plot_w + right_w, row_h, fill="#f6f8fa")
        svg.text(label_w - 10, y + 4, row.name, size=12, anchor="end")
        if row.threshold is not None:
            svg.line(x(row.threshold), y - row_h / 2 + 3, x(row.threshold), y + row_h / 2 - 3, stroke=AMBER,
                     stroke_width=2, stroke_dasharray="3 2")
        both = row.baseline is not None and row.candidate is not None
        for rate, colour, dy, what in (
            (row.baseline, _BASE, -6 if both else 0, "baseline"),
            (row.candidate, TONE.get(row.tone, INK), 6 if both else 0, "candidate"),
        ):
            if rate is None:
                continue
            p, lo, hi = rate
            svg.group(tooltip=f"{row.name}: {what} {p * 100:.1f}% (95% interval {lo * 100:.1f}–{hi * 100:.1f}%)")
            svg.line(x(lo), y + dy, x(hi), y + dy, stroke=colour, stroke_width=2)
            for end in (lo, hi):
                svg.line(x(end), y + dy - 4, x(end), y + dy + 4, stroke=colour, stroke_width=1.5)
            svg.circle(x(p), y + dy, 4.5, fill=colour, stroke="#ffffff", stroke_width=1)
            svg.end()
        svg.text(label_w + plot_w + 10, y + 4, row.right, size=12, fill=INK)
    return svg.render()


# -- (b) the sequential test's path ----------------------------------------------------------------


def _axes(svg: Svg, frame: tuple[float, float, float, float], ticks: tuple[Sequence[float], Sequence[float]],
          fx: Callable[[float], float], fy: Callable[[float], float], xlabel: str, ylabel: str) -> None:
    """Grid lines with tick labels, and the axis titles; ``frame`` is (left, top, width, height)."""
    left, top, w, h = frame
    xs, ys = ticks
    for t in ys:
        svg.line(left, fy(t), left + w, fy(t), stroke=GRID, stroke_width=1)
        svg.text(left - 6, fy(t) + 4, _minus(_fmt(t)), size=11, anchor="end", fill=MUTED)
    for t in xs:
        svg.line(fx(t), top + h, fx(t), top + h + 4, stroke=GREY, stroke_width=1)
        svg.text(fx(t), top + h + 17, _fmt(t), size=11, anchor="middle", fill=MUTED)
    svg.line(left, top + h, left + w, top + h, stroke=GREY, stroke_width=1)
    svg.text(left + w / 2, top + h + 33, xlabel, size=11, anchor="middle", fill=MUTED)
    svg.text(12, top - 10, ylabel, size=11, fill=MUTED)


@dataclass(frozen=True)
class SprtPath:
    """The SPRT's log-likelihood ratio after each trial, and its two boundaries, from the results file."""

    llr: tuple[float, ...]  # after trial 1, 2, …
    lower: float  # PASS at or below
    upper: float  # FAIL at or above
    verdict: str  # pass | fail | inconclusive
    cap: int | None


def sprt_chart(name: str, path: SprtPath) -> str:
    """The walk from 0 after each trial, the FAIL boundary above and the PASS boundary below, the
    decision marked where the walk stopped (or at the cap)."""
    left, top, w, h = 56, 26, 560, 200
    n = len(path.llr)
    x_max = max(n, 1)
    values = [0.0, *path.llr, path.lower, path.upper]
    y_lo, y_hi = min(values), max(values)
    pad = (y_hi - y_lo) * 0.08 or 1.0
    y_lo, y_hi = y_lo - pad, y_hi + pad

    def fx(k: float) -> float:
        return left + k / x_max * w

    def fy(v: float) -> float:
        return top + (y_hi - v) / (y_hi - y_lo) * h

    svg = Svg(left + w + 150, top + h + 44, label=f"Sequential test of {name}: log-likelihood ratio by trial")
    _axes(svg, (left, top, w, h), (nice_ticks(0, x_max, 6), nice_ticks(y_lo, y_hi, 5)), fx, fy, "trials",
          "log-likelihood ratio (up: evidence of a pass rate below the threshold)")
    for value, colour, words in ((path.upper, RED, "FAIL boundary"), (path.lower, GREEN, "PASS boundary")):
        svg.line(left, fy(value), left + w, fy(value), stroke=colour, stroke_width=1.5, stroke_dasharray="6 4")
        svg.text(left + w + 6, fy(value) + 4, f"{words} {_minus(f'{value:.2f}')}", size=11, fill=colour)
    svg.line(left, fy(0), left + w, fy(0), stroke=GREY, stroke_width=1)
    pts = [(fx(0), fy(0))] + [(fx(i + 1), fy(v)) for i, v in enumerate(path.llr)]
    svg.polyline(pts, stroke=BLUE, stroke_width=2, stroke_linejoin="round")
    if n:
        colour = TONE.get(path.verdict, INK)
        ex, ey = pts[-1]
        svg.group(tooltip=f"{path.verdict.upper()} after {n} trials (log-likelihood ratio {path.llr[-1]:.3f})")
        svg.circle(ex, ey, 5.5, fill=colour, stroke="#ffffff", stroke_width=1.5)
        svg.end()
        svg.text(min(ex + 8, left + w - 4), ey - 8, f"{path.verdict.upper()} at trial {n}", size=11,
                 anchor="end" if ex > left + w - 120 else "start", fill=colour)
    return svg.render()


@dataclass(frozen=True)
class CountPath:
    """Cumulative passes after each counted trial, up to the decision, and the baseline's rate."""

    passes: tuple[int, ...]  # after trial 1, 2, …
    verdict: str
    base_rate: float | None


def count_chart(name: str, path: CountPath) -> str:
    """Passes against trials: the walk, the line every trial passing would draw, the baseline's
    rate as a dashed line, and the decision point."""
    left, top, w, h = 56, 26, 560, 200
    n = max(len(path.passes), 1)

    def fx(k: float) -> float:
        return left + k / n * w

    def fy(v: float) -> float:
        return top + (n - v) / n * h

    svg = Svg(left + w + 150, top + h + 44, label=f"Sequential test of {name}: passes by trial")
    _axes(svg, (left, top, w, h), (nice_ticks(0, n, 6), nice_ticks(0, n, 5)), fx, fy, "candidate trials", "passes")
    svg.line(fx(0), fy(0), fx(n), fy(n), stroke=GRID, stroke_width=1.5)
    svg.text(left + w + 6, fy(n) + 4, "every trial passes", size=11, fill=MUTED)
    if path.base_rate is not None:
        r = path.base_rate
        svg.line(fx(0), fy(0), fx(n), fy(n * r), stroke=_BASE, stroke_width=1.5, stroke_dasharray="6 4")
        svg.text(left + w + 6, fy(n * r) + 16, f"baseline rate {r * 100:.0f}%", size=11, fill=_BASE)
    pts = [(fx(0), fy(0))] + [(fx(i + 1), fy(v)) for i, v in enumerate(path.passes)]
    svg.polyline(pts, stroke=BLUE, stroke_width=2, stroke_linejoin="round")
    if path.passes:
        colour = TONE.get(path.verdict, INK)
        ex, ey = pts[-1]
        k = len(path.passes)
        svg.group(tooltip=f"{path.verdict.upper()} after {k} trials ({path.passes[-1]} passed)")
        svg.circle(ex, ey, 5.5, fill=colour, stroke="#ffffff", stroke_width=1.5)
        svg.end()
        svg.text(ex - 8, ey + 18, f"{path.verdict.upper()} at trial {k}", size=11, anchor="end", fill=colour)
    return svg.render()
