"""One sticky PR comment, found again by its hidden marker; and the commit status.

A retried POST can create a second comment when the first one landed but its response was lost.
So a failed POST is never simply resent: the comments are listed again and, if ours is there,
it is updated instead.
"""

from __future__ import annotations

from typing import Any

from ._client import GitHubClient, GitHubError

STATES = ("success", "failure", "pending", "error")
DESCRIPTION_MAX = 140  # GitHub refuses longer status descriptions


def find_comment(client: GitHubClient, repository: str, number: int, marker: str) -> dict[str, Any] | None:
    """The first comment carrying ``marker`` (ours from an earlier run), if any."""
    for c in client.paginate(f"repos/{repository}/issues/{number}/comments"):
        if marker in (c.get("body") or ""):
            return c
    return None


def upsert_comment(client: GitHubClient, repository: str, number: int, body: str, marker: str) -> dict[str, Any]:
    """Update our comment, or create it; returns the comment (``html_url`` is its link)."""
    existing = find_comment(client, repository, number, marker)
    if existing is not None:
        return client.request("PATCH", f"repos/{repository}/issues/comments/{existing['id']}", json={"body": body})
    try:
        return client.request("POST", f"repos/{repository}/issues/{number}/comments", json={"body": body}, retry=False)
    except GitHubError as exc:
        if exc.status is not None and exc.status < 500 and exc.status != 429:
            raise  # refused (403 read-only, 422 invalid): resending cannot help
        landed = find_comment(client, repository, number, marker)
        if landed is not None:  # the POST went through; only its answer was lost
            return client.request("PATCH", f"repos/{repository}/issues/comments/{landed['id']}", json={"body": body})
        return client.request("POST", f"repos/{repository}/issues/{number}/comments", json={"body": body}, retry=False)


def set_status(
    client: GitHubClient,
    repository: str,
    sha: str,
    state: str,
    *,
    description: str,
    context: str,
    target_url: str | None = None,
) -> dict[str, Any]:
    """A commit status (works with the workflow token; branch protection can require ``context``)."""
    if state not in STATES:
        raise ValueError(f"state must be one of {STATES}; got {state!r}")
    if len(description) > DESCRIPTION_MAX:
        description = description[: DESCRIPTION_MAX - 1] + "…"
    payload: dict[str, Any] = {"state": state, "description": description, "context": context}
    if target_url:
        payload["target_url"] = target_url
    # Statuses are idempotent in effect (the newest per context wins), so a retry is safe.
    return client.request("POST", f"repos/{repository}/statuses/{sha}", json=payload, retry=True)
