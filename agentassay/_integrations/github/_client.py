"""PyGithub, set up for the action: the REST base URL of GitHub or GitHub Enterprise, and a retry policy.

Retries are PyGithub's ``GithubRetry`` (a urllib3 ``Retry``): 5xx, 429, and a 403 that is a rate
limit (``Retry-After``, or a rate-limit message: it waits until ``X-RateLimit-Reset``) are retried
with back-off -- but only for idempotent methods: GET, HEAD, PUT, DELETE, and PATCH (our one PATCH
sets a comment's whole body, so sending it twice leaves the same comment). POST is never resent,
for comments and statuses alike: a POST whose answer was lost may have taken effect already, so
``_comments`` looks before it decides. A connection that could not be opened is retried for any
method, since nothing was sent. Pagination is PyGithub's; objects are lazy, so naming a
repository, issue or commit costs no request.

PyGithub is imported inside the functions, so ``import agentassay._integrations.github`` (and the CLI) stays fast.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import requests

from ..._errors import AgentAssayError

if TYPE_CHECKING:
    from github import Github

USER_AGENT = "agentassay-action"
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"})
BOT_LOGIN = "github-actions[bot]"  # who writes with the workflow's GITHUB_TOKEN


@dataclass(frozen=True)
class ClientSettings:
    """How patient the client is. The defaults are production's; tests pass smaller waits, never sleep less here.

    ``max_wait`` caps any single wait (``Retry-After``, a rate-limit reset, the back-off): a CI job
    has a budget too, and a longer rate limit fails the call with a warning instead. ``pacing``
    keeps PyGithub's spacing of requests (0.25 s) and writes (1 s), which GitHub asks of clients
    to stay under its secondary rate limits.
    """

    retries: int = 3
    backoff_factor: float = 1.0  # urllib3: 2 s, 4 s, … between consecutive failures
    max_wait: float = 60.0
    pacing: bool = True
    timeout: int = 30


class GitHubError(AgentAssayError):
    """A GitHub call that failed after the library's retries; ``status`` is None when no answer came.

    PyGithub raises ``GithubException`` and lets ``requests`` errors through; the action only needs
    what was asked, the status and GitHub's message, to turn any of them into one warning.
    """

    def __init__(self, what: str, status: int | None, message: str) -> None:
        super().__init__(f"{what}: {status} {message}" if status else f"{what}: {message}")
        self.what, self.status, self.message = what, status, message

    @property
    def forbidden(self) -> bool:
        """403 without a rate limit: the token lacks a permission (or is read-only, as on forks)."""
        return self.status == 403

    @property
    def transient(self) -> bool:
        """No answer, a server error or a rate limit: the request may or may not have taken effect."""
        return self.status is None or self.status >= 500 or self.status == 429


@contextlib.contextmanager
def calling(what: str) -> Iterator[None]:
    """Turn PyGithub's and ``requests``' errors raised inside into a ``GitHubError`` naming ``what``."""
    from github import GithubException

    try:
        yield
    except GithubException as exc:
        raise GitHubError(what, exc.status, _message(exc.data)) from exc
    except requests.RequestException as exc:
        raise GitHubError(what, None, f"no answer ({type(exc).__name__}: {exc})") from exc


def _message(data: Any) -> str:
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return str(data or "error")[:200]


def retry_policy(settings: ClientSettings | None = None) -> Any:
    """PyGithub's ``GithubRetry`` limited to idempotent methods (see the module docstring)."""
    from github import GithubRetry
    from urllib3 import Retry

    s = settings or ClientSettings()
    kwargs: dict[str, Any] = {
        "total": s.retries,
        "backoff_factor": s.backoff_factor,
        "allowed_methods": IDEMPOTENT_METHODS,
        "status_forcelist": [*range(500, 600), 429],  # GithubRetry adds 403 and tells rate limits apart
        "raise_on_status": False,  # the last answer reaches PyGithub, which raises with its status
        "secondary_rate_wait": min(60.0, s.max_wait),
        "max_rate_limit_wait": s.max_wait,  # a longer primary rate limit fails now (PyGithub >= 2.10)
    }
    # Caps on the back-off and on Retry-After, where this urllib3 has them (2.0 and 2.6.3).
    accepted = inspect.signature(Retry.__init__).parameters
    caps = {"backoff_max": s.max_wait, "retry_after_max": int(s.max_wait)}
    kwargs.update({k: v for k, v in caps.items() if k in accepted})
    return GithubRetry(**kwargs)


class _QuietRefusals(logging.Filter):
    """Drop GithubRetry's INFO line for every 403 ("Request GET /user failed with 403").

    PyGithub logs to stderr at INFO by default; an expected refusal (``GET /user`` with the workflow
    token) would read as a failure in the job log. Rate-limit waits ("Retrying after …") still show,
    and a refusal that matters becomes our own warning.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno == logging.INFO and "failed with 403" in record.getMessage())


_QUIET = _QuietRefusals()


def connect(api_url: str, token: str, settings: ClientSettings | None = None) -> Github:
    """A lazy ``github.Github`` on ``api_url`` (``GITHUB_API_URL``: github.com's or an Enterprise server's)."""
    import github

    logging.getLogger("github.GithubRetry").addFilter(_QUIET)  # idempotent: the same filter object
    s = settings or ClientSettings()
    pacing: dict[str, Any] = {} if s.pacing else {"seconds_between_requests": None, "seconds_between_writes": None}
    return github.Github(
        base_url=api_url.rstrip("/"), auth=github.Auth.Token(token), retry=retry_policy(s), timeout=s.timeout,
        user_agent=USER_AGENT, per_page=100, lazy=True, **pacing,
    )


def token_identity(gh: Github) -> str:
    """The login the token writes as: ``GET /user`` for a personal token; ``github-actions[bot]`` otherwise.

    The workflow's GITHUB_TOKEN is an installation token, and ``GET /user`` refuses it (403
    "Resource not accessible by integration"); its comments are written by ``github-actions[bot]``.
    Another GitHub App's token writes as ``<app-slug>[bot]``: name it with the ``comment-author`` input.
    """
    with calling("GET /user"):
        return str(gh.get_user().login)


__all__ = ["BOT_LOGIN", "ClientSettings", "GitHubError", "calling", "connect", "retry_policy", "token_identity"]
