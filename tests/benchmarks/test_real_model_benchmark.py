"""The committed figures of benchmarks/real_model.py (benchmarks/results/real-model.json): a full run on the pinned model,
A/A false alarms within alpha + 2 s.e., the prompt regression detected, prompt mutants activated, and
docs/real-model.md showing exactly what the JSON holds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "benchmarks" / "results" / "real-model.json"


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    return json.loads(DOC.read_text(encoding="utf-8"))


def test_a_full_run_on_the_pinned_model(data: dict[str, Any]) -> None:
    from tests._support import real_model

    assert not data["quick"]
    assert data["model_sha256"] == real_model.MODEL_SHA256 and data["model"] == real_model.MODEL_FILE
    assert data["server"] == f"xllamacpp {real_model.SERVER_DIST[1]}"
    assert len(data["load_average_start"]) == 3 and len(data["load_average_end"]) == 3
    assert data["aa"]["reps"] >= 20 and len(data["aa"]["runs"]) == data["aa"]["reps"]


def test_aa_false_alarms_stay_within_alpha_plus_two_standard_errors(data: dict[str, Any]) -> None:
    aa = data["aa"]
    fails = sum(1 for r in aa["runs"] if r["check"]["verdict"] == "fail")
    assert fails == aa["fails"] and aa["fail_rate"] == fails / aa["reps"]
    assert aa["fail_rate"] <= data["alpha"] + 2 * aa["se"]
    # real tokens on every run and check, and a scenario whose pass rate is well inside (0, 1)
    assert all(r[k]["input_tokens"] > 0 and r[k]["output_tokens"] > 0 for r in aa["runs"] for k in ("baseline", "check"))
    assert 0.05 < aa["baseline_pass_rate"]["spider"] < 0.95


def test_the_prompt_regression_is_detected(data: dict[str, Any]) -> None:
    g = data["regression"]
    assert g["checks"] and g["detected"] == len(g["checks"])
    # A real model: without the rule it still ends with DONE now and then, so the test is the verdict, not zero.
    assert all(c["verdict"] == "fail" and c["scenarios"]["capital"]["rate_verdict"] == "fail" for c in g["checks"])


def test_prompt_mutants_ran_on_the_real_model(data: dict[str, Any]) -> None:
    mutants = {m["id"]: m for m in data["mutation"]["mutants"]}
    assert len(mutants) == 4 and all(m["trials"] > 0 for m in mutants.values())
    assert mutants["prompt.dropout(assistant)"]["status"] == "killed"


def test_the_doc_shows_the_json() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import real_model as bench
    finally:
        sys.path.remove(str(ROOT))
    result = json.loads(DOC.read_text(encoding="utf-8"))
    md = (ROOT / "docs" / "real-model.md").read_text(encoding="utf-8")
    assert bench.splice(bench.markdown(result), md) == md
