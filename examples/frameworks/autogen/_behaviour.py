"""The offline behaviour of the AutoGen version: the SDK version's table, adapted to how a swarm talks.

* recognising a request: requests carry no agent name, so triage is recognised by its prompt and each
  specialist by the tool only it is offered;
* a handoff is the ``transfer_to_<agent>`` tool AutoGen makes (``handoff:Seat Booking Agent`` resolves to
  ``transfer_to_seat_booking_agent``); the example's handoff tools take the customer's ``request``, which
  the next agent reads as its latest user message, ``Handoff: <request>``: the request is held to the text
  after that prefix;
* in a swarm no agent sees the result of another's handoff, so a triage agent handed a request back
  (``Handoff: ...``) wraps up (the SDK version's ``after: handoff`` rule).
"""

from __future__ import annotations

import copy
from typing import Any

from examples.customer_service.airline import FAQ_AGENT, SEAT_AGENT, TRIAGE_AGENT, base_behaviour

HANDOFF_REQUEST = {"regex": r"(?s)^(?:Handoff: )?(.*)"}  # the request, without the prefix
HANDED_BACK = {
    "input": r"^Handoff: ",
    "choose": "respond",
    "respond": "Thanks for waiting. Is there anything else I can help you with on your flight?",
}
MATCH = {
    TRIAGE_AGENT: {"system": r"(?i)\btriaging agent"},  # both versions' prompts; the others say "triage agent"
    FAQ_AGENT: {"tools": ["faq_lookup_tool"]},
    SEAT_AGENT: {"tools": ["update_seat"]},
}


def handoff_tool(agent: str) -> str:
    """The tool AutoGen makes for a handoff to this airline agent (``transfer_to_<its identifier>``, lower case)."""
    return "transfer_to_" + agent.replace(" ", "_").lower()


def behaviour(routing: dict[str, float]) -> dict[str, Any]:
    """``base_behaviour(routing)`` for an AutoGen swarm (see the module docstring)."""
    table = copy.deepcopy(base_behaviour(routing))
    for name, match in MATCH.items():
        agent = table[name]
        agent["match"] = match
        arguments = agent.setdefault("arguments", {})
        for target in MATCH:
            if target != name:
                arguments[handoff_tool(target)] = {"request": HANDOFF_REQUEST}
    table[FAQ_AGENT]["arguments"]["faq_lookup_tool"] = {"question": HANDOFF_REQUEST}
    table[TRIAGE_AGENT]["rules"].insert(0, HANDED_BACK)
    return table
