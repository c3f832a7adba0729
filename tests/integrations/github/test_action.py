"""The action end to end against a fake GitHub (a real HTTP server on 127.0.0.1, tests/_support/fakegithub.py).

The agent is a plain callable written into a temporary workspace, the way a user's repository
holds its agent; every GitHub effect (artifact download, comment, status) goes over HTTP.
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest

from agentassay._integrations.github import (
    GitHubError,
    connect,
    set_status,
    unpack,
    upsert_comment,
)
from agentassay._integrations.github._artifacts import MAX_UNPACKED_BYTES, BaselineError
from agentassay._reports import MARKER
from agentassay._results import load_results
from tests._support.fakegithub import FakeGitHub
from tests._support.github import FAST, PR, READ_TOKEN, REPO, REPO_ID, SUITE, TOKEN, USER_TOKEN, Workspace


def _comments(gh: FakeGitHub) -> list[dict[str, Any]]:
    return gh.comments(REPO, PR)


def _writes(gh: FakeGitHub) -> list[Any]:
    return [r for r in gh.requests if r.method in ("POST", "PATCH")]


def _posts(gh: FakeGitHub, path: str) -> list[Any]:
    return [r for r in gh.requests if r.method == "POST" and r.path == path]


def test_first_run_without_baseline_is_record_only(ws: Workspace, gh: FakeGitHub) -> None:
    code, _out = ws.run()
    assert code == 0
    assert ws.outputs["mode"] == "record-only"
    [comment] = _comments(gh)
    assert "no baseline yet" in comment["body"].lower() and "record" in comment["body"].lower()
    [status] = gh.statuses(REPO, "headsha1")  # the PR head, not the merge commit
    assert status["state"] == "success" and status["context"] == "agentassay"
    assert ws.outputs["results-path"] == "agentassay-results/results.json"
    assert (ws.root / "agentassay-results" / "pr.json").exists()


def test_unchanged_agent_passes(recorded: Workspace, gh: FakeGitHub) -> None:
    code, _ = recorded.run()
    assert code == 0, recorded.summary
    assert recorded.outputs["decision"] == "deploy" and recorded.outputs["mode"] == "check"
    [status] = gh.statuses(REPO, "headsha1")
    assert status["state"] == "success" and status["target_url"].endswith("/actions/runs/4242")
    # The artifact zip was fetched from storage without the token.
    storage = [r for r in gh.requests if r.path.startswith("/_storage/")]
    assert storage and all("authorization" not in {k.lower() for k in r.headers} for r in storage)


def test_a_second_record_pools_the_previous_baseline_unless_the_suite_changed(recorded: Workspace, gh: FakeGitHub) -> None:
    first = load_results(recorded.root / "agentassay-results" / "results.json")
    per = first.scenarios[0].trials
    assert "nothing pooled: no baseline yet" in recorded.summary and "pool" not in first.sections
    # The agent, model, suite and versions are unchanged: the new baseline pools the artifact's trials.
    code, out = recorded.run("push")
    assert code == 0 and recorded.outputs["mode"] == "record"
    second = load_results(recorded.root / "agentassay-results" / "results.json")
    section = second.sections["pool"]
    assert section["pooled"] is True and section["run_id"] == first.run_id
    assert section["source"].startswith("artifact `agentassay-baseline`") and "of `main` at basesha" in section["source"]
    assert section["trials"] == 4 * len(per)
    assert all(len(s.trials) == 2 * len(per) and s.pooled_trials == len(per) for s in second.scenarios)
    seeds = [t.seed for s in second.scenarios for t in s.trials]
    assert len(seeds) == len(set(seeds))
    line = f"pooled {4 * len(per):,} trials of the previous baseline"
    assert line in out and line in recorded.summary and first.run_id in recorded.summary
    assert "::warning" not in out
    # A changed suite (the artifact is still the first baseline): nothing is pooled, and the log says why.
    (recorded.root / "agentassay.yml").write_text((recorded.root / "agentassay.yml").read_text() + "# edited\n")
    code, out = recorded.run("push")
    assert code == 0
    third = load_results(recorded.root / "agentassay-results" / "results.json")
    assert third.sections["pool"]["pooled"] is False and third.sections["pool"]["differs"] == ["suite_sha256"]
    assert all(s.pooled_trials == 0 and len(s.trials) == len(per) for s in third.scenarios)
    assert "nothing pooled: the suite file differs" in out and "nothing pooled: the suite file differs" in recorded.summary


def test_regression_fails_and_the_second_run_updates_the_same_comment(recorded: Workspace, gh: FakeGitHub) -> None:
    recorded.version("v2")
    code, _out = recorded.run()
    assert code == 1
    assert recorded.outputs["decision"] == "block" and recorded.outputs["fail"] == "1"
    [status] = gh.statuses(REPO, "headsha1")
    assert status["state"] == "failure"
    [first] = _comments(gh)
    assert "BLOCK" in first["body"] and "refund" in first["body"]
    assert "<img" not in first["body"] and "@octocat" not in first["body"]  # agent output made inert
    assert recorded.outputs["comment-url"] == first["html_url"]
    # The HTML report and JUnit XML are beside results.json, for the artifact and test-report actions.
    assert recorded.outputs["report-html"] == "agentassay-results/report.html"
    assert recorded.outputs["junit-path"] == "agentassay-results/junit.xml"
    html = (recorded.root / "agentassay-results" / "report.html").read_text()
    assert "BLOCK" in html and "<script" not in html and "<img" not in html.replace("&lt;img", "")
    # The comment links the report (the run's artifacts); the report puts the baseline artifact's traces
    # (its traces.db) beside the candidate's.
    assert "📄 [HTML report](https://github.com/" in first["body"] and "/actions/runs/4242#artifacts)" in first["body"]
    assert "A passing baseline trial" in html and "traces are not available" not in html
    junit = (recorded.root / "agentassay-results" / "junit.xml").read_text()
    assert '<testsuite ' in junit and 'failures="1"' in junit

    recorded.version("v1")
    code, _ = recorded.run()
    [again] = _comments(gh)  # updated in place, not duplicated
    assert again["id"] == first["id"] and again["body"] != first["body"]
    assert next(s["state"] for s in gh.statuses(REPO, "headsha1")) == ("success" if code == 0 else "failure")


def test_a_lost_comment_response_does_not_duplicate_the_comment(recorded: Workspace, gh: FakeGitHub) -> None:
    gh.fail_next("POST", rf"/repos/{REPO}/issues/{PR}/comments", 502, after_effect=True)
    code, out = recorded.run()
    assert code == 0 and "could not post" not in out
    assert len(_comments(gh)) == 1
    assert len(_posts(gh, f"/repos/{REPO}/issues/{PR}/comments")) == 1  # found again, not resent
    assert recorded.outputs["comment-url"] == _comments(gh)[0]["html_url"]


def test_a_post_is_never_resent_even_on_a_5xx(gh: FakeGitHub) -> None:
    """The retry policy resends idempotent requests only: one POST per comment or status, whatever the answer."""
    client = connect(gh.url, TOKEN, FAST)
    comments_path, status_path = f"/repos/{REPO}/issues/{PR}/comments", f"/repos/{REPO}/statuses/abc"
    gh.fail_next("POST", comments_path, 502)  # refused before any effect: nothing landed
    with pytest.raises(GitHubError) as err:
        upsert_comment(client, REPO, PR, f"report {MARKER}", MARKER, author="github-actions[bot]")
    assert err.value.status == 502 and _comments(gh) == []
    assert len(_posts(gh, comments_path)) == 1
    gh.fail_next("POST", status_path, 503, headers={"Retry-After": "1"})
    with pytest.raises(GitHubError):
        set_status(client, REPO, "abc", "success", description="d", context="agentassay")
    assert len(_posts(gh, status_path)) == 1 and gh.statuses(REPO, "abc") == []
    # The same faults on idempotent requests are retried (GET listing, PATCH of our comment).
    made = upsert_comment(client, REPO, PR, f"report {MARKER}", MARKER, author="github-actions[bot]")
    gh.fail_next("GET", comments_path, 502)
    gh.fail_next("PATCH", rf"/repos/{REPO}/issues/comments/\d+", 503)
    again = upsert_comment(client, REPO, PR, f"report 2 {MARKER}", MARKER, author="github-actions[bot]")
    assert again.id == made.id and [c["body"] for c in _comments(gh)] == [f"report 2 {MARKER}"]
    patches = [r.status for r in gh.requests if r.method == "PATCH"]
    assert patches == [503, 200] and len(_posts(gh, comments_path)) == 2  # 1 refused + 1 made
    # The connection dropped after the comment was made: no answer, no resend, the landed one found.
    other = f"/repos/{REPO}/issues/8/comments"
    gh.fail_next("POST", other, 0, after_effect=True)
    landed = upsert_comment(client, REPO, 8, f"report {MARKER}", MARKER, author="github-actions[bot]")
    assert [c["id"] for c in gh.comments(REPO, 8)] == [landed.id] and len(_posts(gh, other)) == 1


def test_a_marker_planted_by_someone_else_is_left_alone(recorded: Workspace, gh: FakeGitHub) -> None:
    """Anyone can paste the marker first; only comments the token itself wrote are updated."""
    planted = gh.add_comment(REPO, PR, f"{MARKER}\nnot the real report", login="mallory")
    code, _ = recorded.run()
    assert code == 0
    first, ours = _comments(gh)
    assert first == planted  # untouched: same body, same updated_at
    assert ours["user"]["login"] == "github-actions[bot]" and MARKER in ours["body"]
    assert recorded.outputs["comment-url"] == ours["html_url"]

    recorded.version("v2")
    code, _ = recorded.run()
    assert code == 1
    first, again = _comments(gh)
    assert first == planted
    assert again["id"] == ours["id"] and again["body"] != ours["body"] and "BLOCK" in again["body"]
    touched = {r.path for r in gh.requests if r.method in ("PATCH", "DELETE")}
    assert touched == {f"/repos/{REPO}/issues/comments/{ours['id']}"}
    assert all(r.login == "github-actions[bot]" for r in gh.requests if r.method in ("POST", "PATCH"))


def test_a_personal_token_updates_its_own_comment_not_the_bots(recorded: Workspace, gh: FakeGitHub) -> None:
    bots = gh.add_comment(REPO, PR, f"{MARKER} from the workflow token")  # github-actions[bot]
    code, _ = recorded.run(token=USER_TOKEN)
    assert code == 0
    assert any(r.path == "/user" and r.status == 200 for r in gh.requests)
    first, ours = _comments(gh)
    assert first == bots and ours["user"]["login"] == "octocat"
    recorded.run(token=USER_TOKEN)
    assert [c["id"] for c in _comments(gh)] == [bots["id"], ours["id"]]
    # The comment-author input names the identity outright (a GitHub App's bot, say): no GET /user.
    gh.clear_requests()
    recorded.run(comment_author="github-actions[bot]")
    assert [c["id"] for c in _comments(gh)] == [bots["id"], ours["id"]]
    assert _comments(gh)[0]["body"] != bots["body"]  # the bot's own comment, updated
    assert not any(r.path == "/user" for r in gh.requests)


def test_a_refused_update_falls_back_to_a_new_comment(recorded: Workspace, gh: FakeGitHub) -> None:
    recorded.run()
    [ours] = _comments(gh)
    gh.fail_next("PATCH", rf"/repos/{REPO}/issues/comments/{ours['id']}", 403)
    code, out = recorded.run()
    assert code == 0 and f"could not update our earlier comment {ours['id']}" in out
    old, new = _comments(gh)
    assert old["id"] == ours["id"] and recorded.outputs["comment-url"] == new["html_url"]
    recorded.run()  # the newest of ours is the one updated from now on
    assert [c["id"] for c in _comments(gh)] == [old["id"], new["id"]]


def test_fork_pull_request_writes_nothing_and_keeps_the_summary(recorded: Workspace, gh: FakeGitHub) -> None:
    recorded.version("v2")
    code, out = recorded.run("fork", token=READ_TOKEN)
    assert code == 1  # the gate still decides
    assert _writes(gh) == [] and _comments(gh) == []
    assert "fork" in out and "BLOCK" in recorded.summary


def test_read_only_token_on_a_non_fork_pr_warns_without_crashing(recorded: Workspace, gh: FakeGitHub) -> None:
    code, out = recorded.run(token=READ_TOKEN)
    assert code == 0
    assert "pull-requests: write" in out and "statuses: write" in out
    assert _comments(gh) == [] and gh.statuses(REPO, "headsha1") == []


def test_corrupt_or_foreign_baselines_are_warnings(ws: Workspace, gh: FakeGitHub) -> None:
    gh.add_artifact(REPO, "agentassay-baseline", b"this is not a zip", head_branch="main", head_repository_id=REPO_ID,
                    created_at="2026-11-20T10:00:00Z")
    # Newer, but from a fork's "main" and an expired one: both must be skipped.
    gh.add_artifact(REPO, "agentassay-baseline", b"x", head_branch="main", head_repository_id=999,
                    created_at="2026-11-21T10:00:00Z")
    gh.add_artifact(REPO, "agentassay-baseline", b"x", head_branch="main", head_repository_id=REPO_ID, expired=True,
                    created_at="2026-11-21T11:00:00Z")
    code, out = ws.run()
    assert code == 0 and ws.outputs["mode"] == "record-only"
    assert "not a valid zip" in out
    [comment] = _comments(gh)
    assert "not a valid zip" in comment["body"]


def test_rate_limits_and_outages_are_retried(recorded: Workspace, gh: FakeGitHub) -> None:
    gh.fail_next("GET", rf"/repos/{REPO}/actions/artifacts", 403,
                 headers={"Retry-After": "1", "X-RateLimit-Remaining": "0"})
    gh.fail_next("GET", rf"/repos/{REPO}/issues/{PR}/comments", 503)
    code, _ = recorded.run()
    assert code == 0 and recorded.outputs["mode"] == "check"
    assert len(_comments(gh)) == 1


def test_missing_artifact_permission_is_explained(ws: Workspace, gh: FakeGitHub) -> None:
    gh.fail_next("GET", rf"/repos/{REPO}/actions/artifacts", 403, times=None)
    code, out = ws.run()
    assert code == 0 and "actions: read" in out


def test_bad_input_exits_3_and_names_it(ws: Workspace) -> None:
    code, out = ws.run(fail_on="sometimes")
    assert code == 3 and "input 'fail-on'" in out
    code, out = ws.run(suite="missing.yml")
    assert code == 3 and "missing.yml" in out
    assert "error" in ws.summary


def test_four_shards_merge_into_one_comment_and_status(recorded: Workspace, gh: FakeGitHub) -> None:
    recorded.version("v2")
    shards = recorded.root / "shards"
    for i in range(1, 5):
        code, _ = recorded.run(shard=f"{i}/4", results_path=f"shards/shard-{i}")
        assert code == 0 and recorded.outputs["mode"] == "check"  # provisional: the publish job gates
    assert _comments(gh) == [] and gh.statuses(REPO, "headsha1") == []  # shards post nothing
    code, _out = recorded.run(mode="publish", shard_results="shards", results_path="merged")
    assert code == 1
    [comment] = _comments(gh)
    assert "refund" in comment["body"]
    [status] = gh.statuses(REPO, "headsha1")
    assert status["state"] == "failure"
    merged = load_results(recorded.root / "merged" / "results.json")
    assert sorted(s.name for s in merged.scenarios) == ["hello", "hours", "order", "refund"]
    # The same verdicts as one unsharded check of the same agent.
    _code_single, _ = recorded.run(results_path="single", comment="false")
    single = load_results(recorded.root / "single" / "results.json")
    assert {s.name: s.verdict.verdict for s in merged.scenarios} == {s.name: s.verdict.verdict for s in single.scenarios}
    assert shards.is_dir()


def test_artifact_listing_404_is_a_warning_and_a_record_only_run(ws: Workspace, gh: FakeGitHub) -> None:
    gh.fail_next("GET", rf"/repos/{REPO}/actions/artifacts", 404, times=None)
    code, out = ws.run()
    assert code == 0 and ws.outputs["mode"] == "record-only"
    assert "could not list the baseline artifacts" in out and "404" in out
    assert len(_comments(gh)) == 1  # the run still reports


def test_an_expired_storage_url_or_failed_download_is_a_warning(recorded: Workspace, gh: FakeGitHub) -> None:
    gh.fail_next("GET", r"/_storage/.*", 403, times=None)
    code, out = recorded.run()
    assert code == 0 and recorded.outputs["mode"] == "record-only"
    assert "storage answered 403" in out


def test_fork_results_published_by_workflow_run_go_to_the_verified_pr(recorded: Workspace, gh: FakeGitHub) -> None:
    recorded.version("v2")
    code, _ = recorded.run("fork", token=READ_TOKEN, results_path="fork-results")
    assert code == 1 and _comments(gh) == []
    pr_file = recorded.root / "fork-results" / "pr.json"
    assert json.loads(pr_file.read_text())["number"] == PR

    def publish() -> tuple[int, str]:
        event = {"workflow_run": {"head_sha": "headsha1", "event": "pull_request"},
                 "repository": {"id": REPO_ID, "full_name": REPO, "default_branch": "main"}}
        original = recorded.event
        recorded.event = lambda kind: ("workflow_run", event, "refs/heads/main")  # type: ignore[method-assign]
        try:
            return recorded.run(mode="publish", shard_results="fork-results", results_path="published")
        finally:
            recorded.event = original  # type: ignore[method-assign]

    code, out = publish()  # GitHub knows no such PR: nothing is posted
    assert "cannot verify" in out and _comments(gh) == []
    gh.add_pull(REPO, PR, "headsha1")
    code, out = publish()
    assert code == 1
    [comment] = _comments(gh)
    assert "refund" in comment["body"]
    assert gh.statuses(REPO, "headsha1")[0]["state"] == "failure"
    # A forged number pointing at another PR (whose head differs) is refused.
    info = json.loads(pr_file.read_text())
    pr_file.write_text(json.dumps({**info, "number": 8}))
    gh.add_pull(REPO, 8, "othersha")
    code, out = publish()
    assert "not at the tested commit" in out and gh.comments(REPO, 8) == []


def _bomb(declared: int, members: int = 2) -> bytes:
    """A tiny zip whose headers declare ``declared`` bytes per member (sizes patched, as a hostile one would)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(members):
            zf.writestr(f"part{i}.bin", b"\0" * 1024)
    data = bytearray(buf.getvalue())
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # local and central headers
        start = 0
        while (at := data.find(sig, start)) >= 0:
            struct.pack_into("<I", data, at + offset, declared)
            start = at + 4
    return bytes(data)


def test_a_zip_bomb_baseline_is_refused_with_nothing_written(ws: Workspace, gh: FakeGitHub) -> None:
    bomb = _bomb(0xF0000000)  # two members of 4,026,531,840 bytes each: 8 GB declared
    assert len(bomb) < 1024 * 1024
    with zipfile.ZipFile(io.BytesIO(bomb)) as zf:
        assert sum(i.file_size for i in zf.infolist()) > 4 * 10**9
    gh.add_artifact(REPO, "agentassay-baseline", bomb, head_branch="main", head_repository_id=REPO_ID,
                    created_at="2026-11-20T10:00:00Z")
    code, out = ws.run()
    assert code == 0 and ws.outputs["mode"] == "record-only"
    assert f"over the limit of {MAX_UNPACKED_BYTES:,} bytes (MAX_UNPACKED_BYTES)" in out
    assert "over the limit of" in _comments(gh)[0]["body"]  # the warning reaches the comment too
    assert [p.name for p in ws.temp.iterdir() if "baseline" in p.name] == []  # nothing extracted, no staging left


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (_zip({f"f{i}": b"" for i in range(6)} | {"results.json": b"{}"}), "7 members, over the limit of 5"),
        (_zip({"results.json": b"x" * 5000}), "declares 5,000 bytes uncompressed, over the limit of 4,096"),
        (_zip({"results.json": b"{}", "../evil": b"x"}), "unsafe path: '../evil'"),
        (_zip({"results.json": b"{}", "/abs/evil": b"x"}), "unsafe path: '/abs/evil'"),
        (_bomb(10, members=1), "not a valid zip"),  # declares less than it inflates to: rejected, not trusted
        (_zip({"notes.txt": b"x"}), "no results.json"),
    ],
)
def test_unpack_refuses_what_it_cannot_trust_and_writes_nothing(tmp_path: Path, data: bytes, words: str) -> None:
    parent = tmp_path / "runner-temp"
    dest = parent / "agentassay-baseline"
    with pytest.raises(BaselineError, match=re.escape(words)):
        unpack(data, dest, max_bytes=4096, max_members=5)
    assert not dest.exists() and not (tmp_path / "evil").exists() and not Path("/abs/evil").exists()
    assert not parent.exists() or list(parent.iterdir()) == []  # no staging folder left either


def test_unpack_replaces_an_earlier_baseline(tmp_path: Path) -> None:
    dest = tmp_path / "agentassay-baseline"
    unpack(_zip({"old/results.json": b"1", "stale.txt": b"x"}), dest)
    found = unpack(_zip({"results.json": b"2"}), dest)
    assert found == dest / "results.json" and found.read_text() == "2"
    assert sorted(p.name for p in dest.iterdir()) == ["results.json"]


def test_the_provider_preflight_is_exit_4_with_the_variable_named(
    ws: Workspace, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22, defect 11: the Action runs the engine's preflight; a key that is not set is exit 4 before any trial,
    reported as an error naming the variable (never a traceback, never a decision)."""
    pytest.importorskip("agents")
    monkeypatch.delenv("MY_OPENAI_KEY", raising=False)
    (ws.root / "sdkbot.py").write_text('from agents import Agent\nbot = Agent(name="Bot", instructions="ok")\n')
    (ws.root / "agentassay.yml").write_text(
        SUITE.replace("agent: shopagent:{version}", "agent: sdkbot:bot\nmodel: {{provider: openai, name: "
                      "gpt-4.1-mini, api_key_env: MY_OPENAI_KEY}}").format()
    )
    code, out = ws.run("pr")
    assert code == 4, out
    assert "::error" in out and "MY_OPENAI_KEY (model.api_key_env)" in out and "no trial was run" in out
    assert "MY\\_OPENAI\\_KEY" in ws.summary and "Traceback" not in out  # Markdown-escaped
    assert not (ws.root / "agentassay-results" / "results.json").exists()
