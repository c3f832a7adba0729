"""The HTML report: one self-contained page for a results file and its traces.

The page travels as a CI artifact and gets opened from disk, and it quotes text that agents and
pull requests wrote. So it is built to be inert and offline: one file, no script at all, nothing
fetched (a Content-Security-Policy of ``default-src 'none'`` that admits only the page's own
``<style>`` block, by its hash), interaction by ``<details>``/``<summary>``, charts drawn here as
inline SVG. Every untrusted string — scenario names and inputs, outputs, tool arguments, failure
reasons, notes — is redacted (``secrets``), stripped of invisible characters and clipped here, then
escaped by Jinja's autoescape; nothing from the data goes into an attribute, and no link is made
from it: the one ``href`` is the sidecar's, given by the caller and checked.

Figures are the terminal table's and the PR comment's (``_summary``, and ``_markdown``'s
percentages), so the three reports never disagree. Features come in as plugin sections (:class:`Section`)
like everywhere else; this module has no branch for any of them.

When the trace viewer would make the page too big it goes to a second page (the sidecar) and the
report keeps a per-scenario summary with a link to it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from .._results import Results, ScenarioResult, TrialOutcome, more_trials_text
from .._stats import Verdict, proportion_ci
from .._traces import TraceStore
from ._charts import CountPath, RateRow, SprtPath, count_chart, rates_chart, sprt_chart
from ._markdown import _pct, _pp, _redactor
from ._sections import (
    ReportContext,
    ScenarioPart,
    Section,
    collect,
    extra_cost,
    settings_words,
    warning_lines,
)
from ._side import CompareView, compare_view
from ._summary import (
    VERDICT_WORD,
    aborted_gloss,
    counts_text,
    explanation_of,
    headline,
    savings_of,
    scenario_usd,
    trials_text,
)
from ._summary import clip as _clip
from ._summary import invisible_dropped as visible

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

    from .._plugins import Plugins
    from .._spec import Settings
    from .._traces import Step, StoredTrial
    from ._charts import SprtPath

__all__ = ["HtmlReport", "load_traces", "render_html"]

# Characters of untrusted text shown: a name, a line, a paragraph, one step's field, a final output.
_W_NAME, _W_LINE, _W_TEXT, _W_FIELD, _W_OUTPUT = 80, 300, 1000, 2000, 4000
_MAX_LIST = 20  # notes, warnings, section items before "… N more"
_MAX_REASONS = 5  # failure reasons per scenario
_MAX_STEPS = 40  # steps shown per trial
_MAX_CHART_ROWS = 100  # scenarios in the pass-rate chart
_DEPTH = 4  # deepest indentation of a nested step

_ORDER = {Verdict.FAIL: 0, Verdict.INCONCLUSIVE: 1, Verdict.PASS: 2}
_TONE = {"deploy": "deploy", "block": "block", "manual": "manual", "aborted": "block"}
_CSP = "default-src 'none'; style-src '{style}'; base-uri 'none'; form-action 'none'"
# What a plugin's picture may hold: drawing elements only (nothing that runs, links, loads or embeds),
# and no attribute that handles events, links, styles or refers to a URL.
_SVG_TAGS = frozenset(
    {
        "svg",
        "g",
        "title",
        "desc",
        "line",
        "rect",
        "circle",
        "ellipse",
        "polyline",
        "polygon",
        "path",
        "text",
        "tspan",
    }
)
_SVG_BAD_VALUE = re.compile(r"javascript:|url\s*\(|expression\s*\(|data:", re.IGNORECASE)


@dataclass(frozen=True)
class HtmlReport:
    """The page, and the sidecar page with the full trace viewer when the traces are too big to
    inline (None otherwise). Write the sidecar next to the page under the ``sidecar_href`` given."""

    html: str
    sidecar: str | None


# -- untrusted text --------------------------------------------------------------------------------


_ASCII_CONTROLS = re.compile(
    r"[\x00-\x08\x0e-\x1b\x7f]"
)  # ASCII's "other" characters that are not whitespace


def _visible(text: str) -> str:
    """Text without Unicode's "other" characters (controls, bidirectional overrides, zero-width ones,
    private use, unassigned), whitespace kept: ``_summary.invisible_dropped``, with a fast path for ASCII,
    which is most of what agents write (traces run to megabytes)."""

    return _ASCII_CONTROLS.sub("", text) if text.isascii() else visible(text)


@dataclass(frozen=True)
class _Clean:
    """Redact, drop invisible characters (controls, bidirectional overrides, zero-width), clip: in that
    order, so a clip never cuts a secret in half. Escaping is autoescape's job, after this."""

    redact: Callable[[str], str]

    def __call__(self, text: Any, width: int | None = _W_TEXT) -> str:
        """One line (whitespace runs collapsed), at most ``width`` characters."""
        t = self.redact(str(text))
        cut = width is not None and len(t) > 4 * width + 64
        if width is not None and cut:  # the rest would be clipped anyway
            t = t[: 4 * width + 64]
        t = _visible(t)
        if width is None:
            return " ".join(t.split())
        out = _clip(t, width)
        return out + "…" if cut and not out.endswith("…") else out

    def block(self, text: Any, width: int) -> tuple[str, int]:
        """Text with its line breaks, for ``<pre>``: at most ``width`` characters, and how many more
        there were (counted before invisible characters are dropped, when the text is long)."""
        raw = self.redact(str(text))
        head = raw if len(raw) <= 2 * width else raw[: 2 * width]
        t = _visible(head).replace("\r\n", "\n").replace("\r", "\n").rstrip()
        if len(t) <= width and head is raw:
            return t, 0
        return t[:width], max(len(raw) - len(head), 0) + max(len(t) - width, 0)


@dataclass(frozen=True)
class _Escape:
    """``ReportContext.escape`` for HTML: cleaned, then escaped, as ``Markup`` a renderer prints as it is."""

    clean: _Clean

    def __call__(self, text: Any, width: int | None = _W_TEXT) -> Markup:
        from markupsafe import escape

        return escape(self.clean(text, width))


def _usd(x: float) -> str:
    return f"${x:.4f}"


# -- views -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Head:
    word: str
    tone: str
    suite: str
    counts: tuple[tuple[str, str], ...]
    gloss: str
    kicker: str
    meta: str
    line: str = ""  # the numeric headline the PR comment opens with, without the decision word


@dataclass(frozen=True)
class _Rate:
    count: str
    pct: str
    ci: str


@dataclass(frozen=True)
class _Row:
    name: str
    tone: str
    verdict: str
    baseline: _Rate | None
    candidate: _Rate | None
    effect: str
    trials: str
    behaviour: str | Markup
    alert: bool


@dataclass(frozen=True)
class _Figure:
    svg: Markup
    caption: str
    scroll: bool = False


@dataclass(frozen=True)
class _Details:
    name: str
    tone: str
    verdict: str
    test: str
    explanation: str
    facts: tuple[tuple[str, str], ...]
    reasons: tuple[tuple[int, str], ...]
    more_reasons: str | None
    figures: tuple[_Figure, ...]
    open: bool
    compare: CompareView | None = None  # baseline beside candidate (_side.py)


@dataclass(frozen=True)
class _DiagramView:
    title: str | Markup
    source: str
    legend: str | Markup | None


@dataclass(frozen=True)
class _SectionView:
    title: str | Markup | None
    paragraphs: tuple[str | Markup, ...]
    items: tuple[str | Markup, ...]
    svg: Markup | None
    diagram: _DiagramView | None


@dataclass(frozen=True)
class _Block:
    label: str
    text: str
    cut: int
    error: bool = False


@dataclass(frozen=True)
class _StepView:
    depth: int
    action: str
    action_word: str
    head: str
    blocks: tuple[_Block, ...]


@dataclass(frozen=True)
class _TrialView:
    index: int
    status: str  # fail | error | pass | excluded
    word: str
    stats: str
    reason: str | None
    reasons: tuple[str, ...]
    error: _Block | None
    steps: tuple[_StepView, ...]
    more_steps: int
    output: _Block | None
    meta: str


@dataclass(frozen=True)
class _Group:
    name: str
    tone: str
    verdict: str
    summary: str
    note: str | None
    trials: tuple[_TrialView, ...]
    open: bool
    top_reason: str  # the scenario's most common failure, for the summary when the viewer is a sidecar


@dataclass(frozen=True)
class _SummaryRow:
    name: str
    tone: str
    verdict: str
    trials: int
    failing: int
    errors: int
    reason: str


@dataclass(frozen=True)
class _TraceSummary:
    intro: str
    href: str
    rows: tuple[_SummaryRow, ...]


# -- figures shared with the other reports -------------------------------------------------------


def _rate(passes: int, trials: int) -> _Rate | None:
    """``38/40``, ``95%`` and its 95% Wilson interval ``83–99%``, as the PR comment prints them."""

    if trials <= 0:
        return None
    lo, hi = proportion_ci(passes, trials, method="wilson")
    return _Rate(f"{passes}/{trials}", f"{_pct(passes / trials)}%", f"{_pct(float(lo))}–{_pct(float(hi))}%")


def _verdict_word(s: ScenarioResult) -> str:
    v = s.verdict
    word = VERDICT_WORD[v.verdict.value]
    if v.verdict is Verdict.FAIL and v.rate_verdict is not None and v.rate_verdict is not Verdict.FAIL:
        return f"{word} (behaviour)"
    return word


def _threshold(results: Results, s: ScenarioResult) -> float:
    return s.threshold if s.threshold is not None else results.settings.threshold


def _row(results: Results, s: ScenarioResult, clean: _Clean, said: Sequence[ScenarioPart] = ()) -> _Row:
    """One table row: the same cells as the PR comment's, rates split into count, rate and interval."""

    cand = s.passes / s.counted_trials if s.counted_trials else None
    effect = "—"
    if s.baseline is not None:
        if cand is not None and s.baseline.trials:
            effect = _pp(cand - s.baseline.passes / s.baseline.trials)
    elif cand is not None:
        threshold = _threshold(results, s)
        effect = f"{_pp(cand - threshold)} vs {_pct(threshold)}% threshold"
    cells = [_text(p.cell, clean, _W_LINE) for p in said if p.cell is not None]
    words: str | Markup = "—"
    if len(cells) == 1:
        words = cells[0]
    elif cells:
        from markupsafe import Markup, escape

        words = Markup("; ").join(escape(c) for c in cells)
    return _Row(
        clean(s.name, _W_NAME),
        s.verdict.verdict.value,
        _verdict_word(s),
        None if s.baseline is None else _rate(s.baseline.passes, s.baseline.trials),
        _rate(s.passes, s.counted_trials),
        effect,
        trials_text(s),
        words,
        any(p.alert for p in said if p.cell is not None),
    )


def _head(results: Results, clean: _Clean) -> _Head:
    d = results.decision
    order = ("fail", "inconclusive", "pass")
    counts = tuple((f"{d.counts[k]} {k}", k) for k in order if d.counts.get(k))
    against = (
        "its threshold" if results.kind in ("run", "analyze") else "the baseline (pass rate or behaviour)"
    )
    gloss = {
        "deploy": f"Every scenario passed against {against}.",
        "block": f"At least one scenario failed against {against}.",
        "manual": "No scenario failed, but some are inconclusive: more trials or a human call is needed.",
        "aborted": clean(aborted_gloss(results), _W_TEXT),
    }[d.decision.value]
    if results.interrupted and results.aborted is None:
        gloss += " The run was interrupted: the verdicts cover the trials that finished."
    kind = {
        "run": "run against thresholds",
        "check": "check against a baseline",
        "compare": "comparison of two results files",
    }
    agent = results.agent.get("version") or results.agent.get("entry") or "unknown agent"
    meta = f"Agent {clean(agent, _W_LINE)} · run {clean(results.run_id, _W_NAME)}"
    if results.started_at or results.finished_at:
        meta += f" · {clean(results.started_at, _W_NAME)} to {clean(results.finished_at, _W_NAME)}"
    return _Head(
        d.decision.value.upper(),
        _TONE.get(d.decision.value, "manual"),
        clean(results.suite.get("name", "?"), _W_NAME),
        counts,
        gloss,
        f"AgentAssay · {kind.get(results.kind, clean(results.kind, _W_NAME))} · "
        + ("no suite verdict (aborted)" if results.aborted is not None else f"suite verdict {d.verdict.value}"),
        meta,
        headline(results, name=lambda x: clean(x, _W_NAME), usd=_usd),
    )


# -- charts ----------------------------------------------------------------------------------------


def _rates_figure(results: Results, ordered: Sequence[ScenarioResult], clean: _Clean) -> _Figure | None:
    from markupsafe import Markup


    def triple(k: int, n: int) -> tuple[float, float, float] | None:
        if n <= 0:
            return None
        lo, hi = proportion_ci(k, n, method="wilson")
        return k / n, float(lo), float(hi)

    rows = []
    for s in ordered[:_MAX_CHART_ROWS]:
        base = None if s.baseline is None else triple(s.baseline.passes, s.baseline.trials)
        cand = triple(s.passes, s.counted_trials)
        right = " → ".join(f"{_pct(r[0])}%" for r in (base, cand) if r is not None) or "no trials"
        threshold = _threshold(results, s) if s.baseline is None else None
        rows.append(RateRow(clean(s.name, 28), s.verdict.verdict.value, base, cand, threshold, right))
    if not rows:
        return None
    caption = (
        "Pass rate of each scenario with its 95% Wilson interval; grey: baseline, coloured: the candidate "
        "by its verdict (green pass, red fail, amber inconclusive)."
    )
    if any(r.threshold is not None for r in rows):
        caption += " Amber dashes: the threshold a scenario without a baseline is tested against."
    caption += " The axis starts where the lowest interval does."
    if len(ordered) > _MAX_CHART_ROWS:
        caption += f" The first {_MAX_CHART_ROWS} of {len(ordered)} scenarios are drawn (failing first)."
    return _Figure(Markup(rates_chart(rows)), caption)


def _counted(s: ScenarioResult) -> list[bool]:
    """Outcomes the scenario's test was fed, in trial-index order (excluded error trials left out)."""
    return [o for o in s.outcomes if o is not None]


def _num(ev: Mapping[str, Any], key: str) -> float | None:
    try:
        x = float(ev[key])
    except (KeyError, TypeError, ValueError):
        return None
    return x if x == x and abs(x) != float("inf") else None


def _sprt_path(s: ScenarioResult, verdict: str, notes: Sequence[str] = ()) -> tuple[SprtPath, str] | None:
    """The SPRT's log-likelihood ratio after each trial, rebuilt from the outcomes in trial order and
    the design in the evidence, and a caption (with the plugins' ``notes`` on it); None unless it
    reproduces the recorded statistic."""
    import math


    ev = s.verdict.evidence
    threshold, delta = _num(ev, "threshold"), _num(ev, "delta")
    lower, upper = _num(ev, "lower_boundary"), _num(ev, "upper_boundary")
    outcomes = _counted(s)
    n = int(_num(ev, "trials") or 0)
    if threshold is None or delta is None or lower is None or upper is None or not 0 < n <= len(outcomes):
        return None
    p0, p1 = threshold, threshold - delta
    if not 0 < p1 < p0 < 1:
        return None
    step_pass, step_fail = math.log(p1 / p0), math.log((1 - p1) / (1 - p0))
    passes = fails = 0
    llr: list[float] = []
    for o in outcomes[:n]:
        passes, fails = passes + o, fails + (not o)
        llr.append(passes * step_pass + fails * step_fail)  # from the counts, as the test computes it
    recorded = _num(ev, "log_likelihood_ratio")
    if passes != _num(ev, "passes") or (recorded is not None and abs(recorded - llr[-1]) > 1e-6):
        return None
    cap = _num(ev, "max_trials")
    caption = (
        f"The SPRT's log-likelihood ratio after each trial, rebuilt from the outcomes in trial order and the "
        f"design in the results file (H0: pass rate ≥ {p0:.2f} against H1: ≤ {p1:.2f}, α {_num(ev, 'alpha') or 0:g}, "
        f"β {_num(ev, 'beta') or 0:g}{'' if cap is None else f', at most {cap:g} trials'}). The test stops with "
        "FAIL at the upper boundary and with PASS at the lower one."
    )
    caption += "".join(f" {note}" for note in notes)
    return SprtPath(tuple(llr), lower, upper, verdict, None if cap is None else int(cap)), caption


def _sequential_figure(s: ScenarioResult, name: str, notes: Sequence[str] = ()) -> _Figure | None:
    """(b) The sequential test's path: an SPRT's log-likelihood ratio against its boundaries; for a
    sequential regression test, whose calibrated boundaries the file does not hold, the pass count
    with the decision marked, and a caption that says so."""
    from markupsafe import Markup


    v, ev = s.verdict, s.verdict.evidence
    verdict = v.rate_verdict.value if v.rate_verdict is not None else v.verdict.value
    if v.test == "sprt":
        got = _sprt_path(s, verdict, notes)
        if got is not None:
            return _Figure(Markup(sprt_chart(name, got[0])), got[1])
    outcomes = _counted(s)
    if v.test not in ("sprt", "sequential-regression") or not outcomes:
        return None
    n = v.trials_used if 0 < v.trials_used <= len(outcomes) else len(outcomes)
    counts, k = [], 0
    for o in outcomes[:n]:
        k += o
        counts.append(k)
    base = s.baseline.passes / s.baseline.trials if s.baseline is not None and s.baseline.trials else None
    caption = f"Passes after each candidate trial, up to the decision at trial {n} ({verdict.upper()})."
    if v.test == "sequential-regression":
        caption += (
            " The sequential regression test's boundaries are calibrated per design and are not stored in "
            "the results file, so they are not drawn"
        )
        fs, fb = _num(ev, "fail_statistic"), _num(ev, "fail_boundary")
        ps, pb = _num(ev, "pass_statistic"), _num(ev, "pass_boundary")
        if fs is not None and fb is not None and ps is not None and pb is not None:
            caption += (
                f"; at the decision its regression statistic was {fs:.2f} against the FAIL boundary {fb:.2f} "
                f"and its non-inferiority statistic {ps:.2f} against the PASS boundary {pb:.2f}"
            )
        caption += "."
    else:
        caption += (
            " The SPRT's boundaries could not be rebuilt from this file's evidence, so they are not drawn."
        )
    if base is not None:
        caption += " Dashed: passes at the baseline's pass rate."
    return _Figure(Markup(count_chart(name, CountPath(tuple(counts), verdict, base))), caption)


# -- scenario details ---------------------------------------------------------------------------------


def _part_figure(p: ScenarioPart, key: str, clean: _Clean, warnings: list[str]) -> _Figure | None:
    """A plugin's chart of one scenario, if its SVG passes the check a section's picture does."""
    if p.figure is None:
        return None
    svg = _checked_svg(p.figure[0], key, clean, warnings)
    return None if svg is None else _Figure(svg, clean(p.figure[1], _W_TEXT))


def _details(
    s: ScenarioResult,
    clean: _Clean,
    settings: Settings,
    said: Sequence[ScenarioPart] = (),
    warnings: list[str] | None = None,
    compare: CompareView | None = None,
) -> _Details:
    name = clean(s.name, _W_NAME)
    facts: list[tuple[str, str]] = [("Input", clean(s.input, _W_LINE))]
    more = more_trials_text(s, settings)
    if more is not None:
        facts.append(("More trials", clean(more, _W_LINE)))
    facts += [(clean(p.fact[0], _W_NAME), clean(p.fact[1], _W_TEXT)) for p in said if p.fact is not None]
    if s.verdict.pvalue is not None:
        facts.append(("p-value", f"{s.verdict.pvalue:.3g}"))
    facts.append(
        ("Trials", f"{s.verdict.trials_used} used by the test, {len(s.trials)} run, {s.errors} errors")
    )
    cost = scenario_usd(s)
    if cost is not None:
        usd, saved = cost
        vs = (
            ""
            if saved is None
            else f" (a fixed-size test would have cost {_usd(abs(saved))} {'more' if saved >= 0 else 'less'})"
        )
        facts.append(("Cost", f"{_usd(usd)} for {len(s.trials)} trials{vs}"))
    facts += [("Note", clean(n, _W_LINE)) for n in s.verdict.notes[:_MAX_LIST]]
    reasons = list(s.failure_reasons().items())
    more = len(reasons) - _MAX_REASONS
    notes = [str(p.path_note) for p in said if p.path_note]
    drawn = [_part_figure(p, f"the chart of scenario '{name}'", clean, [] if warnings is None else warnings) for p in said]
    figures = [f for f in (_sequential_figure(s, name, notes), *drawn) if f is not None]
    return _Details(
        name,
        s.verdict.verdict.value,
        _verdict_word(s),
        clean(s.verdict.test, _W_NAME),
        clean(explanation_of(s), _W_TEXT),
        tuple(facts),
        tuple((count, clean(reason, _W_LINE)) for reason, count in reasons[:_MAX_REASONS]),
        f"… {more} more failure reason{'s' if more != 1 else ''}" if more > 0 else None,
        tuple(figures),
        s.verdict.verdict is not Verdict.PASS,
        compare,
    )


# -- sections ---------------------------------------------------------------------------------------


def _text(value: Any, clean: _Clean, width: int) -> str | Markup:
    """A section's string: ``Markup`` (escaped by the plugin) as it is, anything else cleaned (and
    then escaped by the template)."""
    from markupsafe import Markup

    return value if isinstance(value, Markup) else clean(value, width)


class _SvgCheck(HTMLParser):
    """Reads a plugin's picture the way the browser will (as HTML: an inline ``<svg>`` is parsed by the
    page's parser) and notes anything outside :data:`_SVG_TAGS` or any attribute that could act."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.svgs = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.svgs += tag == "svg"
        if tag not in _SVG_TAGS:
            self.problems.append(f"<{tag}>")
        for name, value in attrs:
            if (
                name.startswith("on")
                or "href" in name
                or name in ("style", "src")
                or _SVG_BAD_VALUE.search(value or "")
            ):
                self.problems.append(f"attribute {name}")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag not in _SVG_TAGS:
            self.problems.append(f"</{tag}>")

    def handle_pi(self, data: str) -> None:
        self.problems.append("a processing instruction")

    def handle_decl(self, decl: str) -> None:
        self.problems.append("a declaration")

    def unknown_decl(self, data: str) -> None:
        self.problems.append("a CDATA or other declaration")


def _svg(section: Section, clean: _Clean, warnings: list[str]) -> Markup | None:
    return _checked_svg(section.svg, f"the report section '{clean(section.key, _W_NAME)}'", clean, warnings)


def _checked_svg(picture: str | None, whose: str, clean: _Clean, warnings: list[str]) -> Markup | None:
    """A plugin's picture, if it is one ``<svg>`` of drawing elements with nothing that could run,
    link, load or style (the plugin escaped its texts; this checks the markup around them)."""
    from markupsafe import Markup

    svg = (picture or "").strip()
    if not svg:
        return None
    check = _SvgCheck()
    check.feed(svg)
    check.close()
    if not (svg.startswith("<svg") and svg.endswith("</svg>")) or check.svgs != 1 or check.problems:
        what = ", ".join(dict.fromkeys(check.problems)) or "not one <svg> element"
        warnings.append(
            f"the picture of {whose} was left out: it is not "
            f"a plain inline SVG ({clean(what, _W_LINE)})"
        )
        return None
    return Markup(svg)


def _more(items: Sequence[Any], noun: str) -> list[Any]:
    n = len(items) - _MAX_LIST
    return [*items[:_MAX_LIST], *([f"… {n} more {noun if n != 1 else noun.rstrip('s')}"] if n > 0 else [])]


def _section(section: Section, clean: _Clean, warnings: list[str]) -> _SectionView:
    diagram = None
    if section.diagram is not None:
        d = section.diagram
        source, _ = clean.block(d.mermaid, 50_000)
        diagram = _DiagramView(
            _text(d.fold_title, clean, _W_NAME), source, _text(d.legend, clean, _W_TEXT) if d.legend else None
        )
    return _SectionView(
        _text(section.title, clean, _W_NAME) if section.title else None,
        tuple(_text(p, clean, _W_TEXT) for p in section.paragraphs[:_MAX_LIST]),
        tuple(_more([_text(i, clean, _W_LINE) for i in section.items], section.noun)),
        _svg(section, clean, warnings),
        diagram,
    )


def _cost(results: Results, sections: Sequence[Section], clean: _Clean) -> list[str | Markup]:
    """The cost line (with what sections spent besides the trials), the savings, then the sections placed here."""
    total = results.cost()
    tokens = f"{total['trials']} trials, {total['input_tokens'] + total['output_tokens']:,} tokens"
    if total["usd"] is None:
        line = f"Cost: not priced ({tokens})."
    else:
        line = f"Cost: {_usd(total['usd'])}{extra_cost(sections, _usd)} at config.prices or the price table ({tokens})."
    saved = savings_of(results)
    if saved is not None:
        usd = "" if saved.usd is None else f", about {_usd(saved.usd)}"
        line += (
            f" Against a fixed-size test with the same α and β ({saved.fixed_n_trials} trials) this run "
            f"{saved.verb} {saved.trials} trials ({saved.percent:.0f}%{usd})."
        )
    lines: list[str | Markup] = [line]
    for section in sections:
        if section.place == "cost":
            lines += [_text(p, clean, _W_LINE) for p in section.paragraphs[:_MAX_LIST]]
    return lines


# -- traces -----------------------------------------------------------------------------------------


def _status(outcome: TrialOutcome | None, stored: StoredTrial) -> str:
    if outcome is not None:
        if outcome.error:
            return "error"
        return "excluded" if outcome.passed is None else "pass" if outcome.passed else "fail"
    if stored.trace.error or stored.error:
        return "error"
    return "excluded" if stored.passed is None else "pass" if stored.passed else "fail"


_STATUS_ORDER = {"fail": 0, "error": 1, "excluded": 2, "pass": 3}
_ACTION_WORD = {
    "reason": "reason",
    "call_tool": "tool call",
    "handoff": "handoff",
    "respond": "response",
    "error": "error",
}


def _value_text(value: Any) -> str:
    """A tool's arguments or output as readable text: JSON indented, a JSON string decoded first."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip()[:1] in ("{", "[") else value
        except ValueError:
            return value
        if isinstance(value, str):
            return value
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


def _step(step: Step, final_output: Any, clean: _Clean) -> _StepView:
    action = step.action.value
    agent = clean(step.agent, _W_NAME) if step.agent else "?"
    head = agent
    if step.tool:
        head += f" → {clean(step.tool, _W_NAME)}"
    if step.target:
        head += f" → {clean(step.target, _W_NAME)}"
    blocks: list[_Block] = []
    if step.arguments is not None:
        text, cut = clean.block(_value_text(step.arguments), _W_FIELD)
        blocks.append(_Block("arguments", text, cut))
    if step.output is not None:
        if action == "respond" and step.output == final_output:
            head += " (the final output, below)"
        else:
            text, cut = clean.block(_value_text(step.output), _W_FIELD)
            blocks.append(_Block("output" if action != "call_tool" else "tool output", text, cut))
    if step.error:
        text, cut = clean.block(step.error, _W_FIELD)
        blocks.append(_Block("error", text, cut, error=True))
    return _StepView(
        min(max(step.depth, 0), _DEPTH), action, _ACTION_WORD.get(action, action), head, tuple(blocks)
    )


def _trial(stored: StoredTrial, outcome: TrialOutcome | None, clean: _Clean) -> _TrialView:
    trace = stored.trace
    status = _status(outcome, stored)
    if outcome is not None:
        tokens, latency = outcome.input_tokens + outcome.output_tokens, outcome.latency_s
        failures = list(outcome.failures)
        error = outcome.error or trace.error
        attempts = outcome.attempts
    else:
        tokens, latency = trace.cost.total_tokens, trace.cost.latency_s
        failures, error, attempts = [], trace.error or stored.error, 1
    stats = f"{tokens:,} tokens · {latency:.2f} s"
    if trace.cost.usd is not None:
        stats += f" · {_usd(trace.cost.usd)}"
    if outcome is not None and outcome.pooled is not None:
        stats += f" · pooled from run {outcome.pooled}"
    elif outcome is not None and not outcome.counted:
        stats += " · after the decision"
    first = error or (failures[0] if failures else None)
    err_block = None
    if error:
        text, cut = clean.block(error, _W_FIELD)
        err_block = _Block("error", text, cut, error=True)
    output = None
    if trace.output is not None:
        text, cut = clean.block(_value_text(trace.output), _W_OUTPUT)
        output = _Block("final output", text, cut)
    meta = [f"seed {stored.trace.metadata.seed if stored.trace.metadata.seed is not None else '?'}"]
    if trace.metadata.model:
        meta.append(f"model {clean(trace.metadata.model, _W_NAME)}")
    if attempts > 1:
        meta.append(f"{attempts} attempts")
    if outcome is not None and outcome.pooled is not None:
        meta.append(f"recorded by baseline run {outcome.pooled}, pooled into this one (not fed to this run's test)")
    elif outcome is not None and not outcome.counted:
        meta.append("finished after the decision, not counted")
    steps = trace.steps[:_MAX_STEPS]
    return _TrialView(
        stored.trial,
        status,
        status.upper(),
        stats,
        None if first is None else clean(first, 120),
        tuple(clean(f, _W_LINE) for f in failures[:_MAX_LIST]),
        err_block,
        tuple(_step(st, trace.output, clean) for st in steps),
        len(trace.steps) - len(steps),
        output,
        " · ".join(meta),
    )


def _groups(
    ordered: Sequence[ScenarioResult], traces: Mapping[str, Sequence[StoredTrial]], clean: _Clean
) -> list[_Group]:
    groups = []
    for s in ordered:
        stored = list(traces.get(s.name) or ())
        if not stored:
            continue
        by_index = {t.index: t for t in s.trials}
        views = [_trial(st, by_index.get(st.trial), clean) for st in stored]
        views.sort(key=lambda t: (_STATUS_ORDER[t.status], t.index))
        counts = {k: sum(1 for t in views if t.status == k) for k in _STATUS_ORDER}
        summary = f"{len(views)} trials: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        missing = len({t.index for t in s.trials} - {st.trial for st in stored})
        note = f"{missing} trials of this scenario have no stored trace." if missing else None
        reasons = list(s.failure_reasons().items())
        top = f"{reasons[0][1]}×: {clean(reasons[0][0], 160)}" if reasons else "—"
        groups.append(
            _Group(
                clean(s.name, _W_NAME),
                s.verdict.verdict.value,
                _verdict_word(s),
                summary,
                note,
                tuple(views),
                s.verdict.verdict is Verdict.FAIL,
                top,
            )
        )
    return groups


def _trace_summary(groups: Sequence[_Group], href: str, size: int) -> _TraceSummary:
    """What the page says about the traces when the viewer is the sidecar: per scenario, the counts."""
    rows = [
        _SummaryRow(
            g.name,
            g.tone,
            g.verdict,
            len(g.trials),
            sum(1 for t in g.trials if t.status == "fail"),
            sum(1 for t in g.trials if t.status == "error"),
            g.top_reason,
        )
        for g in groups
    ]
    trials = sum(len(g.trials) for g in groups)
    intro = (
        f"The trace viewer for these {trials:,} trials is about {size / 1e6:.1f} MB, too big to put in this page, "
        f"so it is a page of its own next to this one, loaded only when opened: {href}."
    )
    return _TraceSummary(intro, href, tuple(rows))


# ``<version>+<kind>:<detail>``: where a plugin files the trials of a second phase next to the target's.
_DERIVED = re.compile(r"\+[A-Za-z_]+:")


def _derived(agent_version: str, own: str = "") -> bool:
    """Filed as a second phase's trial: ``+<kind>:`` after the run's own version (anywhere, when that is unknown)."""
    if agent_version == own:
        return False
    if own and agent_version.startswith(own):
        return _DERIVED.match(agent_version, len(own)) is not None
    return _DERIVED.search(agent_version) is not None


def load_traces(store_path: str | Path, results: Results) -> dict[str, list[StoredTrial]]:
    """The traces of this results file's run from the SQLite trace store, by scenario, in trial order.

    Only the target agent's: the traces of a second phase of trials (another model, follow-up inputs),
    filed under ``<version>+<kind>:<detail>``, are left out. ``{}`` when there is no store or it has no row of this run. Trials pooled from an earlier
    baseline (``run --pool``) show the earlier run's traces when this store holds them (matched by seed,
    unique in a pooled baseline); otherwise they count among the trials without a stored trace.
    """
    from dataclasses import replace


    path = Path(store_path)
    if not results.run_id or not path.is_file():
        return {}
    pooled: dict[str, dict[tuple[str, int], int]] = {}
    for s in results.scenarios:
        for t in s.trials:
            if t.pooled is not None:
                pooled.setdefault(t.pooled, {})[(s.name, t.seed)] = t.index
    with TraceStore(path) as store:
        rows = store.run(results.run_id)
        earlier = [(store.run(run_id), wanted) for run_id, wanted in pooled.items()]
    version = str(results.agent.get("version") or "")
    rows = [r for r in rows if not _derived(r.agent_version, version)]
    if version and any(r.agent_version == version for r in rows):
        rows = [r for r in rows if r.agent_version == version]
    for found, wanted in earlier:
        for r in found:
            if _derived(r.agent_version):
                continue  # a second phase's trial (which may share its source's seed)
            index = wanted.pop((r.scenario, r.trace.metadata.seed), None)
            if index is not None:
                rows.append(replace(r, trial=index))
    out: dict[str, list[StoredTrial]] = {}
    for r in sorted(rows, key=lambda r: (r.scenario, r.trial, r.id)):
        out.setdefault(r.scenario, []).append(r)
    return out


# -- assembly ---------------------------------------------------------------------------------------


def _compare(
    s: ScenarioResult,
    baseline: Results | None,
    traces: Mapping[str, Sequence[StoredTrial]] | None,
    baseline_traces: Mapping[str, Sequence[StoredTrial]] | None,
    clean: _Clean,
) -> CompareView | None:
    """Baseline beside candidate for ``s``, with the trial views this page draws (_side.py)."""
    return compare_view(
        s,
        baseline=baseline,
        traces=list((traces or {}).get(s.name) or ()),
        baseline_traces=list((baseline_traces or {}).get(s.name) or ()),
        clean=clean,
        trial=lambda stored, outcome: _trial(stored, outcome, clean),
    )


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2  # here, not at the top: the terminal report (every CLI run) must not pay for it

    return jinja2.Environment(
        loader=jinja2.PackageLoader("agentassay._reports", "templates"),
        autoescape=True,  # every value is escaped unless it is Markup (our SVG, a plugin's own escaping)
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@lru_cache(maxsize=1)
def _style() -> tuple[str, str]:
    """The page's one ``<style>`` text and its CSP source (``sha256-…``): the hash of exactly that text."""
    css = (Path(__file__).parent / "templates" / "report.css").read_text(encoding="utf-8").strip()
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    return css, f"sha256-{digest}"


def _check_href(href: str) -> str:
    """The sidecar's href: a relative path (no scheme such as ``javascript:``, no host, no query or
    fragment, no ``..``), percent-encoded so that a file name with spaces still resolves."""
    parts = href.split("/")
    if (
        not href.strip()
        or href.startswith("/")
        or any(c in href for c in ":\\?#")
        or any(not part or part in (".", "..") for part in parts)
        or any(unicodedata.category(c)[0] == "C" for c in href)
    ):
        raise ValueError(f"sidecar_href must be a relative path such as 'traces.html'; got {href!r}")
    return urllib.parse.quote(href, safe="/._-~")


def _run_facts(results: Results, clean: _Clean, sections: Sequence[Section] = ()) -> list[tuple[str, str]]:
    st = results.settings
    settings = (
        f"alpha {st.alpha:g}, beta {st.beta:g}, method {st.method}, correction {st.correction}, "
        f"threshold {st.threshold:g}, delta {st.delta:g}, regression margin {st.margin:g}, at most {st.trial_cap} "
        f"trials per scenario, errors {st.errors}{settings_words(sections)}, seed {st.seed}"
    )
    versions = ", ".join(f"{k} {v}" for k, v in results.versions.items()) or "not recorded"
    return [
        ("Kind", clean(results.kind, _W_NAME)),
        ("Run", clean(f"{results.run_id} ({results.started_at} to {results.finished_at})", _W_LINE)),
        ("Agent", clean(results.agent.get("entry") or "unknown", _W_LINE)),
        ("Version", clean(results.agent.get("version") or "not recorded", _W_LINE)),
        ("Suite file", clean(results.suite.get("path") or "not recorded", _W_LINE)),
        ("Settings", clean(settings, _W_TEXT)),
        ("Versions", clean(versions, _W_TEXT)),
    ]


def render_html(
    results: Results,
    *,
    traces: Mapping[str, Sequence[StoredTrial]] | None = None,
    plugins: Plugins | None = None,
    secrets: Sequence[str] = (),
    sidecar_href: str = "traces.html",
    inline_limit: int = 600_000,
    baseline: Results | None = None,
    baseline_traces: Mapping[str, Sequence[StoredTrial]] | None = None,
) -> HtmlReport:
    """The HTML report of ``results``: one self-contained page, no script, nothing fetched.

    The decision first, then one row per scenario (pass counts, rates and 95% Wilson intervals,
    trials, behaviour), the pass-rate chart, the cost, the plugins' sections (``plugins``: default,
    the installed ones), each scenario's details with its sequential path and the plugins' charts,
    the trace viewer (``traces``: by scenario, e.g. :func:`load_traces`), the run. Every text is
    redacted (agentassay/_boundary.py), ``secrets`` too. When the trace viewer is longer than ``inline_limit`` characters it goes to
    :attr:`HtmlReport.sidecar` and the page links to it at ``sidecar_href`` (a relative path,
    percent-encoded in the link; a scheme, host, query or ``..`` raises ``ValueError``).
    ``baseline`` (its results file) and ``baseline_traces`` (e.g. :func:`load_traces` of it): each compared
    scenario's details show baseline beside candidate (rates, failures, a passing baseline trace beside a failing
    candidate trace, tool calls per run); without them the page says what is missing.
    """
    from markupsafe import Markup


    href = _check_href(sidecar_href)
    clean = _Clean(_redactor(secrets))
    env = _environment()
    parts = env.get_template("_html_parts.html.j2").module
    context = ReportContext("html", tuple(secrets), escape=_Escape(clean), usd=_usd, markup=Markup, clean=clean)
    got = collect(results, context, plugins)
    sections, failed, said = got.sections, got.warnings, got.parts

    warnings: list[Any] = []
    if results.interrupted:
        warnings.append("The run was interrupted: the verdicts cover the trials that finished.")
    warnings += [_text(w, clean, _W_TEXT) for w in warning_lines(sections)]  # change alerts, before the notes
    warnings += [clean(n, _W_TEXT) for n in results.notes]
    warnings += [clean(w, _W_TEXT) for w in failed]
    ordered = sorted(results.scenarios, key=lambda s: _ORDER[s.verdict.verdict])
    views = [_section(s, clean, warnings) for s in sections if s.place == "body"]
    compared = {s.name: _compare(s, baseline, traces, baseline_traces, clean) for s in ordered}
    details = [_details(s, clean, results.settings, said.get(s.name, ()), warnings, compared[s.name]) for s in ordered]

    groups = _groups(ordered, traces, clean) if traces else []
    viewer: Markup | None = parts.viewer(groups) if groups else None
    head = _head(results, clean)
    footer = f"AgentAssay {__version__} · report of results file schema agentassay.results/1 · no script, nothing loaded from the network"
    css, style_hash = _style()
    common = {"csp": _CSP.format(style=style_hash), "css": Markup(css), "head": head, "footer": footer}
    trials_shown = sum(len(g.trials) for g in groups)
    intro = (
        f"{trials_shown:,} trials, failing ones first in each scenario; open one to see its steps and output. "
        f"Long texts are cut at {_W_FIELD:,} characters per field and {_MAX_STEPS} steps per trial."
    )

    sidecar = trace_summary = None
    if viewer is not None and len(viewer) > inline_limit:
        sidecar = env.get_template("traces.html.j2").render(
            common, title=f"Traces · {head.suite} · AgentAssay", viewer=viewer, traces_intro=intro
        )
        trace_summary = _trace_summary(groups, href, len(viewer))
        viewer = None
    if not groups:
        intro = (
            "No traces were given for this report: render it with the run's trace store (`agentassay report "
            "RESULTS --html FILE --store DB`, or agentassay._reports.load_traces) to see each trial's steps "
            "and output."
        )
        if traces:
            intro = "The traces given match no scenario of this results file."

    counts = counts_text(results.decision, ("fail", "inconclusive", "pass")) or "no scenarios"
    legend = (
        "Pass rates with 95% Wilson intervals. Effect: candidate minus "
        f"{'baseline' if any(s.baseline is not None for s in ordered) else 'threshold'} pass rate, in percentage "
        "points. Trials: candidate trials the test needed to decide (and how many ran, where more did); the cost "
        "section compares them with a fixed-size test of the same α and β."
    )
    page = env.get_template("report.html.j2").render(
        common,
        title=f"{head.word} · {head.suite} · {counts} · AgentAssay",
        warnings=_more(warnings, "notes"),
        rows=[_row(results, s, clean, said.get(s.name, ())) for s in ordered],
        with_baseline=any(s.baseline is not None for s in ordered),
        legend=legend,
        rates=_rates_figure(results, ordered, clean),
        cost=_cost(results, sections, clean),
        sections=views,
        details=details,
        viewer=viewer,
        trace_summary=trace_summary,
        traces_intro=intro,
        run=_run_facts(results, clean, sections),
    )
    return HtmlReport(page, sidecar)
