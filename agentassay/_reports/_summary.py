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
