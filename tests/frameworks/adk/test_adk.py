"""Google ADK through the OpenTelemetry capture adapter (issue 24): the airline agent tree offline (LiteLLM's
OpenAI route against the offline server), concurrent trials, a v1 -> v2 regression, and the profile's detection,
tools and span fix-ups. Runs in .venv-fw-adk (`bash .ci/frameworks.sh adk`); skipped where ADK is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import LlmAgent
from google.adk.apps import App

from agentassay._integrations.adapters import AgentRunError, adapter_for
from agentassay._integrations.adapters._otel import PROFILES, detect, load_profile
from agentassay._integrations.adapters._otel._adk import HANDOFF_TOOL, agents_of, result_value
from agentassay._integrations.importers import import_spans
from agentassay._traces import Action, Trace
from examples.customer_service.airline import TRIAGE_INSTRUCTIONS_V1, faq_lookup_tool
from examples.frameworks.adk._workflow import FAQ, SEAT, TRIAGE, build_triage_agent
from tests._support.frameworks import (
    BAD_SEAT_Q,
    SEAT_Q,
    check_failing_tool,
    check_faq_and_direct_answer,
    check_hand_back,
    check_seat_steps,
    concurrent_seat_trials,
    offline_adapter,
    offline_trial,
    run_then_check_blocks,
    run_with_spans,
)

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "examples" / "frameworks" / "adk" / "agentassay.yml"
V1 = "examples.frameworks.adk.v1:agent"
V2 = "examples.frameworks.adk.v2:agent"


def check_seat_trace(trace: Trace, seat: str) -> None:
    check_seat_steps(trace, seat, TRIAGE, SEAT)
    assert not trace.output.startswith("{")


# -- the profile ------------------------------------------------------------------------------------------
def test_agent_trees_and_apps_are_detected_and_traced_by_the_adk_profile() -> None:
    triage = build_triage_agent(TRIAGE_INSTRUCTIONS_V1)
    assert "adk" in PROFILES
    assert detect(triage) == "adk" and detect(triage.sub_agents[0]) == "adk"
    assert detect(App(name="airline", root_agent=triage)) == "adk"
    assert detect(faq_lookup_tool) is None
    adapter = adapter_for(triage, entry="x:agent")
    assert adapter.name == "otel:adk"
    config = adapter.config()
    assert config["framework"] == "adk" and config["agents"] == [TRIAGE, FAQ, SEAT] and config["adk"]


def test_tools_are_every_agents_tools_without_the_transfer_tool() -> None:
    triage = build_triage_agent(TRIAGE_INSTRUCTIONS_V1)
    for obj in (triage, App(name="airline", root_agent=triage)):
        assert [a.name for a in agents_of(obj)] == [TRIAGE, FAQ, SEAT]
        tools = load_profile("adk").tools(obj)
        assert {(t.name, t.agent) for t in tools} == {("faq_lookup_tool", FAQ), ("update_seat", SEAT)}
    seat = next(t for t in tools if t.name == "update_seat")
    assert seat.parameters["properties"]["new_seat"]["type"] == "string"
    assert "seat" in seat.description.lower() and HANDOFF_TOOL not in {t.name for t in tools}
    single = LlmAgent(name="faq", tools=[faq_lookup_tool])
    assert [(t.name, t.agent) for t in load_profile("adk").tools(single)] == [("faq_lookup_tool", "faq")]


def test_result_value_unwraps_adks_function_responses() -> None:
    assert result_value('{"result": "a"}') == ("a", None)
    assert result_value('{"error": "boom"}') == (None, "boom")
    assert result_value('{"a": 1, "b": 2}') == ({"a": 1, "b": 2}, None)


def test_fix_spans_turns_the_transfer_tool_into_handoffs_and_unwraps_results() -> None:
    trace, spans = run_with_spans(offline_adapter(V1), SEAT_Q.format(seat="14C"), seed=1)
    check_seat_trace(trace, "14C")
    [raw] = import_spans(spans)
    # ADK's own spans: the handoff is a call of transfer_to_agent, results are function responses.
    raw_calls = [s for s in raw.trace.steps if s.action is Action.CALL_TOOL]
    assert [s.tool for s in raw_calls] == [HANDOFF_TOOL, "update_seat"]
    assert raw_calls[0].arguments == {"agent_name": SEAT} and raw_calls[0].agent == TRIAGE
    assert raw_calls[1].output == {"result": "Updated seat to 14C for confirmation number ABC123."}
    before = json.dumps(spans)
    fixed = load_profile("adk").fix_spans(spans)
    assert json.dumps(spans) == before  # the capture's spans are not modified
    [built] = import_spans(fixed)
    check_seat_trace(built.trace, "14C")
    assert trace.metadata.extra["trace_id"]


def test_faq_and_a_direct_answer_offline() -> None:
    check_faq_and_direct_answer(offline_trial(V1), TRIAGE, FAQ, seed=4)


def test_a_specialist_hands_back_to_triage() -> None:
    trace = check_hand_back(offline_trial(V1), TRIAGE, FAQ)
    assert trace.output.startswith("Thanks for waiting. You are allowed to bring one bag")


def test_a_failing_tool_ends_the_run_with_the_calls_error() -> None:
    """ADK does not hand a tool's exception to the model: the run fails, the call carries the error."""
    with pytest.raises(AgentRunError) as failed:
        offline_trial(V1)(BAD_SEAT_Q, 2)
    trace = failed.value.trace
    check_failing_tool(trace, SEAT)
    assert trace.steps[-1].action is Action.ERROR and "invalid seat" in (trace.error or "")


# -- concurrency ------------------------------------------------------------------------------------------
def test_eight_concurrent_trials_keep_their_traces_apart() -> None:
    adapter = offline_adapter(V1)
    concurrent_seat_trials(adapter, check_seat_trace, seed=100)
    assert not adapter._serial  # requests carried traceparent: the trials really ran concurrently


# -- the example through the CLI --------------------------------------------------------------------------
def test_the_example_offline_records_full_traces_and_v2_is_blocked(tmp_path: Path) -> None:
    run_then_check_blocks(SUITE, V2, tmp_path, "otel:adk", (TRIAGE, FAQ, SEAT), check_seat_trace)
