"""The committed figures of benchmarks/mutation.py (benchmarks/results/mutation.json): kills of unchanged mutants stay at
alpha, a 0.15 drop is killed with the power the design promises, the score's interval covers the true
score, early stopping saves trials, and the reference's one-run rule is reported beside it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "benchmarks" / "results" / "mutation.json"


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return json.loads(DOC.read_text())


def test_a_full_run_with_enough_repetitions(data: dict[str, Any]) -> None:
    assert not data["quick"]
    assert data["settings"] == {"alpha": 0.05, "beta": 0.1, "delta": 0.1, "trials": 100}
    assert data["rows"] and all(r["reps"] >= 2_000 for r in data["rows"])
    assert {(r["method"], r["scenarios"]) for r in data["rows"]} == {
        ("sprt", 1),
        ("fixed", 1),
        ("sprt", 4),
        ("fixed", 4),
    }
    assert len(data["coverage"]) == 2 and all(c["reps"] >= 2_000 for c in data["coverage"])
    # the fixed-n evidence figures the benchmark skips change no status and no verdict
    assert data["evidence_check"]["identical"] and data["evidence_check"]["mutants"] >= 20


def test_identity_mutants_are_killed_at_most_alpha(data: dict[str, Any]) -> None:
    alpha = data["settings"]["alpha"]
    identity = [r for r in data["rows"] if r["drop"] == 0]
    assert len(identity) == 8
    for r in identity:
        assert r["killed"] <= alpha + 2 * r["killed_se"], r
        assert abs(sum(r["statuses"].values()) - 1) < 1e-9
        assert r["statuses"]["not_activated"] > 0.8  # nothing changed: almost all are not activated
        if r["exact"] is not None:
            assert r["exact"]["killed"] <= alpha


def test_a_drop_of_0_15_is_killed_with_the_power_the_design_promises(data: dict[str, Any]) -> None:
    # Exactly: every simulated mutant's kill (compare_results + classify) is what the test's own decision table
    # decides on its trials, so the kill probability is the design's FAIL probability.
    tabled = [r for r in data["rows"] if r["table_mismatches"] is not None]
    assert len(tabled) == 16 and all(r["table_mismatches"] == 0 for r in tabled)
    drops = [r for r in data["rows"] if r["drop"] == 0.15 and r["exact"] is not None]
    assert {(r["method"], r["scenarios"]) for r in drops} == {("sprt", 1), ("fixed", 1), ("sprt", 4)}
    for r in drops:
        if r["method"] == "sprt":  # the exact figure is the design's own operating characteristic
            assert abs(r["exact"]["killed"] - r["exact"]["design_fail"]) < 1e-9
            assert r["exact"]["oc_max_difference"] < 1e-9
    # And by sampling: the simulated rates scatter around the exact ones as binomial noise does. Every one of
    # the 16 cells with an exact figure is within 3 s.e. (a bound for the family: at 2 s.e. one cell in twenty
    # falls outside by chance alone; docs/mutation.md reports each cell's z).
    exact = [r for r in data["rows"] if r["exact"] is not None]
    assert len(exact) == 16 and all(abs(r["z"]) <= 3 for r in exact)


def test_the_score_interval_covers_the_true_score(data: dict[str, Any]) -> None:
    for c in data["coverage"]:
        assert c["q"] == 20 and 0 < c["true_score"] <= 1
        assert c["coverage"] >= 0.95 - 2 * c["coverage_se"], c
        assert c["exact"]["coverage"] >= 0.95
        assert abs(c["coverage"] - c["exact"]["coverage"]) <= 3 * c["coverage_se"] + 1e-9
        assert c["conditional_coverage"] >= 0.95 - 2 * c["conditional_coverage_se"]


def test_early_stopping_saves_trials(data: dict[str, Any]) -> None:
    rows = data["rows"]
    for r in rows:
        if r["method"] == "sprt" and r["drop"] == 0.15:
            fixed = next(
                f
                for f in rows
                if f["method"] == "fixed"
                and (f["p0"], f["drop"], f["scenarios"]) == (r["p0"], r["drop"], r["scenarios"])
            )
            assert fixed["mean_trials"] == 100 * r["scenarios"]
            assert r["mean_trials"] + 2 * r["mean_trials_se"] < fixed["mean_trials"], r


def test_the_reference_one_run_rule_is_reported_for_comparison(data: dict[str, Any]) -> None:
    identity = [r for r in data["rows"] if r["drop"] == 0]
    for r in identity:
        ref = r["reference_rule"]
        assert abs(ref["killed"] - ref["exact"]) <= 4 * ref["killed_se"]
        assert ref["killed"] > r["killed"]  # noise alone "kills" more unchanged mutants than the gate does
    one = next(r for r in identity if r["p0"] == 0.8 and r["scenarios"] == 1 and r["method"] == "sprt")
    assert abs(one["reference_rule"]["exact"] - 0.32) < 1e-9  # 2 * 0.8 * 0.2: the reference's ~0.32


def test_the_published_page_shows_these_figures(data: dict[str, Any]) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks.mutation import markdown

    assert markdown(data) in (ROOT / "docs" / "mutation.md").read_text()
