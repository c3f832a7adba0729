"""Every framework's tests run from the repository root, as `agentassay` is run beside a suite: the examples'
suites name their agents as `examples.frameworks.<name>.v1:…`."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
