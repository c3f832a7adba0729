"""Importers of recorded traces: one run, four recordings (GenAI current, GenAI <= 1.36, OpenInference,
an Agents SDK export made here by the real SDK), one Trace — the one the live adapter records."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import io
import json
import sqlite3
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentassay._integrations.importers import (
    FORMATS,
    ImportedTrace,
    ImportStats,
    TraceImportError,
    _otlp,
    detect_format,
    import_traces,
)
from agentassay._integrations.importers._json import JsonScanner
from agentassay._runner import trial_seed
from agentassay._traces import Action, Cost, Step, Trace, TraceMetadata, TraceStore

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "traces"
CURRENT = FIXTURES / "cs-genai-current.json"
LEGACY = FIXTURES / "cs-genai-1.36.jsonl"
OPENINFERENCE = FIXTURES / "cs-openinference.json"

SEAT = "I'd like to change my seat to 14C. My confirmation number is ABC123."
BAGGAGE = "How much baggage can I bring?"
# The suite's first recorded trial of each scenario (examples/customer_service/agentassay.yml, seed 7).
SEAT_SEED = trial_seed(7, "run", "seat_change", 0)
BAGGAGE_SEED = trial_seed(7, "run", "baggage", 0)


def stable(trace: Trace) -> dict[str, Any]:
    """What every recording of one run must agree on: steps, output, tokens, error (not latency or provenance)."""
    d = trace.to_dict()
    d["cost"].pop("latency_s")
    d.pop("metadata")
    return d


def imported(path: Path, **kw: Any) -> tuple[list[ImportedTrace], ImportStats]:
    stats = ImportStats()
    return list(import_traces(path, stats=stats, **kw)), stats


def otlp_doc(spans: list[dict[str, Any]], resource: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {"resource": {"attributes": attrs(resource or {})}, "scopeSpans": [{"spans": spans}]}
        ]
    }


def attrs(d: dict[str, Any]) -> list[dict[str, Any]]:
    def val(v: Any) -> dict[str, Any]:
        if isinstance(v, bool):
            return {"boolValue": v}
        if isinstance(v, int):
            return {"intValue": str(v)}
        if isinstance(v, dict):
            return {"kvlistValue": {"values": [{"key": k, "value": val(x)} for k, x in v.items()]}}
        if isinstance(v, list):
            return {"arrayValue": {"values": [val(x) for x in v]}}
        return {"stringValue": v}

    return [{"key": k, "value": val(v)} for k, v in d.items()]


def span(
    sid: str,
    parent: str | None,
    name: str,
    t: int,
    a: dict[str, Any],
    *,
    trace: str = "t1",
    events: list[tuple[str, dict[str, Any]]] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "traceId": trace,
        "spanId": sid,
        "name": name,
        "startTimeUnixNano": str(1_000_000 * t),
        "endTimeUnixNano": str(1_000_000 * t + 500_000),
        "attributes": attrs(a),
    }
    if parent:
        s["parentSpanId"] = parent
    if events:
        s["events"] = [{"name": n, "attributes": attrs(ea)} for n, ea in events]
    if error is not None:
        s["status"] = {"code": "STATUS_CODE_ERROR", "message": error}
    return s


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


# -- (d): the real SDK, exported by a tiny file-writing TracingProcessor ------------------------------
agents = pytest.importorskip("agents")
from agents import set_trace_processors  # noqa: E402
from agents.tracing import TracingProcessor  # noqa: E402

from agentassay._integrations.adapters._base import AgentRunError  # noqa: E402
from agentassay._integrations.adapters._openai_agents import (  # noqa: E402
    OpenAIAgentsAdapter,
    _installed_processors,
    install_trace_router,
)

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from examples.customer_service import _workflow as cs_workflow  # noqa: E402
from examples.customer_service import v1  # noqa: E402


class JsonlExporter(TracingProcessor):
    """What a team would write to keep the SDK's traces: each span and trace as one JSON line when it ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.write_text("", encoding="utf-8")

    def _write(self, item: Any) -> None:
        data = item.export()
        if data:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(data, ensure_ascii=False) + "\n")

    def on_trace_start(self, trace: Any) -> None:
        pass

    def on_trace_end(self, trace: Any) -> None:
        self._write(trace)

    def on_span_start(self, span: Any) -> None:
        pass

    def on_span_end(self, span: Any) -> None:
        self._write(span)

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


@pytest.fixture
def sdk_export(tmp_path: Path) -> Iterator[tuple[Path, Any]]:
    """(the export file, run(agent, text, seed, **adapter options) -> the live adapter's Trace)."""
    install_trace_router()
    saved = _installed_processors() or ()
    path = tmp_path / "sdk-export.jsonl"
    set_trace_processors([*saved, JsonlExporter(path)])

    def run(agent: Any, text: str, seed: int, **options: Any) -> Trace:
        adapter = OpenAIAgentsAdapter(agent, **options)
        try:
            return asyncio.run(adapter.run(text, seed=seed))
        except AgentRunError as exc:
            assert exc.trace is not None
            return exc.trace

    try:
        yield path, run
    finally:
        set_trace_processors(list(saved))


# -- one run, four recordings -----------------------------------------------------------------------
def test_one_run_recorded_four_ways_imports_to_the_live_adapters_trace(sdk_export: tuple[Path, Any]) -> None:
    path, run = sdk_export
    live = [run(v1.triage_agent, SEAT, SEAT_SEED), run(v1.triage_agent, BAGGAGE, BAGGAGE_SEED)]
    # The runs have the shapes the fixtures describe: a handoff, a tool call, an answer.
    assert [s.action for s in live[0].steps] == [Action.HANDOFF, Action.CALL_TOOL, Action.RESPOND]
    assert live[0].handoffs == [("Triage Agent", "Seat Booking Agent")]
    assert live[1].tools_called == ["faq_lookup_tool"]

    recordings = {p.name: imported(p)[0] for p in (CURRENT, LEGACY, OPENINFERENCE)}
    recordings["sdk"] = imported(path)[0]
    for name, items in recordings.items():
        assert [stable(i.trace) for i in items] == [stable(t) for t in live], name
    sdk = recordings["sdk"]
    assert [i.trace.metadata.seed for i in sdk] == [SEAT_SEED, BAGGAGE_SEED]
    assert {i.trace.metadata.model for i in sdk} == {"offline-simulator"}
    assert [i.trace.metadata.adapter for i in sdk] == ["import:agents-sdk"] * 2
    assert all(i.trace.cost.latency_s > 0 for i in sdk)


def test_the_fixtures_record_inputs_and_root_attributes() -> None:
    for path in (CURRENT, LEGACY, OPENINFERENCE):
        items, stats = imported(path)
        assert [i.input for i in items] == [SEAT, BAGGAGE], path.name
        assert [i.attributes["app.scenario"] for i in items] == ["seat_change", "baggage"]
        assert {i.attributes["service.name"] for i in items} == {
            "customer-service"
        }  # resource attributes too
        assert [i.trace_id for i in items] == [
            "5e47c4a1d2b3c4d5e6f708192a3b4c5d",
            "b4a6ca9e0f1e2d3c4b5a69788796a5b4",
        ]
        assert stats.skipped == 0 and stats.traces == 2, stats.summary()
        meta = items[0].trace.metadata
        assert meta.model == "offline-simulator" and meta.adapter == f"import:{detect_format(path)}"
        assert meta.timestamp == "2026-11-23T21:00:11.000000+00:00"
        assert items[0].trace.cost.latency_s == pytest.approx(0.014 if path == OPENINFERENCE else 0.013)


def test_jsonl_spans_of_the_same_run(tmp_path: Path) -> None:
    doc = json.loads(CURRENT.read_text(encoding="utf-8"))
    block = doc["resourceSpans"][0]
    path = tmp_path / "spans.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for s in block["scopeSpans"][0]["spans"]:
            f.write(json.dumps({**s, "resource": block["resource"]}) + "\n")
    assert detect_format(path) == "jsonl-spans"
    items, _ = imported(path)
    assert [stable(i.trace) for i in items] == [stable(i.trace) for i in imported(CURRENT)[0]]
    assert items[0].attributes["service.name"] == "customer-service"


def test_sdk_export_matches_the_adapter_for_delegation_and_handoff_back(sdk_export: tuple[Path, Any]) -> None:
    from examples.research_desk import workflow as rd

    path, run = sdk_export
    live = [
        run(
            rd.planner_agent,
            'Research question: did he say "we shall fight on the beaches"?',
            3,
            module="examples.research_desk.workflow",
        ),
        run(
            rd.writer_agent,
            "Question: growth?\n\nResearch notes: revenue grew 12% in 2024",
            5,
            module="examples.research_desk.workflow",
        ),
    ]
    assert any(
        s.tool == "verify_quote" and s.action is Action.HANDOFF for s in live[0].steps
    )  # Agent.as_tool
    assert any(s.depth == 1 for s in live[0].steps)
    assert ("Fact Checker", "Report Writer") in live[1].handoffs  # handed back
    items, stats = imported(path)
    assert [stable(i.trace) for i in items] == [stable(t) for t in live]
    assert stats.skipped == 0


def test_sdk_export_of_failures_differs_from_the_adapter_only_in_the_error_text(
    sdk_export: tuple[Path, Any],
) -> None:
    """The SDK redacts tool errors in spans and words run errors its own way (docs/trace-first.md)."""
    path, run = sdk_export
    behaviour = copy.deepcopy(v1.OFFLINE_BEHAVIOUR)
    behaviour[cs_workflow.SEAT_AGENT]["arguments"]["update_seat"]["new_seat"] = "99Z"
    live = [
        run(v1.triage_agent, SEAT, SEAT_SEED, max_turns=1),
        run(v1.triage_agent, SEAT, SEAT_SEED, behaviour=behaviour),
    ]
    items, _ = imported(path)
    assert live[0].error and items[0].trace.error == "Max turns exceeded"
    assert items[0].trace.steps[-1] == Step(
        Action.ERROR, agent="Seat Booking Agent", error="Max turns exceeded"
    )
    assert live[1].steps[1].error.startswith("ValueError: invalid seat '99Z'")
    assert (
        items[1].trace.steps[1].error
        == "Error running tool (non-fatal): Tool execution failed. Error details are redacted."
    )

    def without_error_text(t: Trace) -> dict[str, Any]:
        d = stable(t)
        d["error"] = bool(d["error"])
        for s in d["steps"]:
            s.pop("error", None)
        return d

    assert [without_error_text(i.trace) for i in items] == [without_error_text(t) for t in live]


def test_sdk_export_as_one_array_or_the_backend_envelope(
    sdk_export: tuple[Path, Any], tmp_path: Path
) -> None:
    path, run = sdk_export
    run(v1.triage_agent, BAGGAGE, BAGGAGE_SEED)
    objects = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    expected = [stable(i.trace) for i in imported(path)[0]]
    as_array = write_json(tmp_path / "array.json", objects)
    envelope = tmp_path / "envelope.json"
    envelope.write_text(json.dumps({"data": objects}, indent=2), encoding="utf-8")
    for p in (as_array, envelope):
        assert detect_format(p) == "agents-sdk"
        items, _ = imported(p)
        assert [stable(i.trace) for i in items] == expected
        assert items[0].attributes == {"workflow_name": "agentassay Triage Agent"}


# -- conventions in detail ----------------------------------------------------------------------------
def test_genai_1_27_events_and_pre_1_27_spans(tmp_path: Path) -> None:
    """1.27 put the prompt and completion in events (Python-literal strings in its examples);
    before 1.27 a model span had no gen_ai.operation.name and counted prompt/completion tokens."""
    doc = otlp_doc(
        [
            span(
                "a",
                None,
                "invoke_agent Helper",
                1,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Helper"},
            ),
            span(
                "b",
                "a",
                "chat gpt-4",
                2,
                {
                    "gen_ai.system": "openai",
                    "gen_ai.request.model": "gpt-4",
                    "gen_ai.usage.prompt_tokens": 12,
                    "gen_ai.usage.completion_tokens": 5,
                },
                events=[
                    (
                        "gen_ai.content.prompt",
                        {"gen_ai.prompt": "[{'role': 'user', 'content': 'What is the capital of France?'}]"},
                    ),
                    (
                        "gen_ai.content.completion",
                        {"gen_ai.completion": "[{'role': 'assistant', 'content': 'Paris.'}]"},
                    ),
                ],
            ),
        ]
    )
    (item,), stats = imported(write_json(tmp_path / "old.json", doc))
    assert item.input == "What is the capital of France?"
    assert item.trace.output == "Paris." and item.trace.cost == Cost(12, 5, item.trace.cost.latency_s)
    assert item.trace.metadata.model == "gpt-4" and stats.skipped == 0


def test_openllmetry_flattened_prompt_and_completion(tmp_path: Path) -> None:
    doc = otlp_doc(
        [
            span(
                "b",
                None,
                "openai.chat",
                1,
                {
                    "gen_ai.system": "openai",
                    "gen_ai.request.model": "gpt-4o",
                    "gen_ai.usage.input_tokens": 30,
                    "gen_ai.usage.output_tokens": 7,
                    "gen_ai.prompt.0.role": "system",
                    "gen_ai.prompt.0.content": "Be brief.",
                    "gen_ai.prompt.1.role": "user",
                    "gen_ai.prompt.1.content": "Hi there",
                    "gen_ai.completion.0.role": "assistant",
                    "gen_ai.completion.0.content": "Hello!",
                },
            ),
        ]
    )
    (item,), _ = imported(write_json(tmp_path / "ollm.json", doc))
    assert (item.input, item.trace.output, item.trace.cost.total_tokens) == ("Hi there", "Hello!", 37)
    assert item.trace.steps == (Step(Action.RESPOND, output="Hello!"),)


def test_transfer_returning_to_the_caller_is_a_delegation(tmp_path: Path) -> None:
    doc = otlp_doc(
        [
            span(
                "a",
                None,
                "invoke_agent Planner",
                1,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Planner"},
            ),
            span(
                "b",
                "a",
                "execute_tool verify_quote Checker",
                2,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "verify_quote",
                    "gen_ai.agent.name": "Planner",
                    "gen_ai.tool.call.arguments": {"input": "a quote"},
                    "gen_ai.tool.call.result": "unverified",
                    "gen_ai.transfer.mode": "return_to_caller",
                    "gen_ai.transfer.target.name": "Checker",
                },
            ),
            span(
                "c",
                "b",
                "invoke_agent Checker",
                3,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Checker"},
            ),
            span(
                "d",
                "c",
                "execute_tool check_quote",
                4,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "check_quote",
                    "gen_ai.tool.call.arguments": '{"quote": "a quote"}',
                    "gen_ai.tool.call.result": '{"found": false}',
                },
            ),
            span(
                "e",
                "a",
                "chat m",
                5,
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.usage.input_tokens": 3,
                    "gen_ai.usage.output_tokens": 2,
                    "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "Notes."}]}]',
                },
            ),
        ]
    )
    (item,), _ = imported(write_json(tmp_path / "astool.json", doc))
    assert item.trace.steps == (
        Step(
            Action.HANDOFF,
            agent="Planner",
            tool="verify_quote",
            arguments={"input": "a quote"},
            target="Checker",
        ),
        Step(
            Action.CALL_TOOL,
            agent="Checker",
            tool="check_quote",
            arguments={"quote": "a quote"},
            output={"found": False},
            depth=1,
        ),
        Step(Action.RESPOND, agent="Checker", output="unverified", depth=1),
        Step(Action.RESPOND, agent="Planner", output="Notes."),
    )


def test_handoff_spans_of_the_contrib_instrumentation(tmp_path: Path) -> None:
    doc = otlp_doc(
        [
            span(
                "a",
                None,
                "invoke_agent Triage",
                1,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Triage"},
            ),
            span(
                "b",
                "a",
                "agent_handoff Billing",
                2,
                {
                    "gen_ai.operation.name": "agent_handoff",
                    "gen_ai.handoff.from_agent": "Triage",
                    "gen_ai.handoff.to_agent": "Billing",
                },
            ),
            span(
                "c",
                None,
                "invoke_agent Billing",
                3,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Billing"},
            ),
        ]
    )
    (item,), _ = imported(write_json(tmp_path / "handoff.json", doc))
    assert item.trace.handoffs == [("Triage", "Billing")]
    assert item.trace.steps[-1] == Step(Action.RESPOND, agent="Billing")


def test_errors_from_status_and_exception_events(tmp_path: Path) -> None:
    doc = otlp_doc(
        [
            span(
                "a",
                None,
                "invoke_agent Ops",
                1,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Ops"},
                error="RuntimeError: gave up",
            ),
            span(
                "b",
                "a",
                "execute_tool restart",
                2,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "restart",
                    "gen_ai.tool.call.result": "never returned",
                },
                events=[
                    ("exception", {"exception.type": "TimeoutError", "exception.message": "no answer in 5 s"})
                ],
                error="",
            ),
            span(
                "c",
                "a",
                "execute_tool ping",
                3,
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "ping",
                    "error.type": "ConnectionRefused",
                },
            ),
        ]
    )
    (item,), _ = imported(write_json(tmp_path / "err.json", doc))
    assert item.trace.error == "RuntimeError: gave up" and item.trace.output is None
    assert item.trace.steps == (
        Step(Action.CALL_TOOL, agent="Ops", tool="restart", error="TimeoutError: no answer in 5 s"),
        Step(Action.CALL_TOOL, agent="Ops", tool="ping", error="ConnectionRefused"),
        Step(Action.ERROR, agent="Ops", error="RuntimeError: gave up"),
    )


# -- what is skipped, and why ------------------------------------------------------------------------
def test_unknown_and_incomplete_spans_are_counted_per_reason(tmp_path: Path) -> None:
    good = [
        span(
            "h", None, "GET /chat", 0, {"http.request.method": "GET"}
        ),  # not GenAI: kept as structure, counted
        span(
            "a",
            "h",
            "invoke_agent Triage",
            1,
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Triage"},
        ),
        span("b", "a", "frobnicate", 2, {"gen_ai.operation.name": "frobnicate"}),
        span("c", "a", "execute_tool", 3, {"gen_ai.operation.name": "execute_tool"}),
        span(
            "d",
            "a",
            "execute_tool lookup",
            4,
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
        ),
        span(
            "a",
            "h",
            "invoke_agent Again",
            5,
            {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Again"},
        ),
        span(
            "o", "elsewhere", "chat m", 6, {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 4}
        ),
    ]
    bad = [{"spanId": "x"}, {"traceId": "t1"}, 42]
    other_trace = [
        span("z", None, "create_agent Helper", 1, {"gen_ai.operation.name": "create_agent"}, trace="t2"),
        span("y", "z", "SELECT", 2, {"db.system": "sqlite"}, trace="t2"),
    ]
    path = write_json(tmp_path / "mixed.json", otlp_doc([*good, *bad, *other_trace]))
    (item,), stats = imported(path)
    assert stats.reasons == {
        "no gen_ai.operation.name": 2,
        "unknown gen_ai.operation.name 'frobnicate'": 1,
        "execute_tool without gen_ai.tool.name": 1,
        "duplicate span id": 1,
        "no traceId": 1,
        "no spanId": 1,
        "span is not a JSON object": 1,
        "no agent, tool or model span in its trace": 1,
    }
    assert (stats.spans, stats.traces, stats.skipped) == (12, 1, 9)
    assert stats.summary() == (
        "12 spans, 1 traces, 9 skipped: no gen_ai.operation.name (2); duplicate span id (1); "
        "execute_tool without gen_ai.tool.name (1); no agent, tool or model span in its trace (1); no spanId (1); "
        "no traceId (1); span is not a JSON object (1); unknown gen_ai.operation.name 'frobnicate' (1)"
    )
    # The usable spans still make a trace, under the non-GenAI root; an orphan's parent is elsewhere.
    assert [(s.action, s.tool) for s in item.trace.steps] == [
        (Action.CALL_TOOL, "lookup"),
        (Action.RESPOND, None),
    ]
    assert item.trace.cost.input_tokens == 4 and item.attributes == {"http.request.method": "GET"}


def test_sdk_and_openinference_reasons(tmp_path: Path) -> None:
    sdk = tmp_path / "sdk.jsonl"
    lines = [
        {
            "object": "trace.span",
            "id": "s1",
            "trace_id": "tr",
            "parent_id": None,
            "started_at": "2026-01-01T00:00:00+00:00",
            "span_data": {"type": "agent", "name": "A"},
        },
        {
            "object": "trace.span",
            "id": "s2",
            "trace_id": "tr",
            "parent_id": "s1",
            "span_data": {"type": "teleport"},
        },
        {
            "object": "trace.span",
            "id": "s3",
            "parent_id": "s1",
            "span_data": {"type": "function", "name": "f"},
        },
        {"object": "trace.span", "id": "s4", "trace_id": "tr", "parent_id": "s1"},
        {"object": "something-else"},
    ]
    sdk.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    (item,), stats = imported(sdk)
    assert stats.reasons == {
        "unknown span_data.type 'teleport'": 1,
        "no trace_id": 1,
        "no span_data": 1,
        "not an Agents SDK trace or span object": 1,
    }
    assert item.trace.steps == (Step(Action.RESPOND, agent="A"),)
    oi = write_json(
        tmp_path / "oi.json",
        otlp_doc(
            [
                span("a", None, "Root", 1, {"openinference.span.kind": "AGENT", "input.value": "hello"}),
                span("b", "a", "Weird", 2, {"openinference.span.kind": "WIZARD"}),
                span("c", "a", "plain", 3, {"x": 1}),
                span(
                    "d",
                    "a",
                    "llm",
                    4,
                    {
                        "openinference.span.kind": "LLM",
                        "llm.token_count.prompt": 5,
                        "llm.output_messages.0.message.content": "hi",
                    },
                ),
            ]
        ),
    )
    (item,), stats = imported(oi)
    assert detect_format(oi) == "openinference"
    assert stats.reasons == {"unknown openinference.span.kind 'WIZARD'": 1, "no openinference.span.kind": 1}
    assert (item.input, item.trace.output) == ("hello", "hi")


def test_orphans_and_cycles(tmp_path: Path) -> None:
    doc = otlp_doc(
        [
            span(
                "a",
                "c",
                "invoke_agent A",
                1,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "A"},
            ),
            span(
                "c",
                "a",
                "invoke_agent C",
                2,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "C"},
            ),
            span(
                "o",
                "gone",
                "execute_tool t",
                3,
                {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"},
            ),
        ]
    )
    (item,), stats = imported(write_json(tmp_path / "cycle.json", doc))
    assert stats.reasons == {"in a parent cycle": 2}
    assert [s.tool for s in item.trace.steps] == ["t", None]


SDK_SAMPLE = [
    {"object": "trace", "id": "tr", "workflow_name": "w", "group_id": None, "metadata": {"k": "v"}},
    {
        "object": "trace.span",
        "id": "t",
        "trace_id": "tr",
        "parent_id": None,
        "started_at": "2026-01-01T00:00:00+00:00",
        "ended_at": "2026-01-01T00:00:01+00:00",
        "error": None,
        "span_data": {
            "type": "custom",
            "name": "task",
            "data": {"sdk_span_type": "task", "usage": {"input_tokens": 5, "output_tokens": 1}},
        },
    },
    {
        "object": "trace.span",
        "id": "a",
        "trace_id": "tr",
        "parent_id": "t",
        "started_at": "2026-01-01T00:00:00.1+00:00",
        "span_data": {"type": "agent", "name": "A", "output_type": "str"},
        "error": None,
    },
    {
        "object": "trace.span",
        "id": "g",
        "trace_id": "tr",
        "parent_id": "a",
        "started_at": "2026-01-01T00:00:00.2+00:00",
        "span_data": {
            "type": "generation",
            "model": "m",
            "usage": {"input_tokens": 5, "output_tokens": 1},
            "output": [
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}
            ],
        },
    },
    {
        "object": "trace.span",
        "id": "f",
        "trace_id": "tr",
        "parent_id": "a",
        "started_at": "2026-01-01T00:00:00.3+00:00",
        "span_data": {"type": "function", "name": "f", "input": "{}", "output": "ok"},
        "error": {"message": "m", "data": {"error": "e"}},
    },
    {
        "object": "trace.span",
        "id": "h",
        "trace_id": "tr",
        "parent_id": "a",
        "started_at": "2026-01-01T00:00:00.4+00:00",
        "span_data": {"type": "handoff", "from_agent": "A", "to_agent": "B"},
    },
]
_ODD = [
    None,
    0,
    -1,
    2**70,
    1.5,
    "",
    "x",
    "9" * 40,
    [],
    {},
    [1, "a", None],
    {"k": [1, {"z": None}]},
    True,
    "[{'a': 1}]",
    '{"b": 2}',
]


def _mutate(value: Any, rng: Any) -> Any:
    """Replace, or delete, one randomly chosen member or element somewhere in ``value``."""
    value = copy.deepcopy(value)
    containers: list[Any] = []
    stack = [value]
    while stack:
        c = stack.pop()
        if isinstance(c, (dict, list)) and c:
            containers.append(c)
            stack.extend(c.values() if isinstance(c, dict) else c)
    if not containers:
        return value
    target = rng.choice(containers)
    key = rng.choice(list(target)) if isinstance(target, dict) else rng.randrange(len(target))
    if isinstance(target, dict) and rng.random() < 0.25:
        del target[key]
    else:
        target[key] = rng.choice(_ODD)
    return value


@pytest.mark.parametrize("base", ["current", "legacy", "openinference", "sdk"])
def test_mutated_files_never_crash_an_import(base: str, tmp_path: Path) -> None:
    """Valid JSON with anything anywhere: an import either works (counting what it skips) or raises
    TraceImportError for the whole file; no other exception."""
    import random

    rng = random.Random(f"fuzz-{base}")
    if base == "sdk":
        original: Any = SDK_SAMPLE
    elif base == "legacy":
        original = [json.loads(line) for line in LEGACY.read_text(encoding="utf-8").splitlines()]
    else:
        original = json.loads((CURRENT if base == "current" else OPENINFERENCE).read_text(encoding="utf-8"))
    path = tmp_path / "mutant.jsonl"
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(120):
        mutant = original
        for _ in range(rng.randint(1, 4)):
            mutant = _mutate(mutant, rng)
        lines = mutant if isinstance(mutant, list) and base in ("sdk", "legacy") else [mutant]
        path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
        try:
            stats = ImportStats()
            for item in import_traces(path, stats=stats):
                item.trace.to_json()
            stats.summary()
            outcomes["ok"] += 1
        except TraceImportError as exc:
            assert str(path) in str(exc)
            outcomes["refused"] += 1
    assert outcomes["ok"] > 60, outcomes


# -- errors ------------------------------------------------------------------------------------------
def _raises(path: Path, match: str, **kw: Any) -> TraceImportError:
    with pytest.raises(TraceImportError, match=match) as info:
        list(import_traces(path, **kw))
    assert str(path) in str(info.value)
    return info.value


def test_files_that_cannot_be_imported_name_the_file_and_where(tmp_path: Path) -> None:
    _raises(tmp_path / "missing.json", "cannot read")
    _raises(tmp_path, "is a directory")
    (tmp_path / "empty.json").write_text("  \n", encoding="utf-8")
    _raises(tmp_path / "empty.json", "empty file")
    (tmp_path / "text.log").write_text("INFO started\n", encoding="utf-8")
    _raises(tmp_path / "text.log", "line 1: not JSON")
    (tmp_path / "unknown.json").write_text('{"hello": "world"}', encoding="utf-8")
    _raises(tmp_path / "unknown.json", "not a known trace format")
    write_json(tmp_path / "logs.json", {"resourceLogs": []})
    _raises(tmp_path / "logs.json", "OTLP logs, not traces")
    good = CURRENT.read_text(encoding="utf-8")
    (tmp_path / "truncated.json").write_text(good[: len(good) // 2], encoding="utf-8")
    err = _raises(tmp_path / "truncated.json", "not valid JSON")
    assert "line " in str(err) and "offset " in str(err)
    line = LEGACY.read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "bad-line.jsonl").write_text(f'{line}\n{{"resourceSpans": [oops]}}\n', encoding="utf-8")
    _raises(tmp_path / "bad-line.jsonl", r"line 2, offset \d+: not valid JSON")
    (tmp_path / "latin1.json").write_bytes(
        b'{"resourceSpans": [{"resource": {"attributes": [{"key": "caf\xe9"}]}}]}'
    )
    _raises(tmp_path / "latin1.json", "not UTF-8")
    _raises(CURRENT, "not agents-sdk: the file looks like otlp-json", format="agents-sdk")
    _raises(CURRENT, "unknown format 'zipkin'", format="zipkin")
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(TraceImportError, match="not an AgentAssay trace store"):
        import_traces(tmp_path / "other.db")  # checked at the call, like every format's head


def test_a_results_file_points_at_its_trace_store(tmp_path: Path) -> None:
    results = write_json(
        tmp_path / "base.json", {"schema": "agentassay.results/1", "kind": "run", "run_id": "r-42"}
    )
    assert detect_format(results) == "agentassay-results"
    err = _raises(results, "holds each trial's outcome, not its trace")
    assert "run r-42" in str(err) and "traces.db" in str(err)


def test_openinference_and_otlp_json_name_the_same_container() -> None:
    assert [stable(i.trace) for i in imported(OPENINFERENCE, format="otlp-json")[0]] == [
        stable(i.trace) for i in imported(OPENINFERENCE)[0]
    ]


# -- formats -----------------------------------------------------------------------------------------
def test_detect_format(tmp_path: Path) -> None:
    assert detect_format(CURRENT) == "otlp-json"
    assert detect_format(LEGACY) == "otlp-json"
    assert detect_format(OPENINFERENCE) == "openinference"
    with TraceStore(tmp_path / "traces.db") as store:
        store.add(Trace(), run_id="r", suite="s", scenario="x", agent_version="v", trial=0)
    assert detect_format(tmp_path / "traces.db") == "agentassay-store"
    # A document larger than the part detection decodes is judged by its first key, for every format.
    big = [span(f"s{i}", None, "x" * 2000, i, {"k": "v" * 100}) for i in range(60)]
    assert detect_format(write_json(tmp_path / "big.json", otlp_doc(big))) == "otlp-json"
    assert (
        detect_format(
            write_json(tmp_path / "big-spans.json", [{"traceId": "t", "spanId": "s", "pad": "x" * 70_000}])
        )
        == "jsonl-spans"
    )
    assert (
        detect_format(
            write_json(tmp_path / "big-sdk.json", {"data": [{"object": "trace", "pad": "x" * 70_000}]})
        )
        == "agents-sdk"
    )
    (tmp_path / "bom.jsonl").write_text("\ufeff" + LEGACY.read_text(encoding="utf-8"), encoding="utf-8")
    assert detect_format(tmp_path / "bom.jsonl") == "otlp-json"
    assert len(imported(tmp_path / "bom.jsonl")[0]) == 2
    assert set(FORMATS) == {
        "otlp-json",
        "jsonl-spans",
        "openinference",
        "agents-sdk",
        "agentassay-store",
        "agentassay-results",
    }


def test_the_trace_store_passes_through_read_only(tmp_path: Path) -> None:
    db = tmp_path / "traces.db"
    traces = [
        Trace(
            steps=(
                Step(Action.CALL_TOOL, agent="A", tool="t", arguments={"x": 1}),
                Step(Action.RESPOND, agent="A", output="ok"),
            ),
            output="ok",
            cost=Cost(10, 2, 0.5),
            metadata=TraceMetadata(scenario="s1", seed=3, model="m"),
        ),
        Trace(steps=(Step(Action.ERROR, error="boom"),), error="boom"),
    ]
    with TraceStore(db) as store:
        for i, t in enumerate(traces):
            store.add(
                t,
                run_id="run-1",
                suite="cs",
                scenario="s1",
                agent_version="v1",
                trial=i,
                input="hi",
                passed=i == 0,
            )
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    items, stats = imported(db)
    assert [i.trace for i in items] == traces
    assert [i.input for i in items] == ["hi", "hi"]
    assert items[0].attributes | {"recorded_at": None} == {
        "run_id": "run-1",
        "suite": "cs",
        "scenario": "s1",
        "agent_version": "v1",
        "trial": 0,
        "passed": True,
        "recorded_at": None,
    }
    assert stats.traces == 2 and stats.skipped == 0
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


# -- streaming ---------------------------------------------------------------------------------------
class _Recorder:
    """A stand-in staging table: what the reader stages, in order."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, Any]] = []
        self.resources: dict[int, Any] = {}
        self._n = 0

    def add(self, tid: str, rec: Any, kind: int = 0) -> None:
        self.rows.append((tid, rec))

    def new_resource(self) -> int:
        self._n += 1
        return self._n

    def set_resource(self, rid: int, attrs: Any) -> None:
        self.resources[rid] = attrs


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
def test_every_chunk_boundary_reads_the_same(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scanner refills its buffer wherever a chunk ends: inside a string, a number, an escape."""
    text = CURRENT.read_text(encoding="utf-8") + LEGACY.read_text(encoding="utf-8")
    got, stats = _Recorder(), ImportStats()
    _otlp.read_documents(JsonScanner(io.StringIO(text), "x", chunk=chunk), got, stats)  # type: ignore[arg-type]
    want = _Recorder()
    _otlp.read_documents(JsonScanner(io.StringIO(text), "x"), want, ImportStats())  # type: ignore[arg-type]
    assert got.rows == want.rows and len(got.rows) == 26 and stats.spans == 26
    assert got.resources == want.resources
    streamed = _Recorder()  # JSON Lines are decoded a line at a time; the streaming path reads the same
    monkeypatch.setattr(_otlp, "LINE_LIMIT", 0)
    _otlp.read_documents(JsonScanner(io.StringIO(text), "x", chunk=chunk), streamed, ImportStats())  # type: ignore[arg-type]
    assert streamed.rows == want.rows and streamed.resources == want.resources
    scanner = JsonScanner(io.StringIO('[12345, -0.5e3, "a\\"b", true, null] 7'), "x", chunk=chunk)
    assert [scanner.value(), scanner.value()] == [[12345, -500.0, 'a"b', True, None], 7]


def _bench_file(path: Path, traces: int) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for t in range(traces):
            tid = f"{t:032x}"
            spans = [
                span(
                    f"{t}-0",
                    None,
                    "invoke_agent A",
                    3 * t,
                    {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "A"},
                    trace=tid,
                )
            ]
            spans += [
                span(
                    f"{t}-{i}",
                    f"{t}-0",
                    "chat m",
                    3 * t + 1,
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.usage.input_tokens": 9,
                        "gen_ai.output.messages": '[{"role":"assistant","parts":[{"type":"text","content":"ok"}]}]',
                    },
                    trace=tid,
                )
                for i in range(1, 10)
            ]
            f.write(json.dumps(otlp_doc(spans)) + "\n")
    return path


def test_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    peaks = []
    for traces in (200, 2000):
        path = _bench_file(tmp_path / f"b{traces}.jsonl", traces)
        tracemalloc.start()
        n = sum(1 for _ in import_traces(path))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert n == traces
    assert peaks[1] < 1.5 * peaks[0] + 256 * 1024, peaks  # 10x the spans, about the same peak


def test_a_trace_split_across_documents_and_lines_is_reassembled(tmp_path: Path) -> None:
    """The collector writes batches as spans end; a trace's spans arrive in several lines, interleaved."""
    lines = LEGACY.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    flipped = tmp_path / "flipped.jsonl"
    flipped.write_text("\n".join(reversed(lines)) + "\n", encoding="utf-8")
    assert [stable(i.trace) for i in imported(flipped)[0]] == [stable(i.trace) for i in imported(LEGACY)[0]]


def test_benchmark_quick_run(tmp_path: Path) -> None:
    import subprocess

    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "importers.py"), "--quick", "--out", str(tmp_path),
         "--docs", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "importers.json").read_text(encoding="utf-8"))
    assert result["quick"] is True and all(r["traces"] * 10 == r["spans"] for r in result["runs"])
