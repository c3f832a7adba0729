"""Issue 22, defects 5 and 13: the Action against the fake GitHub server (tests/_support/fakegithub.py).

Defect 5: a fork's results are made by the fork's code, so the publish job (``mode: publish`` in a
``workflow_run`` workflow, examples/workflows/fork-safe-publish.yml) must never take the file's word for
anything: each forged file below claims DEPLOY with every trial passed, while its trials (or the base
branch's settings) say otherwise. The verdicts are re-derived from the trials against the base branch's
baseline and settings, and the status and the comment say the results came from the fork's workflow.

Defect 13: whatever stops the engine (bad suite, agent import, credentials, install, a crash, a fork run
that left no results), a pull request gets a commit status ``error`` with a one-line reason and the
sticky comment and job summary say so, so a required check never waits forever; the exit code stays the
engine's. Driven in-process like tests/integrations/github/test_action.py (the Workspace harness of
tests/_support/github.py), every GitHub effect over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
from agentassay._integrations.github._comments import DESCRIPTION_MAX  # noqa: E402
from tests._support.fakegithub import FakeGitHub  # noqa: E402
from tests._support.github import PR, READ_TOKEN, REPO, REPO_ID, Workspace  # noqa: E402


def _publish(ws: Workspace, gh: FakeGitHub, folder: str = "fork-results") -> tuple[int, str]:
    """The fork-safe publish job: a workflow_run event in the base repository with a write token."""
    event = {
        "workflow_run": {"head_sha": "headsha1", "event": "pull_request", "id": 77,
                         "head_repository": {"full_name": "stranger/app"}},
        "repository": {"id": REPO_ID, "full_name": REPO, "default_branch": "main"},
    }
    original = ws.event
    ws.event = lambda kind: ("workflow_run", event, "refs/heads/main")  # type: ignore[method-assign]
    try:
        return ws.run(mode="publish", shard_results=folder, results_path="published")
    finally:
        ws.event = original  # type: ignore[method-assign]


def _consistent(d: dict[str, Any]) -> None:
    """A careful forger keeps each scenario's counts equal to its trial records, so the file passes validation
    on load (docs/runner.md, "Validation on load") and only re-derivation can catch it."""
    for s in d["scenarios"]:
        trials = s["trials"]
        s["trials_run"] = len(trials)
        s["passes"] = sum(t["passed"] is True for t in trials)
        s["counted_trials"] = sum(t["passed"] is not None for t in trials)
        s["errors"] = sum(bool(t.get("error")) for t in trials)


def _forge_verdicts(d: dict[str, Any]) -> None:
    """Everything a reader would look at says DEPLOY, every verdict PASS; the trials are left as measured."""
    n = len(d["scenarios"])
    d["decision"] = {"verdict": "pass", "decision": "deploy", "exit_code": 0, "counts": {"pass": n}, "correction": "holm"}
    for s in d["scenarios"]:
        s["verdict"].update(verdict="pass", pvalue=1.0, explanation="PASS: forged", rate_verdict="pass")
        s["failure_reasons"] = {}
    _consistent(d)


def _as_run(d: dict[str, Any]) -> None:
    _forge_verdicts(d)
    d["kind"] = "run"  # a `run` file was published as record-only: never gated
    for s in d["scenarios"]:
        s["baseline"] = None


def _lenient(d: dict[str, Any]) -> None:
    _forge_verdicts(d)
    d["settings"].update(threshold=1e-9, alpha=1e-12, method="fixed")
    for s in d["scenarios"]:
        s["threshold"] = 1e-9


def _drop_failing(d: dict[str, Any]) -> None:
    d["scenarios"] = [s for s in d["scenarios"] if s["name"] != "refund"]
    _forge_verdicts(d)


def _failures_as_excluded_errors(d: dict[str, Any]) -> None:
    _forge_verdicts(d)
    d["settings"]["errors"] = "exclude"
    for s in d["scenarios"]:
        for t in s["trials"]:
            if t["passed"] is False:
                t.update(passed=None, error="forged: not counted")
    _consistent(d)


FORGERIES: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("decision deploy, every verdict pass, every count all-passed", _forge_verdicts),
    ("kind 'run', so the publish job would take it as record-only", _as_run),
    ("threshold 1e-9 and alpha 1e-12 in the fork's own settings", _lenient),
    ("the failing scenario left out of the file", _drop_failing),
    ("failed trials turned into excluded errors", _failures_as_excluded_errors),
]


@pytest.mark.parametrize(("case", "forge"), FORGERIES, ids=[c for c, _ in FORGERIES])
def test_forged_fork_results_are_rederived_and_never_green(
    recorded: Workspace, gh: FakeGitHub, case: str, forge: Callable[[dict[str, Any]], None]
) -> None:
    recorded.version("v2")  # the fork's change regresses refunds
    code, _ = recorded.run("fork", token=READ_TOKEN, results_path="fork-results")
    assert code == 1
    results_file = recorded.root / "fork-results" / "results.json"
    data = json.loads(results_file.read_text())
    forge(data)
    trials_forged = sum(len(s["trials"]) for s in data["scenarios"])
    results_file.write_text(json.dumps(data))
    gh.add_pull(REPO, PR, "headsha1")

    code, out = _publish(recorded, gh)

    assert "Traceback" not in out
    assert code == 1, out
    [status] = gh.statuses(REPO, "headsha1")
    assert status["state"] == "failure", (case, status)
    assert "fork" in status["description"] and len(status["description"]) <= DESCRIPTION_MAX
    [comment] = gh.comments(REPO, PR)
    body = comment["body"]
    assert "fork's workflow" in body and "Every scenario passed" not in body
    assert "refund" in body  # the scenario that failed (or went missing) is named
    published = json.loads((recorded.root / "published" / "results.json").read_text())
    assert published["decision"]["decision"] == "block"
    assert sum(len(s["trials"]) for s in published["scenarios"]) == trials_forged  # every trial is kept


def test_forged_counts_fail_validation_and_the_pr_hears_of_it(recorded: Workspace, gh: FakeGitHub) -> None:
    """A forgery that does not keep its counts equal to its trials is refused on load (exit 3): status error."""
    recorded.version("v2")
    code, _ = recorded.run("fork", token=READ_TOKEN, results_path="fork-results")
    assert code == 1
    results_file = recorded.root / "fork-results" / "results.json"
    data = json.loads(results_file.read_text())
    for s in data["scenarios"]:
        s["passes"] = s["counted_trials"] = s["trials_run"]
    results_file.write_text(json.dumps(data))
    gh.add_pull(REPO, PR, "headsha1")
    code, out = _publish(recorded, gh)
    assert code == 3 and "Traceback" not in out
    assert "scenarios[" in out and "passes" in out  # the JSON path at fault
    [status] = gh.statuses(REPO, "headsha1")
    assert status["state"] == "error", status


def test_an_honest_fork_run_passes_but_says_whose_results_they_are(recorded: Workspace, gh: FakeGitHub) -> None:
    code, _ = recorded.run("fork", token=READ_TOKEN, results_path="fork-results")
    assert code == 0
    gh.add_pull(REPO, PR, "headsha1")
    code, out = _publish(recorded, gh)
    assert code == 0, out
    [status] = gh.statuses(REPO, "headsha1")
    assert status["state"] == "success" and "fork" in status["description"]
    [comment] = gh.comments(REPO, PR)
    assert "fork's workflow" in comment["body"]


def test_fork_results_without_a_trusted_baseline_are_not_published_as_verified(ws: Workspace, gh: FakeGitHub) -> None:
    """No baseline artifact on main: nothing to re-derive against; record-only, and it says so."""
    code, _ = ws.run("fork", token=READ_TOKEN, results_path="fork-results")
    assert code == 0
    gh.add_pull(REPO, PR, "headsha1")
    code, out = _publish(ws, gh)
    assert code == 0, out
    [status] = gh.statuses(REPO, "headsha1")
    assert "fork" in status["description"] and "no baseline" in status["description"]


# -- defect 13: every engine error is a commit status `error` -----------------------------------------------

BAD_SUITE = "name: shop\nagent: shopagent:v1\nscenarios: 5\n"
NO_MODULE = "name: shop\nagent: no_such_module_xyz:f\nscenarios:\n  - {name: s, input: hi, evaluator: {contains: ok}}\n"
CREDENTIALS = """\
name: creds
agent: sdkagent:helper
model: {provider: openai, name: gpt-4.1-mini}
config: {trials: 4, method: fixed, concurrency: 2}
scenarios:
  - {name: s, input: hi, evaluator: {contains: ok}}
"""
SDK_AGENT = 'from agents import Agent\nhelper = Agent(name="helper", instructions="Answer.")\n'


def _crash(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentassay._runner

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("engine bug: boom")

    monkeypatch.setattr(agentassay._runner, "run_suite", boom)


# (case, suite text or None, extra inputs, set-up, expected exit code, words the reason must hold)
ERRORS: list[tuple[str, str | None, dict[str, str], Callable[..., None] | None, int | None, str]] = [
    ("a bad suite", BAD_SUITE, {}, None, 3, "agentassay.yml"),
    ("a suite file that is missing", None, {"suite": "missing.yml"}, None, 3, "missing.yml"),
    ("an agent that cannot be imported", NO_MODULE, {}, None, 4, "no_such_module_xyz"),
    ("missing provider credentials", CREDENTIALS, {}, None, 4, "OPENAI_API_KEY"),
    ("an install command that fails", None, {"install": "exit 7"}, None, 4, "exited with 7"),
    ("an unexpected crash", None, {}, _crash, None, "RuntimeError"),
]


@pytest.mark.parametrize(
    ("case", "suite", "inputs", "setup", "exit_code", "reason"), ERRORS, ids=[e[0] for e in ERRORS]
)
def test_every_engine_error_sets_an_error_status_and_says_why(
    ws: Workspace, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch, case: str, suite: str | None,
    inputs: dict[str, str], setup: Callable[..., None] | None, exit_code: int | None, reason: str,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (ws.root / "sdkagent.py").write_text(SDK_AGENT)
    if suite is not None:
        (ws.root / "agentassay.yml").write_text(suite)
    if setup is not None:
        setup(monkeypatch)
    if exit_code is None:  # a crash keeps its traceback and Python's exit code; the PR still hears of it
        with pytest.raises(RuntimeError, match="boom"):
            ws.run(**inputs)
    else:
        code, out = ws.run(**inputs)
        assert code == exit_code, out
        assert "Traceback" not in out
    [status] = gh.statuses(REPO, "headsha1")
    assert status["state"] == "error", (case, status)
    assert reason in status["description"] and len(status["description"]) <= DESCRIPTION_MAX
    assert "\n" not in status["description"]
    [comment] = gh.comments(REPO, PR)
    unescaped = comment["body"].replace("\\", "")  # Markdown escapes '_' in names
    assert "**ERROR**" in comment["body"] and reason in unescaped
    assert "**ERROR**" in ws.summary and reason in ws.summary.replace("\\", "")


def test_a_fork_run_that_left_no_results_gets_an_error_status(ws: Workspace, gh: FakeGitHub) -> None:
    """The fork's check failed before writing results.json (bad suite): the publish job reports the error."""
    (ws.root / "agentassay.yml").write_text(BAD_SUITE)
    code, _ = ws.run("fork", token=READ_TOKEN, results_path="fork-results")
    assert code == 3
    gh.add_pull(REPO, PR, "headsha1")
    code, out = _publish(ws, gh)
    assert code == 3 and "Traceback" not in out
    [status] = gh.statuses(REPO, "headsha1")
    assert status["state"] == "error" and "fork" in status["description"]
    [comment] = gh.comments(REPO, PR)
    assert "results.json" in comment["body"]
