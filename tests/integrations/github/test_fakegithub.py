"""The fake GitHub API (tests/_support/fakegithub.py) over real HTTP: endpoints, auth, pagination, storage, faults, CLI."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests._support.fakegithub import FakeGitHub

TESTS = Path(__file__).resolve().parents[3] / "tests" / "_support"
WRITE = {"Authorization": "Bearer tok-write"}
READ = {"Authorization": "token tok-read"}


def make_zip(text: str = "baseline") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("baseline.json", text)
    return buf.getvalue()


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_repo("octo/app", id=101, default_branch="main")
        server.add_token("tok-write", write=True)
        server.add_token("tok-read", write=False)
        yield server


def test_get_repo_with_rate_limit_headers_and_case_insensitive_names(gh: FakeGitHub) -> None:
    r = requests.get(f"{gh.url}/repos/Octo/App", headers=READ)
    assert r.status_code == 200
    doc = r.json()
    assert {k: doc[k] for k in ("id", "name", "full_name", "default_branch", "fork")} == {
        "id": 101, "name": "app", "full_name": "octo/app", "default_branch": "main", "fork": False}
    assert doc["owner"]["login"] == "octo"
    for header in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-GitHub-Request-Id"):
        assert header in r.headers
    missing = requests.get(f"{gh.url}/repos/octo/nope", headers=READ)
    assert missing.status_code == 404 and missing.json()["message"] == "Not Found"
    assert "X-GitHub-Request-Id" in missing.headers


def test_auth_bad_token_anonymous_write_and_read_only_write(gh: FakeGitHub) -> None:
    url = f"{gh.url}/repos/octo/app/issues/7/comments"
    bad = requests.get(url, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.json()["message"] == "Bad credentials"
    assert requests.get(url).status_code == 200  # anonymous read of a public repo
    assert requests.post(url, json={"body": "x"}).status_code == 401
    denied = requests.post(url, json={"body": "x"}, headers=READ)
    assert denied.status_code == 403
    assert denied.json()["message"] == "Resource not accessible by integration"
    assert gh.comments("octo/app", 7) == []
    assert requests.post(url, json={"body": "x"}, headers={"Authorization": "token tok-write"}).status_code == 201


def test_private_repo_is_not_found_anonymously(gh: FakeGitHub) -> None:
    gh.add_repo("octo/secret", private=True)
    assert requests.get(f"{gh.url}/repos/octo/secret").status_code == 404
    assert requests.get(f"{gh.url}/repos/octo/secret", headers=READ).status_code == 200


def test_artifacts_newest_first_filtered_and_paginated_by_link(gh: FakeGitHub) -> None:
    ids = [gh.add_artifact("octo/app", name="agentassay-baseline", data=make_zip(str(i)),
                           created_at=f"2026-11-2{i}T10:00:00Z", head_sha=f"sha{i}") for i in range(5)]
    gh.add_artifact("octo/app", name="other", data=b"x", created_at="2026-11-29T00:00:00Z")
    url = f"{gh.url}/repos/octo/app/actions/artifacts?name=agentassay-baseline&per_page=2"
    seen, pages = [], 0
    while url:
        r = requests.get(url, headers=READ)
        assert r.status_code == 200 and r.json()["total_count"] == 5
        seen += r.json()["artifacts"]
        pages += 1
        url = r.links.get("next", {}).get("url")
        if pages == 1:
            assert "page=3" in r.links["last"]["url"] and "name=agentassay-baseline" in r.links["next"]["url"]
    assert pages == 3
    assert [a["id"] for a in seen] == ids[::-1]
    first = seen[0]
    assert first["workflow_run"] == {"id": first["workflow_run"]["id"], "repository_id": 101,
                                     "head_repository_id": 101, "head_branch": "main", "head_sha": "sha4"}
    assert first["archive_download_url"] == f"{gh.url}/repos/octo/app/actions/artifacts/{ids[4]}/zip"
    assert first["expired"] is False and first["expires_at"] == "2027-02-22T10:00:00Z"
    everything = requests.get(f"{gh.url}/repos/octo/app/actions/artifacts", headers=READ)
    assert everything.json()["total_count"] == 6 and "Link" not in everything.headers
    single = requests.get(first["url"], headers=READ).json()
    assert single == first


def test_zip_naive_redirect_sends_auth_to_storage_and_gets_400(gh: FakeGitHub) -> None:
    data = make_zip()
    aid = gh.add_artifact("octo/app", name="agentassay-baseline", data=data)
    zip_url = f"{gh.url}/repos/octo/app/actions/artifacts/{aid}/zip"

    naive = requests.get(zip_url, headers=WRITE)  # requests keeps Authorization on a same-host redirect
    assert naive.status_code == 400 and b"InvalidAuthenticationInfo" in naive.content
    assert naive.history[0].status_code == 302

    hop = requests.get(zip_url, headers=READ, allow_redirects=False)
    assert hop.status_code == 302 and hop.headers["Location"].startswith(f"{gh.url}/_storage/")
    blob = requests.get(hop.headers["Location"])
    assert blob.status_code == 200 and blob.content == data
    assert blob.headers["Content-Type"] == "application/zip"

    storage = [r for r in gh.requests if r.path.startswith("/_storage/")]
    assert ["Authorization" in r.headers for r in storage] == [True, False]
    method, path, headers, body = storage[-1]
    assert path.endswith(".zip")
    assert (method, body, "authorization" in headers) == ("GET", "", False)


def test_storage_host_makes_the_redirect_cross_host_so_requests_strips_auth(gh: FakeGitHub) -> None:
    gh.storage_host = "localhost"
    aid = gh.add_artifact("octo/app", name="b", data=b"zipbytes")
    r = requests.get(f"{gh.url}/repos/octo/app/actions/artifacts/{aid}/zip", headers=WRITE)
    assert r.status_code == 200 and r.content == b"zipbytes"
    assert r.url.startswith(f"http://localhost:{gh.port}/_storage/")


def test_zip_needs_a_token_and_expired_artifacts_are_gone(gh: FakeGitHub) -> None:
    aid = gh.add_artifact("octo/app", name="b", data=b"z")
    old = gh.add_artifact("octo/app", name="b", data=b"z", expired=True)
    base = f"{gh.url}/repos/octo/app/actions/artifacts"
    assert requests.get(f"{base}/{aid}/zip", allow_redirects=False).status_code == 401
    gone = requests.get(f"{base}/{old}/zip", headers=READ, allow_redirects=False)
    assert gone.status_code == 410 and gone.json()["message"] == "Artifact has expired"
    assert requests.get(f"{base}/99999/zip", headers=READ).status_code == 404
    assert requests.get(f"{gh.url}/_storage/unknown/{aid}.zip").status_code == 404


def test_storage_url_expires_after_ttl() -> None:
    now = [1000.0]  # a clock the test advances: expiry without sleeping, however slow the machine
    with FakeGitHub(storage_ttl=60, clock=lambda: now[0]) as gh:
        gh.add_repo("octo/app")
        gh.add_token("t")
        aid = gh.add_artifact("octo/app", name="b", data=b"z")
        loc = requests.get(f"{gh.url}/repos/octo/app/actions/artifacts/{aid}/zip",
                           headers={"Authorization": "Bearer t"}, allow_redirects=False).headers["Location"]
        now[0] += 59.9
        assert requests.get(loc).status_code == 200
        now[0] += 0.2
        assert requests.get(loc).status_code == 403


def test_comments_create_list_paginate_update_delete(gh: FakeGitHub) -> None:
    gh.add_comment("octo/app", 7, "from a human", login="alice")
    url = f"{gh.url}/repos/octo/app/issues/7/comments"
    created = [requests.post(url, json={"body": f"c{i}"}, headers=WRITE) for i in range(3)]
    assert [r.status_code for r in created] == [201] * 3
    doc = created[0].json()
    assert doc["user"] == {**doc["user"], "login": "github-actions[bot]", "type": "Bot"}
    assert {"id", "node_id", "body", "html_url", "created_at", "updated_at"} <= doc.keys()

    page1 = requests.get(url, params={"per_page": 3}, headers=READ)
    assert [c["body"] for c in page1.json()] == ["from a human", "c0", "c1"]
    assert page1.json()[0]["user"]["type"] == "User"
    page2 = requests.get(page1.links["next"]["url"], headers=READ)
    assert [c["body"] for c in page2.json()] == ["c2"] and "next" not in page2.links
    assert set(page2.links) == {"prev", "first"}

    edit = f"{gh.url}/repos/octo/app/issues/comments/{doc['id']}"
    patched = requests.patch(edit, json={"body": "edited"}, headers=WRITE)
    assert patched.status_code == 200 and patched.json()["body"] == "edited"
    assert requests.patch(f"{gh.url}/repos/octo/app/issues/comments/999999", json={"body": "x"},
                          headers=WRITE).status_code == 404
    assert requests.delete(edit, headers=WRITE).status_code == 204
    assert [c["body"] for c in gh.comments("octo/app", 7)] == ["from a human", "c1", "c2"]
    assert requests.post(url, data="{not json", headers=WRITE).status_code == 400


def test_token_identity_user_endpoint_and_comment_authorship(gh: FakeGitHub) -> None:
    gh.add_token("tok-user", login="octocat")
    user = requests.get(f"{gh.url}/user", headers={"Authorization": "token tok-user"})
    assert user.status_code == 200 and user.json()["login"] == "octocat" and user.json()["type"] == "User"
    bot = requests.get(f"{gh.url}/user", headers=WRITE)  # the workflow token is an installation token
    assert bot.status_code == 403 and bot.json()["message"] == "Resource not accessible by integration"
    assert requests.get(f"{gh.url}/user").status_code == 401
    assert requests.get(f"{gh.url}/user", headers={"Authorization": "Bearer nope"}).status_code == 401

    planted = gh.add_comment("octo/app", 7, "<!-- marker --> planted", login="mallory")
    assert planted["user"]["login"] == "mallory"
    edit = f"{gh.url}/repos/octo/app/issues/comments/{planted['id']}"
    for method in ("PATCH", "DELETE"):  # nobody edits or deletes another's comment here
        denied = requests.request(method, edit, json={"body": "hijacked"}, headers=WRITE)
        assert denied.status_code == 403 and denied.json()["message"] == "Resource not accessible by integration"
    assert gh.comments("octo/app", 7) == [planted]
    mine = requests.post(f"{gh.url}/repos/octo/app/issues/7/comments", json={"body": "x"},
                         headers={"Authorization": "Bearer tok-user"}).json()
    assert mine["user"]["login"] == "octocat"
    assert requests.patch(mine["url"], json={"body": "y"}, headers={"Authorization": "Bearer tok-user"}).ok
    assert requests.patch(mine["url"], json={"body": "z"}, headers=WRITE).status_code == 403
    logins = [(r.method, r.login) for r in gh.requests if r.method != "GET"]
    assert logins == [("PATCH", "github-actions[bot]"), ("DELETE", "github-actions[bot]"), ("POST", "octocat"),
                      ("PATCH", "octocat"), ("PATCH", "github-actions[bot]")]
    assert gh.state()["requests"][0]["login"] == "octocat"


def test_too_long_bodies_and_bad_statuses_are_422(gh: FakeGitHub) -> None:
    url = f"{gh.url}/repos/octo/app/issues/3/comments"
    too_long = requests.post(url, json={"body": "x" * 65537}, headers=WRITE)
    assert too_long.status_code == 422
    assert too_long.json()["message"] == "Validation Failed"
    assert too_long.json()["errors"] == [{"resource": "IssueComment", "code": "custom", "field": "body",
                                          "message": "body is too long (maximum is 65536 characters)"}]
    ok = requests.post(url, json={"body": "é" * 65536}, headers=WRITE)  # characters, not bytes
    assert ok.status_code == 201
    edit = requests.patch(ok.json()["url"], json={"body": "x" * 65537}, headers=WRITE)
    assert edit.status_code == 422 and len(gh.comments("octo/app", 3)[0]["body"]) == 65536

    statuses = f"{gh.url}/repos/octo/app/statuses/abc"
    long_desc = requests.post(statuses, json={"state": "success", "description": "d" * 141}, headers=WRITE)
    assert long_desc.status_code == 422 and long_desc.json()["errors"][0]["field"] == "description"
    assert requests.post(statuses, json={"state": "great"}, headers=WRITE).status_code == 422
    assert gh.statuses("octo/app", "abc") == []


def test_statuses_created_and_listed_newest_first(gh: FakeGitHub) -> None:
    url = f"{gh.url}/repos/octo/app/statuses/abc123"
    first = requests.post(url, json={"state": "pending", "context": "agentassay"}, headers=WRITE)
    assert first.status_code == 201 and first.json()["state"] == "pending"
    requests.post(url, json={"state": "success", "context": "agentassay", "description": "d" * 140,
                             "target_url": "https://example.com/run"}, headers=WRITE)
    listed = requests.get(f"{gh.url}/repos/octo/app/commits/abc123/statuses", headers=READ).json()
    assert [s["state"] for s in listed] == ["success", "pending"]
    assert listed[0]["target_url"] == "https://example.com/run" and listed[0]["context"] == "agentassay"
    assert [s["id"] for s in gh.statuses("octo/app", "abc123")] == [s["id"] for s in listed]
    assert requests.post(url, json={"state": "success"}, headers=READ).status_code == 403


def test_fault_before_effect_then_success(gh: FakeGitHub) -> None:
    gh.fail_next("POST", r"/repos/octo/app/issues/\d+/comments", status=502)
    url = f"{gh.url}/repos/octo/app/issues/7/comments"
    assert requests.post(url, json={"body": "a"}, headers=WRITE).status_code == 502
    assert gh.comments("octo/app", 7) == []
    assert requests.post(url, json={"body": "a"}, headers=WRITE).status_code == 201
    assert len(gh.comments("octo/app", 7)) == 1
    assert [(r.status, r.faulted) for r in gh.requests] == [(502, True), (201, False)]


def test_fault_after_effect_makes_a_naive_retry_duplicate(gh: FakeGitHub) -> None:
    gh.fail_next("POST", r"/repos/octo/app/issues/\d+/comments", status=502, after_effect=True)
    url = f"{gh.url}/repos/octo/app/issues/7/comments"
    for _ in range(2):  # a naive client: retry until it sees success
        if requests.post(url, json={"body": "report"}, headers=WRITE).status_code == 201:
            break
    assert [c["body"] for c in gh.comments("octo/app", 7)] == ["report", "report"]


def test_dropped_connection_fault(gh: FakeGitHub) -> None:
    gh.fail_next("POST", r".*", status=0, after_effect=True)
    with pytest.raises(requests.ConnectionError):
        requests.post(f"{gh.url}/repos/octo/app/statuses/abc", json={"state": "success"}, headers=WRITE)
    assert len(gh.statuses("octo/app", "abc")) == 1


def test_rate_limit_fault_headers_and_registration_order(gh: FakeGitHub) -> None:
    gh.fail_next("GET", r".*", status=429, headers={"Retry-After": "1", "X-RateLimit-Remaining": "0"})
    gh.fail_next("*", r"/repos/octo/app", status=500, times=2)
    gh.fail_next("GET", r"/repos/octo/app", status=503)
    url = f"{gh.url}/repos/octo/app"
    limited = requests.get(url, headers=READ)
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "1" and limited.headers["X-RateLimit-Remaining"] == "0"
    assert "message" in limited.json()
    assert [requests.get(url, headers=READ).status_code for _ in range(4)] == [500, 500, 503, 200]
    assert requests.get(url, headers=READ).headers["X-RateLimit-Remaining"] != "0"


def test_fault_with_custom_body_and_unlimited_times(gh: FakeGitHub) -> None:
    gh.fail_next("GET", r"/repos/.*/comments", status=500, body={"message": "boom"}, times=None)
    url = f"{gh.url}/repos/octo/app/issues/1/comments"
    assert [requests.get(url).json() for _ in range(3)] == [{"message": "boom"}] * 3
    gh.clear_faults()
    assert requests.get(url).status_code == 200


def test_serve_cli_seeds_serves_and_dumps_state_on_sigterm(tmp_path: Path) -> None:
    (tmp_path / "baseline.zip").write_bytes(make_zip("seeded"))
    seed = {
        "repos": [{"full_name": "octo/app", "id": 101}],
        "tokens": [{"token": "tok-write", "write": True}],
        "artifacts": [{"repo": "octo/app", "name": "agentassay-baseline", "path": "baseline.zip",
                       "head_sha": "abc", "created_at": "2026-11-20T10:00:00Z"}],
    }
    (tmp_path / "seed.json").write_text(json.dumps(seed))
    ready, state = tmp_path / "ready.json", tmp_path / "state.json"
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "fakegithub.py"), "serve", "--port", "0", "--seed-file",
         str(tmp_path / "seed.json"), "--state-file", str(state), "--ready-file", str(ready)],
        stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        info = json.loads(ready.read_text())
        assert info["url"] == f"http://127.0.0.1:{info['port']}"

        arts = requests.get(f"{info['url']}/repos/octo/app/actions/artifacts?name=agentassay-baseline",
                            headers=WRITE).json()["artifacts"]
        hop = requests.get(arts[0]["archive_download_url"], headers=WRITE, allow_redirects=False)
        with zipfile.ZipFile(io.BytesIO(requests.get(hop.headers["Location"]).content)) as zf:
            assert zf.read("baseline.json") == b"seeded"
        posted = requests.post(f"{info['url']}/repos/octo/app/issues/7/comments", json={"body": "hello"},
                               headers=WRITE)
        assert posted.status_code == 201
        assert json.loads(state.read_text())["comments"]["octo/app"]["7"][0]["body"] == "hello"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    final = json.loads(state.read_text())
    assert [c["body"] for c in final["comments"]["octo/app"]["7"]] == ["hello"]
    assert [r["status"] for r in final["requests"]] == [200, 302, 200, 201]
    assert "authorization" not in final["requests"][2]["headers"]
