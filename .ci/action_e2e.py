#!/usr/bin/env python3
"""Run the action's image the way the Actions runner runs a container action, against a fake GitHub.

    python .ci/action_e2e.py --image agentassay-action:ci

Workspace mounted at /github/workspace, GITHUB_* and INPUT_* variables (hyphens kept), an event
file, file commands for outputs and the summary; the container reaches the fake GitHub server
(tests/_support/fakegithub.py, a real HTTP server on the host's 127.0.0.1) through --network=host.

1. push to main, mode auto: the container records a baseline of the bundled example (v1);
   it is zipped and served as the artifact `agentassay-baseline`.
2. pull request, v1 against it: exit 0, one comment created, status success.
3. pull request, regressed v2: exit 1, the same comment updated (still one), status failure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REPO, REPO_ID, PR, TOKEN = "octo/app", 101, 7, "ghs_e2e_write_token_0001"
SUITE = "examples/customer_service/agentassay.yml"


def fail(message: str) -> None:
    print(f"action e2e: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def run_container(image: str, work: Path, event_name: str, event: dict[str, Any], api_url: str, ref: str) -> tuple[int, dict[str, str]]:
    for sub in ("workflow", "file_commands", "runner_temp", "home"):
        (work / sub).mkdir(exist_ok=True)
    (work / "workflow" / "event.json").write_text(json.dumps(event))
    for f in ("output", "summary"):
        (work / "file_commands" / f).write_text("")
    env = {
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "HOME": "/github/home",
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_RUN_ID": "777",
        "GITHUB_SHA": "mergesha",
        "GITHUB_REF": ref,
        "GITHUB_OUTPUT": "/github/file_commands/output",
        "GITHUB_STEP_SUMMARY": "/github/file_commands/summary",
        "RUNNER_TEMP": "/github/runner_temp",
        "INPUT_SUITE": SUITE,
        "INPUT_GITHUB-TOKEN": TOKEN,
        "INPUT_MODE": "auto",
        "INPUT_COMMENT": "true",
        "INPUT_FAIL-ON": "block",
    }
    cmd = ["docker", "run", "--rm", "--network=host", "--workdir", "/github/workspace"]
    cmd += ["-v", f"{work / 'workspace'}:/github/workspace"]
    for sub in ("workflow", "file_commands", "runner_temp", "home"):
        cmd += ["-v", f"{work / sub}:/github/{sub}"]
    for k, v in env.items():
        cmd += ["-e", f"{k}={v}"]
    start = time.perf_counter()
    done = subprocess.run([*cmd, image], check=False)
    print(f"action e2e: container exited {done.returncode} after {time.perf_counter() - start:.1f} s", flush=True)
    lines = (work / "file_commands" / "output").read_text().splitlines()
    return done.returncode, dict(line.split("=", 1) for line in lines if "=" in line)


def pr_event() -> dict[str, Any]:
    return {
        "pull_request": {
            "number": PR,
            "head": {"sha": "headsha", "ref": "feature", "repo": {"full_name": REPO}},
            "base": {"ref": "main", "repo": {"full_name": REPO}},
        },
        "repository": {"id": REPO_ID, "full_name": REPO, "default_branch": "main"},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--image", default="agentassay-action:ci")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentassay-e2e-"))
    ws = work / "workspace"
    ws.mkdir()
    shutil.copytree(ROOT / "examples", ws / "examples", ignore=shutil.ignore_patterns("__pycache__"))

    # 1. Record the baseline on a push to main (mode auto), no GitHub calls needed.
    repo = {"id": REPO_ID, "full_name": REPO, "default_branch": "main"}
    code, out = run_container(args.image, work, "push", {"repository": repo}, "http://127.0.0.1:9", "refs/heads/main")
    if code != 0 or out.get("mode") != "record":
        fail(f"recording the baseline: exit {code}, outputs {out}")
    artifact = work / "baseline.zip"
    with zipfile.ZipFile(artifact, "w") as zf:
        for f in (ws / "agentassay-results").iterdir():
            zf.write(f, f.name)
    shutil.rmtree(ws / "agentassay-results")

    # The fake GitHub, as its own process, seeded with the repository, a token and the artifact.
    seed = {
        "repos": [{"full_name": REPO, "id": REPO_ID, "default_branch": "main"}],
        "tokens": [{"token": TOKEN, "write": True}],
        "artifacts": [{"repo": REPO, "name": "agentassay-baseline", "path": str(artifact), "head_branch": "main",
                       "head_repository_id": REPO_ID, "head_sha": "basesha", "created_at": "2026-11-20T10:00:00Z"}],
    }
    (work / "seed.json").write_text(json.dumps(seed))
    ready, state = work / "ready.json", work / "state.json"
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "_support" / "fakegithub.py"), "serve", "--seed-file", str(work / "seed.json"),
         "--ready-file", str(ready), "--state-file", str(state)],
    )
    try:
        for _ in range(100):
            if ready.exists():
                break
            time.sleep(0.1)
        else:
            fail("the fake GitHub server did not start")
        url = json.loads(ready.read_text())["url"]

        def current() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            data = json.loads(state.read_text())
            comments = data.get("comments", {}).get(REPO, {}).get(str(PR), [])
            statuses = data.get("statuses", {}).get(REPO, {}).get("headsha", [])
            return comments, statuses

        # 2. The unchanged agent: no block, one comment, a success status.
        code, out = run_container(args.image, work, "pull_request", pr_event(), url, f"refs/pull/{PR}/merge")
        comments, statuses = current()
        if code != 0 or out.get("decision") == "block":
            fail(f"v1 against its own baseline: exit {code}, outputs {out}")
        if len(comments) != 1 or statuses[0]["state"] != "success":
            fail(f"after the v1 run: {len(comments)} comments, statuses {[s['state'] for s in statuses]}")
        first = comments[0]

        # 3. The regressed agent: exit 1, the same comment updated, a failure status.
        suite = ws / SUITE
        suite.write_text(suite.read_text().replace("customer_service.v1:", "customer_service.v2:"))
        code, out = run_container(args.image, work, "pull_request", pr_event(), url, f"refs/pull/{PR}/merge")
        comments, statuses = current()
        if code != 1 or out.get("decision") != "block":
            fail(f"v2 against the baseline: exit {code}, outputs {out}")
        if len(comments) != 1 or comments[0]["id"] != first["id"] or comments[0]["body"] == first["body"]:
            fail(f"the comment was not updated in place: {[c['id'] for c in comments]}")
        if statuses[0]["state"] != "failure" or "BLOCK" not in comments[0]["body"]:
            fail(f"status {statuses[0]['state']}, comment starts {comments[0]['body'][:200]!r}")
        print(f"action e2e: PASS (comment {first['id']} created, then updated; statuses "
              f"{[s['state'] for s in reversed(statuses)]}; outputs {out})")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)
        if os.environ.get("AGENTASSAY_E2E_KEEP") is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
