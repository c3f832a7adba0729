"""AutoGen AgentChat through the OpenTelemetry capture adapter (issue 24): the airline swarm offline (AutoGen's own
OpenAIChatCompletionClient against the offline server), its trace from the run's messages (the native route),
concurrent trials, a v1 -> v2 regression, and the profile's detection, tools, per-trial copies and span fix-ups.
Runs in .venv-fw-autogen (`bash .ci/frameworks.sh autogen`); skipped where AutoGen is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat")

from autogen_agentchat.agents import AssistantAgent
from autogen_ext.models.openai import OpenAIChatCompletionClient

from agentassay._integrations.adapters import adapter_for
from agentassay._integrations.adapters._otel import PROFILES, detect, load_profile
from agentassay._integrations.adapters._otel._autogen import NATIVE, fresh
from agentassay._integrations.adapters._otel._spans import attrs
from agentassay._integrations.importers import import_spans
from agentassay._traces import Action, Trace
from examples.customer_service.airline import TRIAGE_INSTRUCTIONS_V1, faq_lookup_tool
from examples.frameworks.autogen._workflow import FAQ, MODEL, SEAT, TRIAGE, build_swarm
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
SUITE = ROOT / "examples" / "frameworks" / "autogen" / "agentassay.yml"
V1 = "examples.frameworks.autogen.v1:swarm"
V2 = "examples.frameworks.autogen.v2:swarm"


def a_swarm() -> Any:
    """v1's swarm with a client of its own (OpenAI's client wants a key when it is built)."""
    return build_swarm(TRIAGE_INSTRUCTIONS_V1, OpenAIChatCompletionClient(model=MODEL, api_key="test"))


def check_seat_trace(trace: Trace, seat: str) -> None:
    check_seat_steps(trace, seat, TRIAGE, SEAT)


# -- the profile ------------------------------------------------------------------------------------------
def test_teams_and_agents_are_detected_and_traced_by_the_autogen_profile() -> None:
    swarm = a_swarm()
    assert "autogen" in PROFILES
    assert detect(swarm) == "autogen" and detect(swarm._participants[1]) == "autogen"
    assert detect(faq_lookup_tool) is None
    adapter = adapter_for(swarm, entry="x:swarm")
    assert adapter.name == "otel:autogen"
    config = adapter.config()
    assert config["framework"] == "autogen" and config["agents"] == [TRIAGE, FAQ, SEAT]


def test_tools_are_every_agents_tools_without_the_handoff_tools() -> None:
    swarm = a_swarm()
    tools = load_profile("autogen").tools(swarm)
    assert {(t.name, t.agent) for t in tools} == {("faq_lookup_tool", FAQ), ("update_seat", SEAT)}
    seat = next(t for t in tools if t.name == "update_seat")
    assert seat.parameters["properties"]["new_seat"]["type"] == "string"
    assert "seat" in seat.description.lower()
    single = AssistantAgent("faq", model_client=OpenAIChatCompletionClient(model=MODEL, api_key="x"),
                            tools=[faq_lookup_tool])  # fmt: skip
    assert [(t.name, t.agent) for t in load_profile("autogen").tools(single)] == [("faq_lookup_tool", "faq")]


def test_each_trial_runs_a_fresh_copy_of_the_swarm() -> None:
    swarm = a_swarm()
    copy = fresh(swarm)
    assert copy is not None and type(copy) is type(swarm) and copy is not swarm
    assert [a.name for a in copy._participants] == [a.name for a in swarm._participants]
    assert copy._termination_condition is not swarm._termination_condition
    for clone, original in zip(copy._participants, swarm._participants, strict=True):
        assert clone is not original and clone._model_client is original._model_client
        assert clone._model_context is not original._model_context
        assert list(clone._handoffs) == list(original._handoffs)
    agent = swarm._participants[1]
    single = fresh(agent)
    assert single is not agent and single.name == agent.name and single._model_context is not agent._model_context


def test_the_trace_is_built_from_the_runs_messages_and_autogens_own_spans_are_dropped() -> None:
    trace, spans = run_with_spans(offline_adapter(V1), SEAT_Q.format(seat="14C"), seed=1)
    check_seat_trace(trace, "14C")
    assert trace.metadata.model == MODEL  # the model the agents' client asks for
    own = [s for s in spans if not attrs(s).get(NATIVE) and attrs(s).get("gen_ai.operation.name")]
    assert {attrs(s)["gen_ai.operation.name"] for s in own} >= {"invoke_agent", "execute_tool", "invoke_workflow"}
    # AutoGen's own spans: agents and tool names, but no arguments, results or tokens.
    assert not any("gen_ai.tool.call.arguments" in attrs(s) or "gen_ai.usage.input_tokens" in attrs(s) for s in own)
    fixed = load_profile("autogen").fix_spans(spans)
    ids = {s["spanId"] for s in spans}
    kept = {s["spanId"] for s in spans if attrs(s).get(NATIVE) or s.get("parentSpanId") not in ids}  # + the root
    assert {s["spanId"] for s in fixed} == kept
    [built] = import_spans(fixed)
    check_seat_trace(built.trace, "14C")


def test_without_the_run_result_autogens_spans_still_give_agents_tools_and_handoffs() -> None:
    """A callable that runs AutoGen inside (``framework: autogen``): only AutoGen's spans, repaired."""
    _, spans = run_with_spans(offline_adapter(V1), SEAT_Q.format(seat="15D"), seed=1)
    own = [s for s in spans if not attrs(s).get(NATIVE)]
    before = json.dumps(own)
    [built] = import_spans(load_profile("autogen").fix_spans(own))
    assert json.dumps(own) == before  # the capture's spans are not modified
    steps = [(s.action, s.agent, s.tool, s.target) for s in built.trace.steps if s.action is not Action.RESPOND]
    assert steps == [
        (Action.HANDOFF, TRIAGE, None, SEAT.lower()),  # the target as AutoGen spells the tool: lower case
        (Action.CALL_TOOL, SEAT, "update_seat", None),
    ]


def test_faq_and_a_direct_answer_offline() -> None:
    check_faq_and_direct_answer(offline_trial(V1), TRIAGE, FAQ, seed=3)


def test_a_specialist_hands_back_to_triage() -> None:
    check_hand_back(offline_trial(V1), TRIAGE, FAQ)


def test_a_failing_tool_is_the_calls_error() -> None:
    check_failing_tool(offline_trial(V1)(BAD_SEAT_Q, 2), SEAT)


# -- concurrency ------------------------------------------------------------------------------------------
def test_eight_concurrent_trials_keep_their_traces_apart() -> None:
    adapter = offline_adapter(V1)
    concurrent_seat_trials(adapter, check_seat_trace)


# -- the example through the CLI --------------------------------------------------------------------------
def test_the_example_offline_records_full_traces_and_v2_is_blocked(tmp_path: Path) -> None:
    run_then_check_blocks(SUITE, V2, tmp_path, "otel:autogen", (TRIAGE, FAQ, SEAT), check_seat_trace)
