"""`agentassay run / check / compare`: exit codes and messages for good and bad input (table-driven)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agentassay._integrations.cli import main

ROOT = Path(__file__).resolve().parents[3]

GOOD = """\
name: cli-suite
agent: tests._support.fixture_agents:{agent}
config:
  trials: {trials}
  threshold: 0.8
  concurrency: 4
  timeout: {timeout}
  seed: 1
scenarios:
  - name: greet
    input: "hello"
    evaluator:
      - contains: ok
  - name: refund
    input: "I want a refund"
    evaluator:
      - contains: ok
"""


def write_suite(tmp_path: Path, text: str | None = None, *, agent: str = "always_ok", trials: int = 20, timeout: float = 5) -> Path:
    path = tmp_path / "agentassay.yml"
    path.write_text(text if text is not None else GOOD.format(agent=agent, trials=trials, timeout=timeout))
    return path


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


BAD_SUITES = [
    # (case, suite text, exit code, message fragments)
    ("unknown key", GOOD.replace("  trials:", "  trails:"), 3, ["config.trails", "unknown key", "'trials'", ":4:"]),
    ("wrong type", GOOD.replace("trials: {trials}", "trials: fifty"), 3, ["config.trials", "integer", "'fifty'"]),
    ("negative trials", GOOD.replace("trials: {trials}", "trials: -5"), 3, ["config.trials", ">= 1", "-5"]),
    ("alpha 1.5", GOOD.replace("  seed: 1", "  seed: 1\n  alpha: 1.5"), 3, ["config.alpha", "between 0 and 1", "1.5"]),
    ("missing agent", GOOD.replace("agent: tests._support.fixture_agents:{agent}\n", ""), 3, ["agent", "module:"]),
]


@pytest.mark.parametrize(("case", "text", "code", "fragments"), BAD_SUITES, ids=[c[0] for c in BAD_SUITES])
def test_bad_suite(case: str, text: str, code: int, fragments: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path, text.format(agent="always_ok", trials=20, timeout=5))
    got, _out, err = run_cli(["run", str(suite), "--no-store", "-q"], capsys)
    assert got == code, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert str(suite) in err


BAD_AGENTS = [
    # (case, agent attribute or entry, timeout, exit code, message fragments)
    ("unimportable entry point", "no_such_module_xyz:agent", 5, 4, ["cannot import agent module 'no_such_module_xyz'"]),
    ("missing attribute", "tests._support.fixture_agents:always_okk", 5, 4, ["has no attribute", "Did you mean 'always_ok'"]),
    ("agent raising", "tests._support.fixture_agents:raises", 5, 4, ["could not be run", "ValueError: the agent is broken"]),
    ("agent hanging past its timeout", "tests._support.fixture_agents:hangs", 0.2, 4, ["could not be run", "timed out after 0.2 s"]),
    ("agent returning the wrong type", "tests._support.fixture_agents:returns_none", 5, 4, ["returned NoneType", "expected a str"]),
    ("agent raising on one scenario", "tests._support.fixture_agents:raises_on_refund", 5, 1, ["refund", "FAIL", "refund service down"]),
]


@pytest.mark.parametrize(("case", "entry", "timeout", "code", "fragments"), BAD_AGENTS, ids=[c[0] for c in BAD_AGENTS])
def test_bad_agent(case: str, entry: str, timeout: float, code: int, fragments: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path, timeout=timeout)
    out_file = tmp_path / "r.json"
    got, out, err = run_cli(["run", str(suite), "--agent", entry, "--no-store", "-o", str(out_file)], capsys)
    assert got == code, (out, err)
    text = out + err
    for fragment in fragments:
        assert fragment in text, (fragment, text)
    if code == 1:  # a run that happened keeps its results
        assert json.loads(out_file.read_text())["decision"]["decision"] == "block"


def test_malformed_and_missing_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path)
    broken = tmp_path / "base.json"
    broken.write_text('{"schema": "agentassay.results/1", "scenarios": [')
    code, _, err = run_cli(["check", str(suite), "--baseline", str(broken), "--no-store", "-q"], capsys)
    assert code == 3 and "not valid JSON" in err and str(broken) in err
    broken.write_text('{"schema": "agentassay.results/1", "suite": {}, "scenarios": []}')
    code, _, err = run_cli(["check", str(suite), "--baseline", str(broken), "--no-store", "-q"], capsys)
    assert code == 3 and "decision: missing" in err  # the JSON path (issue 22, defect 9)
    broken.write_text('{"hello": 1}')
    code, _, err = run_cli(["compare", str(broken), str(broken)], capsys)
    assert code == 3 and "'schema'" in err
    code, _, err = run_cli(["check", str(suite), "--baseline", str(tmp_path / "nope.json"), "--no-store"], capsys)
    assert code == 3 and "no such results file" in err


def test_run_check_compare_flow(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path, agent="coin", trials=60)
    base, cand, store = tmp_path / "base.json", tmp_path / "cand.json", tmp_path / "t.db"
    code, out, _ = run_cli(["run", str(suite), "--full", "-o", str(base), "--store", str(store)], capsys)
    assert code == 0 and "decision: DEPLOY" in out
    code, out, _ = run_cli(
        ["check", str(suite), "--baseline", str(base), "--agent", "tests._support.fixture_agents:coin_low", "-o", str(cand), "--store", str(store)],
        capsys,
    )
    assert code == 1 and "decision: BLOCK" in out
    code, out, _ = run_cli(["compare", str(base), str(cand), "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["kind"] == "compare"
    assert [s["verdict"]["verdict"] for s in data["scenarios"]] == [
        s["verdict"]["verdict"] for s in json.loads(cand.read_text())["scenarios"]
    ]


def test_help_is_fast_and_imports_nothing_heavy() -> None:
    code = textwrap.dedent(
        """
        import sys
        from agentassay._integrations.cli import main
        try:
            main(["--help"])
        except SystemExit:
            pass
        heavy = [m for m in ("numpy", "scipy", "agents", "openai", "yaml", "sqlite3") if m in sys.modules]
        print(heavy)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


GATED_AGENT = """\
import os, pathlib, time

# Importing this agent blocks until the test says go: the run is then inside start-up, before any trial.
pathlib.Path(os.environ["AGENT_IMPORTING"]).write_text("importing")
while not pathlib.Path(os.environ["AGENT_GO"]).exists():
    time.sleep(0.01)


def agent(text: str) -> str:
    return "ok"
"""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_before_the_first_trial_writes_zero_trials_marked_interrupted(
    sig: signal.Signals, code: int, tmp_path: Path
) -> None:
    (tmp_path / "gated_agent.py").write_text(GATED_AGENT)
    suite = write_suite(tmp_path, GOOD.format(agent="x", trials=20, timeout=5).replace("tests._support.fixture_agents:x", "gated_agent:agent"))
    importing, go, out_file = tmp_path / "importing", tmp_path / "go", tmp_path / "r.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]),
        "AGENT_IMPORTING": str(importing),
        "AGENT_GO": str(go),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentassay", "run", str(suite), "-o", str(out_file), "--store", str(tmp_path / "t.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )
    try:
        while not importing.exists():  # an observable event: the run is loading the agent, no trial has run
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)  # polling for the event, not a timed wait
        proc.send_signal(sig)  # delivered (its handler runs) before the import's next look for `go`
        go.write_text("go")
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "before the first trial: nothing ran" in err and "records zero trials" in err
    data = json.loads(out_file.read_text())
    assert data["interrupted"] is True
    assert [len(s["trials"]) for s in data["scenarios"]] == [0, 0]
    assert any(f"interrupted by {sig.name}" in n for n in data["notes"])
    # no decision claimed: the file says aborted, with the process's own exit code (issue 22, defect 11)
    assert data["aborted"] == {
        "reason": f"interrupted by {sig.name} before the first trial: the trials that finished are kept; no suite "
        "decision", "exit_code": code, "cause": "signal",
    }
    assert data["decision"]["decision"] == "aborted" and data["decision"]["exit_code"] == code


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_flushes_results_marked_interrupted(sig: signal.Signals, code: int, tmp_path: Path) -> None:
    suite = write_suite(tmp_path, agent="slow_ok", trials=2000)
    out_file = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentassay", "run", str(suite), "--method", "fixed", "-o", str(out_file),
         "--store", str(tmp_path / "t.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    # Wait for an observable event, never a fixed time: the first "N trials finished" progress line, printed
    # by the running engine (signal handlers installed, trials finished), however slow start-up is.
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "trials finished" in line:
            break
    else:
        pytest.fail(f"the run ended before any progress line: {''.join(seen)[-2000:]}")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    err = "".join(seen) + err
    assert proc.returncode == code, err
    data = json.loads(out_file.read_text())
    assert data["interrupted"] is True
    finished = sum(len(s["trials"]) for s in data["scenarios"])
    assert finished > 0
    assert any("interrupted" in n for n in data["notes"])
    assert data["aborted"]["cause"] == "signal" and data["aborted"]["exit_code"] == proc.returncode == code
    assert data["decision"] | {"counts": None} == {
        "verdict": None, "decision": "aborted", "exit_code": code, "counts": None, "correction": "holm"
    }
