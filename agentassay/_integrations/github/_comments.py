"""The pull request: one sticky comment found again by its hidden marker, the commit status, the PR's head.

Ours means written by the token's own identity (``comment_author``), not merely carrying the
marker: anyone who can comment on the PR can paste the marker first, and updating their comment
would be refused (403), so the report would never be posted.

A POST is never resent (``_client``): when a comment POST fails without a clear refusal, the
comments are listed again and, if ours landed after all, it is the one returned.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from ._client import BOT_LOGIN, GitHubError, calling, token_identity

if TYPE_CHECKING:
    from github import Github

STATES = ("success", "failure", "pending", "error")
DESCRIPTION_MAX = 140  # GitHub refuses longer status descriptions


def _ignore(message: str) -> None:
    pass


def comment_author(gh: Github, override: str = "", warn: Callable[[str], None] = _ignore) -> str:
    """Whose marker comments are ours: ``override`` (input ``comment-author``) if set, else the token's login.

    ``GET /user`` names a personal token's user; the workflow token is refused it (403) and
    writes as ``github-actions[bot]``, which is then assumed. Any other failure assumes the same,
    with a warning: a wrong guess costs a new comment instead of an update, never someone else's.
    """
    if override:
        return override
    try:
        return token_identity(gh)
    except GitHubError as exc:
        if exc.status != 403:
            warn(f"could not tell whom the token writes as ({exc}); taking {BOT_LOGIN}")
        return BOT_LOGIN


def find_comment(
    gh: Github, repository: str, number: int, marker: str, author: str, *, exclude: Collection[int] = ()
) -> Any | None:
    """The newest comment carrying ``marker`` written by ``author`` (ours from an earlier run), if any."""
    found = None
    with calling(f"GET /repos/{repository}/issues/{number}/comments"):
        for c in gh.get_repo(repository).get_issue(number).get_comments():
            login = (c.user.login if c.user else "") or ""
            if marker in (c.body or "") and login.casefold() == author.casefold() and c.id not in exclude:
                found = c
    return found


def upsert_comment(
    gh: Github,
    repository: str,
    number: int,
    body: str,
    marker: str,
    *,
    author: str,
    warn: Callable[[str], None] = _ignore,
) -> Any:
    """Update our comment, or create it; returns PyGithub's ``IssueComment`` (``html_url`` is its link).

    An update refused (403, 404: deleted, locked, or not ours after all) becomes a new comment with a warning.
    """
    existing = find_comment(gh, repository, number, marker, author)
    seen: set[int] = set()
    if existing is not None:
        try:
            with calling(f"PATCH /repos/{repository}/issues/comments/{existing.id}"):
                existing.edit(body)
            return existing
        except GitHubError as exc:
            if exc.status not in (403, 404):
                raise
            warn(f"could not update our earlier comment {existing.id} ({exc}); posting a new one")
            seen.add(existing.id)
    issue = gh.get_repo(repository).get_issue(number)
    try:
        with calling(f"POST /repos/{repository}/issues/{number}/comments"):
            return issue.create_comment(body)
    except GitHubError as exc:
        if not exc.transient:
            raise  # refused (403 read-only, 422 invalid): it did not land
        landed = find_comment(gh, repository, number, marker, author, exclude=seen)
        if landed is None:
            raise
        return landed  # the POST went through; only its answer was lost


def set_status(
    gh: Github,
    repository: str,
    sha: str,
    state: str,
    *,
    description: str,
    context: str,
    target_url: str | None = None,
) -> Any:
    """A commit status (works with the workflow token; branch protection can require ``context``)."""
    from github.GithubObject import NotSet

    if state not in STATES:
        raise ValueError(f"state must be one of {STATES}; got {state!r}")
    if len(description) > DESCRIPTION_MAX:
        description = description[: DESCRIPTION_MAX - 1] + "…"
    commit = gh.get_repo(repository).get_commit(sha)  # lazy: no request
    with calling(f"POST /repos/{repository}/statuses/{sha}"):
        return commit.create_status(state, target_url=target_url or NotSet, description=description, context=context)


def pull_head_sha(gh: Github, repository: str, number: int) -> str | None:
    """GitHub's own record of the PR's head commit (``GET /repos/{o}/{r}/pulls/{n}``)."""
    return pull_refs(gh, repository, number)[0]


def pull_refs(gh: Github, repository: str, number: int) -> tuple[str | None, str | None]:
    """GitHub's own record of the PR's head commit and base branch, from one ``GET /repos/{o}/{r}/pulls/{n}``.

    A publish job takes the base branch from here, never from the artifact the PR's code wrote: the
    base decides which baseline the PR's results are judged against.
    """
    with calling(f"GET /repos/{repository}/pulls/{number}"):
        raw = gh.get_repo(repository).get_pull(number).raw_data
    head, base = raw.get("head") or {}, raw.get("base") or {}
    return head.get("sha"), base.get("ref")


__all__ = ["comment_author", "find_comment", "pull_head_sha", "pull_refs", "set_status", "upsert_comment"]
