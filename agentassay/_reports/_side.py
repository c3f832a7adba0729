"""The HTML report's baseline beside candidate, per scenario: what a reviewer compares before trusting a verdict.

The tool calls per run on each side (biggest change first), then pass rates, the most common failure
reasons on each side, and a passing baseline trace beside a failing candidate trace. The candidate's results file only keeps the
baseline's pass count; the rest needs the baseline's own results file and the trace store that holds its
run (``agentassay report --baseline``; ``check --html`` and the Action pass them). Whatever is missing is
said in the page, never guessed.

Views hold cleaned text only (redacted, invisible characters dropped, clipped); the template escapes it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._stats import proportion_ci

if TYPE_CHECKING:
    from .._results import Results, ScenarioResult
    from .._traces import StoredTrial

_MAX_REASONS = 3  # failure reasons per side
_MAX_TOOLS = 20  # tools in the tool-use table, biggest change first
_W_LINE, _W_NAME = 300, 80


@dataclass(frozen=True)
class SideView:
    """One side: its pass rate, its most common failures, one trace (or why there is none)."""

    key: str  # "baseline" | "candidate" (a CSS class from this fixed set)
    label: str
    rate: str
    reasons: tuple[tuple[int, str], ...]
    no_reasons: str
    trace_label: str
    trace: Any  # the HTML renderer's trial view, or None
    trace_note: str | None


@dataclass(frozen=True)
class ToolRow:
    tool: str
    baseline: str
    candidate: str
    change: str
    changed: bool  # the calls per run differ by at least half a call


@dataclass(frozen=True)
class CompareView:
    sides: tuple[SideView, SideView]
    tools: tuple[ToolRow, ...]
    tools_note: str | None
    note: str | None  # what is missing for a full comparison, and how to get it


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _rate(passes: int, trials: int) -> str:
    """``29/30 passed (96.7%, 95% CI 83–99%)``."""
    if trials <= 0:
        return "no counted trials"
    lo, hi = proportion_ci(passes, trials, method="wilson")
    return f"{passes}/{trials} passed ({_pct(passes / trials)}, 95% CI {100 * lo:.0f}–{100 * hi:.0f}%)"


def _status(t: StoredTrial, outcome: Any = None) -> str:
    """pass / fail / error / excluded: the results file's outcome when there is one, else the stored row's."""
    if outcome is not None:
        return "error" if outcome.error else "excluded" if outcome.passed is None else "pass" if outcome.passed else "fail"
    if t.trace.error or t.error:
        return "error"
    return "excluded" if t.passed is None else "pass" if t.passed else "fail"


def tool_calls(stored: Sequence[StoredTrial]) -> dict[str, float]:
    """Calls per run of each tool (every step that called one, nested steps included), over the traces given."""
    if not stored:
        return {}
    counts: Counter[str] = Counter()
    for t in stored:
        counts.update(t.trace.tools_called)
    return {tool: n / len(stored) for tool, n in counts.items()}


def _tools(
    base: Sequence[StoredTrial], cand: Sequence[StoredTrial], clean: Callable[..., str]
) -> tuple[tuple[ToolRow, ...], str | None]:
    if not base or not cand:
        return (), None
    b, c = tool_calls(base), tool_calls(cand)
    names = sorted(set(b) | set(c), key=lambda k: (-abs(c.get(k, 0.0) - b.get(k, 0.0)), k))
    if not names:
        return (), "Neither side called a tool."
    rows = tuple(
        ToolRow(
            clean(k, _W_NAME),
            f"{b.get(k, 0.0):.2f}",
            f"{c.get(k, 0.0):.2f}",
            f"{c.get(k, 0.0) - b.get(k, 0.0):+.2f}".replace("-", "−"),
            abs(c.get(k, 0.0) - b.get(k, 0.0)) >= 0.5,
        )
        for k in names[:_MAX_TOOLS]
    )
    more = len(names) - _MAX_TOOLS
    note = f"Calls per run over {len(base)} baseline and {len(cand)} candidate traces, biggest change first."
    return rows, note + (f" {more} more tools not shown." if more > 0 else "")


def _pick(stored: Sequence[StoredTrial], wanted: tuple[str, ...], outcomes: Mapping[int, Any]) -> StoredTrial | None:
    """The first trial (by index) whose status is the first of ``wanted`` that any trial has."""
    for status in wanted:
        found = [t for t in stored if _status(t, outcomes.get(t.trial)) == status]
        if found:
            return min(found, key=lambda t: t.trial)
    return None


def _reasons(s: ScenarioResult, clean: Callable[..., str]) -> tuple[tuple[int, str], ...]:
    return tuple((n, clean(r, _W_LINE)) for r, n in list(s.failure_reasons().items())[:_MAX_REASONS])


def _missing(base: ScenarioResult | None, have_base_results: bool, base_traces: Sequence[StoredTrial]) -> str | None:
    if not have_base_results:
        return (
            "This results file keeps only the baseline's pass count. To see the baseline's failures, a passing "
            "baseline trace and its tool use here, render the report with the baseline's results file and the trace "
            "store holding its run: agentassay report RESULTS --html FILE --baseline BASELINE.json --store DB."
        )
    if base is None:
        return "The baseline's results file has no scenario of this name (it is new in this suite)."
    if not base_traces:
        return (
            "The baseline's traces are not available (no trace store holding its run was given, or the store does "
            "not hold it): pass rates and failure reasons only."
        )
    return None


def compare_view(
    s: ScenarioResult,
    *,
    baseline: Results | None,
    traces: Sequence[StoredTrial],
    baseline_traces: Sequence[StoredTrial],
    clean: Callable[..., str],
    trial: Callable[[StoredTrial, Any], Any],
) -> CompareView | None:
    """Baseline beside candidate for scenario ``s`` (None when it was not compared with a baseline).

    ``traces`` / ``baseline_traces``: each side's stored trials of this scenario; ``trial(stored, outcome)``
    makes the renderer's trial view; ``clean`` makes untrusted text safe to escape.
    """
    base = baseline.scenario(s.name) if baseline is not None else None
    if s.baseline is None and base is None:
        return None
    if base is not None:
        base_rate = _rate(base.passes, base.counted_trials)
    elif s.baseline is not None:
        base_rate = _rate(s.baseline.passes, s.baseline.trials)
    else:
        base_rate = "not recorded"
    base_traces = baseline_traces if base is not None else ()
    by_index_b = {t.index: t for t in base.trials} if base is not None else {}
    by_index_c = {t.index: t for t in s.trials}
    b_pick = _pick(base_traces, ("pass",), by_index_b)
    c_pick = _pick(traces, ("fail", "error", "pass"), by_index_c)
    c_failing = c_pick is not None and _status(c_pick, by_index_c.get(c_pick.trial)) != "pass"
    baseline_side = SideView(
        "baseline",
        "Baseline",
        base_rate,
        _reasons(base, clean) if base is not None else (),
        "No failures recorded." if base is not None else "Not in this results file.",
        "A passing baseline trial",
        None if b_pick is None else trial(b_pick, by_index_b.get(b_pick.trial)),
        None if b_pick is not None else ("No passing baseline trial is stored." if base_traces else "No baseline traces."),
    )
    candidate_side = SideView(
        "candidate",
        "Candidate",
        _rate(s.passes, s.counted_trials),
        _reasons(s, clean),
        "No failures.",
        "A failing candidate trial" if c_failing or c_pick is None else "A candidate trial (none failed)",
        None if c_pick is None else trial(c_pick, by_index_c.get(c_pick.trial)),
        None if c_pick is not None else "No candidate traces were given.",
    )
    tools, tools_note = _tools(base_traces, traces, clean)
    return CompareView(
        (baseline_side, candidate_side), tools, tools_note, _missing(base, baseline is not None, base_traces)
    )
