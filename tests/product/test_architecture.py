"""The house keeps its shape: the kernel names no feature, and docs/architecture.md has one row per package."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "agentassay"
KERNEL = ("_spec", "_runner", "_plugins", "_gate", "_results", "_traces", "_reports", "_evaluators")
CORE = ("_errors.py", "_limits.py", "_visible.py", "_config_check.py", "_boundary.py")
# Issue 23's acceptance: `grep -rniE "<these>" <kernel folders>` prints nothing.
FEATURE_WORDS = re.compile(r"fingerprint|proxy|coverage|warm|budget|shard|judge|contract|metamorph|mutat", re.I)


def _kernel_files() -> list[Path]:
    files = [p for d in KERNEL for p in (PACKAGE / d).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return files + [PACKAGE / name for name in CORE]


def test_the_kernel_names_no_feature() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in _kernel_files()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if FEATURE_WORDS.search(line)
    ]
    assert not found, "a kernel file names a feature (move it into the feature's package):\n" + "\n".join(found)


def _packages(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


def test_architecture_has_one_row_per_package() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.M)
    want = sorted(KERNEL) + sorted(_packages(PACKAGE / "_features")) + sorted(_packages(PACKAGE / "_integrations"))
    assert sorted(rows) == sorted(want), f"rows {sorted(set(rows) ^ set(want))} are missing or stale"
    assert len(rows) == len(set(rows)), "a package has two rows"
    assert _packages(PACKAGE) - {"_features", "_integrations", "_stats"} == set(KERNEL)
