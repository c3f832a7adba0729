"""The action's view of the runner: INPUT_* (hyphens kept), GITHUB_*, the event payload, the mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentassay.github import ActionContext, ActionInputError, Inputs
from agentassay.github._action import _escape_command
from agentassay.github._client import _wait_s


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


class _Resp:
    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status_code, self.headers = status, headers


def test_retry_waits_follow_github_rate_limit_headers() -> None:
    assert _wait_s(_Resp(429, {"Retry-After": "3"}), 1) == 3.0  # type: ignore[arg-type]
    assert _wait_s(_Resp(403, {"Retry-After": "2"}), 1) == 2.0  # type: ignore[arg-type]
    assert _wait_s(_Resp(403, {}), 1) is None  # a permission error: retrying cannot help
    assert _wait_s(_Resp(404, {}), 1) is None  # type: ignore[arg-type]
    assert _wait_s(_Resp(502, {}), 2) == 4.0  # type: ignore[arg-type]
    assert _wait_s(_Resp(429, {"Retry-After": "3600"}), 1) == 60.0  # type: ignore[arg-type]
