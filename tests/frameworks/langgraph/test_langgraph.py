"""LangGraph through the OpenTelemetry capture adapter (issue 24): the airline example offline, a user's callable
with its own fake model, the profile's tools, manifest and span fix-ups. Runs in .venv-fw-langgraph
(`bash .ci/frameworks.sh langgraph`); skipped where LangGraph is not installed.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

pytest.importorskip("langgraph")
# The example builds ChatOpenAI at import, which wants a key even when it will never be sent (offline runs
# set their own placeholder before importing it).
os.environ.setdefault("OPENAI_API_KEY", "offline")

from langchain.agents import create_agent
from langchain_core.tools import tool

from agentassay._integrations.adapters import AgentRunError, adapter_for, load_adapter
from agentassay._integrations.adapters._otel import PROFILES, detect, load_profile
from agentassay._integrations.adapters._otel._capture import TrialScope, install
from agentassay._integrations.cli import main
from agentassay._integrations.importers import import_spans
from agentassay._spec import load_suite
from agentassay._traces import Action, TraceStore
from examples.customer_service.airline import (
    FAQ_AGENT,
    OUT_OF_SCOPE,
    SEAT_AGENT,
    TRIAGE_AGENT,
    TRIAGE_INSTRUCTIONS_V1,
    faq_lookup_tool,
)
from examples.frameworks.langgraph._workflow import build_graph

from ._fake import AirlineFakeModel

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "examples" / "frameworks" / "langgraph" / "agentassay.yml"
SEAT_Q = "I'd like to change my seat to {seat}. My confirmation number is ABC123."


def fake_graph(seed: int = 0):
    return build_graph(TRIAGE_INSTRUCTIONS_V1, AirlineFakeModel(seed=seed))


def user_agent(question: str) -> str:
    """A user's callable: builds its own graph on its own seeded fake model, returns the answer's text."""
    state = fake_graph(seed=11).invoke({"messages": [("user", question)]})
    return str(state["messages"][-1].content)


def _check_seat_trace(trace, seat: str) -> None:
    actions = [s.action for s in trace.steps]
    assert actions == [Action.HANDOFF, Action.CALL_TOOL, Action.RESPOND], trace.steps
    handoff, call, respond = trace.steps
    assert (handoff.agent, handoff.target) == (TRIAGE_AGENT, SEAT_AGENT)
    assert (call.agent, call.tool) == (SEAT_AGENT, "update_seat")
    assert call.arguments == {"confirmation_number": "ABC123", "new_seat": seat}
    assert call.output == f"Updated seat to {seat} for confirmation number ABC123."
    assert respond.agent == SEAT_AGENT and seat in trace.output
    assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0


def _spans(graph, question: str) -> list[dict]:
    """One run's spans as the capture hands them to the profile (OTLP span objects)."""
    capture, provider = install()
    load_profile("langgraph").instrument()
    scope = TrialScope(capture, provider)

    async def run() -> None:
        with scope.running():
            await graph.ainvoke({"messages": [("user", question)]})

    asyncio.run(run())
    return list(scope.collect().spans)


# -- the profile ----------------------------------------------------------------------------------------
def test_a_compiled_graph_is_detected_and_traced_by_the_langgraph_profile() -> None:
    graph = fake_graph()
    assert "langgraph" in PROFILES and detect(graph) == "langgraph"
    assert detect(user_agent) is None
    adapter = adapter_for(graph, entry="x:graph")
    assert adapter.name == "otel:langgraph"
    assert adapter.config()["framework"] == "langgraph"


def test_tools_are_every_agents_tools_without_the_handoffs() -> None:
    tools = load_profile("langgraph").tools(fake_graph())
    assert {(t.name, t.agent) for t in tools} == {("faq_lookup_tool", FAQ_AGENT), ("update_seat", SEAT_AGENT)}
    seat = next(t for t in tools if t.name == "update_seat")
    assert seat.parameters["properties"]["new_seat"]["type"] == "string"
    assert "seat" in seat.description.lower()


def test_fix_spans_names_agents_turns_transfers_into_handoffs_and_unwraps_results() -> None:
    spans = _spans(fake_graph(), SEAT_Q.format(seat="14C"))
    [raw] = import_spans(spans)
    # What OpenInference gives: every span named "...agent" is an agent (the subgraphs, the transfer tool), so
    # there are handoffs to the transfer tool and to the subgraphs' own names; results are serialized messages.
    targets = [s.target for s in raw.trace.steps if s.action is Action.HANDOFF]
    assert "transfer_to_seat_booking_agent" in targets and "seat_booking_agent" in targets
    assert not any(s.action is Action.HANDOFF and s.target == SEAT_AGENT for s in raw.trace.steps)
    raw_call = next(s for s in raw.trace.steps if s.action is Action.CALL_TOOL)
    assert isinstance(raw_call.output, dict) and raw_call.output["type"] == "tool"
    before = json.dumps(spans)
    fixed = load_profile("langgraph").fix_spans(spans)
    assert json.dumps(spans) == before  # the capture's spans are not modified
    [built] = import_spans(fixed)
    _check_seat_trace(built.trace, "14C")


def test_fix_spans_faq_and_a_direct_answer() -> None:
    profile = load_profile("langgraph")
    [faq] = import_spans(profile.fix_spans(_spans(fake_graph(), "How much baggage can I bring?")))
    steps = faq.trace.steps
    assert [(s.action, s.agent) for s in steps] == [
        (Action.HANDOFF, TRIAGE_AGENT), (Action.CALL_TOOL, FAQ_AGENT), (Action.RESPOND, FAQ_AGENT),
    ]
    assert steps[1].arguments == {"question": "How much baggage can I bring?"} and "bag" in steps[1].output
    [direct] = import_spans(profile.fix_spans(_spans(fake_graph(), "Book me a hotel in Paris")))
    assert [(s.action, s.agent) for s in direct.trace.steps] == [(Action.RESPOND, TRIAGE_AGENT)]
    assert direct.trace.output == OUT_OF_SCOPE


def test_a_graph_without_subgraphs_is_one_agent_named_after_the_graph() -> None:
    single = create_agent(AirlineFakeModel(), [tool(faq_lookup_tool, parse_docstring=True)], name="faq")
    assert [(t.name, t.agent) for t in load_profile("langgraph").tools(single)] == [("faq_lookup_tool", "faq")]
    [built] = import_spans(load_profile("langgraph").fix_spans(_spans(single, "Is there wifi?")))
    assert [(s.action, s.agent, s.tool) for s in built.trace.steps] == [
        (Action.CALL_TOOL, "faq", "faq_lookup_tool"), (Action.RESPOND, "faq", None),
    ]


def test_a_failing_tool_is_the_steps_error_without_the_traceback() -> None:
    adapter = adapter_for(fake_graph(), entry="x:graph")
    with pytest.raises(AgentRunError) as info:  # no valid seat in the request: update_seat raises
        asyncio.run(adapter.run("Please change my seat, confirmation ABC123.", seed=0))
    steps = info.value.trace.steps
    call = next(s for s in steps if s.action is Action.CALL_TOOL)
    assert (call.agent, call.tool, call.arguments["new_seat"]) == (SEAT_AGENT, "update_seat", "")
    assert "invalid seat" in call.error and "Traceback" not in call.error
    assert steps[-1].action is Action.ERROR


# -- the adapter with the framework's own fake model --------------------------------------------------
def test_eight_concurrent_trials_of_a_fake_model_graph_keep_their_traces_apart() -> None:
    adapter = adapter_for(fake_graph(), entry="x:graph")
    seats = [f"{i + 2}{'ABCDEF'[i % 6]}" for i in range(8)]

    async def run() -> list:
        return await asyncio.gather(*(adapter.run(SEAT_Q.format(seat=s), seed=i) for i, s in enumerate(seats)))

    traces = asyncio.run(run())
    for seat, trace in zip(seats, traces, strict=True):
        _check_seat_trace(trace, seat)
    assert len({t.metadata.extra["trace_id"] for t in traces}) == 8 and adapter.escaped == 0


def test_a_users_callable_with_its_own_fake_model_gets_full_traces(tmp_path: Path) -> None:
    """``agent: {entry: ..., framework: langgraph}`` and no model: the callable's own model runs."""
    suite = tmp_path / "agentassay.yml"
    suite.write_text(
        "name: own-model\n"
        "agent: {entry: 'tests.frameworks.langgraph.test_langgraph:user_agent', framework: langgraph}\n"
        "config: {trials: 8, method: fixed, threshold: 0.5, concurrency: 8, seed: 1}\n"
        "scenarios:\n"
        "  - name: seat_change\n"
        "    input: \"I'd like to change my seat to 14C. My confirmation number is ABC123.\"\n"
        "    properties: [{must_reach: Seat Booking Agent}, {must_call: update_seat}]\n"
        "    evaluator: [{contains: '14C'}]\n",
        encoding="utf-8",
    )
    store = str(tmp_path / "t.db")
    assert main(["run", str(suite), "-o", str(tmp_path / "r.json"), "--store", store, "-q"]) == 0
    with TraceStore(store) as s:
        rows = [r for v in s.versions() for r in s.query(v)]
    assert len(rows) == 8 and all(r.passed for r in rows)
    for r in rows:
        _check_seat_trace(r.trace, "14C")
        assert r.trace.metadata.adapter == "otel:langgraph"


# -- the example offline --------------------------------------------------------------------------------
def test_the_example_offline_records_full_traces(tmp_path: Path) -> None:
    store = str(tmp_path / "t.db")
    assert main(["run", str(SUITE), "-o", str(tmp_path / "base.json"), "--store", store, "-q"]) == 0
    # Structural coverage reads the graph through the profile: every agent reached, every allowed tool called.
    structural = json.loads((tmp_path / "base.json").read_text())["coverage"]["structural"]
    assert structural["criteria"]["C1"]["value"] == 1.0 and structural["criteria"]["C2"]["value"] == 1.0
    with TraceStore(store) as s:
        rows = [r for v in s.versions() for r in s.query(v)]
    assert rows and all(r.trace.cost.input_tokens > 0 and r.trace.cost.output_tokens > 0 for r in rows)
    assert all(st.agent for r in rows for st in r.trace.steps), "every step names its agent"
    seat = [r.trace for r in rows if r.scenario == "seat_change" and r.passed]
    assert seat and all(
        any(st.action is Action.HANDOFF and (st.agent, st.target) == (TRIAGE_AGENT, SEAT_AGENT) for st in t.steps)
        and any(
            st.action is Action.CALL_TOOL and st.agent == SEAT_AGENT and st.tool == "update_seat"
            and st.arguments == {"confirmation_number": "ABC123", "new_seat": "14C"}
            and "14C" in str(st.output) and "Updated seat" in str(st.output)
            for st in t.steps
        )
        for t in seat
    )
    faq = [r.trace for r in rows if r.scenario == "baggage" and r.passed]
    assert faq and all(
        any(st.tool == "faq_lookup_tool" and st.agent == FAQ_AGENT and isinstance(st.arguments.get("question"), str)
            and "bag" in str(st.output) for st in t.steps)
        for t in faq
    )


def test_eight_concurrent_offline_trials_keep_their_traces_apart() -> None:
    suite = load_suite(SUITE)
    adapter = load_adapter(suite.agent.entry, model=suite.model, root=suite.root)
    seats = [f"{i + 2}{'ABCDEF'[i % 6]}" for i in range(8)]

    async def run() -> list:
        return await asyncio.gather(*(adapter.run(SEAT_Q.format(seat=s), seed=s_i) for s_i, s in enumerate(seats)))

    traces = asyncio.run(run())
    for seat, trace in zip(seats, traces, strict=True):
        calls = [st for st in trace.steps if st.action is Action.CALL_TOOL]
        assert calls, trace.steps
        assert all(st.arguments.get("new_seat") == seat for st in calls if st.tool == "update_seat")
        assert not any(other in str(trace.steps) for other in seats if other != seat)
    assert len({t.metadata.extra["trace_id"] for t in traces}) == 8 and adapter.escaped == 0


def test_check_of_v2_against_a_full_v1_baseline_blocks(tmp_path: Path) -> None:
    base, v2 = tmp_path / "base.json", tmp_path / "v2.json"
    assert main(["run", str(SUITE), "--full", "-o", str(base), "-q"]) == 0
    code = main(["check", str(SUITE), "--agent", "examples.frameworks.langgraph.v2:agent", "--baseline", str(base),
                 "-o", str(v2), "-q"])
    assert code == 1
    scenarios = json.loads(v2.read_text())["scenarios"]
    assert {s["name"]: s["verdict"]["verdict"] for s in scenarios}["seat_change"] == "fail"
    # Failed by its routing, not by errors: the second run in this process reuses the first one's clients.
    assert not [t["error"] for s in scenarios for t in s["trials"] if t.get("error")]


def test_the_manifest_is_extracted_from_the_graph(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifest", "examples.frameworks.langgraph.v1:agent"]) == 0
    out = capsys.readouterr()
    for text in (
        "entry_agent: triage_agent", "name: Triage Agent", "name: FAQ Agent", "name: Seat Booking Agent",
        "[faq_agent, faq_lookup_tool]", "[seat_booking_agent, update_seat]",
        "{from: triage_agent, to: seat_booking_agent, trigger: delegate, via: handoff, tool: transfer_to_seat_booking_agent}",
        "{from: triage_agent, to: faq_agent, trigger: delegate, via: handoff, tool: transfer_to_faq_agent}",
        "{from: faq_agent, to: triage_agent, trigger: delegate, via: handoff, tool: transfer_to_triage_agent}",
        "{from: seat_booking_agent, to: triage_agent, trigger: delegate, via: handoff, tool: transfer_to_triage_agent}",
    ):
        assert text in out.out, text
    assert "3 reachable agents, 2 tools, 2 allowed edges" in out.err
