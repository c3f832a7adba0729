"""The offline behaviour of the LangGraph version: the SDK version's table plus how a request is recognised.

Requests to the offline server carry no agent name, so each agent is recognised by a tool only it is
offered; handoffs are the graph's ``transfer_to_<agent>`` tools, which the simulator resolves by name.
"""

from __future__ import annotations

from examples.customer_service.airline import FAQ_AGENT, SEAT_AGENT, TRIAGE_AGENT, base_behaviour

MATCH = {
    TRIAGE_AGENT: {"tools": ["transfer_to_seat_booking_agent", "transfer_to_faq_agent"]},
    FAQ_AGENT: {"tools": ["faq_lookup_tool"]},
    SEAT_AGENT: {"tools": ["update_seat"]},
}


def behaviour(routing: dict[str, float]) -> dict[str, object]:
    """``base_behaviour(routing)`` with each agent's ``match``."""
    table = base_behaviour(routing)
    for name, match in MATCH.items():
        agent = table[name]
        assert isinstance(agent, dict)
        agent["match"] = match
    return table
