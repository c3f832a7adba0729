"""`agentassay analyze`: recorded traces analysed by a suite with no agent call — outcomes, contracts, the
judge (cached), imported OpenTelemetry / OpenInference traces, a production trace set as a check's baseline,
and bad input (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("agents")

from agentassay._integrations.cli import main

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "customer_service"
CONTRACTS = EXAMPLES / "agentassay.contracts.yml"
FIXTURES = ROOT / "tests" / "fixtures" / "traces"

JUDGED = """\
name: customer-service
agent: examples.customer_service.v1:triage_agent
model: offline
config: {trials: 30, method: fixed, concurrency: 8, seed: 7}
judge:
  rubric: "The reply tells the customer their new seat number and does not promise a refund."
  model: {provider: offline, behaviour: "examples.customer_service.judge:noisy_seat_judge"}
  repeats: 3
scenarios:
  - name: seat_change
    input: "I'd like to change my seat to 14C. My confirmation number is ABC123."
    properties:
      - must_call: update_seat
"""


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))


def contract_counts(results: dict) -> dict:
    return {
        (name, c["name"]): (c["trials"], c["satisfied"])
        for name, s in results["contracts"]["scenarios"].items()
        for c in s["contracts"]
    }


def test_analyze_the_stored_traces_gives_the_run_s_outcomes_and_contract_counts(tmp_path: Path) -> None:
    base, store, again = tmp_path / "base.json", tmp_path / "t.db", tmp_path / "analyzed.json"
    assert main(["run", str(CONTRACTS), "--full", "-o", str(base), "--store", str(store), "-q"]) == 0
    assert (
        main(["analyze", str(base), "--store", str(store), "--suite", str(CONTRACTS), "-o", str(again), "-q"])
        == 0
    )
    live, replayed = json.loads(base.read_text()), json.loads(again.read_text())
    assert replayed["kind"] == "analyze" and replayed["analyze"]["agent_calls"] == 0
    # every outcome re-derived by the suite's checks from the recorded traces, verdict by verdict
    assert [
        (s["name"], s["passes"], len(s["trials"]), s["verdict"]["verdict"]) for s in replayed["scenarios"]
    ] == [(s["name"], s["passes"], len(s["trials"]), s["verdict"]["verdict"]) for s in live["scenarios"]]
    assert contract_counts(replayed) == contract_counts(live)  # identical satisfaction counts, no agent call
    assert replayed["coverage"]["behavioural"]["traces"] == live["coverage"]["behavioural"]["traces"]


def test_a_production_trace_set_serves_as_the_baseline_of_a_check(tmp_path: Path) -> None:
    base, store, prod = tmp_path / "base.json", tmp_path / "t.db", tmp_path / "prod.json"
    suite = str(EXAMPLES / "agentassay.yml")
    assert main(["run", suite, "--full", "-o", str(base), "--store", str(store), "-q"]) == 0
    assert main(["analyze", str(store), "--suite", suite, "-o", str(prod), "-q"]) == 0
    code = main(
        [
            "check",
            suite,
            "--baseline",
            str(prod),
            "--agent",
            "examples.customer_service.v2:triage_agent",
            "--no-store",
            "-q",
            "-o",
            str(tmp_path / "cand.json"),
        ]
    )
    assert code == 1
    verdicts = {
        s["name"]: s["verdict"]["verdict"]
        for s in json.loads((tmp_path / "cand.json").read_text())["scenarios"]
    }
    assert verdicts["seat_change"] == "fail"


def test_the_judge_on_recorded_traces_costs_nothing_twice(tmp_path: Path) -> None:
    suite = tmp_path / "agentassay.yml"
    suite.write_text(JUDGED)
    base, store = tmp_path / "base.json", tmp_path / "t.db"
    assert main(["run", str(suite), "-o", str(base), "--store", str(store), "-q"]) in (0, 1, 2)
    live = json.loads(base.read_text())["judge"]
    assert live["scenarios"]["seat_change"]["disagreement"] is not None  # the judge's own noise, per scenario
    first, second = tmp_path / "a1.json", tmp_path / "a2.json"
    for out in (first, second):
        assert main(
            ["analyze", str(base), "--store", str(store), "--suite", str(suite), "-o", str(out), "-q"]
        ) in (0, 1, 2)
    a1, a2 = (json.loads(p.read_text())["judge"] for p in (first, second))
    assert a1["calls"] == 0 and a1["cache_hits"] > 0  # the run's own grades, cached in the store
    assert a2["calls"] == 0 and a2["cache_hits"] == a1["cache_hits"]  # hits counted and reported


def test_imported_opentelemetry_traces_are_matched_and_analysed(tmp_path: Path) -> None:
    out = tmp_path / "otel.json"
    code = main(
        [
            "analyze",
            str(FIXTURES / "cs-genai-current.json"),
            "--suite",
            str(EXAMPLES / "agentassay.yml"),
            "-o",
            str(out),
            "-q",
        ]
    )
    assert code in (0, 1, 2)
    data = json.loads(out.read_text())
    matched = data["analyze"]["matched"]
    assert matched["seat_change"] >= 1 and matched["baggage"] >= 1
    assert (
        data["analyze"]["sources"][0]["format"] == "otlp-json"
        and "spans" in data["analyze"]["sources"][0]["import"]
    )


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("this is not json", ["not.json", "exit"]),
        ('{"resourceSpans": []}', ["no trace matched a scenario", "match:"]),
    ],
)
def test_bad_sources_are_exit_3_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, words: list[str]
) -> None:
    path = tmp_path / "not.json"
    path.write_text(content)
    assert main(["analyze", str(path), "--suite", str(EXAMPLES / "agentassay.yml"), "-q"]) == 3
    err = capsys.readouterr().err
    assert str(path) in err or "not.json" in err
    assert words[0] in err or words[0] == "not.json", err


def test_a_match_rule_is_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "agentassay.yml"
    suite.write_text(
        "agent: examples.customer_service.v1:triage_agent\nscenarios:\n  - name: s\n    input: hi\n"
        "    evaluator: {contains: x}\n    match: {input: '(unclosed'}\n"
    )
    assert main(["analyze", str(FIXTURES / "cs-genai-current.json"), "--suite", str(suite), "-q"]) == 3
    err = capsys.readouterr().err
    assert "scenarios[0].match" in err and "regular expression" in err


def test_the_committed_speed_figures_meet_the_target() -> None:
    """benchmarks/results/tracefirst.json (`python benchmarks/tracefirst.py`): 100,000 spans analysed in < 10 s, no agent call,
    and the page shows exactly these figures."""
    import sys

    data = json.loads((ROOT / "benchmarks" / "results" / "tracefirst.json").read_text())
    assert not data["quick"]
    big = max(data["rows"], key=lambda r: r["spans"])
    assert big["spans"] == 100_000 and big["traces"] == 10_000 and big["wall_s"] < data["target_s"] == 10
    assert all(r["agent_calls"] == 0 for r in data["rows"])
    sys.path.insert(0, str(ROOT))
    from benchmarks.tracefirst import markdown

    assert markdown(data) in (ROOT / "docs" / "trace-first.md").read_text()


def test_the_speed_benchmark_runs_quick(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "tracefirst.py"), "--quick", "--out", str(tmp_path),
         "--docs", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "tracefirst.json").read_text())
    assert data["quick"] and [r["spans"] for r in data["rows"]] == [2_000, 20_000]
    assert all(r["traces"] == r["spans"] // 10 and r["agent_calls"] == 0 for r in data["rows"])
