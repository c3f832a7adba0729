"""A fake GitHub REST API: a real HTTP server with in-memory state and fault injection.

Why a real server rather than mocks: what breaks the action in production happens on the
wire -- an ``Authorization`` header leaking to artifact storage on a redirect, a retry that
duplicates a PR comment after a lost response, a ``Link`` header that is not followed, a
rate-limit answer that is not waited out. Only a server that speaks HTTP shows those.

It runs in-process for pytest, or as a standalone process for CI, where a Docker container run
with ``--network=host`` talks to it. Standard library only.

In-process (``from tests._support.fakegithub import FakeGitHub``, the repository root on ``sys.path``
as pytest puts it)::

    with FakeGitHub(storage_ttl=60) as gh:              # gh.url == "http://127.0.0.1:<port>"
        gh.add_repo("octo/app", id=101, default_branch="main")
        gh.add_token("tok-write", write=True)
        gh.add_token("tok-read", write=False)
        gh.add_artifact("octo/app", "agentassay-baseline", zip_bytes, head_sha="abc")
        gh.fail_next("POST", r"/repos/octo/app/issues/\\d+/comments", 502, after_effect=True)
        ...                                            # run the client against gh.url
        gh.comments("octo/app", 7); gh.statuses("octo/app", "abc"); gh.requests

Endpoints (paths and field names as on api.github.com; ``Authorization: Bearer T`` or ``token T``):

- ``GET /repos/{o}/{r}``
- ``GET /repos/{o}/{r}/actions/artifacts[?name=&per_page=&page=]`` (newest first, ``Link`` header)
- ``GET /repos/{o}/{r}/actions/artifacts/{id}``
- ``GET /repos/{o}/{r}/actions/artifacts/{id}/zip`` -> 302 to ``/_storage/{token}/{id}.zip``
- ``GET /_storage/{token}/{id}.zip`` -> the bytes; 400 if an ``Authorization`` header is sent
  (as Azure blob storage does), 403 once the URL is older than ``storage_ttl``, 404 if unknown
- ``GET|POST /repos/{o}/{r}/issues/{n}/comments`` (list is oldest first, paginated)
- ``GET|PATCH|DELETE /repos/{o}/{r}/issues/comments/{id}`` (PATCH and DELETE by the comment's author
  only: 403 "Resource not accessible by integration" for anyone else)
- ``GET /user``: the token's user; 403 "Resource not accessible by integration" for an installation
  token (a login ending in ``[bot]``, the default ``github-actions[bot]``), as the workflow token gets
- ``GET /repos/{o}/{r}/pulls/{n}`` (``add_pull``)
- ``POST /repos/{o}/{r}/statuses/{sha}``, ``GET /repos/{o}/{r}/commits/{ref}/statuses`` (newest first)

Every token has an identity (``add_token(login=…)``, default ``github-actions[bot]``): comments and
statuses record it as their author (``user.login`` / ``creator.login``), ``add_comment(login=…)``
plants one by someone else, and each logged request carries it (``login``).

Auth order: a present but unknown token -> 401 "Bad credentials"; unknown repo (or a private one
asked anonymously) -> 404; anonymous write or artifact download -> 401 "Requires
authentication"; read-only token on a write -> 403 "Resource not accessible by integration".
Anonymous reads of non-private repos are allowed, as on github.com. Any issue number exists.

Standalone::

    python tests/_support/fakegithub.py serve [--host 127.0.0.1] [--port 0] [--ready-file PATH]
        [--state-file PATH] [--seed-file PATH] [--storage-ttl 60] [--storage-host HOST] [--verbose]

Once listening it writes ``{"url": ..., "port": ..., "pid": ...}`` to the ready file (atomically,
so a shell can poll for it), serves until SIGTERM/SIGINT, and rewrites the state file
(atomically) after every request and on shutdown. State file format (also ``FakeGitHub.state()``)::

    {"url": ..., "repos": [<repo json>...],
     "comments": {"octo/app": {"7": [<comment json>...]}},        # oldest first
     "statuses": {"octo/app": {"<sha>": [<status json>...]}},     # newest first
     "requests": [{"method", "path", "query", "headers", "body", "status", "faulted", "login"}...],
     "faults": [{"method", "path_regex", "status", "remaining", "after_effect"}...]}  # pending

e.g. ``jq '.comments["octo/app"]["7"] | length' state.json``.

Seed file (``--seed-file``, or ``FakeGitHub.load_seed``): JSON whose entries are the keyword
arguments of the matching ``add_*`` / ``fail_next`` method, so unknown keys are an error::

    {"repos":     [{"full_name": "octo/app", "id": 101, "default_branch": "main",
                    "fork": false, "private": false}],
     "tokens":    [{"token": "tok-write", "write": true, "login": "github-actions[bot]"},
                   {"token": "tok-read", "write": false}],
     "artifacts": [{"repo": "octo/app", "name": "agentassay-baseline", "path": "baseline.zip",
                    "head_branch": "main", "head_repository_id": 101, "head_sha": "abc",
                    "expired": false, "created_at": "2026-11-20T10:00:00Z", "id": 5, "run_id": 9}],
     "comments":  [{"repo": "octo/app", "issue": 7, "body": "old", "login": "someone"}],
     "faults":    [{"method": "GET", "path_regex": ".*", "status": 429,
                    "headers": {"Retry-After": "1"}, "times": 1, "after_effect": false}]}

An artifact's ``path`` (its zip file on disk) is relative to the seed file's directory; every
key but ``full_name``/``token``/``repo``/``name``/``path``/``issue``/``body``/``method``/
``path_regex``/``status`` is optional.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import itertools
import json
import math
import os
import re
import secrets
import signal
import sys
import threading
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, unquote, urlencode, urlsplit

__all__ = ["FakeGitHub", "Fault", "Headers", "LoggedRequest", "Repo", "main"]

MAX_COMMENT_CHARS = 65536
MAX_STATUS_DESCRIPTION_CHARS = 140
STATUS_STATES = ("error", "failure", "pending", "success")
BOT_LOGIN = "github-actions[bot]"
DOCS_URL = "https://docs.github.com/rest"
_WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _node_id(kind: str, ident: int) -> str:
    return base64.b64encode(f"{kind}{ident}".encode()).decode().rstrip("=")


def _user(login: str) -> dict[str, Any]:
    uid = 41898282 if login == BOT_LOGIN else zlib.crc32(login.encode())
    return {"login": login, "id": uid, "node_id": _node_id("User", uid),
            "type": "Bot" if login.endswith("[bot]") else "User"}


class Headers(dict):  # type: ignore[type-arg]
    """Header map with case-insensitive keys (stored lower-case).

    Why: a test asserting ``"Authorization" not in headers`` must not pass just because the
    client spelled it ``authorization``.
    """

    def __init__(self, items: Iterable[tuple[str, str]] = ()) -> None:
        super().__init__()
        for key, value in items:
            self[key] = f"{self[key]}, {value}" if key in self else value

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key.lower(), value)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server saw it; unpacks as ``(method, path, headers, body)``.

    ``path`` is percent-decoded and without the query string (that is ``query``); ``body`` is
    the request body decoded as UTF-8; ``status`` is what was answered (0: connection dropped);
    ``login`` is the identity of the request's token.
    """

    method: str
    path: str
    headers: Headers
    body: str
    query: str = ""
    status: int = 0
    faulted: bool = False
    login: str = ""  # whom the request's token belongs to ("" anonymous or unknown)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.method, self.path, self.headers, self.body))

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "path": self.path, "query": self.query,
                "headers": dict(self.headers), "body": self.body, "status": self.status,
                "faulted": self.faulted, "login": self.login}


@dataclass
class Repo:
    """A repository record, as ``add_repo`` returns it."""

    full_name: str
    id: int
    default_branch: str = "main"
    fork: bool = False
    private: bool = False

    @property
    def owner(self) -> str:
        return self.full_name.split("/")[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/")[1]

    def to_json(self, base: str) -> dict[str, Any]:
        return {"id": self.id, "node_id": _node_id("Repository", self.id), "name": self.name,
                "full_name": self.full_name, "private": self.private,
                "owner": {"login": self.owner, "type": "Organization"},
                "html_url": f"https://github.com/{self.full_name}", "fork": self.fork,
                "url": f"{base}/repos/{self.full_name}", "default_branch": self.default_branch}


@dataclass
class Fault:
    """An injected answer for the next ``remaining`` requests matching ``method`` and ``pattern``.

    ``status`` 0 closes the connection without answering. With ``after_effect`` the request is
    first handled normally (writes applied), then the fault is answered: a lost response.
    """

    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: Any
    remaining: int | None  # None: until clear_faults()
    after_effect: bool

    def matches(self, method: str, path: str) -> bool:
        return (self.method in ("*", method)) and self.pattern.fullmatch(path) is not None

    def response(self) -> _Response | None:
        if self.status == 0:
            return None
        body = self.body
        if body is None:
            phrase = HTTPStatus(self.status).phrase if self.status in HTTPStatus._value2member_map_ else "Error"
            body = _error_body(self.status, phrase)
        if isinstance(body, bytes):
            resp = _Response(self.status, body, {"Content-Type": "application/octet-stream"})
        elif isinstance(body, str):
            resp = _Response(self.status, body.encode(), {"Content-Type": "text/plain; charset=utf-8"})
        else:
            resp = _json(self.status, body)
        resp.headers.update(self.headers)
        return resp


@dataclass
class _Token:
    token: str
    write: bool
    login: str


@dataclass
class _Artifact:
    id: int
    repo: str  # lower-case full name
    name: str
    data: bytes
    head_branch: str
    head_repository_id: int
    repository_id: int
    head_sha: str
    expired: bool
    created_at: str
    run_id: int

    def to_json(self, base: str, full_name: str) -> dict[str, Any]:
        url = f"{base}/repos/{full_name}/actions/artifacts/{self.id}"
        expires = _parse_time(self.created_at) + timedelta(days=90)
        return {
            "id": self.id, "node_id": _node_id("Artifact", self.id), "name": self.name,
            "size_in_bytes": len(self.data), "url": url, "archive_download_url": f"{url}/zip",
            "expired": self.expired, "created_at": self.created_at, "updated_at": self.created_at,
            "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "digest": "sha256:" + hashlib.sha256(self.data).hexdigest(),
            "workflow_run": {"id": self.run_id, "repository_id": self.repository_id,
                             "head_repository_id": self.head_repository_id,
                             "head_branch": self.head_branch, "head_sha": self.head_sha},
        }


@dataclass
class _Comment:
    id: int
    repo: str
    issue: int
    body: str
    login: str
    created_at: str
    updated_at: str

    def to_json(self, base: str, full_name: str) -> dict[str, Any]:
        return {
            "id": self.id, "node_id": _node_id("IssueComment", self.id),
            "url": f"{base}/repos/{full_name}/issues/comments/{self.id}",
            "html_url": f"https://github.com/{full_name}/issues/{self.issue}#issuecomment-{self.id}",
            "issue_url": f"{base}/repos/{full_name}/issues/{self.issue}",
            "body": self.body, "user": _user(self.login), "created_at": self.created_at,
            "updated_at": self.updated_at, "author_association": "NONE",
        }


@dataclass
class _Status:
    id: int
    repo: str
    sha: str
    state: str
    target_url: str | None
    description: str | None
    context: str
    login: str
    created_at: str

    def to_json(self, base: str, full_name: str) -> dict[str, Any]:
        return {
            "url": f"{base}/repos/{full_name}/statuses/{self.sha}", "id": self.id,
            "node_id": _node_id("StatusContext", self.id), "state": self.state,
            "description": self.description, "target_url": self.target_url, "context": self.context,
            "created_at": self.created_at, "updated_at": self.created_at, "creator": _user(self.login),
        }


@dataclass
class _Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Request:
    method: str
    path: str  # percent-decoded, no query
    raw_path: str
    query: str
    headers: Headers
    body: bytes
    client: str = ""


@dataclass
class _Ctx:
    req: _Request
    params: dict[str, str]
    base: str
    repo: Repo | None = None
    token: _Token | None = None


def _json(status: int, obj: Any, headers: Mapping[str, str] | None = None) -> _Response:
    body = json.dumps(obj, indent=2).encode()
    return _Response(status, body, {"Content-Type": "application/json; charset=utf-8", **(headers or {})})


def _error_body(status: int, message: str, **extra: Any) -> dict[str, Any]:
    return {"message": message, **extra, "documentation_url": DOCS_URL, "status": str(status)}


def _error(status: int, message: str, **extra: Any) -> _Response:
    return _json(status, _error_body(status, message, **extra))


def _validation(resource: str, field_name: str, message: str) -> _Response:
    return _error(422, "Validation Failed",
                  errors=[{"resource": resource, "code": "custom", "field": field_name, "message": message}])


def _storage_error(status: int, code: str, message: str) -> _Response:
    """Azure blob storage answers errors in XML, not GitHub's JSON."""
    xml = (f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code>'
           f"<Message>{message}\nRequestId:{secrets.token_hex(8)}</Message></Error>")
    return _Response(status, xml.encode(), {"Content-Type": "application/xml"})


def _int_param(query: dict[str, list[str]], name: str, default: int) -> int:
    try:
        return int(query[name][0])
    except (KeyError, ValueError):
        return default


_Handler = Callable[["FakeGitHub", _Ctx], _Response]
_OWNER_REPO = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"


class FakeGitHub:
    """The fake API. Start it with ``with FakeGitHub() as gh`` (or ``start()``/``stop()``).

    Args:
        host: interface to bind (127.0.0.1 by default; the container must use host networking).
        port: 0 lets the OS choose; read ``gh.port`` / ``gh.url`` after ``start()``.
        storage_ttl: seconds a ``/_storage`` URL from a zip redirect stays valid (403 after).
        storage_host: host name put in the storage redirect instead of the one the client used.
            ``"localhost"`` makes the redirect cross-host, so ``requests`` strips
            ``Authorization`` as it does for the real api.github.com -> blob storage hop.
        state_file: if set, the state (see ``state()``) is rewritten there after every request.
        verbose: log each request to stderr.
        clock: the time source for the storage URLs' expiry (``time.monotonic``); a test passes its own
            clock to expire a URL by advancing it, never by sleeping.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, storage_ttl: float = 60.0,
                 storage_host: str | None = None, state_file: str | os.PathLike[str] | None = None,
                 verbose: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        self.host = host
        self.clock = clock
        self.storage_ttl = storage_ttl
        self.storage_host = storage_host
        self.state_file = Path(state_file) if state_file is not None else None
        self.verbose = verbose
        self._want_port = port
        self._lock = threading.RLock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._repos: dict[str, Repo] = {}
        self._tokens: dict[str, _Token] = {}
        self._artifacts: dict[int, _Artifact] = {}
        self._comments: dict[int, _Comment] = {}
        self._statuses: list[_Status] = []
        self._pulls: dict[tuple[str, int], tuple[str, str]] = {}  # (repo, lower case; number) -> (head sha, base)
        self._storage: dict[str, tuple[int, float]] = {}
        self._faults: list[Fault] = []
        self._log: list[LoggedRequest] = []
        self._used: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._request_ids = itertools.count(1)
        self._rate_reset = int(time.time()) + 3600

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        """Bind, serve in a daemon thread, and return self."""
        if self._server is not None:
            return self
        self._server = _Server((self.host, self._want_port), _RequestHandler)
        self._server.gh = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fakegithub", daemon=True)  # short poll: stop() is prompt
        self._thread.start()
        self._dump()
        return self

    def stop(self) -> None:
        """Stop serving and write the final state file. Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._dump()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeGitHub is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:54321`` (use it as the API URL, no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    # -- seeding ---------------------------------------------------------------------------------

    def add_repo(self, full_name: str, *, id: int | None = None, default_branch: str = "main",
                 fork: bool = False, private: bool = False) -> Repo:
        """Register a repository (owner/name lookups are case-insensitive, as on GitHub)."""
        if full_name.count("/") != 1:
            raise ValueError(f"expected owner/name, got {full_name!r}")
        with self._lock:
            repo = Repo(full_name, next(self._ids) + 1000 if id is None else id, default_branch, fork, private)
            self._repos[full_name.lower()] = repo
            return repo

    def add_token(self, token: str, *, write: bool = True, login: str = BOT_LOGIN) -> None:
        """Accept ``token`` on every repo; ``write=False`` mimics a fork PR's read-only GITHUB_TOKEN."""
        with self._lock:
            self._tokens[token] = _Token(token, write, login)

    def add_artifact(self, repo: str, name: str, data: bytes, *, head_branch: str | None = None,
                     head_repository_id: int | None = None, head_sha: str | None = None,
                     expired: bool = False, created_at: str | None = None, run_id: int | None = None,
                     id: int | None = None) -> int:
        """Store an artifact (``data``: the zip bytes) and return its id.

        Defaults: the repo's default branch and id, a fake sha, now, fresh run and artifact ids.
        """
        with self._lock:
            rec = self._repo_or_raise(repo)
            aid = next(self._ids) if id is None else id
            self._artifacts[aid] = _Artifact(
                id=aid, repo=rec.full_name.lower(), name=name, data=bytes(data),
                head_branch=head_branch or rec.default_branch,
                head_repository_id=rec.id if head_repository_id is None else head_repository_id,
                repository_id=rec.id, head_sha=head_sha or hashlib.sha1(f"{repo}:{aid}".encode()).hexdigest(),
                expired=expired, created_at=created_at or _now(),
                run_id=next(self._ids) + 9000 if run_id is None else run_id)
            return aid

    def add_pull(self, repo: str, number: int, head_sha: str, *, base_ref: str | None = None) -> None:
        """An open pull request, for ``GET /repos/{o}/{r}/pulls/{n}`` (what a publish job verifies);
        ``base_ref``: the branch it targets (default: the repository's default branch)."""
        with self._lock:
            rec = self._repo_or_raise(repo)
            self._pulls[(rec.full_name.lower(), int(number))] = (head_sha, base_ref or rec.default_branch)

    def add_comment(self, repo: str, issue: int, body: str, *, login: str = BOT_LOGIN) -> dict[str, Any]:
        """Pre-existing comment (e.g. one a previous run left, or a human's); returns its JSON."""
        with self._lock:
            rec = self._repo_or_raise(repo)
            c = self._new_comment(rec, issue, body, login)
            return c.to_json(self._base_or_default(), rec.full_name)

    def fail_next(self, method: str, path_regex: str, status: int, *,
                  headers: Mapping[str, str] | None = None, body: Any = None, times: int | None = 1,
                  after_effect: bool = False) -> Fault:
        """Answer the next ``times`` matching requests with ``status`` instead (None: forever).

        ``method`` is an HTTP method or ``"*"``; ``path_regex`` must match the whole decoded path
        (no query string). ``headers`` override the defaults (pass ``Retry-After`` /
        ``X-RateLimit-Remaining: 0`` for a rate limit). ``body``: dict/list (JSON), str or bytes;
        default a GitHub-style ``{"message": <reason>}``. ``status=0`` drops the connection.
        Faults are tried in registration order; the first match with uses left is consumed.
        """
        fault = Fault(method.upper(), re.compile(path_regex), status, dict(headers or {}), body,
                      times, after_effect)
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def load_seed(self, seed: Mapping[str, Any], base_dir: str | os.PathLike[str] = ".") -> None:
        """Apply a seed document (format in the module docstring); artifact paths are under base_dir."""
        known = {"repos", "tokens", "artifacts", "comments", "faults"}
        if unknown := set(seed) - known:
            raise ValueError(f"unknown seed keys {sorted(unknown)}; expected some of {sorted(known)}")
        for r in seed.get("repos", []):
            self.add_repo(**r)
        for t in seed.get("tokens", []):
            self.add_token(**t)
        for a in seed.get("artifacts", []):
            a = dict(a)
            data = (Path(base_dir) / a.pop("path")).read_bytes()
            self.add_artifact(data=data, **a)
        for c in seed.get("comments", []):
            self.add_comment(**c)
        for f in seed.get("faults", []):
            self.fail_next(**f)

    def load_seed_file(self, path: str | os.PathLike[str]) -> None:
        path = Path(path)
        self.load_seed(json.loads(path.read_text()), base_dir=path.parent)

    # -- inspection ------------------------------------------------------------------------------

    def comments(self, repo: str, issue: int) -> list[dict[str, Any]]:
        """Comments on an issue/PR, oldest first, as the API returns them. Unknown repo: KeyError."""
        with self._lock:
            rec = self._repo_or_raise(repo)
            base = self._base_or_default()
            return [c.to_json(base, rec.full_name) for c in self._comments_of(rec, issue)]

    def statuses(self, repo: str, sha: str) -> list[dict[str, Any]]:
        """Commit statuses for ``sha``, newest first, as the API returns them."""
        with self._lock:
            rec = self._repo_or_raise(repo)
            base = self._base_or_default()
            return [s.to_json(base, rec.full_name) for s in self._statuses_of(rec, sha)]

    @property
    def requests(self) -> list[LoggedRequest]:
        """Snapshot of every request so far, in arrival order."""
        with self._lock:
            return list(self._log)

    def clear_requests(self) -> None:
        with self._lock:
            self._log.clear()

    def state(self) -> dict[str, Any]:
        """Everything a test or shell script may want to check, JSON-serialisable."""
        with self._lock:
            base = self._base_or_default()
            comments: dict[str, dict[str, list[dict[str, Any]]]] = {}
            for c in sorted(self._comments.values(), key=lambda c: c.id):
                full = self._repos[c.repo].full_name
                comments.setdefault(full, {}).setdefault(str(c.issue), []).append(c.to_json(base, full))
            statuses: dict[str, dict[str, list[dict[str, Any]]]] = {}
            for s in reversed(self._statuses):
                full = self._repos[s.repo].full_name
                statuses.setdefault(full, {}).setdefault(s.sha, []).append(s.to_json(base, full))
            return {
                "url": base,
                "repos": [r.to_json(base) for r in self._repos.values()],
                "comments": comments,
                "statuses": statuses,
                "requests": [r.to_json() for r in self._log],
                "faults": [{"method": f.method, "path_regex": f.pattern.pattern, "status": f.status,
                            "remaining": f.remaining, "after_effect": f.after_effect} for f in self._faults],
            }

    # -- internals -------------------------------------------------------------------------------

    def _base_or_default(self) -> str:
        return self.url if self._server is not None else f"http://{self.host}:{self._want_port}"

    def _repo_or_raise(self, full_name: str) -> Repo:
        try:
            return self._repos[full_name.lower()]
        except KeyError:
            raise KeyError(f"no repo {full_name!r}; add_repo() it first") from None

    def _comments_of(self, repo: Repo, issue: int) -> list[_Comment]:
        key = repo.full_name.lower()
        return sorted((c for c in self._comments.values() if c.repo == key and c.issue == issue),
                      key=lambda c: c.id)

    def _statuses_of(self, repo: Repo, sha: str) -> list[_Status]:
        key = repo.full_name.lower()
        return [s for s in reversed(self._statuses) if s.repo == key and s.sha == sha]

    def _new_comment(self, repo: Repo, issue: int, body: str, login: str) -> _Comment:
        stamp = _now()
        c = _Comment(next(self._ids), repo.full_name.lower(), issue, body, login, stamp, stamp)
        self._comments[c.id] = c
        return c

    def _dump(self) -> None:
        """Rewrite the state file atomically, so a reader never sees half a document."""
        if self.state_file is None:
            return
        with self._lock:
            _write_atomic(self.state_file, json.dumps(self.state(), indent=1))

    def _token_of(self, auth: str) -> _Token | None:
        scheme, _, tok = auth.strip().partition(" ")
        return self._tokens.get(tok.strip()) if scheme.lower() in ("bearer", "token") else None

    def _take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self._faults:
            if fault.matches(method, path):
                if fault.remaining is not None:
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                return fault
        return None

    def _common_headers(self, req: _Request) -> dict[str, str]:
        auth = req.headers.get("authorization", "")
        who = auth.split(" ", 1)[-1].strip() if auth else f"anonymous:{req.client}"
        limit = 60 if not auth else 5000
        used = self._used[who] = self._used.get(who, 0) + 1
        return {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": str(max(0, limit - used)),
                "X-RateLimit-Reset": str(self._rate_reset), "X-RateLimit-Used": str(used),
                "X-RateLimit-Resource": "core",
                "X-GitHub-Request-Id": f"FAKE:{next(self._request_ids):06X}:{secrets.token_hex(4).upper()}"}

    def _respond(self, req: _Request) -> _Response | None:
        """Handle one request: fault check, dispatch, log, state dump. None: drop the connection."""
        with self._lock:
            fault = self._take_fault(req.method, req.path)
            resp: _Response | None = None
            if fault is None or fault.after_effect:
                try:
                    resp = self._dispatch(req)
                except Exception:  # a bug in the fake must not hang the client
                    traceback.print_exc()
                    resp = _error(500, "fakegithub internal error: " + traceback.format_exc(limit=3))
            if fault is not None:
                resp = fault.response()
            if resp is not None:
                resp.headers = {**self._common_headers(req), **resp.headers}
            auth = req.headers.get("authorization")
            token = self._token_of(auth) if auth else None
            self._log.append(LoggedRequest(req.method, req.path, req.headers,
                                           req.body.decode("utf-8", "replace"), req.query,
                                           resp.status if resp else 0, fault is not None,
                                           token.login if token else ""))
            if self.verbose:
                print(f"fakegithub: {req.method} {req.raw_path} -> {resp.status if resp else 'dropped'}"
                      f"{' (fault)' if fault else ''}", file=sys.stderr, flush=True)
            self._dump()
            return resp

    def _dispatch(self, req: _Request) -> _Response:
        for method, pattern, handler, kind in _ROUTES:
            m = pattern.fullmatch(req.path)
            if m is None or method != req.method:
                continue
            ctx = _Ctx(req, m.groupdict(), f"http://{req.headers.get('host') or f'{self.host}:{self.port}'}")
            if kind == "storage":
                return handler(self, ctx)
            auth = req.headers.get("authorization")
            if auth is not None:
                ctx.token = self._token_of(auth)
                if ctx.token is None:
                    return _error(401, "Bad credentials")
            if kind == "user":
                return handler(self, ctx)
            ctx.repo = self._repos.get(f"{ctx.params['owner']}/{ctx.params['repo']}".lower())
            if ctx.repo is None or (ctx.repo.private and ctx.token is None):
                return _error(404, "Not Found")
            if ctx.token is None and kind in ("write", "download"):
                return _error(401, "Requires authentication")
            if kind == "write" and not (ctx.token and ctx.token.write):
                return _error(403, "Resource not accessible by integration")
            return handler(self, ctx)
        return _error(404, "Not Found")

    def _paginate(self, ctx: _Ctx, items: list[Any]) -> tuple[list[Any], dict[str, str]]:
        """Slice ``items`` by per_page/page and build GitHub's ``Link`` header (prev, next, last, first)."""
        query = parse_qs(ctx.req.query)
        per_page = min(max(_int_param(query, "per_page", 30), 1), 100)
        page = max(_int_param(query, "page", 1), 1)
        last = max(1, math.ceil(len(items) / per_page))

        def link(p: int, rel: str) -> str:
            params = [(k, v) for k, v in parse_qsl(ctx.req.query, keep_blank_values=True) if k != "page"]
            return f'<{ctx.base}{ctx.req.raw_path}?{urlencode([*params, ("page", str(p))])}>; rel="{rel}"'

        links = []
        if page > 1:
            links.append(link(page - 1, "prev"))
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links.append(link(1, "first"))
        chunk = items[(page - 1) * per_page: page * per_page]
        return chunk, ({"Link": ", ".join(links)} if links else {})

    @staticmethod
    def _json_body(ctx: _Ctx) -> tuple[dict[str, Any] | None, _Response | None]:
        try:
            data = json.loads(ctx.req.body or b"null")
        except ValueError:
            return None, _error(400, "Problems parsing JSON")
        if not isinstance(data, dict):
            return None, _error(400, "Problems parsing JSON")
        return data, None

    # -- endpoint handlers -----------------------------------------------------------------------

    def _get_repo(self, ctx: _Ctx) -> _Response:
        assert ctx.repo is not None
        return _json(200, ctx.repo.to_json(ctx.base))

    def _list_artifacts(self, ctx: _Ctx) -> _Response:
        assert ctx.repo is not None
        key = ctx.repo.full_name.lower()
        name = parse_qs(ctx.req.query).get("name", [None])[0]
        found = [a for a in self._artifacts.values() if a.repo == key and (name is None or a.name == name)]
        found.sort(key=lambda a: (a.created_at, a.id), reverse=True)
        chunk, headers = self._paginate(ctx, found)
        return _json(200, {"total_count": len(found),
                           "artifacts": [a.to_json(ctx.base, ctx.repo.full_name) for a in chunk]}, headers)

    def _artifact(self, ctx: _Ctx) -> _Artifact | None:
        assert ctx.repo is not None
        art = self._artifacts.get(int(ctx.params["aid"]))
        return art if art is not None and art.repo == ctx.repo.full_name.lower() else None

    def _get_artifact(self, ctx: _Ctx) -> _Response:
        art = self._artifact(ctx)
        if art is None or ctx.repo is None:
            return _error(404, "Not Found")
        return _json(200, art.to_json(ctx.base, ctx.repo.full_name))

    def _download_artifact(self, ctx: _Ctx) -> _Response:
        art = self._artifact(ctx)
        if art is None:
            return _error(404, "Not Found")
        if art.expired:
            return _error(410, "Artifact has expired")
        token = secrets.token_urlsafe(24)
        self._storage[token] = (art.id, self.clock())
        base = f"http://{self.storage_host}:{self.port}" if self.storage_host else ctx.base
        return _Response(302, b"", {"Location": f"{base}/_storage/{token}/{art.id}.zip"})

    def _storage_get(self, ctx: _Ctx) -> _Response:
        if "authorization" in ctx.req.headers:
            return _storage_error(400, "InvalidAuthenticationInfo",
                                  "Authentication information is not given in the correct format. "
                                  "Check the value of Authorization header.")
        entry = self._storage.get(ctx.params["token"])
        if entry is None or entry[0] != int(ctx.params["aid"]) or entry[0] not in self._artifacts:
            return _storage_error(404, "BlobNotFound", "The specified blob does not exist.")
        if self.clock() - entry[1] > self.storage_ttl:
            return _storage_error(403, "AuthenticationFailed",
                                  "Server failed to authenticate the request. Signed expiry time has passed.")
        art = self._artifacts[entry[0]]
        return _Response(200, art.data, {"Content-Type": "application/zip",
                                         "Content-Disposition": f'attachment; filename="{art.name}.zip"'})

    def _list_comments(self, ctx: _Ctx) -> _Response:
        assert ctx.repo is not None
        chunk, headers = self._paginate(ctx, self._comments_of(ctx.repo, int(ctx.params["num"])))
        return _json(200, [c.to_json(ctx.base, ctx.repo.full_name) for c in chunk], headers)

    def _comment_body(self, ctx: _Ctx) -> tuple[str | None, _Response | None]:
        data, err = self._json_body(ctx)
        if err is not None or data is None:
            return None, err
        body = data.get("body")
        if not isinstance(body, str):
            return None, _error(422, 'Invalid request.\n\n"body" wasn\'t supplied.')
        if len(body) > MAX_COMMENT_CHARS:
            return None, _validation("IssueComment", "body",
                                     f"body is too long (maximum is {MAX_COMMENT_CHARS} characters)")
        return body, None

    def _create_comment(self, ctx: _Ctx) -> _Response:
        assert ctx.repo is not None and ctx.token is not None
        body, err = self._comment_body(ctx)
        if err is not None or body is None:
            return err or _error(422, "Validation Failed")
        c = self._new_comment(ctx.repo, int(ctx.params["num"]), body, ctx.token.login)
        doc = c.to_json(ctx.base, ctx.repo.full_name)
        return _json(201, doc, {"Location": doc["url"]})

    def _comment(self, ctx: _Ctx) -> _Comment | None:
        assert ctx.repo is not None
        c = self._comments.get(int(ctx.params["cid"]))
        return c if c is not None and c.repo == ctx.repo.full_name.lower() else None

    def _get_pull(self, ctx: _Ctx) -> _Response:
        assert ctx.repo is not None
        number = int(ctx.params["num"])
        pull = self._pulls.get((ctx.repo.full_name.lower(), number))
        if pull is None:
            return _error(404, "Not Found")
        sha, base = pull
        return _json(200, {"number": number, "state": "open", "head": {"sha": sha}, "base": {"ref": base}})

    def _get_comment(self, ctx: _Ctx) -> _Response:
        c = self._comment(ctx)
        if c is None or ctx.repo is None:
            return _error(404, "Not Found")
        return _json(200, c.to_json(ctx.base, ctx.repo.full_name))

    @staticmethod
    def _not_author(ctx: _Ctx, c: _Comment) -> _Response | None:
        """Only a comment's author may edit or delete it here (an installation token cannot touch others')."""
        if ctx.token is None or ctx.token.login.lower() != c.login.lower():
            return _error(403, "Resource not accessible by integration")
        return None

    def _update_comment(self, ctx: _Ctx) -> _Response:
        c = self._comment(ctx)
        if c is None or ctx.repo is None:
            return _error(404, "Not Found")
        if (refused := self._not_author(ctx, c)) is not None:
            return refused
        body, err = self._comment_body(ctx)
        if err is not None or body is None:
            return err or _error(422, "Validation Failed")
        c.body, c.updated_at = body, _now()
        return _json(200, c.to_json(ctx.base, ctx.repo.full_name))

    def _delete_comment(self, ctx: _Ctx) -> _Response:
        c = self._comment(ctx)
        if c is None:
            return _error(404, "Not Found")
        if (refused := self._not_author(ctx, c)) is not None:
            return refused
        del self._comments[c.id]
        return _Response(204)

    def _get_user(self, ctx: _Ctx) -> _Response:
        """``GET /user``: a user token's login; refused to an installation token (a ``[bot]`` login), as on GitHub."""
        if ctx.token is None:
            return _error(401, "Requires authentication")
        if ctx.token.login.endswith("[bot]"):
            return _error(403, "Resource not accessible by integration")
        return _json(200, {**_user(ctx.token.login), "url": f"{ctx.base}/users/{ctx.token.login}"})

    def _create_status(self, ctx: _Ctx) -> _Response:
        assert ctx.repo is not None and ctx.token is not None
        data, err = self._json_body(ctx)
        if err is not None or data is None:
            return err or _error(400, "Problems parsing JSON")
        state, description = data.get("state"), data.get("description")
        if state not in STATUS_STATES:
            return _validation("Status", "state", f"state is not included in the list {list(STATUS_STATES)}")
        if description is not None and len(str(description)) > MAX_STATUS_DESCRIPTION_CHARS:
            return _validation("Status", "description",
                               f"description is too long (maximum is {MAX_STATUS_DESCRIPTION_CHARS} characters)")
        s = _Status(next(self._ids), ctx.repo.full_name.lower(), ctx.params["sha"], state,
                    data.get("target_url"), description, data.get("context") or "default",
                    ctx.token.login, _now())
        self._statuses.append(s)
        return _json(201, s.to_json(ctx.base, ctx.repo.full_name))

    def _list_statuses(self, ctx: _Ctx) -> _Response:
        assert ctx.repo is not None
        chunk, headers = self._paginate(ctx, self._statuses_of(ctx.repo, ctx.params["ref"]))
        return _json(200, [s.to_json(ctx.base, ctx.repo.full_name) for s in chunk], headers)


# (method, full-path regex, handler, kind); kind: read | write | download | storage | user
_ROUTES: list[tuple[str, re.Pattern[str], _Handler, str]] = [
    (method, re.compile(path), handler, kind)
    for method, path, handler, kind in [
        ("GET", r"/user", FakeGitHub._get_user, "user"),
        ("GET", _OWNER_REPO, FakeGitHub._get_repo, "read"),
        ("GET", _OWNER_REPO + r"/actions/artifacts", FakeGitHub._list_artifacts, "read"),
        ("GET", _OWNER_REPO + r"/actions/artifacts/(?P<aid>\d+)", FakeGitHub._get_artifact, "read"),
        ("GET", _OWNER_REPO + r"/actions/artifacts/(?P<aid>\d+)/zip", FakeGitHub._download_artifact, "download"),
        ("GET", r"/_storage/(?P<token>[^/]+)/(?P<aid>\d+)\.zip", FakeGitHub._storage_get, "storage"),
        ("GET", _OWNER_REPO + r"/issues/(?P<num>\d+)/comments", FakeGitHub._list_comments, "read"),
        ("GET", _OWNER_REPO + r"/pulls/(?P<num>\d+)", FakeGitHub._get_pull, "read"),
        ("POST", _OWNER_REPO + r"/issues/(?P<num>\d+)/comments", FakeGitHub._create_comment, "write"),
        ("GET", _OWNER_REPO + r"/issues/comments/(?P<cid>\d+)", FakeGitHub._get_comment, "read"),
        ("PATCH", _OWNER_REPO + r"/issues/comments/(?P<cid>\d+)", FakeGitHub._update_comment, "write"),
        ("DELETE", _OWNER_REPO + r"/issues/comments/(?P<cid>\d+)", FakeGitHub._delete_comment, "write"),
        ("POST", _OWNER_REPO + r"/statuses/(?P<sha>[^/]+)", FakeGitHub._create_status, "write"),
        ("GET", _OWNER_REPO + r"/commits/(?P<ref>.+)/statuses", FakeGitHub._list_statuses, "read"),
    ]
]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # idle keep-alive connections must not block stop()
    gh: FakeGitHub


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and Expect: 100-continue (curl), like the real API
    timeout = 30
    server: _Server

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _handle(self) -> None:
        body = self._read_body()  # always, so a keep-alive connection stays in sync
        split = urlsplit(self.path)
        req = _Request(self.command.upper(), unquote(split.path), split.path, split.query,
                       Headers(self.headers.items()), body, self.client_address[0])
        resp = self.server.gh._respond(req)
        if resp is None:
            self.close_connection = True
            return
        self.send_response(resp.status)
        for key, value in resp.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(resp.body)))
        self.end_headers()
        self.wfile.write(resp.body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    def log_message(self, format: str, *args: Any) -> None:
        pass  # FakeGitHub(verbose=True) logs instead


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    """CLI entry point: ``serve`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="fakegithub", description="Fake GitHub REST API for tests.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve until SIGTERM/SIGINT")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="0: let the OS choose")
    serve.add_argument("--ready-file", type=Path, help='written once listening: {"url", "port", "pid"}')
    serve.add_argument("--state-file", type=Path, help="rewritten after every request and on shutdown")
    serve.add_argument("--seed-file", type=Path, help="JSON repos/tokens/artifacts/comments/faults")
    serve.add_argument("--storage-ttl", type=float, default=60.0, help="seconds a storage URL stays valid")
    serve.add_argument("--storage-host", help="host name for storage redirects (makes them cross-host)")
    serve.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = parser.parse_args(argv)

    stopping = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    gh = FakeGitHub(host=args.host, port=args.port, storage_ttl=args.storage_ttl,
                    storage_host=args.storage_host, state_file=args.state_file, verbose=args.verbose)
    if args.seed_file is not None:
        gh.load_seed_file(args.seed_file)
    gh.start()
    try:
        if args.ready_file is not None:
            _write_atomic(args.ready_file, json.dumps({"url": gh.url, "port": gh.port, "pid": os.getpid()}))
        print(f"fakegithub serving on {gh.url}", flush=True)
        while not stopping.is_set():
            time.sleep(0.1)  # a plain sleep: signal handlers run promptly in the main thread
    finally:
        gh.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
