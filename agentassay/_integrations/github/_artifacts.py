"""The baseline the base branch recorded as a workflow artifact: find it, download it, unpack it.

Which artifact: ``GET /repos/{o}/{r}/actions/artifacts?name=…`` (PyGithub, paginated; needs
``actions: read``); keep those not expired whose run was on the PR's base branch *and* in this
repository (a fork's branch can also be called ``main``: ``workflow_run.head_repository_id`` tells
them apart); take the newest.

How: ``…/artifacts/{id}/zip`` answers 302 to a storage URL that expires in about a minute and
must be fetched *without* the token (storage rejects it, and the token must not leak there).
PyGithub has no download that guarantees this, so it is two plain ``requests`` calls: the API
hop with the token and the client's retry policy, not following the redirect; then the storage
URL with no credentials.

Unpacking trusts nothing in the zip: the compressed size, the member count, the declared
uncompressed total and every member's path are checked before anything is written, the
uncompressed bytes are counted again while extracting (headers can lie), and everything is
extracted into a staging folder that is removed on any violation -- so a zip bomb leaves nothing
on the runner's disk.
"""

from __future__ import annotations

import io
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import requests
from requests.adapters import HTTPAdapter

from ..._errors import AgentAssayError
from ._client import USER_AGENT, GitHubError, calling

if TYPE_CHECKING:
    from github import Github

RESULTS_NAME = "results.json"  # the file the recording run writes into the artifact
MAX_ARTIFACT_BYTES = 512 * 1024 * 1024  # compressed, as downloaded
MAX_UNPACKED_BYTES = 2 * 1024 * 1024 * 1024  # results.json, traces.db and the reports: far below this
MAX_MEMBERS = 1000  # a results folder holds a handful of files
_CHUNK = 1024 * 1024


class BaselineError(AgentAssayError):
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


def find_baseline(gh: Github, repository: str, name: str, branch: str, repository_id: int | None) -> Artifact | None:
    """The newest usable artifact called ``name`` recorded on ``branch`` of this repository."""
    candidates = []
    with calling(f"GET /repos/{repository}/actions/artifacts"):
        for artifact in gh.get_repo(repository).get_artifacts(name=name):
            a = artifact.raw_data  # the listing's JSON (workflow_run.head_repository_id has no attribute)
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


def download(gh: Github, repository: str, artifact: Artifact) -> bytes:
    """The artifact's zip: the API's 302 not followed, the storage request made without the token."""
    if artifact.size > MAX_ARTIFACT_BYTES:
        raise BaselineError(_too_big(artifact.size))
    config = gh.requester.kwargs  # the client's base URL, token, retry policy and timeout
    url = f"{config['base_url'].rstrip('/')}/repos/{repository}/actions/artifacts/{artifact.id}/zip"
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28", "User-Agent": USER_AGENT}
    config["auth"].authentication(headers)
    with requests.Session() as session:
        adapter = HTTPAdapter(max_retries=config["retry"])
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        with calling(f"GET {url}"):
            resp = session.get(url, headers=headers, timeout=config["timeout"], allow_redirects=False, stream=True)
        if resp.status_code >= 400:
            raise GitHubError(f"GET {url}", resp.status_code, _reason(resp))
        if resp.status_code not in (301, 302, 303, 307, 308):
            return _read_capped(resp)  # some servers answer with the bytes directly
        location = resp.headers.get("Location")
        if not location:
            raise BaselineError(f"artifact {artifact.id}: the download redirect has no Location header")
    try:  # a fresh request: no session, no Authorization header, no cookies
        blob = requests.get(location, timeout=config["timeout"], headers={"User-Agent": USER_AGENT}, stream=True)
    except requests.RequestException as exc:
        raise BaselineError(f"artifact {artifact.id}: download failed ({type(exc).__name__})") from exc
    if blob.status_code != 200:
        blob.close()
        raise BaselineError(f"artifact {artifact.id}: storage answered {blob.status_code}")
    return _read_capped(blob)


def _reason(resp: requests.Response) -> str:
    try:
        message = resp.json().get("message")
    except (ValueError, AttributeError):
        message = None
    return str(message or resp.reason or "error")


def _read_capped(resp: requests.Response) -> bytes:
    buf = bytearray()
    with resp:
        for chunk in resp.iter_content(_CHUNK):
            buf += chunk
            if len(buf) > MAX_ARTIFACT_BYTES:
                raise BaselineError(_too_big(len(buf)))
    return bytes(buf)


def _too_big(size: int) -> str:
    return f"the baseline artifact is {size:,} bytes or more, over the limit of {MAX_ARTIFACT_BYTES:,} bytes compressed"


def _member_path(name: str) -> PurePosixPath:
    """``name`` as a path inside the destination; absolute paths, drives and ``..`` are refused."""
    path = PurePosixPath(name.replace("\\", "/"))
    if not path.parts or path.is_absolute() or ".." in path.parts or ":" in path.parts[0]:
        raise BaselineError(f"the baseline zip has an unsafe path: {name!r}")
    return path


def unpack(
    data: bytes, dest: Path, *, max_bytes: int = MAX_UNPACKED_BYTES, max_members: int = MAX_MEMBERS
) -> Path:
    """Extract the zip into ``dest`` (replacing it) and return the results file inside it.

    Raises ``BaselineError`` naming the limit on: more than ``max_members`` members, more than
    ``max_bytes`` uncompressed (declared, or found while extracting), or an unsafe path; then
    nothing is left on disk.
    """
    if len(data) > MAX_ARTIFACT_BYTES:
        raise BaselineError(_too_big(len(data)))
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > max_members:
                raise BaselineError(
                    f"the baseline zip has {len(infos):,} members, over the limit of {max_members:,} (MAX_MEMBERS)"
                )
            declared = sum(i.file_size for i in infos)
            if declared > max_bytes:
                raise BaselineError(
                    f"the baseline zip declares {declared:,} bytes uncompressed, over the limit of "
                    f"{max_bytes:,} bytes (MAX_UNPACKED_BYTES)"
                )
            paths = [_member_path(i.filename) for i in infos]
            dest.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
            try:
                _extract(zf, infos, paths, staging, max_bytes)
                found = sorted(staging.rglob(RESULTS_NAME))
                if not found:
                    names = ", ".join(i.filename for i in infos[:5]) or "none"
                    raise BaselineError(f"the baseline artifact has no {RESULTS_NAME} (files: {names})")
                if dest.exists():
                    shutil.rmtree(dest)
                staging.rename(dest)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, RuntimeError) as exc:
        raise BaselineError(f"the baseline artifact is not a valid zip ({exc})") from exc
    except OSError as exc:  # nothing is left behind (staging removed); say why rather than crash
        raise BaselineError(f"the baseline artifact could not be unpacked into {dest.parent} ({exc})") from exc
    return dest / found[0].relative_to(staging)


def _extract(zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], paths: list[PurePosixPath], root: Path, max_bytes: int) -> None:
    """Write the members under ``root``, counting the bytes actually inflated against ``max_bytes``."""
    written = 0
    for info, rel in zip(infos, paths, strict=True):
        target = root.joinpath(*rel.parts)
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as src, target.open("wb") as out:
            while chunk := src.read(_CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    raise BaselineError(
                        f"the baseline zip inflates to more than {max_bytes:,} bytes (MAX_UNPACKED_BYTES), "
                        "more than its headers declare"
                    )
                out.write(chunk)


__all__ = ["MAX_MEMBERS", "MAX_UNPACKED_BYTES", "Artifact", "BaselineError", "download", "find_baseline", "unpack"]
