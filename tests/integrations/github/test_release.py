"""The release: .github/workflows/release.yml pushes the image and commits action.yml pointing at it
(.ci/release_action.py); the default branch's action.yml keeps building from the Dockerfile."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / ".ci" / "release_action.py"


def release(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_the_release_action_runs_the_prebuilt_image_and_changes_nothing_else(tmp_path: Path) -> None:
    out = tmp_path / "action.yml"
    done = release("ghcr.io/agentassay/agentassay:v1.2.3", "--action", str(ROOT / "action.yml"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    before, after = (ROOT / "action.yml").read_text(), out.read_text()
    assert yaml.safe_load(before)["runs"]["image"] == "Dockerfile"  # the default branch builds from the checkout
    released = yaml.safe_load(after)
    assert released["runs"] == {"using": "docker", "image": "docker://ghcr.io/agentassay/agentassay:v1.2.3"}
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [("  image: Dockerfile", "  image: docker://ghcr.io/agentassay/agentassay:v1.2.3")]
    if importlib.util.find_spec("check_jsonschema") is not None:  # as .ci/run checks it
        check = subprocess.run(
            [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions", str(out)],
            capture_output=True, text=True, check=False,
        )
        assert check.returncode == 0, check.stdout + check.stderr


def test_a_bad_image_name_or_an_action_without_the_dockerfile_line_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "action.yml"
    done = release("ghcr.io/AgentAssay/agentassay:v1", "--out", str(out))
    assert done.returncode == 3 and "expected a lowercase reference with a tag" in done.stderr and not out.exists()
    prebuilt = tmp_path / "released.yml"
    prebuilt.write_text("runs:\n  using: docker\n  image: docker://ghcr.io/a/b:v1\n")
    done = release("ghcr.io/a/agentassay:v2", "--action", str(prebuilt))
    assert done.returncode == 3 and "found 0" in done.stderr


def test_the_release_workflow_rewrites_before_it_pushes_and_moves_both_tags() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert workflow[True]["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+"]  # YAML 1.1 reads the key `on` as True
    assert workflow["permissions"] == {"contents": "write", "packages": "write"}
    steps = workflow["jobs"]["publish"]["steps"]
    runs = [s.get("run", "") for s in steps]
    uses = [s.get("uses", "") for s in steps]
    rewrite = next(i for i, r in enumerate(runs) if ".ci/release_action.py" in r)
    push = next(i for i, u in enumerate(uses) if u.startswith("docker/build-push-action"))
    assert rewrite < push and "check-jsonschema --builtin-schema vendor.github-actions action.yml" in runs[rewrite]
    assert 'git push --force origin "refs/tags/$TAG" "refs/tags/$MAJOR"' in runs[-1]
