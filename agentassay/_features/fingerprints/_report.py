"""The fingerprint comparison in the reports, read from each scenario's verdict (its ``fingerprint`` entry): the verdict
table's Behaviour cell, the details' Behaviour line (the terminal's too), the HTML chart of the features'
means, the JUnit figure and line, and "fingerprints on/off" in the run's settings line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..._reports import ScenarioPart, Section
from ..._reports._charts import _BASE, label_width
from ..._reports._svg import BLUE, GRID, INK, MUTED, RED, Svg
from ._records import shift_test

if TYPE_CHECKING:
    from ..._reports import ReportContext, ScenarioPart, Section
    from ..._results import Results, ScenarioResult

_MAX_FEATURES = 12  # features in a chart
_W_CELL, _W_LINE = 200, 300  # characters of the moved features in the Markdown and the HTML cell


@dataclass(frozen=True)
class Behaviour:
    """The fingerprint comparison of one scenario (None from :func:`behaviour_of` when it had none)."""

    tested: bool
    shifted: bool
    words: tuple[str, ...]  # the features that moved, in words (shifted only)
    explanation: str  # why it was not tested (untested only)
    n_baseline: Any = None
    n_candidate: Any = None
    adjusted_p: float | None = None
    largest: str | None = None  # the largest move, shifted or not


def behaviour_of(s: ScenarioResult) -> Behaviour | None:
    fp = shift_test(s.verdict)
    if not fp:
        return None
    if fp.get("verdict") is None:
        return Behaviour(False, False, (), str(fp.get("explanation", "fingerprints not tested")))
    return Behaviour(
        True,
        fp["verdict"] == "fail",
        tuple(str(w) for w in fp.get("shift") or ()),
        str(fp.get("explanation", "")),
        fp.get("n_baseline"),
        fp.get("n_candidate"),
        fp.get("adjusted_p"),
        fp.get("largest") or None,
    )


def behaviour_text(s: ScenarioResult) -> str | None:
    """The fingerprint comparison in words, or None when the scenario had none."""
    b = behaviour_of(s)
    if b is None:
        return None
    if not b.tested:
        return b.explanation
    n = f"{b.n_baseline} vs {b.n_candidate} runs"
    if b.shifted:
        return f"SHIFTED ({n}, adjusted p = {b.adjusted_p:.3g}): " + "; ".join(b.words)
    largest = f"; largest move: {b.largest}" if b.largest else ""
    return f"no shift detected ({n}, adjusted p = {b.adjusted_p:.3g}){largest}"


@dataclass(frozen=True)
class FeatureShift:
    name: str
    baseline: float
    candidate: float
    adjusted_p: float | None
    moved: bool  # adjusted p at or below the test's alpha


def fingerprint_chart(name: str, features: Sequence[FeatureShift]) -> str:
    """Per feature, the baseline mean (grey) and the candidate mean (red when the feature moved
    significantly, blue otherwise) on the feature's own scale from 0 (or its lower mean, when
    negative) to its larger mean, since features differ in units."""
    label_w, plot_w, right_w, row_h, top = label_width(f.name for f in features), 300, 250, 26, 24
    svg = Svg(label_w + plot_w + right_w, top + row_h * len(features) + 8,
              label=f"Behavioural fingerprint of {name}: baseline and candidate means per feature")
    svg.circle(label_w + 4, 10, 4, fill=_BASE)
    svg.text(label_w + 12, 14, "baseline mean", size=11, fill=MUTED)
    svg.circle(label_w + 118, 10, 4, fill=RED)
    svg.text(label_w + 126, 14, "candidate, moved", size=11, fill=MUTED)
    svg.circle(label_w + 248, 10, 4, fill=BLUE)
    svg.text(label_w + 256, 14, "candidate, within noise", size=11, fill=MUTED)
    for i, f in enumerate(features):
        y = top + row_h * i + row_h / 2
        if i % 2 == 0:
            svg.rect(0, y - row_h / 2, label_w + plot_w + right_w, row_h, fill="#f6f8fa")
        lo, hi = min(0.0, f.baseline, f.candidate), max(f.baseline, f.candidate)
        span = (hi - lo) or 1.0

        def x(v: float, lo: float = lo, span: float = span) -> float:
            return label_w + 8 + (v - lo) / span * (plot_w - 16)

        svg.text(label_w - 10, y + 4, f.name, size=12, anchor="end")
        svg.line(label_w + 8, y, label_w + plot_w - 8, y, stroke=GRID, stroke_width=1)
        colour = RED if f.moved else BLUE
        svg.line(x(f.baseline), y, x(f.candidate), y, stroke=colour, stroke_width=2)
        svg.circle(x(f.baseline), y, 4.5, fill=_BASE)
        svg.circle(x(f.candidate), y, 4.5, fill=colour, stroke="#ffffff", stroke_width=1)
        p = "" if f.adjusted_p is None else f" · adj. p {f.adjusted_p:.2g}"
        svg.text(label_w + plot_w + 8, y + 4, f"{f.baseline:.3g} → {f.candidate:.3g}{p}", size=12,
                 fill=colour if f.moved else INK)
    return svg.render()


def _num(d: Mapping[str, Any], key: str) -> float | None:
    """A finite number from the file, or None (a damaged file draws less, never raises)."""
    try:
        x = float(d[key])
    except (KeyError, TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def _figure(s: ScenarioResult, report: ReportContext) -> tuple[str, str] | None:
    """The features' baseline and candidate means, adjusted p-values, and the caption."""
    fp = shift_test(s.verdict) or {}
    alpha = _num(fp, "alpha")
    shifts = []
    for f in fp.get("features") or ():
        if not isinstance(f, Mapping):
            continue
        b, c = _num(f, "baseline"), _num(f, "candidate")
        if b is None or c is None:
            continue
        p = _num(f, "adjusted_p")
        moved = p is not None and alpha is not None and p <= alpha
        shifts.append(FeatureShift(report.clean(f.get("name", "?"), 28), b, c, p, moved))
    if not shifts:
        return None
    shown = shifts[:_MAX_FEATURES]
    caption = "Behavioural fingerprint: each feature's mean per run in the baseline and the candidate, on the feature's own scale"
    caption += (
        "" if alpha is None else f"; red where its adjusted p-value is at most the test's α ({alpha:g})"
    )
    caption += "."
    if len(shifts) > len(shown):
        caption += f" The first {len(shown)} of {len(shifts)} features are drawn."
    return fingerprint_chart(report.clean(s.name, 80), shown), caption


def _cell(b: Behaviour, report: ReportContext) -> str:
    if not b.tested:
        return "not tested"
    if not b.shifted:
        return "no shift"
    width = _W_CELL if report.format == "markdown" else _W_LINE
    return report.markup("shifted: " + report.escape("; ".join(b.words) or "see details", width))


def scenario_part(s: ScenarioResult, report: ReportContext) -> ScenarioPart | None:
    """What the reports show of one scenario's fingerprint comparison, in ``report.format``."""

    b = behaviour_of(s)
    if b is None:
        return None
    words = behaviour_text(s)
    if report.format == "terminal":
        return ScenarioPart(s.name, fact=("behaviour", words or ""))
    if report.format == "junit":
        verdict = str(shift_test(s.verdict).get("verdict") or "not tested")  # type: ignore[union-attr]
        return ScenarioPart(s.name, properties=(("fingerprint", verdict),), lines=(("fingerprints", words or ""),))
    figure = _figure(s, report) if report.format == "html" else None
    return ScenarioPart(
        s.name, cell=_cell(b, report), alert=b.tested and b.shifted, fact=("Behaviour", words or ""), figure=figure
    )


def report_parts(results: Results, report: ReportContext) -> list[Section | ScenarioPart]:
    """The run's "fingerprints on/off" setting, then each scenario's part."""

    out: list[Section | ScenarioPart] = []
    if report.format in ("markdown", "html"):
        on = "on" if results.settings.part("fingerprints").enabled else "off"
        out.append(Section(key="fingerprints", place="settings", paragraphs=(f"fingerprints {on}",)))
    out += [p for p in (scenario_part(s, report) for s in results.scenarios) if p is not None]
    return out
