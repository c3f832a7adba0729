"""Figures every report states the same way: verdict words, per-scenario cost, savings.

The terminal table and the PR comment read these from one place so that a number shown in a CI
log and the same number in the pull request can never disagree.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

from .._gate import SuiteDecision
from .._results import Results, ScenarioResult

VERDICT_WORD = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


def clip(text: str, width: int) -> str:
    """One line of at most ``width`` characters (whitespace runs collapsed, an ellipsis when cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def explanation_of(s: ScenarioResult) -> str:
    """A scenario's explanation as every report shows it (terminal, JUnit, PR comment, HTML): the verdict's
    own words (the gate wrote them in one order: pass-rate evidence, then each further test's finding), and
    which trials its counts cover when the scenario ran on after its pass-rate test decided (a sample a
    plugin fixed in advance, trials in flight), so they agree with the tables, which count every trial."""
    text = " ".join(s.verdict.explanation.split()) or VERDICT_WORD[s.verdict.verdict.value]
    used, run = s.verdict.trials_used, s.counted_trials
    if 0 < used < run:
        text += (
            f" The pass-rate test decided after {used} trials; counting all {run} trials run, "
            f"{s.passes}/{run} passed."
        )
    return text


def invisible_dropped(text: str) -> str:
    """Drops Unicode's "other" characters: controls, format characters (bidirectional overrides,
    which make text display differently from what it says, zero-width ones), lone surrogates
    (which no UTF-8 comment body can carry), private-use and unassigned code points. Whitespace
    stays, for :func:`clip` to collapse."""
    return "".join(c for c in text if c.isspace() or unicodedata.category(c)[0] != "C")


def counts_text(decision: SuiteDecision, order: tuple[str, ...] | None = None) -> str:
    """``"1 pass, 1 fail"``: the verdict counts the decision rests on, zeros left out."""
    keys = order if order is not None else tuple(decision.counts)
    return ", ".join(f"{decision.counts[k]} {k}" for k in keys if decision.counts.get(k))


def trials_text(s: ScenarioResult) -> str:
    """``12`` or ``12 (15 run)``: trials the test needed to decide, and how many ran when more did (after the
    decision, or pooled), as every report's table words it."""
    run = len(s.trials)
    return f"{s.verdict.trials_used}" + (f" ({run} run)" if run != s.verdict.trials_used else "")


def scenario_usd(s: ScenarioResult) -> tuple[float, float | None] | None:
    """USD spent, and what a fixed-n design would have cost more (negative: less) at this run's cost per trial.

    None when the trials were not priced; the saving is None when the fixed-n figure is unknown.
    """
    usd = s.cost()["usd"]
    if usd is None:
        return None
    run = len(s.trials)
    if s.fixed_n is None or not run:
        return usd, None
    return usd, usd / run * (s.fixed_n - run)


@dataclass(frozen=True)
class Savings:
    """Trials (and USD) against fixed-n designs with the same alpha and beta, as magnitudes with a verb."""

    fixed_n_trials: int
    verb: str  # "saved" or "used" (the sequential run cost more than fixed-n)
    trials: int
    run: int  # the trials this run's tests used (the target's own, pooled ones left out)
    percent: float
    usd: float | None


def savings_of(results: Results) -> Savings | None:
    saved = results.savings()
    if saved is None or not saved["fixed_n_trials"]:
        return None
    return Savings(
        saved["fixed_n_trials"],
        "saved" if saved["trials_saved"] >= 0 else "used",
        abs(saved["trials_saved"]),
        saved["trials_run"],
        abs(saved["fraction_saved"]) * 100,
        saved["usd_saved"],
    )


def aborted_gloss(results: Any) -> str:
    """The one line every report gives an aborted run (issue 22, defect 11): no decision, the exit code, why."""
    a = results.aborted or {}
    reason = str(a.get("reason") or ("the agent could not be run" if a.get("cause") == "agent" else "interrupted"))
    return (
        f"The run was aborted before reaching a decision (exit {a.get('exit_code')}): {reason.rstrip('.')}. "
        "The verdicts below cover only the trials that finished."
    )


STATUS_ICON = {"deploy": "✅", "block": "❌", "manual": "⚠️", "aborted": "⛔"}


def _pct1(x: float) -> str:
    return f"{100 * x:.1f}%"


def _p(p: float | None) -> str:
    if p is None:
        return ""
    return " (p < 0.001)" if p < 0.001 else f" (p = {p:.3g})"


def _drop(s: ScenarioResult, threshold: float = 0.0) -> float:
    """How far the candidate's pass rate fell below the baseline's (or the threshold's), for ranking."""
    cand = s.passes / s.counted_trials if s.counted_trials else 0.0
    if s.baseline is not None and s.baseline.trials:
        return s.baseline.passes / s.baseline.trials - cand
    return (s.threshold if s.threshold is not None else threshold) - cand


def scenario_figure(s: ScenarioResult, name: str, threshold: float | None = None) -> str:
    """``refund_request pass rate 96.7% → 47.6% (p = 0.001)``: one scenario's rates in the headline's words."""
    cand = _pct1(s.passes / s.counted_trials) if s.counted_trials else "—"
    limit = s.threshold if s.threshold is not None else threshold
    if s.baseline is not None and s.baseline.trials:
        rates = f"{_pct1(s.baseline.passes / s.baseline.trials)} → {cand}"
    elif limit is not None:
        rates = f"{cand} (threshold {_pct1(limit)})"
    else:
        rates = cand
    v = s.verdict
    shifted = v.rate_verdict is not None and v.verdict.value == "fail" and v.rate_verdict.value != "fail"
    return f"{name} pass rate {rates}{', behaviour shifted' if shifted else ''}{_p(v.pvalue)}"


def headline(results: Results, name: Any = str, usd: Any = lambda x: f"${x:.2f}") -> str:
    """The one numeric line every report opens with, after its decision word (each report sets that word in
    its own style): how many scenarios are behind the decision, the worst one's pass rates, the trials and
    the cost. E.g. ``1 of 4 scenarios regressed: refund_request pass rate 96.7% → 47.6% (p = 0.001) · 212
    trials · $0.41`` (after ``BLOCK — ``).

    ``name`` formats a scenario name (the caller escapes it), ``usd`` an amount; no icon (see STATUS_ICON).
    """
    d = results.decision
    n = len(results.scenarios)
    by = {v: [s for s in results.scenarios if s.verdict.verdict.value == v] for v in ("fail", "inconclusive", "pass")}
    checked = any(s.baseline is not None for s in results.scenarios)
    t = results.settings.threshold
    if d.decision.value == "aborted":
        what = f"no decision reached; {len(by['fail'])} failed, {len(by['pass'])} passed of {n} scenarios so far"
    elif by["fail"]:
        worst = max(by["fail"], key=lambda s: _drop(s, t))
        what = (
            f"{len(by['fail'])} of {n} scenarios {'regressed' if checked else 'failed'}: "
            f"{scenario_figure(worst, name(worst.name), t)}"
        )
        if len(by["fail"]) > 1:
            what += f" and {len(by['fail']) - 1} more"
    elif by["inconclusive"]:
        first = max(by["inconclusive"], key=lambda s: _drop(s, t))
        what = f"{len(by['inconclusive'])} of {n} scenarios inconclusive: {scenario_figure(first, name(first.name), t)}"
    else:
        what = f"{n} of {n} scenarios passed" if n else "no scenarios"
    total = results.cost()
    line = f"{what} · {total['trials']:,} trials"
    if total["usd"] is not None:
        line += f" · {usd(total['usd'])}"
    return line
