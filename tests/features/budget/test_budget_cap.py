"""config.budget_usd: no trial starts once the finished ones cost the budget; the results say so."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("agents")

from agentassay._features.budget._settings import BudgetSettings
from agentassay._runner import run_suite
from agentassay._spec import load_suite, parse_suite

ROOT = Path(__file__).resolve().parents[3]


def test_budget_stops_new_trials_and_keeps_what_was_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    suite = load_suite(ROOT / "examples" / "customer_service" / "agentassay.yml")
    unlimited = run_suite(suite, progress=False, handle_signals=False).results
    per_trial = unlimited.cost()["usd"] / unlimited.cost()["trials"]
    budget = 20 * per_trial
    capped_suite = replace(suite, settings=replace(suite.settings, concurrency=4).with_parts(BudgetSettings(budget)))
    capped = run_suite(capped_suite, progress=False, handle_signals=False).results
    spent, trials = capped.cost()["usd"], capped.cost()["trials"]
    assert trials < unlimited.cost()["trials"]
    # Trials in flight when the budget was reached still finish: at most `concurrency` past it.
    assert budget <= spent <= budget + 4 * 3 * per_trial
    assert any("stopped at the budget" in n for n in capped.notes)
    assert all(s.trials for s in capped.scenarios)  # what was measured is kept


def test_a_budget_needs_no_prices() -> None:
    """Issue 25: the price table prices known models, so a budget loads without config.prices."""
    text = "agent: a.b:c\nconfig:\n  budget_usd: 5\nscenarios:\n  - input: hi\n    evaluator: {contains: x}\n"
    assert parse_suite(text).settings.of(BudgetSettings).usd == 5
