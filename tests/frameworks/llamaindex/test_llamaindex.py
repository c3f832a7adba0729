"""LlamaIndex agent workflows through the OpenTelemetry capture adapter (issue 24): the airline AgentWorkflow
offline (llama-index-llms-openai's OpenAI LLM against the offline server), concurrent trials, a v1 -> v2
regression, and the profile's detection, tools, event record and span fix-ups (with and without the events).
Runs in .venv-fw-llamaindex (`bash .ci/frameworks.sh llamaindex`); skipped where LlamaIndex is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.llms import MockLLM
from llama_index.core.tools import FunctionTool

from agentassay._integrations.adapters import adapter_for
from agentassay._integrations.adapters._otel import PROFILES, detect, load_profile
from agentassay._integrations.adapters._otel._llamaindex import HANDOFF_TOOL, Events, fix_spans
from agentassay._integrations.importers import import_spans
from agentassay._traces import Action, Trace
from examples.customer_service.airline import (
    FAQ_AGENT,
    SEAT_AGENT,
    TRIAGE_AGENT,
    TRIAGE_INSTRUCTIONS_V1,
    faq_lookup_tool,
)
from examples.frameworks.llamaindex._workflow import build_workflow
from tests._support.frameworks import (
    BAD_SEAT_Q,
    SEAT_Q,
    check_failing_tool,
    check_faq_and_direct_answer,
    check_hand_back,
    check_seat_steps,
    concurrent_seat_trials,
    offline_adapter,
    run_then_check_blocks,
    run_with_spans,
)

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "examples" / "frameworks" / "llamaindex" / "agentassay.yml"
V1 = "examples.frameworks.llamaindex.v1:workflow"
V2 = "examples.frameworks.llamaindex.v2:workflow"


def run_with_events(question: str, seed: int) -> tuple[Trace, list[dict[str, Any]], Events | None]:
    """One offline trial, the spans the capture handed to the profile (before its fix-ups) and its events."""
    adapter = offline_adapter(V1)
    events = adapter.profile._events
    trace, (spans, kept) = run_with_spans(adapter, question, seed, keep=lambda s: (s, events.get(s[0]["traceId"])))
    return trace, spans, kept


def trial(question: str, seed: int) -> Trace:
    return run_with_events(question, seed)[0]


def check_seat_trace(trace: Trace, seat: str) -> None:
    check_seat_steps(trace, seat, TRIAGE_AGENT, SEAT_AGENT)
    assert trace.metadata.model == "gpt-4.1-mini"


# -- the profile ------------------------------------------------------------------------------------------
def test_workflows_and_agents_are_detected_and_traced_by_the_llamaindex_profile() -> None:
    workflow = build_workflow(TRIAGE_INSTRUCTIONS_V1)
    assert "llamaindex" in PROFILES
    assert detect(workflow) == "llamaindex" and detect(workflow.agents[FAQ_AGENT]) == "llamaindex"
    assert detect(faq_lookup_tool) is None
    adapter = adapter_for(workflow, entry="x:workflow")
    assert adapter.name == "otel:llamaindex"
    config = adapter.config()
    assert config["framework"] == "llamaindex" and config["agents"] == [TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT]


def test_tools_are_every_agents_tools_without_the_handoff_tool() -> None:
    workflow = build_workflow(TRIAGE_INSTRUCTIONS_V1)
    tools = load_profile("llamaindex").tools(workflow)
    assert {(t.name, t.agent) for t in tools} == {("faq_lookup_tool", FAQ_AGENT), ("update_seat", SEAT_AGENT)}
    seat = next(t for t in tools if t.name == "update_seat")
    assert seat.parameters["properties"]["new_seat"]["type"] == "string"
    assert "seat" in seat.description.lower()
    single = FunctionAgent(
        name="faq", description="d", llm=MockLLM(), tools=[FunctionTool.from_defaults(faq_lookup_tool)]
    )
    assert [(t.name, t.agent) for t in load_profile("llamaindex").tools(single)] == [("faq_lookup_tool", "faq")]
    assert detect(single) == "llamaindex" and load_profile("llamaindex").is_async(single)


def test_fix_spans_names_agents_unwraps_calls_and_turns_the_handoff_tool_into_handoffs() -> None:
    trace, spans, events = run_with_events(SEAT_Q.format(seat="14C"), seed=1)
    check_seat_trace(trace, "14C")
    assert events is not None and events.turns == [TRIAGE_AGENT, SEAT_AGENT, SEAT_AGENT]
    [raw] = import_spans(spans)
    # The instrumentor's own spans: no agent names, arguments wrapped with the workflow's Context, the result
    # a serialized ToolOutput, the handoff a call of the `handoff` tool.
    raw_calls = [s for s in raw.trace.steps if s.action is Action.CALL_TOOL]
    assert [s.tool for s in raw_calls] == [HANDOFF_TOOL, "update_seat"]
    assert all(s.agent is None for s in raw.trace.steps)
    assert raw_calls[0].arguments["kwargs"]["to_agent"] == SEAT_AGENT and "ctx" in raw_calls[0].arguments["kwargs"]
    assert raw_calls[1].output["raw_output"] == "Updated seat to 14C for confirmation number ABC123."
    before = json.dumps(spans)
    fixed = fix_spans(spans, events)
    assert json.dumps(spans) == before  # the capture's spans are not modified
    [built] = import_spans(fixed)
    check_seat_trace(built.trace, "14C")
    # Without the events (spans exported and imported elsewhere): names from the reprs, handoffs from turns.
    [alone] = import_spans(fix_spans(spans))
    assert [(s.action, s.agent, s.target, s.tool) for s in alone.trace.steps] == [
        (Action.HANDOFF, TRIAGE_AGENT, SEAT_AGENT, None),
        (Action.CALL_TOOL, SEAT_AGENT, None, "update_seat"),
        (Action.RESPOND, SEAT_AGENT, None, None),
    ]
    assert alone.trace.steps[1].arguments == {"confirmation_number": "ABC123", "new_seat": "14C"}
    assert alone.trace.steps[1].output == "Updated seat to 14C for confirmation number ABC123."
    # A step's output is a summary cut at 200 characters: the agent's name is read from its full input event.
    summaries = [dict(s, attributes=[kv for kv in s["attributes"] if kv["key"] != "output.value"]) for s in spans]
    [cut] = import_spans(fix_spans(summaries))
    assert [(s.action, s.agent, s.target) for s in cut.trace.steps] == [
        (s.action, s.agent, s.target) for s in alone.trace.steps
    ]


def test_a_refused_handoff_stays_a_tool_call() -> None:
    """`handoff` to an agent the workflow does not have returns a message; the caller keeps its turn."""
    _, spans, events = run_with_events(SEAT_Q.format(seat="14C"), seed=1)
    assert events is not None
    [first] = [i for i, r in events.tools.items() if r.name == HANDOFF_TOOL]
    events.tools[first].next_agent = TRIAGE_AGENT  # as if triage had kept the turn
    steps = import_spans(fix_spans(spans, events))[0].trace.steps
    assert (steps[0].action, steps[0].agent, steps[0].tool) == (Action.CALL_TOOL, TRIAGE_AGENT, HANDOFF_TOOL)
    assert steps[0].arguments["to_agent"] == SEAT_AGENT and "ctx" not in steps[0].arguments


def test_faq_and_a_direct_answer_offline() -> None:
    check_faq_and_direct_answer(trial, TRIAGE_AGENT, FAQ_AGENT, seed=3)


def test_a_specialist_hands_back_to_triage() -> None:
    check_hand_back(trial, TRIAGE_AGENT, FAQ_AGENT)


def test_a_failing_tool_is_the_calls_error() -> None:
    assert check_failing_tool(trial(BAD_SEAT_Q, 2), SEAT_AGENT).output is None


# -- concurrency ------------------------------------------------------------------------------------------
def test_eight_concurrent_trials_keep_their_traces_apart() -> None:
    adapter = offline_adapter(V1)
    concurrent_seat_trials(adapter, check_seat_trace)
    assert not adapter.profile._events  # every trial's events were used and let go


# -- the example through the CLI --------------------------------------------------------------------------
def test_the_example_offline_records_full_traces_and_v2_is_blocked(tmp_path: Path) -> None:
    run_then_check_blocks(
        SUITE, V2, tmp_path, "otel:llamaindex", (TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT), check_seat_trace
    )
