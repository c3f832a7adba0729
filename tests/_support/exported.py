"""An app's own OpenTelemetry export of a framework's spans reads as the live trial did (issue 24).

Used by each framework's tests (tests/frameworks/<name>/test_export.py) in its own environment: a user's
exporter sits on the tracer provider beside the capture (as in production), one offline trial of the example
runs, and the spans the exporter got, written as an OTLP/JSON file and imported with the profile's fix-ups
(what ``agentassay analyze --framework`` does), give the live trace's steps, output and tokens.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentassay._integrations.adapters import load_adapter
from agentassay._integrations.adapters._otel._capture import install, otlp_span
from agentassay._integrations.importers import import_traces
from agentassay._spec._model import ModelConfig
from agentassay._traces import Action
from tests._support.frameworks import ROOT, SEAT_Q

SEAT_14C = SEAT_Q.format(seat="14C")


def check_export_reads_as_live(entry: str, tmp_path: Path) -> None:
    """``entry`` (an example's v1 object) on the offline model: its exported spans import as its live trace."""
    adapter = load_adapter(entry, model=ModelConfig(provider="offline"), search=[ROOT], root=ROOT)
    _, provider = install()
    exporter = InMemorySpanExporter()  # the app's own exporter: the capture never replaces it
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        live = asyncio.run(adapter.run(SEAT_14C, seed=3))
        exported = exporter.get_finished_spans()
    finally:
        exporter.shutdown()  # keeps nothing more for the rest of the session
    trace_id = live.metadata.extra["trace_id"]
    spans = [otlp_span(s) for s in exported if s.context and format(s.context.trace_id, "032x") == trace_id]
    document = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": spans}]}]}
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    [imported] = list(import_traces(path, fix_spans=adapter.profile.fix_spans))
    assert any(s.action is Action.CALL_TOOL and s.tool == "update_seat" for s in live.steps), live.steps
    assert imported.trace.steps == live.steps
    assert (imported.trace.output, imported.trace.cost) == (live.output, live.cost)
    assert imported.input == SEAT_14C
