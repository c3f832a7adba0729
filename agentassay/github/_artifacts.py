"""The baseline the base branch recorded as a workflow artifact: find it, download it, unpack it.

Which artifact: ``GET /repos/{o}/{r}/actions/artifacts?name=…`` (needs ``actions: read``); keep
those not expired whose run was on the PR's base branch *and* in this repository (a fork's branch
can also be called ``main``: ``workflow_run.head_repository_id`` tells them apart); take the newest.

How: ``…/artifacts/{id}/zip`` answers 302 to a storage URL that expires in about a minute and
must be fetched *without* the token (storage rejects it, and the token must not leak there), so
the redirect is followed by hand with a bare request.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from ._client import GitHubClient, GitHubError

RESULTS_NAME = "results.json"  # the file the recording run writes into the artifact
MAX_ARTIFACT_BYTES = 512 * 1024 * 1024


class BaselineError(Exception):
    """A baseline artifact that exists but cannot be used (corrupt, expired, too large)."""


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    created_at: str
    head_branch: str | None
    head_sha: str | None
    size: int
    run_id: int | None

    @classmethod
    def from_api(cls, a: dict[str, Any]) -> Artifact:
        run = a.get("workflow_run") or {}
        return cls(
            int(a["id"]), str(a.get("name", "")), str(a.get("created_at") or ""), run.get("head_branch"),
            run.get("head_sha"), int(a.get("size_in_bytes") or 0), run.get("id"),
        )


def find_baseline(client: GitHubClient, repository: str, name: str, branch: str, repository_id: int | None) -> Artifact | None:
    """The newest usable artifact called ``name`` recorded on ``branch`` of this repository."""
    candidates = []
    for a in client.paginate(f"repos/{repository}/actions/artifacts", {"name": name}, key="artifacts"):
        run = a.get("workflow_run") or {}
        if a.get("name") != name or a.get("expired"):
            continue
        if run.get("head_branch") != branch:
            continue
        if repository_id is not None and run.get("head_repository_id") != repository_id:
            continue  # same branch name, but pushed to a fork
        candidates.append(a)
    if not candidates:
        return None
    newest = max(candidates, key=lambda a: (a.get("created_at") or "", int(a["id"])))
    return Artifact.from_api(newest)


def download(client: GitHubClient, repository: str, artifact: Artifact) -> bytes:
    """The artifact's zip: the API's 302 followed by hand, the storage request without the token."""
    resp = client.send("GET", f"repos/{repository}/actions/artifacts/{artifact.id}/zip", allow_redirects=False)
    if resp.status_code not in (301, 302, 303, 307, 308):
        return resp.content  # some servers answer with the bytes directly
    location = resp.headers.get("Location")
    if not location:
        raise BaselineError(f"artifact {artifact.id}: the download redirect has no Location header")
    try:
        blob = requests.get(location, timeout=client.timeout, headers={"User-Agent": "agentassay-action"})
    except requests.RequestException as exc:
        raise BaselineError(f"artifact {artifact.id}: download failed ({type(exc).__name__})") from exc
    if blob.status_code != 200:
        raise BaselineError(f"artifact {artifact.id}: storage answered {blob.status_code}")
    return blob.content


def unpack(data: bytes, dest: Path) -> Path:
    """Extract the zip into ``dest`` (safely) and return the results file inside it."""
    if len(data) > MAX_ARTIFACT_BYTES:
        raise BaselineError(f"the baseline artifact is {len(data):,} bytes, more than we unpack")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = zf.namelist()
            dest.mkdir(parents=True, exist_ok=True)
            root = dest.resolve()
            for member in members:
                target = (dest / member).resolve()
                if root not in target.parents and target != root:
                    raise BaselineError(f"the baseline zip has an unsafe path: {member!r}")
            zf.extractall(dest)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise BaselineError(f"the baseline artifact is not a valid zip ({exc})") from exc
    found = sorted(dest.rglob(RESULTS_NAME))
    if not found:
        raise BaselineError(f"the baseline artifact has no {RESULTS_NAME} (files: {', '.join(members[:5]) or 'none'})")
    return found[0]


__all__ = ["Artifact", "BaselineError", "GitHubError", "download", "find_baseline", "unpack"]
