"""An app's own OpenTelemetry export of this framework's spans reads as the live trial (tests/_support/exported.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("agno")

from tests._support.exported import check_export_reads_as_live


def test_an_apps_export_imports_as_the_live_trace(tmp_path: Path) -> None:
    check_export_reads_as_live("examples.frameworks.agno.v1:agent", tmp_path)
