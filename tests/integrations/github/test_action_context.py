"""The action's view of the runner: INPUT_* (hyphens kept), GITHUB_*, the event payload, the mode."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentassay._integrations.github import ActionContext, ActionInputError, Inputs
from agentassay._integrations.github._action import _escape_command
from agentassay._integrations.github._client import ClientSettings, retry_policy


def _pr_event(*, fork: bool = False) -> dict[str, Any]:
    head_repo = {"full_name": "someone/app" if fork else "octo/app"}
    return {
        "pull_request": {
            "number": 7,
            "head": {"sha": "headsha", "ref": "feature", "repo": head_repo},
            "base": {"ref": "main", "repo": {"full_name": "octo/app"}},
        },
        "repository": {"id": 101, "full_name": "octo/app", "default_branch": "main"},
    }


def _ctx(tmp_path: Path, event: dict[str, Any], **env: str) -> ActionContext:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    base = {
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REPOSITORY": "octo/app",
        "GITHUB_SHA": "mergesha",
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_RUN_ID": "99",
    }
    return ActionContext.from_env({**base, **env})


def test_inputs_keep_hyphens_and_have_defaults() -> None:
    inputs = Inputs.from_env({"INPUT_GITHUB-TOKEN": "t0k", "INPUT_FAIL-ON": "Manual", "INPUT_CONCURRENCY": "4"})
    assert inputs.token == "t0k" and inputs.fail_on == "manual" and inputs.concurrency == 4
    assert inputs.suite == "agentassay.yml" and inputs.comment is True and inputs.mode == "auto"
    assert Inputs.from_env({"INPUT_GITHUB_TOKEN": "x"}).token == "x"  # act-style underscores


@pytest.mark.parametrize(
    ("env", "words"),
    [
        ({"INPUT_MODE": "deploy"}, "input 'mode'"),
        ({"INPUT_COMMENT": "maybe"}, "input 'comment'"),
        ({"INPUT_CONCURRENCY": "0"}, "input 'concurrency'"),
        ({"INPUT_BUDGET-USD": "lots"}, "input 'budget-usd'"),
    ],
)
def test_bad_inputs_name_the_input(env: dict[str, str], words: str) -> None:
    with pytest.raises(ActionInputError, match=words):
        Inputs.from_env(env)


def test_pull_request_context(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, _pr_event())
    assert ctx.mode() == "check"
    assert (ctx.pr_number, ctx.base_branch, ctx.head_sha, ctx.repository_id) == (7, "main", "headsha", 101)
    assert not ctx.is_fork
    assert ctx.run_url == "https://github.com/octo/app/actions/runs/99"
    assert _ctx(tmp_path, _pr_event(fork=True)).is_fork


def test_push_to_default_branch_records_and_other_pushes_need_a_mode(tmp_path: Path) -> None:
    event = {"repository": {"id": 101, "default_branch": "main"}}
    push = _ctx(tmp_path, event, GITHUB_EVENT_NAME="push", GITHUB_REF="refs/heads/main")
    assert push.mode() == "record" and push.head_sha == "mergesha"
    other = _ctx(tmp_path, event, GITHUB_EVENT_NAME="push", GITHUB_REF="refs/heads/feature")
    with pytest.raises(ActionInputError, match="mode: check"):
        other.mode()
    assert _ctx(tmp_path, event, GITHUB_EVENT_NAME="push", INPUT_MODE="check").mode() == "check"


def test_workflow_commands_cannot_be_ended_by_a_message() -> None:
    assert _escape_command("50%\n::error::x") == "50%25%0A::error::x"


def test_retry_policy_resends_only_idempotent_methods() -> None:
    retry = retry_policy()
    assert not any(retry.is_retry("POST", status) for status in (429, 500, 502, 503))
    for method in ("GET", "PATCH", "PUT", "DELETE"):
        assert retry.is_retry(method, 502) and retry.is_retry(method, 429)
    assert not retry.is_retry("GET", 404) and not retry.is_retry("GET", 422)
    assert retry.is_retry("GET", 403)  # then PyGithub's GithubRetry retries it only if it is a rate limit


def test_retry_waits_are_capped_by_the_settings() -> None:
    retry = retry_policy(ClientSettings(max_wait=60.0))
    assert retry.max_rate_limit_wait == 60.0 and retry.secondary_rate_wait == 60.0
    assert getattr(retry, "retry_after_max", 60) == 60 and getattr(retry, "backoff_max", 60.0) == 60.0
    quick = retry_policy(ClientSettings(max_wait=0.0, backoff_factor=0.0))
    assert quick.max_rate_limit_wait == 0.0 and quick.backoff_factor == 0.0


def test_pygithub_is_imported_only_when_a_client_is_made() -> None:
    """``agentassay --help`` and ``import agentassay._integrations.github`` stay fast: PyGithub loads in ``connect``."""
    code = (
        "import sys, contextlib, agentassay._integrations.github\n"
        "from agentassay._integrations.cli import main\n"
        "sys.argv = ['agentassay', '--help']\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(None): main()\n"
        "assert 'github' not in sys.modules, 'PyGithub imported'\n"
        "agentassay._integrations.github.connect('https://ghe.example.com/api/v3', 't')\n"
        "assert 'github' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
