"""The pytest plugin, run as users run it: `python -m pytest` in a fresh temporary project (subprocesses,
so each session is a real one with the plugin loaded from its entry point)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

ACCEPTANCE = '''\
import random

import pytest


@pytest.mark.agentassay(trials=60, threshold=0.8)
def test_refund(trial):
    # passes with probability 0.95 (0.6 when REGRESS is set: a regressed agent)
    p = 0.6 if __import__("os").environ.get("REGRESS") else 0.95
    assert random.Random(trial.seed).random() < p, "the refund was not mentioned"


@pytest.mark.agentassay(trials=60, threshold=0.8)
def test_coin(trial):
    assert random.Random(trial.seed).random() < 0.5, "wrong department"


@pytest.mark.agentassay(trials=40, threshold=0.8, method="fixed")
def test_borderline(trial):
    assert random.Random(trial.seed).random() < 0.8


def test_plain():
    assert True
'''


def pytest_run(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=folder, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=300, check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "test_agent.py").write_text(ACCEPTANCE)
    return tmp_path


def junit_cases(path: Path) -> dict[str, ET.Element]:
    return {tc.attrib["name"]: tc for tc in ET.parse(path).getroot().iter("testcase")}


def props(tc: ET.Element) -> dict[str, str]:
    return {p.attrib["name"]: p.attrib["value"] for p in tc.iter("property")}


def test_one_outcome_per_marked_test_with_the_interval_and_junit_properties(project: Path) -> None:
    done = pytest_run(project, "--junitxml=j.xml", "-rA")
    assert done.returncode == 1, done.stdout[-3000:]
    out = done.stdout
    assert "1 failed, 2 passed, 1 inconclusive" in out
    # one line per marked test in the summary
    summary = out.split("= agentassay =", 1)[1]
    assert "test_agent.py::test_refund" in summary and "PASS" in summary
    assert "test_agent.py::test_coin" in summary and "FAIL" in summary
    assert "test_agent.py::test_borderline" in summary and "INCONCLUSIVE" in summary

    cases = junit_cases(project / "j.xml")
    assert set(cases) == {"test_refund", "test_coin", "test_borderline", "test_plain"}  # one testcase each
    refund, coin = cases["test_refund"], cases["test_coin"]
    assert refund.find("failure") is None and refund.find("error") is None
    failure = coin.find("failure")
    assert failure is not None and "95% interval [" in failure.attrib["message"]
    assert "most common failures" in (failure.text or "") and "AssertionError: wrong department" in failure.text
    for tc in (refund, coin, cases["test_borderline"]):
        p = props(tc)
        assert set(p) >= {"verdict", "trials", "passes", "rate", "interval"}
        assert "" not in p.values()  # a p-value or a cost the test does not have is left out, never empty
    # INCONCLUSIVE is the convention dashboards understand: skipped, with its message (issue 25)
    skipped = cases["test_borderline"].find("skipped")
    assert skipped is not None and "INCONCLUSIVE: " in skipped.attrib["message"], ET.tostring(cases["test_borderline"])
    assert cases["test_borderline"].find("failure") is None
    assert props(refund)["verdict"] == "pass" and props(coin)["verdict"] == "fail"
    assert props(cases["test_borderline"]) | {"interval": ""} == {
        **props(cases["test_borderline"]), "verdict": "inconclusive", "trials": "40", "interval": "",
    }
    assert props(cases["test_plain"]) == {}  # unmarked tests are left alone


@pytest.mark.parametrize(
    ("policy", "code", "words"),
    [("fail", 1, "1 failed"), ("skip", 0, "1 skipped"), ("pass", 0, "2 passed")],
)
def test_inconclusive_policy(project: Path, policy: str, code: int, words: str) -> None:
    done = pytest_run(project, "-k", "borderline or plain", f"--agentassay-inconclusive={policy}")
    assert done.returncode == code, done.stdout[-2000:]
    assert words in done.stdout.splitlines()[-1]


def test_fresh_fixtures_async_concurrency_and_timeouts(tmp_path: Path) -> None:
    (tmp_path / "test_kinds.py").write_text(textwrap.dedent('''\
        import asyncio, random, threading, time
        import pytest

        made = []

        @pytest.fixture
        def fresh():
            made.append(object())
            yield made[-1]

        @pytest.mark.agentassay(trials=15, threshold=0.5, method="fixed")
        def test_fresh_fixture_per_trial(trial, fresh):
            assert len(made) == trial.index + 1  # set up again for every trial
            trial.record(usd=0.001, input_tokens=10, output_tokens=5)

        @pytest.mark.agentassay(trials=30, threshold=0.8, concurrency=5)
        async def test_async_trials_run_concurrently(trial):
            await asyncio.sleep(0.001)
            assert random.Random(trial.seed).random() < 0.97

        @pytest.mark.agentassay(trials=4, threshold=0.5, method="fixed", timeout=0.5)
        def test_a_hanging_trial_is_an_error_trial(trial):
            if trial.index == 1:
                threading.Event().wait()  # hangs: the trial's timeout ends it

        @pytest.mark.agentassay(trials=4, threshold=0.5, method="fixed", timeout=0.5, concurrency=2)
        async def test_a_hanging_async_trial_is_an_error_trial(trial):
            if trial.index == 1:
                await asyncio.Event().wait()  # hangs: the trial's timeout ends it
        '''))
    done = pytest_run(tmp_path, "--agentassay-record", "r.json", "-p", "no:asyncio")
    assert done.returncode == 0, done.stdout[-3000:]
    data = {s["name"].split("::")[1]: s for s in json.loads((tmp_path / "r.json").read_text())["scenarios"]}
    fresh = data["test_fresh_fixture_per_trial"]
    assert fresh["verdict"]["verdict"] == "pass" and fresh["cost"]["usd"] == pytest.approx(0.015)
    assert fresh["cost"]["input_tokens"] == 150
    assert data["test_async_trials_run_concurrently"]["verdict"]["verdict"] == "pass"
    for name in ("test_a_hanging_trial_is_an_error_trial", "test_a_hanging_async_trial_is_an_error_trial"):
        trials = data[name]["trials"]
        assert [t["passed"] for t in trials] == [True, False, True, True], name
        assert "timed out after 0.5 s" in trials[1]["error"]


def test_record_then_baseline_fails_a_regressed_test_with_the_evidence(project: Path) -> None:
    first = pytest_run(project, "-k", "refund", "--agentassay-record", "base.json")
    assert first.returncode == 0, first.stdout[-3000:]
    base = json.loads((project / "base.json").read_text())
    recorded = base["scenarios"][0]
    assert base["schema"] == "agentassay.results/1" and len(recorded["trials"]) == 60  # recorded to the cap
    counts = f"{recorded['passes']}/60"
    # What it prints describes what it recorded: the decision's trials, then the file's (issue 25).
    decided = recorded["verdict"]["trials_used"]
    line = next(ln for ln in first.stdout.splitlines() if ln.startswith("test_agent.py::test_refund "))
    assert f"decided at {decided}, recorded {counts}" in line and "stopped at" not in line, line
    assert "results of 1 marked tests (60 trials) written to base.json" in first.stdout
    same = pytest_run(project, "-k", "refund", "--agentassay-baseline", "base.json")
    assert same.returncode == 0 and f"vs baseline {counts}" in same.stdout  # the unchanged body passes against it
    regressed = pytest_run(project, "-k", "refund", "--agentassay-baseline", "base.json", env={"REGRESS": "1"})
    assert regressed.returncode == 1, regressed.stdout[-3000:]
    assert "significantly worse than the baseline" in regressed.stdout and f"baseline {counts}" in regressed.stdout


def test_xdist_keeps_each_tests_trials_in_one_worker_and_records_all(project: Path) -> None:
    pytest.importorskip("xdist")
    serial = pytest_run(project, "--agentassay-record", "one.json")
    spread = pytest_run(project, "-n", "2", "--agentassay-record", "two.json")
    assert serial.returncode == spread.returncode == 1
    one, two = (json.loads((project / f).read_text()) for f in ("one.json", "two.json"))
    key = lambda d: {s["name"]: (s["verdict"]["verdict"], [t["passed"] for t in s["trials"]]) for s in d["scenarios"]}  # noqa: E731
    assert key(one) == key(two) and len(key(two)) == 3


def test_ctrl_c_stops_cleanly_and_the_record_keeps_finished_trials(tmp_path: Path) -> None:
    (tmp_path / "test_slow.py").write_text(textwrap.dedent('''\
        import os, time
        import pytest

        @pytest.mark.agentassay(trials=500, threshold=0.5, method="fixed")
        def test_slow(trial):
            with open(os.environ["PROGRESS"], "a") as f:
                f.write(f"{trial.index}\\n")
            time.sleep(0.05)
        '''))
    progress = tmp_path / "progress"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--agentassay-record", "r.json"],
        cwd=tmp_path, env={**os.environ, "PROGRESS": str(progress)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True,
        # A shell running this suite as a background job leaves SIGINT ignored, and an ignored SIGINT is
        # inherited: pytest would never see the Ctrl-C. The child gets the default, as in a terminal.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not (progress.exists() and len(progress.read_text().split()) >= 4):  # wait until trials are running
        assert proc.poll() is None and time.monotonic() < deadline, "the session ended before its trials ran"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "KeyboardInterrupt" in out  # pytest's "interrupted"
    data = json.loads((tmp_path / "r.json").read_text())
    trials = data["scenarios"][0]["trials"]
    assert data["interrupted"] is True and len(trials) >= 3
    assert [t["index"] for t in trials] == list(range(len(trials)))


@pytest.mark.parametrize(
    ("marker", "words"),
    [
        ("trails=20", ["test_x", "unknown argument 'trails'", "Did you mean 'trials'"]),
        ("threshold=1.5", ["test_x", "threshold=1.5", "strictly between 0 and 1"]),
        ("trials=0", ["test_x", "trials=0", ">= 1"]),
        ("method='bayes'", ["test_x", "method='bayes'", "'sprt', 'fixed'"]),
    ],
)
def test_a_bad_marker_argument_is_a_collection_error_naming_test_and_argument(
    tmp_path: Path, marker: str, words: list[str]
) -> None:
    (tmp_path / "test_bad.py").write_text(f"import pytest\n\n@pytest.mark.agentassay({marker})\ndef test_x(trial):\n    pass\n")
    done = pytest_run(tmp_path)
    assert done.returncode == 2 and "ERROR collecting test_bad.py" in done.stdout
    assert all(w in done.stdout for w in words), done.stdout[-2000:]


def test_the_trial_fixture_outside_a_marked_test_says_so(tmp_path: Path) -> None:
    (tmp_path / "test_t.py").write_text("def test_t(trial):\n    pass\n")
    done = pytest_run(tmp_path)
    assert done.returncode != 0 and "the `trial` fixture is for tests marked @pytest.mark.agentassay" in done.stdout


def test_a_suite_collected_as_items_gives_the_verdicts_of_agentassay_run() -> None:
    pytest.importorskip("agents")
    suite = "examples/customer_service/agentassay.yml"
    done = pytest_run(ROOT, "--agentassay-suite", suite, suite, "-v", "--junitxml", os.devnull)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "collected 4 items" in done.stdout
    from agentassay._runner import run_suite
    from agentassay._spec import load_suite

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        results = run_suite(load_suite(suite), progress=False, handle_signals=False).results
    finally:
        os.chdir(cwd)
    for s in results.scenarios:
        line = next(ln for ln in done.stdout.splitlines() if ln.startswith(f"{suite}::{s.name} ") and "stopped at" in ln)
        assert s.verdict.verdict.value.upper() in line and f"stopped at {s.verdict.trials_used}" in line


SMALL_SUITE = """\
agent: small_agent:answer
config: {trials: 40, threshold: 0.5, delta: 0.2}
scenarios:
  - name: greets
    input: hello
    evaluator: [{contains: hello}]
  - name: echoes
    input: refund please
    evaluator: [{contains: refund}]
"""


def test_a_suite_named_on_the_command_line_runs_only_its_scenarios(tmp_path: Path) -> None:
    (tmp_path / "small_agent.py").write_text("def answer(text):\n    return 'you said: ' + text\n")
    (tmp_path / "agentassay.yml").write_text(SMALL_SUITE)
    (tmp_path / "test_other.py").write_text("def test_other():\n    assert True\n")
    only = pytest_run(tmp_path, "agentassay.yml", "-v")  # issue 25: not `--agentassay-suite S S`
    assert only.returncode == 0, only.stdout[-3000:]
    assert "collected 2 items" in only.stdout and "test_other" not in only.stdout
    assert "agentassay.yml::greets PASSED" in only.stdout and "agentassay.yml::echoes PASSED" in only.stdout
    both = pytest_run(tmp_path, "--agentassay-suite", "agentassay.yml", "-v")  # added to pytest's own tests
    assert both.returncode == 0 and "test_other PASSED" in both.stdout, both.stdout[-3000:]
    assert "agentassay.yml::greets PASSED" in both.stdout
    (tmp_path / "bad.yml").write_text("agent: small_agent:answer\nscenarios: []\n")
    bad = pytest_run(tmp_path, "bad.yml")
    assert bad.returncode != 0 and "agentassay suite: " in bad.stdout and "bad.yml" in bad.stdout


def test_installed_but_unused_it_imports_nothing_heavy() -> None:
    code = textwrap.dedent('''\
        import sys
        import agentassay._integrations.pytest_plugin
        print([m for m in ("numpy", "scipy", "agents", "openai", "agentassay._stats", "agentassay._runner",
                           "agentassay._gate", "yaml") if m in sys.modules])
        ''')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
