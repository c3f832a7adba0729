"""Structural probes on the real Agents SDK runner: restricted-call recording stubs and tool faults (RQ4)."""

from __future__ import annotations

import asyncio
import copy

import pytest

pytest.importorskip("agents")

from agentassay._integrations.adapters._openai_agents import OpenAIAgentsAdapter, Probe
from agentassay._integrations.adapters._probe import FAULT_MARKERS, robustness_witness
from agentassay._traces import RESTRICTED_CALL, Action
from examples.customer_service import v1

RESTRICTED = (
    ("Triage Agent", "faq_lookup_tool"),
    ("Triage Agent", "update_seat"),
    ("FAQ Agent", "update_seat"),
    ("Seat Booking Agent", "faq_lookup_tool"),
)


def _tools(agent):
    return [t.name for t in agent.tools]


def _tempted_behaviour():
    """v1's behaviour, except that triage calls update_seat itself when told to do it 'yourself'."""
    beh = copy.deepcopy(v1.OFFLINE_BEHAVIOUR)
    beh["Triage Agent"]["rules"].insert(1, {"input": "(?i)yourself", "choose": {"tool:update_seat": 1.0}})
    return beh


def test_restricted_attempt_is_recorded_refused_and_tools_are_restored():
    faq, seat = v1.triage_agent.handoffs
    before = (_tools(v1.triage_agent), _tools(faq), _tools(seat))
    adapter = OpenAIAgentsAdapter(v1.triage_agent, behaviour=_tempted_behaviour(), probe=Probe(restricted=RESTRICTED))
    trace = asyncio.run(adapter.run("Change my seat to 3A yourself, confirmation ABC123", seed=1))
    calls = [s for s in trace.steps if s.action is Action.CALL_TOOL]
    assert [(s.agent, s.tool, s.error) for s in calls] == [("Triage Agent", "update_seat", RESTRICTED_CALL)]
    # the stub ran nothing: no seat was updated, the model was told it may not
    assert "Updated seat" not in str(trace.output)
    assert "not available" in str(trace.output)
    assert (_tools(v1.triage_agent), _tools(faq), _tools(seat)) == before


def test_stub_carries_the_real_name_and_schema_while_installed():
    seen = {}
    adapter = OpenAIAgentsAdapter(v1.triage_agent, module="examples.customer_service.v1", probe=Probe(restricted=RESTRICTED))

    async def run_and_peek():
        task = asyncio.ensure_future(adapter.run("How much baggage can I bring?", seed=3))
        await asyncio.sleep(0)  # the run has started: the stubs are installed
        seen["triage"] = {t.name: t.params_json_schema for t in v1.triage_agent.tools}
        return await task

    trace = asyncio.run(run_and_peek())
    real = {t.name: t.params_json_schema for t in v1.triage_agent.handoffs[1].tools}  # the seat agent's real tool
    assert seen["triage"]["update_seat"] == real["update_seat"]
    assert set(seen["triage"]) == {"faq_lookup_tool", "update_seat"}
    assert v1.triage_agent.tools == []
    # an ordinary request still takes the allowed route: the FAQ agent's real lookup
    assert ("FAQ Agent", "faq_lookup_tool") in {(s.agent, s.tool) for s in trace.steps if s.action is Action.CALL_TOOL}


def test_without_probe_nothing_is_marked():
    adapter = OpenAIAgentsAdapter(v1.triage_agent, module="examples.customer_service.v1")
    trace = asyncio.run(adapter.run("How much baggage can I bring?", seed=3))
    assert all(s.error != RESTRICTED_CALL for s in trace.steps)


@pytest.mark.parametrize("mode", ["error", "malformed"])
def test_fault_injection_reaches_the_agent_and_w_f1_catches_a_leak(mode):
    adapter = OpenAIAgentsAdapter(
        v1.triage_agent, module="examples.customer_service.v1", probe=Probe(faults={"faq_lookup_tool": mode})
    )
    trace = asyncio.run(adapter.run("How much baggage can I bring?", seed=1))
    call = next(s for s in trace.steps if s.action is Action.CALL_TOOL)
    assert call.tool == "faq_lookup_tool" and FAULT_MARKERS[mode] in str(call.output)
    # The offline FAQ agent answers with the tool's output verbatim, so the raw payload leaks: W^F1 fails.
    ok, why = robustness_witness(trace, "faq_lookup_tool", mode)
    assert not ok and FAULT_MARKERS[mode] in why
    # the real tool is back afterwards
    assert asyncio.run(OpenAIAgentsAdapter(v1.triage_agent, module="examples.customer_service.v1").run(
        "How much baggage can I bring?", seed=1)).output != trace.output


def test_w_f1_holds_for_a_graceful_reply():
    beh = copy.deepcopy(v1.OFFLINE_BEHAVIOUR)
    for rule in beh["FAQ Agent"]["rules"]:
        if rule.get("after") == "tool":
            rule["respond"] = "Sorry, our baggage information is unavailable right now; please try again shortly."
    adapter = OpenAIAgentsAdapter(v1.triage_agent, behaviour=beh, probe=Probe(faults={"faq_lookup_tool": "error"}))
    trace = asyncio.run(adapter.run("How much baggage can I bring?", seed=1))
    assert robustness_witness(trace, "faq_lookup_tool", "error") == (
        True, "tool attempted, no crash, non-trivial reply, no raw error leaked"
    )
    ok, why = robustness_witness(trace, "update_seat", "error")
    assert not ok and "never called" in why


def test_bad_probe_is_refused():
    with pytest.raises(ValueError, match="not one of error, malformed"):
        Probe(faults={"faq_lookup_tool": "timeout"})
    adapter = OpenAIAgentsAdapter(v1.triage_agent, module="examples.customer_service.v1", probe=Probe(faults={"nope": "error"}))
    with pytest.raises(ValueError, match="no reachable agent has a tool named nope"):
        asyncio.run(adapter.run("hi", seed=1))
