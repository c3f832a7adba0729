"""A framework profile's span fix-ups apply to exported files as to a live trial's spans (issue 24).

A LangGraph or CrewAI app that exports its own OpenTelemetry spans is analysed with the fix-ups its live
trials get (agent names, decoded arguments, handoff tools as handoffs): ``import_traces(fix_spans=...)``
and ``agentassay analyze --framework``. The spans here are the shape CrewAI's OpenInference instrumentation
reports (the profile's fix-up needs no framework installed); each framework's own tests check a real export.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentassay import main
from agentassay._integrations.adapters._otel import load_profile
from agentassay._integrations.importers import ImportStats, import_spans, import_traces
from agentassay._integrations.importers._otlp import span_object, span_record
from agentassay._traces import Action

TID = "0af7651916cd43dd8448eb211c80319c"
INPUT = "I'd like to change my seat to 14C. My confirmation number is ABC123."


def _kv(attrs: dict) -> list[dict]:
    out = []
    for key, value in attrs.items():
        if isinstance(value, bool):
            encoded = {"boolValue": value}
        elif isinstance(value, int):
            encoded = {"intValue": str(value)}
        else:
            encoded = {"stringValue": value}
        out.append({"key": key, "value": encoded})
    return out


def _span(sid: str, parent: str | None, name: str, start: int, attrs: dict) -> dict:
    span = {"traceId": TID, "spanId": sid, "name": name, "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 10), "attributes": _kv(attrs)}  # fmt: skip
    if parent:
        span["parentSpanId"] = parent
    return span


def crew_spans() -> list[dict]:
    """A crew's run as openinference-instrumentation-crewai reports it: the agent's name only in graph.node.id."""
    return [
        _span("a1", None, "Crew.kickoff", 1, {"openinference.span.kind": "CHAIN", "input.value": INPUT}),
        _span("a2", "a1", "Seat Booking Agent._execute_core", 2, {
            "openinference.span.kind": "AGENT", "graph.node.id": "Seat Booking Agent", "input.value": INPUT}),
        _span("a3", "a2", "ChatCompletion", 3, {
            "openinference.span.kind": "LLM", "llm.model_name": "gpt-4.1-mini",
            "llm.token_count.prompt": 120, "llm.token_count.completion": 14}),
        _span("a4", "a2", "update_seat", 4, {
            "openinference.span.kind": "TOOL", "tool.name": "update_seat",
            "input.value": json.dumps({"confirmation_number": "ABC123", "new_seat": "14C"}),
            "output.value": "Updated seat to 14C for confirmation number ABC123."}),
        _span("a5", "a2", "ChatCompletion", 5, {
            "openinference.span.kind": "LLM", "llm.model_name": "gpt-4.1-mini",
            "llm.token_count.prompt": 150, "llm.token_count.completion": 12,
            "output.value": "Your seat is now 14C."}),
    ]


def _tool_agent(trace) -> str | None:
    return next(s.agent for s in trace.steps if s.action is Action.CALL_TOOL)


@pytest.mark.parametrize(
    "span",
    [
        crew_spans()[3],
        {**crew_spans()[1], "events": [{"name": "exception", "attributes": _kv({"exception.message": "x"})}],
         "status": {"code": 2, "message": "boom"}},
        {"traceId": TID, "spanId": "b1", "name": "n", "attributes": [
            {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}}},
            {"key": "map", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"doubleValue": 1.5}}]}}},
        ]},
    ],
)
def test_a_staged_record_reads_back_as_the_span_it_came_from(span: dict) -> None:
    tid, rec = span_record(span, ImportStats())
    assert span_record(span_object(tid, rec), ImportStats()) == (tid, rec)


def test_the_profile_s_fix_ups_apply_to_a_file_as_to_live_spans(tmp_path: Path) -> None:
    fix = load_profile("crewai").fix_spans
    [raw] = import_spans(crew_spans())
    assert _tool_agent(raw.trace) != "Seat Booking Agent"  # without the fix-ups: the span's name

    [live] = import_spans(crew_spans(), fix_spans=fix)
    lines = tmp_path / "spans.jsonl"
    lines.write_text("\n".join(json.dumps(s) for s in crew_spans()), encoding="utf-8")
    document = tmp_path / "otlp.json"
    document.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                    "scopeSpans": [{"scope": {}, "spans": crew_spans()}]}]}))  # fmt: skip
    [from_lines] = list(import_traces(lines, fix_spans=fix))
    [from_document] = list(import_traces(document, fix_spans=fix))
    assert _tool_agent(live.trace) == "Seat Booking Agent"
    call = next(s for s in live.trace.steps if s.action is Action.CALL_TOOL)
    assert call.arguments == {"confirmation_number": "ABC123", "new_seat": "14C"}
    assert (live.trace.cost.input_tokens, live.trace.cost.output_tokens) == (270, 26)
    for other in (from_lines, from_document):  # the same trace; only the format label differs
        assert (live.trace.steps, live.trace.output, live.trace.cost) == (
            other.trace.steps, other.trace.output, other.trace.cost)  # fmt: skip


def test_fix_ups_that_fail_leave_the_trace_as_exported_and_say_so(tmp_path: Path) -> None:
    def broken(spans: list[dict]) -> list[dict]:
        raise KeyError("a profile's bug on an odd span")

    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in crew_spans()), encoding="utf-8")
    stats = ImportStats()
    [item] = list(import_traces(path, fix_spans=broken, stats=stats))
    [raw] = list(import_traces(path, stats=ImportStats()))
    assert item.trace == raw.trace
    assert stats.unfixed == 1 and "1 traces read as exported" in stats.summary()


SUITE = """\
agent: {entry: "not_installed_here:crew", framework: crewai}
scenarios:
  - name: seat_change
    input: "I'd like to change my seat to 14C. My confirmation number is ABC123."
    properties:
      - must_reach: Seat Booking Agent
      - must_call: update_seat
"""


def test_analyze_reads_an_app_s_export_with_the_suite_agent_s_framework(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "agentassay.yml"
    suite.write_text(SUITE, encoding="utf-8")
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in crew_spans()), encoding="utf-8")
    out, other = tmp_path / "analyzed.json", tmp_path / "as_otel.json"
    main(["analyze", str(path), "--suite", str(suite), "-o", str(out), "-q"])  # one trace: inconclusive
    results = json.loads(out.read_text())
    assert results["analyze"]["sources"][0]["framework"] == "crewai"
    [trial] = results["scenarios"][0]["trials"]
    assert trial["passed"] and trial["failures"] == []

    # the same file read as another framework's: no agent is named, so must_reach fails
    main(["analyze", str(path), "--suite", str(suite), "--framework", "otel", "-o", str(other), "-q"])
    [trial] = json.loads(other.read_text())["scenarios"][0]["trials"]
    assert not trial["passed"] and "Seat Booking Agent" in json.dumps(trial["failures"])
    capsys.readouterr()
    assert main(["analyze", str(path), "--suite", str(suite), "--framework", "nosuch", "-q"]) == 3
    err = capsys.readouterr().err
    assert "--framework nosuch: unknown framework; one of " in err and "crewai" in err
