"""The Action's test harness: a fake GitHub (tests/_support/fakegithub.py) seeded with a repository and
its tokens, and a workspace (a checkout plus the runner's files) that runs the Action in-process.

Shared by tests/integrations/github/test_action.py and tests/adversarial/test_{github,output}.py; the
fixtures ``gh``, ``ws`` and ``recorded`` are registered for the whole suite by tests/conftest.py.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentassay._integrations.github import ClientSettings, run_action
from tests._support.fakegithub import FakeGitHub

REPO, REPO_ID, PR = "octo/app", 101, 7
TOKEN, READ_TOKEN = "ghs_writetoken123456", "ghs_readtoken1234567"
USER_TOKEN = "ghp_usertoken12345678"  # a personal token: GET /user names its user
# Tests never wait: no back-off, Retry-After capped at 0 s, no pacing. Production keeps ClientSettings().
FAST = ClientSettings(backoff_factor=0.0, max_wait=0.0, pacing=False)

AGENT = '''\
import random

def v1(text: str, seed: int) -> str:
    """Always right: an unchanged copy of it must PASS."""
    return ("refund approved" if "refund" in text else "ok " + text)

def v2(text: str, seed: int) -> str:
    """Regressed: refunds mostly fail; the output carries HTML and a mention."""
    rng = random.Random(seed)
    if "refund" in text:
        return "refund approved" if rng.random() < 0.4 else "<img src=x onerror=alert(1)> @octocat no"
    return v1(text, seed)
'''

SUITE = """\
name: shop
agent: shopagent:{version}
config:
  trials: 150
  threshold: 0.8
  seed: 3
  concurrency: 16
scenarios:
  - name: refund
    input: "I want a refund"
    evaluator: {{contains: approved}}
  - name: hello
    input: hello
    evaluator: {{contains: ok}}
  - name: order
    input: where is my order
    evaluator: {{contains: ok}}
  - name: hours
    input: opening hours
    evaluator: {{contains: ok}}
"""


class Workspace:
    """A repository checkout plus the runner's files (event, outputs, summary)."""

    def __init__(self, root: Path, gh: FakeGitHub) -> None:
        self.root, self.gh = root, gh
        (root / "shopagent.py").write_text(AGENT)
        self.version("v1")
        self.temp = root.parent / f"{root.name}-runner-temp"
        self.temp.mkdir(exist_ok=True)

    def version(self, v: str) -> None:
        (self.root / "agentassay.yml").write_text(SUITE.format(version=v))

    def event(self, kind: str) -> tuple[str, dict[str, Any], str]:
        repo = {"id": REPO_ID, "full_name": REPO, "default_branch": "main"}
        if kind == "push":
            return "push", {"repository": repo, "ref": "refs/heads/main"}, "refs/heads/main"
        head_repo = {"full_name": "stranger/app" if kind == "fork" else REPO}
        pr = {
            "number": PR,
            "head": {"sha": "headsha1", "ref": "feature", "repo": head_repo},
            "base": {"ref": "main", "repo": {"full_name": REPO}},
        }
        return "pull_request", {"pull_request": pr, "repository": repo}, f"refs/pull/{PR}/merge"

    def run(self, kind: str = "pr", *, token: str = TOKEN, **inputs: str) -> tuple[int, str]:
        name, payload, ref = self.event(kind)
        event_file = self.temp / "event.json"
        event_file.write_text(json.dumps(payload))
        for f in ("output.txt", "summary.md"):
            (self.temp / f).unlink(missing_ok=True)
        env = {
            "GITHUB_WORKSPACE": str(self.root),
            "GITHUB_EVENT_PATH": str(event_file),
            "GITHUB_EVENT_NAME": name,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": self.gh.url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_RUN_ID": "4242",
            "GITHUB_SHA": "mergesha",
            "GITHUB_REF": ref,
            "GITHUB_OUTPUT": str(self.temp / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(self.temp / "summary.md"),
            "RUNNER_TEMP": str(self.temp),
            "INPUT_GITHUB-TOKEN": token,
            "INPUT_SUITE": "agentassay.yml",
            **{f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()},
        }
        out = io.StringIO()
        code = run_action(env, stdout=out, github_settings=FAST)
        return code, out.getvalue()

    @property
    def outputs(self) -> dict[str, str]:
        lines = (self.temp / "output.txt").read_text().splitlines()
        return dict(line.split("=", 1) for line in lines)

    @property
    def summary(self) -> str:
        return (self.temp / "summary.md").read_text()

    def baseline_zip(self, results_path: str = "agentassay-results") -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for f in (self.root / results_path).iterdir():
                zf.write(f, f.name)
        return buf.getvalue()


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    """The fake GitHub with REPO and its write, read-only and personal tokens."""
    with FakeGitHub() as server:
        server.add_repo(REPO, id=REPO_ID, default_branch="main")
        server.add_token(TOKEN, write=True)
        server.add_token(READ_TOKEN, write=False)
        server.add_token(USER_TOKEN, write=True, login="octocat")
        yield server


@pytest.fixture
def ws(tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)  # the action chdirs; monkeypatch restores the cwd afterwards
    monkeypatch.syspath_prepend(str(root))
    return Workspace(root, gh)


@pytest.fixture
def recorded(ws: Workspace, gh: FakeGitHub) -> Workspace:
    """A baseline of v1 recorded on main and uploaded as the artifact."""
    code, _ = ws.run("push")
    assert code == 0 and ws.outputs["mode"] == "record"
    gh.add_artifact(REPO, "agentassay-baseline", ws.baseline_zip(), head_branch="main", head_repository_id=REPO_ID,
                    head_sha="basesha", created_at="2026-11-20T10:00:00Z")
    return ws
