"""An app's own OpenTelemetry export of this framework's spans reads as the live trial (tests/_support/exported.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from tests._support.exported import check_export_reads_as_live


def test_an_apps_export_imports_as_the_live_trace(tmp_path: Path) -> None:
    """The live trial's spans are fixed with the run's events; an export has the spans only (the names, call ids
    and handoffs read from the workflow's event reprs instead): both give the same trace."""
    check_export_reads_as_live("examples.frameworks.llamaindex.v1:agent", tmp_path)
