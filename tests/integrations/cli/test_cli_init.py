"""``agentassay init`` in a fresh git repository: the files it writes parse, validate and run offline."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from agentassay._integrations.cli import main
from agentassay._integrations.cli._detect import CALLABLE, SDK, UNKNOWN, scan
from agentassay._integrations.cli._init import WORKFLOWS, template
from agentassay._spec import load_suite

ROOT = Path(__file__).resolve().parents[3]

CALLABLE_AGENT = '''\
import pathlib

pathlib.Path(__file__).with_name("IMPORTED").write_text("imported")  # init must never import this


def support_agent(text, seed=None):
    return "Hello! I can help you with " + text


def helper(a, b):
    return a + b
'''

SDK_AGENT = '''\
import pathlib

from agents import Agent, function_tool

pathlib.Path(__file__).with_name("IMPORTED").write_text("imported")  # init must never import this


@function_tool
def lookup_order(order_id: str) -> str:
    return "shipped"


faq_agent = Agent(name="FAQ Agent", instructions="Answer questions.")
support_agent = Agent(
    name="Support Agent", instructions="Help customers.", tools=[lookup_order], handoffs=[faq_agent]
)
'''


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A fresh git repository holding ``files``."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def validate_workflows(paths: list[Path]) -> None:
    """Each file parses as YAML and, where check-jsonschema is installed (the test extra, CI), validates
    against the GitHub workflow schema it vendors (SchemaStore's) — as .ci/run validates the examples."""
    for path in paths:
        doc = yaml.safe_load(path.read_text())
        assert isinstance(doc, dict) and doc["jobs"] and doc["permissions"], path
    if importlib.util.find_spec("check_jsonschema") is None:
        return
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, paths)],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def agentassay_run(folder: Path) -> subprocess.CompletedProcess[str]:
    """``agentassay run agentassay.yml`` as a user runs it, in the repository (a process of its own)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "agentassay", "run", "agentassay.yml", "--no-store", "-q", "--trials", "30"],
        cwd=folder, capture_output=True, text=True, env=env, timeout=300, check=False,
    )


def test_the_workflow_templates_are_the_ready_to_copy_examples() -> None:
    for source in WORKFLOWS.values():
        example = (ROOT / "examples" / "workflows" / source).read_text()
        assert template(source) == example, (
            f"agentassay/_integrations/cli/templates/{source} differs from examples/workflows/{source}: copy it"
        )


def test_init_a_callable_agent_then_run_it_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = repo(tmp_path, {"bot.py": CALLABLE_AGENT, "requirements.txt": "requests\n"})
    monkeypatch.chdir(folder)  # as a user runs it: `agentassay init` in the repository
    code, out, err = run(capsys, "init")
    assert code == 0, err
    assert "bot:support_agent (a Python callable, bot.py:6)" in out
    assert not (folder / "IMPORTED").exists()  # found by reading the source
    suite = folder / "agentassay.yml"
    workflows = [folder / ".github" / "workflows" / name for name in WORKFLOWS]
    assert suite.is_file() and all(w.is_file() for w in workflows)
    assert not (folder / "agentassay.offline.yml").exists()  # a callable brings its own model
    validate_workflows(workflows)
    check = yaml.safe_load(workflows[1].read_text())
    step = next(s for s in check["jobs"]["agentassay"]["steps"] if s.get("id") == "assay")
    assert step["with"]["suite"] == "agentassay.yml" and step["with"]["install"] == "pip install -r requirements.txt"
    loaded = load_suite(suite)
    assert loaded.agent.entry == "bot:support_agent" and len(loaded.scenarios) == 1
    # The next three commands: record with --full, check, and how to put it in CI.
    assert "agentassay run agentassay.yml --full -o baseline.json" in out
    assert "agentassay check agentassay.yml --baseline baseline.json" in out
    assert "git add" in out and ".github/workflows/agentassay-check.yml" in out
    done = agentassay_run(folder)
    assert done.returncode in (0, 2), done.stdout + done.stderr


def test_init_an_agents_sdk_agent_then_run_it_on_the_offline_simulator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("agents")
    folder = repo(tmp_path, {"app/__init__.py": "", "app/support.py": SDK_AGENT, "pyproject.toml": ""})
    code, out, err = run(capsys, "init", str(folder))
    assert code == 0, err
    # The triage agent, not the one it hands off to; its name and tool become commented hints.
    assert "app.support:support_agent (an OpenAI Agents SDK Agent, app/support.py:14)" in out
    assert not (folder / "IMPORTED").exists()
    text = (folder / "agentassay.yml").read_text()
    assert "# - must_reach: Support Agent" in text and "# - must_call: lookup_order" in text
    loaded = load_suite(folder / "agentassay.yml")
    assert loaded.model.provider == "offline" and loaded.model.behaviour == "agentassay.offline.yml"
    assert "*" in yaml.safe_load((folder / "agentassay.offline.yml").read_text())
    check = yaml.safe_load((folder / ".github" / "workflows" / "agentassay-check.yml").read_text())
    step = next(s for s in check["jobs"]["agentassay"]["steps"] if s.get("id") == "assay")
    assert step["with"]["install"] == "pip install ."
    done = agentassay_run(folder)
    assert done.returncode in (0, 2), done.stdout + done.stderr


def test_init_refuses_to_overwrite_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = repo(tmp_path, {"bot.py": CALLABLE_AGENT})
    (folder / "agentassay.yml").write_text("# mine\n")
    code, _, err = run(capsys, "init", str(folder))
    assert code == 3 and "agentassay.yml already exists; nothing was written. Pass --force" in err
    assert (folder / "agentassay.yml").read_text() == "# mine\n"
    assert not (folder / ".github").exists()
    code, _, err = run(capsys, "init", str(folder), "--force")
    assert code == 0, err
    assert "agent: bot:support_agent" in (folder / "agentassay.yml").read_text()


def test_init_asks_for_agent_when_none_or_several_are_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = repo(tmp_path, {"util.py": "def add(a, b):\n    return a + b\n"})
    code, _, err = run(capsys, "init", str(folder))
    assert code == 3 and "no agent found" in err and "--agent" in err
    (folder / "a.py").write_text("def answer(q):\n    return q\n")
    (folder / "b.py").write_text("def chat_reply(q):\n    return q\n")
    code, _, err = run(capsys, "init", str(folder))
    assert code == 3 and "2 possible agents found" in err and "a:answer" in err and "b:chat_reply" in err
    code, out, err = run(capsys, "init", str(folder), "--agent", "b:chat_reply")
    assert code == 0, err
    assert "b:chat_reply (a Python callable, b.py:1)" in out
    code, _, err = run(capsys, "init", str(folder), "--agent", "b.py", "--force")
    assert code == 3 and "expected 'package.module:attribute'" in err


def test_init_in_a_subfolder_puts_the_workflows_at_the_repository_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo(tmp_path, {"service/bot.py": CALLABLE_AGENT})
    code, _, err = run(capsys, "init", str(tmp_path / "service"))
    assert code == 0, err
    check = tmp_path / ".github" / "workflows" / "agentassay-check.yml"
    validate_workflows([check])
    step = next(s for s in yaml.safe_load(check.read_text())["jobs"]["agentassay"]["steps"] if s.get("id") == "assay")
    assert step["with"]["working-directory"] == "service" and "install" not in step["with"]
    assert (tmp_path / "service" / "agentassay.yml").is_file()


def test_scan_reads_frameworks_and_skips_tests_and_environments(tmp_path: Path) -> None:
    files = {
        "graph.py": textwrap.dedent("""\
            from langgraph.graph import StateGraph
            builder = StateGraph(dict)
            graph = builder.compile()
            """),
        "crew.py": "from crewai import Crew, Agent\nresearcher = Agent(role='r')\ncrew = Crew(agents=[researcher])\n",
        "tests/test_bot.py": "def answer(q):\n    return q\n",
        ".venv/lib/agent.py": "def agent(q):\n    return q\n",
        "ask.py": "def ask(q):\n    return q\n",
        "helpers.py": "def build_agent(x):\n    return x\n\ndef agent_name(a):\n    return a\n",
        "made.py": "from helpers import build_agent\ntriage_agent = build_agent(1)\n_private_agent = build_agent(2)\n",
    }
    repo(tmp_path, files)
    found = {c.entry: c for c in scan(tmp_path)}
    assert found["graph:graph"].kind == "langgraph" and found["crew:crew"].kind == "crewai"
    assert "crew:researcher" not in found  # passed into the crew: not an entry
    assert found["ask:ask"].kind == CALLABLE and found["ask:ask"].score < found["crew:crew"].score
    assert not any(e.startswith(("tests.", ".venv")) for e in found)
    assert SDK not in {c.kind for c in found.values()}
    # An object a factory makes, named as an agent; factories and helpers are not agents.
    assert found["made:triage_agent"].kind == UNKNOWN and found["made:triage_agent"].score == 3
    assert not {"made:_private_agent", "helpers:build_agent", "helpers:agent_name"} & set(found)


def test_init_agent_names_an_object_its_source_does_not_show_and_is_imported_only_then(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = repo(tmp_path, {
        "factory_mod.py": "def _make():\n    return lambda text: 'hi ' + text\n\nagent_fn = _make()\n",
        "broken.py": "raise SystemExit('do not import me')\n\nthing = object()\n",
    })
    code, out, err = run(capsys, "init", str(folder), "--agent", "factory_mod:agent_fn")
    assert code == 0, err
    assert "factory_mod:agent_fn (a Python callable)" in out  # imported: it was named
    assert not (folder / "agentassay.offline.yml").exists()
    code, out, err = run(capsys, "init", str(folder), "--agent", "broken:thing", "--force")
    assert code == 0, err  # SystemExit on import does not end init; `run` will say why
    assert "could not import it" in out and (folder / "agentassay.offline.yml").is_file()
