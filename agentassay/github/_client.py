"""A small GitHub REST client on ``requests``: the handful of endpoints the action needs.

Why not PyGithub: its retry policy resends POST (a lost response then creates a second
comment), its artifact download either forwards the token to the storage redirect or raises,
and its lazy objects make extra requests. Here every call is explicit: idempotent methods
(GET, PATCH, PUT) are retried on 5xx, 429 and rate-limited 403, honouring ``Retry-After`` and
``X-RateLimit-Reset``; POST is never retried blindly (callers decide, see ``_comments``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import requests

RETRIED_METHODS = ("GET", "PATCH", "PUT", "DELETE")
MAX_WAIT_S = 60.0  # never sleep longer than this on one rate limit: a CI job has a budget too
USER_AGENT = "agentassay-action"


class GitHubError(Exception):
    """A request GitHub refused or that never got an answer; ``status`` is None for network errors."""

    def __init__(self, method: str, url: str, status: int | None, message: str) -> None:
        where = f"{method} {url}"
        super().__init__(f"{where}: {status} {message}" if status else f"{where}: {message}")
        self.method, self.url, self.status, self.message = method, url, status, message

    @property
    def forbidden(self) -> bool:
        """403 without a rate limit: the token lacks a permission (or is read-only, as on forks)."""
        return self.status == 403


def _wait_s(resp: requests.Response, attempt: int) -> float | None:
    """Seconds to wait before retrying ``resp``, or None when it must not be retried."""
    status = resp.status_code
    headers = resp.headers
    limited = status == 429 or (status == 403 and (headers.get("Retry-After") or headers.get("X-RateLimit-Remaining") == "0"))
    if not (limited or status >= 500):
        return None
    if headers.get("Retry-After"):
        try:
            return min(float(headers["Retry-After"]), MAX_WAIT_S)
        except ValueError:
            pass
    if limited and headers.get("X-RateLimit-Reset"):
        try:
            return min(max(float(headers["X-RateLimit-Reset"]) - time.time(), 0.0) + 1.0, MAX_WAIT_S)
        except ValueError:
            pass
    return min(2.0**attempt, MAX_WAIT_S)


class GitHubClient:
    """``GitHubClient(api_url, token)``; ``request`` returns the parsed JSON (or the response)."""

    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        session: requests.Session | None = None,
        retries: int = 3,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.token = token
        self.session = session or requests.Session()
        self.retries = retries
        self.timeout = timeout
        self.sleep = sleep

    def headers(self) -> dict[str, str]:
        h = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": USER_AGENT,
        }
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        return h

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.api_url}/{path.lstrip('/')}"

    def send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        allow_redirects: bool = True,
        retry: bool | None = None,
    ) -> requests.Response:
        """One call with retries for idempotent methods; raises GitHubError on a final error status."""
        url = self.url(path)
        retry = method in RETRIED_METHODS if retry is None else retry
        attempt = 0
        while True:
            try:
                resp = self.session.request(
                    method, url, json=json, params=params, headers=self.headers(), timeout=self.timeout,
                    allow_redirects=allow_redirects,
                )
            except requests.RequestException as exc:
                if retry and attempt < self.retries:
                    attempt += 1
                    self.sleep(min(2.0**attempt, MAX_WAIT_S))
                    continue
                raise GitHubError(method, url, None, f"no answer ({type(exc).__name__}: {exc})") from exc
            if resp.status_code < 400:
                return resp
            wait = _wait_s(resp, attempt + 1)
            if retry and wait is not None and attempt < self.retries:
                attempt += 1
                self.sleep(wait)
                continue
            raise GitHubError(method, url, resp.status_code, _message(resp))

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        resp = self.send(method, path, **kwargs)
        return resp.json() if resp.content else None

    def paginate(self, path: str, params: dict[str, Any] | None = None, *, key: str | None = None) -> Iterator[Any]:
        """Every item of a listing, following ``Link: <…>; rel="next"``."""
        url: str | None = self.url(path)
        query: dict[str, Any] | None = {"per_page": 100, **(params or {})}
        while url:
            resp = self.send("GET", url, params=query)
            data = resp.json()
            yield from (data.get(key) or []) if key else data
            url = resp.links.get("next", {}).get("url")
            query = None  # the next link carries the query


def _message(resp: requests.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return resp.reason or "error"
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return resp.reason or "error"
