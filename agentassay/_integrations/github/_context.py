"""What the Actions runner tells a container action: ``INPUT_*``, ``GITHUB_*`` and the event payload.

The runner passes inputs as ``INPUT_<NAME>`` with the name upper-cased and hyphens *kept*
(``github-token`` arrives as ``INPUT_GITHUB-TOKEN``), so they are read from the mapping, never
as shell variables. Everything here is pure parsing: no network, so it is tested on dicts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._errors import AgentAssayError

MODES = ("auto", "check", "record", "publish")
FAIL_ON = ("block", "manual")
PR_EVENTS = ("pull_request", "pull_request_target")


class ActionInputError(AgentAssayError, ValueError):
    """An input the action cannot use; the message names the input and the fix."""


def _input(env: Mapping[str, str], name: str, default: str = "") -> str:
    value = env.get(f"INPUT_{name.upper()}")
    if value is None:  # some runners (and `act`) turn hyphens into underscores
        value = env.get(f"INPUT_{name.upper().replace('-', '_')}")
    return default if value is None or value.strip() == "" else value.strip()


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = _input(env, name, "true" if default else "false").lower()
    if raw in ("true", "yes", "1", "on"):
        return True
    if raw in ("false", "no", "0", "off"):
        return False
    raise ActionInputError(f"input '{name}': expected true or false, got {raw!r}")


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...], default: str) -> str:
    raw = _input(env, name, default).lower()
    if raw not in choices:
        raise ActionInputError(f"input '{name}': expected one of {', '.join(choices)}, got {raw!r}")
    return raw


def _positive(env: Mapping[str, str], name: str, kind: type, minimum: float) -> Any:
    raw = _input(env, name)
    if not raw:
        return None
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value < minimum:
        what = "an integer" if kind is int else "a number"
        raise ActionInputError(f"input '{name}': expected {what} >= {minimum:g}, got {raw!r}")
    return value


@dataclass(frozen=True)
class Inputs:
    suite: str = "agentassay.yml"
    baseline_artifact: str = "agentassay-baseline"
    baseline_file: str = ""
    token: str = ""
    mode: str = "auto"
    comment: bool = True
    comment_author: str = ""  # whose marker comments are ours; empty: the token's login (docs/action.md)
    fail_on: str = "block"
    install: str = ""
    working_directory: str = "."
    concurrency: int | None = None
    budget_usd: float | None = None
    status_context: str = "agentassay"
    results_path: str = "agentassay-results"
    shard: str = ""
    shard_results: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Inputs:
        return cls(
            suite=_input(env, "suite", cls.suite),
            baseline_artifact=_input(env, "baseline-artifact", cls.baseline_artifact),
            baseline_file=_input(env, "baseline-file"),
            token=_input(env, "github-token"),
            mode=_choice(env, "mode", MODES, cls.mode),
            comment=_bool(env, "comment", cls.comment),
            comment_author=_input(env, "comment-author"),
            fail_on=_choice(env, "fail-on", FAIL_ON, cls.fail_on),
            install=_input(env, "install"),
            working_directory=_input(env, "working-directory", cls.working_directory),
            concurrency=_positive(env, "concurrency", int, 1),
            budget_usd=_positive(env, "budget-usd", float, 0),
            status_context=_input(env, "status-context", cls.status_context),
            results_path=_input(env, "results-path", cls.results_path),
            shard=_input(env, "shard"),
            shard_results=_input(env, "shard-results"),
        )


@dataclass(frozen=True)
class ActionContext:
    """One run of the action: inputs, the repository, the event, and where to write."""

    inputs: Inputs
    repository: str  # owner/name
    event_name: str
    event: dict[str, Any] = field(default_factory=dict)
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    run_id: str = ""
    sha: str = ""
    ref: str = ""
    workspace: Path = Path(".")
    output_file: Path | None = None
    summary_file: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ActionContext:
        env = dict(os.environ if env is None else env)
        event: dict[str, Any] = {}
        path = env.get("GITHUB_EVENT_PATH")
        if path:
            try:
                loaded = json.loads(Path(path).read_text(encoding="utf-8"))
                event = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                event = {}  # a missing payload only costs the PR-specific features
        repository = env.get("GITHUB_REPOSITORY", "")
        return cls(
            inputs=Inputs.from_env(env),
            repository=repository,
            event_name=env.get("GITHUB_EVENT_NAME", ""),
            event=event,
            api_url=env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/"),
            server_url=env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/"),
            run_id=env.get("GITHUB_RUN_ID", ""),
            sha=env.get("GITHUB_SHA", ""),
            ref=env.get("GITHUB_REF", ""),
            workspace=Path(env.get("GITHUB_WORKSPACE") or "."),
            output_file=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None,
            summary_file=Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None,
            env=env,
        )

    # -- the event -----------------------------------------------------------------------------
    @property
    def pull_request(self) -> dict[str, Any] | None:
        pr = self.event.get("pull_request")
        return pr if self.event_name in PR_EVENTS and isinstance(pr, dict) else None

    @property
    def pr_number(self) -> int | None:
        pr = self.pull_request
        return int(pr["number"]) if pr and "number" in pr else None

    @property
    def base_branch(self) -> str | None:
        pr = self.pull_request
        return (pr.get("base") or {}).get("ref") if pr else None

    @property
    def head_sha(self) -> str:
        """The commit a status belongs to: the PR's head, not the merge commit in GITHUB_SHA."""
        pr = self.pull_request
        return str((pr.get("head") or {}).get("sha") or self.sha) if pr else self.sha

    @property
    def repository_id(self) -> int | None:
        repo = self.event.get("repository") or {}
        return int(repo["id"]) if isinstance(repo, dict) and "id" in repo else None

    @property
    def default_branch(self) -> str | None:
        repo = self.event.get("repository") or {}
        return repo.get("default_branch") if isinstance(repo, dict) else None

    @property
    def is_fork(self) -> bool:
        """A PR from another repository: its token is read-only and secrets are absent."""
        pr = self.pull_request
        if not pr:
            return False
        head_repo = (pr.get("head") or {}).get("repo") or {}
        base_repo = (pr.get("base") or {}).get("repo") or {}
        if not head_repo:  # the fork was deleted
            return True
        return head_repo.get("full_name") != (base_repo.get("full_name") or self.repository)

    @property
    def workflow_run(self) -> dict[str, Any]:
        """The run a ``workflow_run`` event reports on (GitHub's own record of it); empty for other events."""
        run = self.event.get("workflow_run") if self.event_name == "workflow_run" else None
        return run if isinstance(run, dict) else {}

    @property
    def results_origin(self) -> str | None:
        """Who made the results a publish job was handed, when that was code from a pull request.

        A ``workflow_run`` workflow publishes what another workflow made; if that workflow ran a
        pull request's code (a fork's, above all), its results are only as honest as that code:
        the publish job re-derives them and says whose they are. None: our own jobs' results.
        """
        run = self.workflow_run
        if not run:
            return None
        head = (run.get("head_repository") or {}).get("full_name")
        if head != self.repository:
            return f"the fork's workflow ({head})" if head else "the fork's workflow (a deleted fork)"
        if run.get("event") == "push":
            return None
        return "the pull request's workflow"

    @property
    def on_default_branch(self) -> bool:
        default = self.default_branch
        return bool(default) and self.ref == f"refs/heads/{default}"

    @property
    def run_url(self) -> str | None:
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    def mode(self) -> str:
        """``auto``: a pull request is checked, a push to the default branch records a baseline."""
        mode = self.inputs.mode
        if mode != "auto":
            return mode
        if self.pull_request is not None:
            return "check"
        if self.on_default_branch:
            return "record"
        raise ActionInputError(
            f"input 'mode' is auto, but event '{self.event_name}' on '{self.ref}' is neither a pull request "
            "nor a push to the default branch; set `mode: check` or `mode: record`"
        )
