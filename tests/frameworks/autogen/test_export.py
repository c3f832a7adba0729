"""An app's own OpenTelemetry export of this framework's spans reads as the live trial (tests/_support/exported.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("autogen_agentchat")

from tests._support.exported import check_export_reads_as_live


def test_an_apps_export_imports_as_the_live_trace(tmp_path: Path) -> None:
    """Under AgentAssay the app's exporter also gets the spans the profile writes from the run's messages (the
    native route); an app's export made without AgentAssay has AutoGen's own spans only (test_autogen.py,
    ``test_without_the_run_result_...``)."""
    check_export_reads_as_live("examples.frameworks.autogen.v1:agent", tmp_path)
