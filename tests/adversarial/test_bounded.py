"""Issue 22, defect 8: unbounded work. Each case is the probe's input, run through the real CLI in a fresh
interpreter; each finishes quickly because of the fix (the subprocess timeout is only a safety net).

- Contract expressions are bounded: a %-format's width and precision, and what operators build in total
  (a nested 10^5 x 10^5 list compared with another): the contract is violated on that trial, saying why.
- Suite regexes (evaluator checks, contracts' matches()) are matched with a timeout: a backtracking pattern
  fails that trial's check naming the pattern, never hangs the run.
- Checks run under the trial's time limit (config.timeout): a check that never returns is that trial's error,
  naming the check, and SIGTERM / SIGINT during a check stop the run with 143 / 130 and the partial results.
- An agent that leaves a non-daemon thread blocked forever does not keep the process alive after the results.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAFETY_NET = 120  # seconds: only so that a regression fails the test instead of hanging the suite

AGENTS = """\
import os
import pathlib
import threading

def a30(text, seed=0):
    return "a" * 30 + "!"

def a40(text, seed=0):
    return "a" * 40 + "!"

def lingering(text, seed=0):
    threading.Thread(target=threading.Event().wait, name="left-behind", daemon=False).start()  # never ends
    return "ok"

def check_hangs_on_trial_0(input, output, trace):
    if trace.metadata.trial == 0:
        threading.Event().wait()
    return True

def check_hangs_with_marker(input, output, trace):
    pathlib.Path(os.environ["MARKER"]).write_text("started")
    threading.Event().wait()
    return True
"""

SUITE = """\
name: bounded
agent: {agent}
config:
  trials: 4
  method: fixed
  concurrency: 2
  timeout: {timeout}
scenarios:
  - name: s
    input: "hello"
    evaluator:
{checks}{contracts}"""


def _write(tmp: Path, agent: str, checks: str, contracts: str = "", timeout: float = 30) -> None:
    (tmp / "agents_bounded.py").write_text(AGENTS)
    if contracts:
        contracts = "    contracts:\n" + "".join(f"      - require: {json.dumps(c)}\n" for c in contracts.split("\n"))
    (tmp / "s.yml").write_text(SUITE.format(agent=agent, checks=checks, contracts=contracts, timeout=timeout))


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTASSAY_PLUGINS")}
    return {**env, "PYTHONPATH": f"{tmp}:{ROOT}", **extra}


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentassay", *args],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=SAFETY_NET,
        env=_env(tmp),
    )


def _results(tmp: Path) -> dict:
    return json.loads((tmp / "out.json").read_text())


# -- contract expressions: bounded formatting and bounded sizes -------------------------------------------------

# (case, expression, what the violation says)
CONTRACTS = [
    ("a %-format width of 999999999 (1 GB a trial)", "'%999999999d' % 1 == '1'", "has a width of"),
    ("a %-format precision of 999999999 (19 s)", "'%.999999999f' % 1.0 == '1'", "has a precision of"),
    ("a %-format width from the arguments", "'%*d' % [999999999, 1] == '1'", "(*) is not allowed"),
    (
        "two 10^5 x 10^5 nested lists compared (30 s)",
        "[[0]*100000]*100000 == [[0]*100000]*100000",
        "would build more than 10,000,000",
    ),
    ("a long + chain of repeated text", " + ".join(["('x' * 100000)"] * 120) + " == input", "would build more"),
    ("a backtracking pattern in matches()", "matches('(a|aa)+$', output)", "(a|aa)+$"),
]


@pytest.mark.parametrize(("case", "expression", "says"), CONTRACTS, ids=[c[0] for c in CONTRACTS])
def test_a_contract_expression_is_bounded(tmp_path: Path, case: str, expression: str, says: str) -> None:
    _write(tmp_path, "agents_bounded:a40", "      - contains: a\n", expression, timeout=2)
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q", "-o", "out.json")
    assert "Traceback" not in done.stdout + done.stderr, case
    data = _results(tmp_path)
    assert done.returncode == data["decision"]["exit_code"] == 1, (case, done.returncode, done.stderr[-2000:])  # BLOCK
    assert len(data["scenarios"][0]["trials"]) == 4  # every trial kept
    (entry,) = data["contracts"]["scenarios"]["s"]["contracts"]
    assert entry["trials"] == 4 and entry["satisfied"] == 0, entry
    assert says in entry["violations"][0]["text"], entry["violations"][0]


# -- suite regexes: a timeout, never a hang ---------------------------------------------------------------------

# (case, agent, pattern, what each trial's failure says)
REGEXES = [
    # The probe's pattern: the regex engine's own optimisations answer it at once (no match).
    ("(a+)+$ against 'a' * 30 + '!' (881 s)", "agents_bounded:a30", "(a+)+$", "output does not match regex '(a+)+$'"),
    # A pattern that does backtrack exponentially in both engines: the trial's time limit ends it.
    ("(a|aa)+$ against 'a' * 40 + '!'", "agents_bounded:a40", "(a|aa)+$", "regex check '(a|aa)+$'"),
]


@pytest.mark.parametrize(("case", "agent", "pattern", "says"), REGEXES, ids=[c[0] for c in REGEXES])
def test_a_suite_regex_is_matched_with_a_timeout(
    tmp_path: Path, case: str, agent: str, pattern: str, says: str
) -> None:
    _write(tmp_path, agent, f"      - regex: {json.dumps(pattern)}\n", timeout=2)
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q", "-o", "out.json")
    assert "Traceback" not in done.stdout + done.stderr, case
    data = _results(tmp_path)
    assert done.returncode == data["decision"]["exit_code"] == 1, (case, done.returncode, done.stderr[-2000:])  # BLOCK
    trials = data["scenarios"][0]["trials"]
    assert len(trials) == 4 and not any(t["passed"] for t in trials)
    for t in trials:  # the check's failure, or (the backstop) the trial's error: either names the check
        assert any(says in f for f in t["failures"]), t


# -- checks under the trial's time limit ------------------------------------------------------------------------


def test_a_check_that_never_returns_is_that_trials_error(tmp_path: Path) -> None:
    _write(tmp_path, "agents_bounded:a30", "      - python: agents_bounded:check_hangs_on_trial_0\n", timeout=1)
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q", "-o", "out.json")
    assert "Traceback" not in done.stdout + done.stderr
    data = _results(tmp_path)
    assert done.returncode == data["decision"]["exit_code"], (done.returncode, done.stderr[-2000:])
    trials = {t["index"]: t for t in data["scenarios"][0]["trials"]}
    assert sorted(trials) == [0, 1, 2, 3]  # nothing measured is lost
    error = trials[0]["error"] or ""
    assert "did not finish within the trial's time limit" in error and "config.timeout 1 s" in error, error
    assert "python check 'agents_bounded:check_hangs_on_trial_0'" in error, error
    assert all(trials[i]["passed"] and not trials[i]["error"] for i in (1, 2, 3))


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_a_check_stops_the_run_with_the_partial_results(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    _write(tmp_path, "agents_bounded:a30", "      - python: agents_bounded:check_hangs_with_marker\n", timeout=600)
    marker = tmp_path / "check-started"
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentassay", "run", "s.yml", "--no-store", "-q", "-o", "out.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path, MARKER=str(marker)),
    )
    try:
        while not marker.exists():  # the observable event: a check is running
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=SAFETY_NET)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == code, (proc.returncode, err[-2000:])
    assert "Traceback" not in out + err
    data = _results(tmp_path)
    assert data["interrupted"] is True, data["interrupted"]  # the partial results, marked as such
    assert any(f"interrupted by {sig.name}" in n for n in data["notes"]), data["notes"]


# -- threads the agent leaves behind ----------------------------------------------------------------------------


def test_a_lingering_non_daemon_thread_does_not_hang_the_process(tmp_path: Path) -> None:
    _write(tmp_path, "agents_bounded:lingering", "      - contains: ok\n")
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q", "-o", "out.json")
    assert "Traceback" not in done.stdout + done.stderr
    data = _results(tmp_path)  # complete: every trial, and the verdict the exit code gives
    assert done.returncode == data["decision"]["exit_code"], (done.returncode, done.stderr[-2000:])
    trials = data["scenarios"][0]["trials"]
    assert len(trials) == 4 and all(t["passed"] for t in trials)
    assert "exiting without waiting for 4 threads the agent left running (left-behind)" in done.stderr
