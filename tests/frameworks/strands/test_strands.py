"""Strands Agents through the OpenTelemetry capture adapter (issue 24): the airline swarm offline (Strands' own
OpenAIModel against the offline server), concurrent trials, a v1 -> v2 regression, and the profile's detection,
tools, per-trial copies and span fix-ups. Runs in .venv-fw-strands (`bash .ci/frameworks.sh strands`); skipped
where Strands is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("strands")

from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.telemetry import tracer as strands_tracer

from agentassay._integrations.adapters import adapter_for
from agentassay._integrations.adapters._otel import PROFILES, detect, load_profile
from agentassay._integrations.adapters._otel._strands import HANDOFF_TOOL, fresh, result_text
from agentassay._integrations.importers import import_spans
from agentassay._traces import Action, Trace
from examples.customer_service.airline import (
    FAQ_AGENT,
    SEAT_AGENT,
    TRIAGE_AGENT,
    TRIAGE_INSTRUCTIONS_V1,
    faq_lookup_tool,
)
from examples.frameworks.strands._workflow import build_swarm
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
SUITE = ROOT / "examples" / "frameworks" / "strands" / "agentassay.yml"
V1 = "examples.frameworks.strands.v1:swarm"
V2 = "examples.frameworks.strands.v2:swarm"


def check_seat_trace(trace: Trace, seat: str) -> None:
    check_seat_steps(trace, seat, TRIAGE_AGENT, SEAT_AGENT)


# -- the profile ------------------------------------------------------------------------------------------
def test_swarms_and_agents_are_detected_and_traced_by_the_strands_profile() -> None:
    swarm = build_swarm(TRIAGE_INSTRUCTIONS_V1)
    assert "strands" in PROFILES
    assert detect(swarm) == "strands" and detect(swarm.nodes[FAQ_AGENT].executor) == "strands"
    assert detect(faq_lookup_tool) is None
    adapter = adapter_for(swarm, entry="x:swarm")
    assert adapter.name == "otel:strands"
    config = adapter.config()
    assert config["framework"] == "strands" and config["agents"] == [TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT]


def test_a_tracer_made_before_the_content_opt_in_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent built before AgentAssay set OTEL_SEMCONV_STABILITY_OPT_IN made Strands' tracer without it."""
    monkeypatch.delenv("OTEL_SEMCONV_STABILITY_OPT_IN", raising=False)
    monkeypatch.setattr(strands_tracer, "_tracer_instance", None)
    Agent(name="early", model=OpenAIModel(model_id="gpt-4.1-mini"), callback_handler=None)
    assert not strands_tracer.get_tracer().use_latest_genai_conventions
    load_profile("strands").instrument()
    assert strands_tracer.get_tracer().use_latest_genai_conventions


def test_tools_are_every_agents_tools_without_the_swarms_handoff_tool() -> None:
    swarm = build_swarm(TRIAGE_INSTRUCTIONS_V1)
    assert HANDOFF_TOOL in swarm.nodes[TRIAGE_AGENT].executor.tool_names
    tools = load_profile("strands").tools(swarm)
    assert {(t.name, t.agent) for t in tools} == {("faq_lookup_tool", FAQ_AGENT), ("update_seat", SEAT_AGENT)}
    seat = next(t for t in tools if t.name == "update_seat")
    assert seat.parameters["properties"]["new_seat"]["type"] == "string"
    assert "seat" in seat.description.lower()
    single = Agent(name="faq", tools=[tool(faq_lookup_tool)], callback_handler=None)
    assert [(t.name, t.agent) for t in load_profile("strands").tools(single)] == [("faq_lookup_tool", "faq")]


def test_each_trial_runs_a_fresh_copy_of_the_swarm() -> None:
    swarm = build_swarm(TRIAGE_INSTRUCTIONS_V1)
    copy = fresh(swarm)
    assert copy is not swarm and list(copy.nodes) == list(swarm.nodes)
    assert copy.entry_point is copy.nodes[TRIAGE_AGENT].executor
    assert (copy.max_handoffs, copy.max_iterations) == (swarm.max_handoffs, swarm.max_iterations)
    for name, node in copy.nodes.items():
        original = swarm.nodes[name].executor
        assert node.executor is not original and node.executor.model is original.model
        assert node.executor.system_prompt == original.system_prompt
        assert node.executor.tool_names == original.tool_names  # the copy's own handoff tool, from its swarm
        assert node.executor.messages is not original.messages


def test_result_text_reads_strands_tool_result_content() -> None:
    assert result_text('[{"text": "a"}, {"json": {"b": 1}}]') == 'a\n{"b": 1}'
    assert result_text("plain") is None and result_text('{"text": "a"}') is None


def test_fix_spans_names_agents_turns_the_handoff_tool_into_handoffs_and_unwraps_results() -> None:
    trace, spans = run_with_spans(offline_adapter(V1), SEAT_Q.format(seat="14C"), seed=1)
    check_seat_trace(trace, "14C")
    [raw] = import_spans(spans)
    # Strands' own spans: the handoff is a call of handoff_to_agent, results are content lists.
    raw_calls = [s for s in raw.trace.steps if s.action is Action.CALL_TOOL]
    assert [s.tool for s in raw_calls] == [HANDOFF_TOOL, "update_seat"]
    assert raw_calls[0].arguments["agent_name"] == SEAT_AGENT
    assert raw_calls[1].output == [{"text": "Updated seat to 14C for confirmation number ABC123."}]
    before = json.dumps(spans)
    fixed = load_profile("strands").fix_spans(spans)
    assert json.dumps(spans) == before  # the capture's spans are not modified
    [built] = import_spans(fixed)
    check_seat_trace(built.trace, "14C")


def test_faq_and_a_direct_answer_offline() -> None:
    check_faq_and_direct_answer(offline_trial(V1), TRIAGE_AGENT, FAQ_AGENT, seed=3)


def test_a_specialist_hands_back_to_triage() -> None:
    check_hand_back(offline_trial(V1), TRIAGE_AGENT, FAQ_AGENT)


def test_a_failing_tool_is_the_calls_error() -> None:
    check_failing_tool(offline_trial(V1)(BAD_SEAT_Q, 2), SEAT_AGENT)


# -- concurrency ------------------------------------------------------------------------------------------
def test_eight_concurrent_trials_keep_their_traces_apart() -> None:
    adapter = offline_adapter(V1)
    concurrent_seat_trials(adapter, check_seat_trace)


# -- the example through the CLI --------------------------------------------------------------------------
def test_the_example_offline_records_full_traces_and_v2_is_blocked(tmp_path: Path) -> None:
    run_then_check_blocks(
        SUITE, V2, tmp_path, "otel:strands", (TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT), check_seat_trace
    )
