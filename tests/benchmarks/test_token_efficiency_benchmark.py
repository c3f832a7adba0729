"""The token-efficiency benchmark runs end to end and writes a well-formed report (tiny mode).

No assertion here is on a noisy figure: the full run's acceptance checks live in
docs/token-efficiency.md, produced by ``python benchmarks/token_efficiency.py``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agentassay._features.fingerprints import extract  # noqa: E402
from agentassay._traces._model import Action  # noqa: E402
from benchmarks import token_efficiency as te  # noqa: E402

CASES = ("unchanged", "extra-tool-call")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("token-efficiency")
    argv = ["--reps", "30", "--fp-reps", "20", "--permutations", "99", "--cases", ",".join(CASES)]
    result = te.main([*argv, "--out", str(out), "--docs", str(out)])
    return result, out


def test_report_files_and_structure(run: tuple[dict, Path]) -> None:
    result, out = run
    data = json.loads((out / "token-efficiency.json").read_text())
    assert data["settings"]["reps"] == 30 and data["settings"]["fp_reps"] == 20
    assert [c["name"] for c in data["cases"]] == list(CASES)
    assert {(r["case"], r["approach"]) for r in data["rows"]} == {
        (c, a) for c in CASES for a in te.APPROACHES
    }
    assert {c["case"] for c in data["per_case"]} == set(CASES)
    for c in data["per_case"]:
        assert set(c["exact"]) == set(te.PASS_RATE_ONLY)
        assert {"mean_planned_power", "measured_power", "mean_trials", "mean_d_eff"} <= set(c["budget"])
        assert set(c["fingerprint_alone"]) == {"accept30", "n50", "planned"}
    labels = [c["check"] for c in data["checks"]]
    assert any(lbl.startswith("(a)") for lbl in labels)
    assert any(lbl.startswith("(b)") for lbl in labels)
    assert any(lbl.startswith("(c)") for lbl in labels)
    md = (out / "token-efficiency.md").read_text()
    for heading in (
        "## Summary",
        "## Acceptance checks",
        "## Exact vs simulated",
        "## Budget plan",
        "## Deviations",
    ):
        assert heading in md
    assert result["rows"] == data["rows"]


def test_rows_are_sane(run: tuple[dict, Path]) -> None:
    result, _ = run
    for r in result["rows"]:
        total = r["p_pass"] + r["p_fail"] + r["p_inconclusive"]
        assert math.isclose(total, 1.0, abs_tol=1e-9), r
        assert 1 <= r["min_trials"] <= r["mean_trials"] <= r["max_trials"] <= te.CAP
        assert 1 <= r["p95_trials"] <= te.CAP
        assert r["reps"] == (30 if r["approach"] in te.PASS_RATE_ONLY else 20)
        assert r["mean_cost_usd"] > 0
        if r["approach"] == "fixed-n (100)":
            assert r["mean_trials"] == r["min_trials"] == r["max_trials"] == te.CAP
        if r["approach"] not in te.PASS_RATE_ONLY:  # the fingerprint sample is always run in full
            assert r["min_trials"] >= 10
    for c in result["per_case"]:
        for e in c["exact"].values():
            assert math.isclose(e["p_pass"] + e["p_fail"] + e["p_inconclusive"], 1.0, abs_tol=1e-9)
            assert 1 <= e["mean_trials"] <= te.CAP
        b = c["budget"]
        assert 10 <= b["min_trials"] <= b["max_trials"] <= te.CAP
        assert 0 <= b["mean_planned_power"] <= 1 and 0 <= b["measured_power"] <= 1


def test_simulated_failures_look_different() -> None:
    rng = np.random.default_rng(0)
    agent = te.Agent(0.9)
    ok = [agent.trace(rng, True) for _ in range(200)]
    bad = [agent.trace(rng, False) for _ in range(200)]
    assert all(s.action is not Action.ERROR for t in ok for s in t.steps)
    assert all(t.output in (te.APOLOGY, te.REFUSAL) for t in bad)
    fb, fc = extract(ok, tools=te.TOOLS), extract(bad, tools=te.TOOLS)
    assert fc.column("frac:error").mean() > fb.column("frac:error").mean()
    passed, trace = agent(rng)
    assert isinstance(passed, bool) and trace.cost.usd and trace.cost.usd > 0
