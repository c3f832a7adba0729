"""Issue 22's adversarial probe, one table-driven case per defect (so far: defects 1, 4, 7 and 12).

Defect 1: user code can never end the process as a pass. ``sys.exit(0)`` inside an agent (sync or async),
inside a user's check, or at import, and every other ``BaseException`` user code raises, is that trial's
error (or exit 4 at import) — never the process's exit code, never a traceback, and the results file keeps
every trial. Each case runs the real CLI in a fresh interpreter, as a user would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

AGENTS = """\
import sys

class Custom(BaseException):
    pass

def exit0(text, seed=0):
    sys.exit(0)

def exit3(text, seed=0):
    raise SystemExit(3)

def interrupt(text, seed=0):
    raise KeyboardInterrupt

def generator_exit(text, seed=0):
    raise GeneratorExit

def custom(text, seed=0):
    raise Custom("mine")

async def async_exit0(text, seed=0):
    sys.exit(0)

def ok(text, seed=0):
    return "ok"

def check_exits(input, output, trace):
    sys.exit(0)
"""

SUITE = """\
name: adversarial
agent: {agent}
config:
  trials: 4
  method: fixed
  concurrency: 2
  timeout: 10
scenarios:
  - name: s
    input: "hello"
    evaluator:
      - contains: ok
{extra}"""

# (case, agent entry, extra evaluator lines, what each trial's error names)
IN_A_TRIAL = [
    ("sys.exit(0) in a sync agent", "agents_bad:exit0", "", "SystemExit: 0"),
    ("SystemExit(3) in a sync agent", "agents_bad:exit3", "", "SystemExit: 3"),
    ("KeyboardInterrupt raised by the agent", "agents_bad:interrupt", "", "KeyboardInterrupt"),
    ("GeneratorExit raised by the agent", "agents_bad:generator_exit", "", "GeneratorExit"),
    ("a custom BaseException", "agents_bad:custom", "", "Custom: mine"),
    ("sys.exit(0) in an async agent", "agents_bad:async_exit0", "", "SystemExit: 0"),
    ("sys.exit(0) in a python check", "agents_bad:ok", "      - {python: agents_bad:check_exits}\n", "SystemExit: 0"),
]


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentassay", *args], cwd=tmp, capture_output=True, text=True, timeout=300,
        env={**_env(), "PYTHONPATH": f"{tmp}:{ROOT}"},
    )


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("AGENTASSAY_PLUGINS")}


@pytest.mark.parametrize(("case", "agent", "extra", "named"), IN_A_TRIAL, ids=[c[0] for c in IN_A_TRIAL])
def test_a_base_exception_in_a_trial_is_that_trials_error(
    tmp_path: Path, case: str, agent: str, extra: str, named: str
) -> None:
    (tmp_path / "agents_bad.py").write_text(AGENTS)
    (tmp_path / "s.yml").write_text(SUITE.format(agent=agent, extra=extra))
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q", "-o", "out.json")
    # never 0, never 130: FAIL / INCONCLUSIVE, or 4 when every trial so far ended in an error (the health check)
    assert done.returncode in (1, 2, 4), (case, done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr + done.stdout, case
    data = json.loads((tmp_path / "out.json").read_text())  # nothing measured is lost
    trials = data["scenarios"][0]["trials"]
    assert len(trials) == 4 and not any(t["passed"] for t in trials), case
    assert "_threads.py" not in json.dumps(trials)  # the place named is the user's code, not ours
    assert data["decision"]["decision"] != "deploy"
    if extra:  # the check raised: the trial failed with the check named
        assert all(any(named in f for f in t["failures"]) for t in trials), trials[0]
    else:
        assert all(named in (t["error"] or "") for t in trials), trials[0]["error"]


def test_sys_exit_at_import_is_exit_4_naming_the_fix(tmp_path: Path) -> None:
    (tmp_path / "script.py").write_text("import sys\ndef f(text, seed=0):\n    return 'ok'\nsys.exit(0)\n")
    (tmp_path / "s.yml").write_text(SUITE.format(agent="script:f", extra=""))
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q")
    assert done.returncode == 4, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert "importing agent module 'script'" in done.stderr and "SystemExit" in done.stderr
    assert 'if __name__ == "__main__":' in done.stderr


def test_a_factory_that_exits_is_exit_4(tmp_path: Path) -> None:
    (tmp_path / "fac.py").write_text("import sys\ndef make():\n    sys.exit(0)\n")
    (tmp_path / "s.yml").write_text(
        SUITE.format(agent="fac:make", extra="").replace("agent: fac:make", "agent: {entry: 'fac:make', factory: true}")
    )
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q")
    assert done.returncode == 4, done.stderr
    assert "agent factory 'fac:make' raised SystemExit" in done.stderr and "Traceback" not in done.stderr


# -- defect 4: a baseline from another suite is refused ------------------------------------------------------

TWO = """\
name: {name}
agent: agents_bad:ok
config:
  trials: 6
  method: fixed
  concurrency: 2
scenarios:
  - name: {a}
    input: "hello"
    evaluator:
      - contains: ok
  - name: {b}
    input: "again"
    evaluator:
      - contains: ok
"""


def test_a_baseline_of_another_suite_is_exit_3_naming_both(tmp_path: Path) -> None:
    (tmp_path / "agents_bad.py").write_text(AGENTS)
    (tmp_path / "mine.yml").write_text(TWO.format(name="mine", a="greet", b="refund"))
    (tmp_path / "other.yml").write_text(TWO.format(name="other", a="weather", b="news"))
    assert _cli(tmp_path, "run", "other.yml", "--full", "--no-store", "-q", "-o", "other.json").returncode in (0, 2)
    data = json.loads((tmp_path / "other.json").read_text())
    (tmp_path / "empty.json").write_text(json.dumps({**data, "scenarios": []}))
    for baseline, theirs in (("other.json", "weather, news"), ("empty.json", "none")):
        done = _cli(tmp_path, "check", "mine.yml", "--baseline", baseline, "--no-store", "-q", "-o", "c.json")
        assert done.returncode == 3, (baseline, done.returncode, done.stderr)
        assert "Traceback" not in done.stderr and not (tmp_path / "c.json").exists()  # no trial was paid for
        assert f"{baseline}: this baseline shares no scenario with the suite" in done.stderr
        assert "suite 'other'" in done.stderr and f"scenarios {theirs}" in done.stderr
        assert "the suite 'mine' (sha256 " in done.stderr and "greet, refund" in done.stderr
    # compare says the same about two unrelated files
    assert _cli(tmp_path, "run", "mine.yml", "--no-store", "-q", "-o", "mine.json").returncode in (0, 2)
    done = _cli(tmp_path, "compare", "other.json", "mine.json", "-q")
    assert done.returncode == 3 and "shares no scenario" in done.stderr


def test_a_renamed_scenario_keeps_the_graceful_note(tmp_path: Path) -> None:
    (tmp_path / "agents_bad.py").write_text(AGENTS)
    (tmp_path / "v1.yml").write_text(TWO.format(name="mine", a="greet", b="refund"))
    (tmp_path / "v2.yml").write_text(TWO.format(name="mine", a="greet", b="refunds"))
    assert _cli(tmp_path, "run", "v1.yml", "--full", "--no-store", "-q", "-o", "base.json").returncode in (0, 2)
    done = _cli(tmp_path, "check", "v2.yml", "--baseline", "base.json", "--no-store", "-q", "-o", "c.json")
    assert done.returncode in (0, 2), done.stderr
    renamed = next(s for s in json.loads((tmp_path / "c.json").read_text())["scenarios"] if s["name"] == "refunds")
    assert any("the baseline has no trials of this scenario" in n for n in renamed["verdict"]["notes"])


# -- defect 12: the offline simulator with no behaviour table is a configuration error ------------------------


def test_offline_without_a_behaviour_table_is_exit_3_naming_the_fix(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    (tmp_path / "sdkagent.py").write_text('from agents import Agent\nbot = Agent(name="Bot", instructions="Say ok.")\n')
    (tmp_path / "s.yml").write_text(SUITE.format(agent="sdkagent:bot", extra="").replace("config:", "model: offline\nconfig:"))
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q", "-o", "out.json")
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and not (tmp_path / "out.json").exists()  # no trial ran
    assert "s.yml: model: the agent 'sdkagent:bot' runs on the offline simulator" in done.stderr
    assert "OFFLINE_BEHAVIOUR" in done.stderr and "model.behaviour" in done.stderr and "provider: openai" in done.stderr


# -- defect 7: a contract that cannot be compiled is exit 3, never contracts switched off ------------------------

DEEP = [
    ("5,000 nots", "not " * 5000 + "True", "characters long"),
    ("a 100,000-term sum", "+".join(["1"] * 100_000), "characters long"),
    ("900 nested nots", "not " * 900 + "True", "nested too deeply"),
]


@pytest.mark.parametrize(("case", "expression", "named"), DEEP, ids=[c[0] for c in DEEP])
def test_a_contract_too_big_to_compile_is_exit_3(tmp_path: Path, case: str, expression: str, named: str) -> None:
    (tmp_path / "agents_bad.py").write_text(AGENTS)
    contract = f'contracts:\n  - name: deep\n    require: "{expression}"\n'
    (tmp_path / "s.yml").write_text(SUITE.format(agent="agents_bad:ok", extra="") + contract)
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q", "-o", "out.json")
    assert done.returncode == 3, (case, done.returncode, done.stderr[-500:])
    assert "Traceback" not in done.stderr and "contracts" in done.stderr and named in done.stderr
    assert not (tmp_path / "out.json").exists()  # refused before any trial
