"""A framework's one handoff tool that takes the target's name (Strands ``handoff_to_agent(agent_name, ...)``,
ADK ``transfer_to_agent(agent_name)``, CrewAI ``coworker``): ``handoff:NAME`` calls it with that name."""

from __future__ import annotations

import json

import pytest

from agentassay._integrations.adapters._simulator import Behaviour, ToolSpec, decide, read_conversation

HANDOFF = ToolSpec(
    "handoff_to_agent",
    "Transfer control to another agent.",
    {
        "type": "object",
        "properties": {"agent_name": {"type": "string"}, "message": {"type": "string"}},
        "required": ["agent_name", "message"],
    },
)
BEHAVIOUR = Behaviour({
    "Triage": {
        "rules": [{"choose": "handoff:Seat Booking Agent"}],
        "arguments": {"handoff_to_agent": {"message": {"regex": "(seat \\w+)"}}},
    },
})


def test_handoff_resolves_to_the_tool_naming_its_target() -> None:
    decision = decide(
        BEHAVIOUR, seed=1, agent="Triage", system="", conversation=read_conversation("change my seat 14C", ()),
        tools=[ToolSpec("lookup", "", {}), HANDOFF],
    )
    assert decision.call == "handoff_to_agent"
    assert json.loads(decision.arguments or "") == {"agent_name": "Seat Booking Agent", "message": "seat 14C"}


def test_a_named_transfer_tool_still_wins_and_a_tool_outside_handoff_tools_is_not_used() -> None:
    named = ToolSpec("transfer_to_seat_booking_agent", "", {"type": "object", "properties": {}})
    decision = decide(
        BEHAVIOUR, seed=1, agent="Triage", system="", conversation=read_conversation("seat", ()),
        tools=[HANDOFF, named],
    )
    assert decision.call == "transfer_to_seat_booking_agent" and json.loads(decision.arguments or "") == {}
    other = ToolSpec("route", "", HANDOFF.schema)
    with pytest.raises(ValueError, match="chose 'handoff:Seat Booking Agent'"):
        decide(BEHAVIOUR, seed=1, agent="Triage", system="", conversation=read_conversation("x", ()), tools=[other])
