"""`agentassay plan` (issue 25): the estimate before a check, then the check it estimated.

Acceptance, read sensibly: `plan` is printed before `check`, and for every scenario the candidate trials the
check's test then used (``verdict.trials_used``) are at most plan's 95th percentile; so is their total. The
check records the same estimate (``plan`` section) and the PR comment sets it beside what was used.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentassay._integrations.cli import main
from agentassay._reports import render_pr_comment
from agentassay._results import load_results

pytest.importorskip("agents")

ROOT = Path(__file__).resolve().parents[3]
CS = ROOT / "examples" / "customer_service" / "agentassay.yml"
V2 = "examples.customer_service.v2:triage_agent"


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plan") / "baseline.json"
    assert main(["run", str(CS), "--full", "-q", "--no-store", "-o", str(out)]) == 0
    return out


def test_plan_then_check_uses_at_most_the_95th_percentile(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", str(CS), "--baseline", str(baseline)]) == 0
    text = capsys.readouterr().out
    assert "plan for suite 'customer-service'" in text and "95th pct" in text and "seat_change" in text
    assert "prices: config.prices" in text  # the example prices its simulator with "*"

    assert main(["plan", str(CS), "--baseline", str(baseline), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["method"] == "exact" and plan["basis"] == "baseline"

    out = tmp_path / "v2.json"
    assert main(["check", str(CS), "--baseline", str(baseline), "--agent", V2, "-q", "--no-store", "-o", str(out)]) == 1
    results = load_results(out)
    used = {s.name: s.verdict.trials_used for s in results.scenarios}
    for name, est in plan["scenarios"].items():
        assert 1 <= used[name] <= est["p95_trials"], (name, used[name], est)
    assert sum(used.values()) <= plan["total"]["p95_trials"]

    recorded = results.sections["plan"]  # the check recorded the estimate plan printed (per scenario)
    assert recorded["scenarios"] == plan["scenarios"] and recorded["method"] == "exact"
    comment = render_pr_comment(results)
    assert "**Estimate vs actual:**" in comment and f"used {sum(used.values())}" in comment


def test_check_says_its_estimate_before_its_first_trial(
    baseline: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The person watching a check (or an Action's log) reads what it will spend before it spends it: the
    line comes before every progress line, and its figures are the ones the results' plan section records."""
    out = tmp_path / "v1.json"
    assert main(["check", str(CS), "--baseline", str(baseline), "--no-store", "-o", str(out)]) in (0, 2)
    lines = capsys.readouterr().err.splitlines()
    said = [i for i, line in enumerate(lines) if line.startswith("[agentassay] estimate (agentassay plan): ")]
    progress = [i for i, line in enumerate(lines) if line.startswith("[agentassay ") and "s] " in line]
    assert len(said) == 1 and progress and said[0] < progress[0], lines[:5]
    recorded = load_results(out).sections["plan"]["scenarios"]
    expected = sum(s["expected_trials"] for s in recorded.values())
    p95 = sum(s["p95_trials"] for s in recorded.values())
    usd = sum(s["usd_expected"] for s in recorded.values())
    assert f"{expected:,.0f} candidate trials expected, {p95:,} at the 95th percentile" in lines[said[0]]
    assert f"${usd:.4f} expected" in lines[said[0]] and "(config.prices" in lines[said[0]]
    # -q: nothing on stderr, the estimate still recorded.
    assert main(["check", str(CS), "--baseline", str(baseline), "--no-store", "-q", "-o", str(out)]) in (0, 2)
    assert "estimate" not in capsys.readouterr().err and load_results(out).sections["plan"]["scenarios"]


def test_plan_without_a_baseline_is_rougher_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(CS)]) == 0
    text = capsys.readouterr().out
    assert "a baseline not recorded yet" in text and "rougher" in text and "--full" in text
    assert "$" not in text.split("total", 1)[1].splitlines()[0]  # no USD without measured tokens


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["plan", "missing.yml"], "missing.yml"),
        (["plan", str(CS), "--baseline", "nope.json"], "nope.json"),
        (["plan", str(CS), "--trials", "0"], "--trials"),
    ],
)
def test_plan_bad_input_exits_3_with_one_clear_line(
    args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 3
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
