"""The offline behaviour of the Agno version: the SDK version's table, adapted to how an Agno team talks.

* recognising a request: requests carry no agent name, so the leader (triage) is recognised by its prompt and
  each member by the tool only it is offered;
* a handoff is the leader's ``delegate_task_to_member`` tool, whose ``member_id`` is the member's Agno id (its
  name made URL-safe): the triage's ``handoff:<agent>`` becomes ``handoff:<member id>``, which the simulator
  resolves to that tool with ``member_id`` set (and ``task`` the customer's words);
* a member's hand-back is its answer (the team responds with it directly): ``handoff:Triage Agent`` becomes
  ``respond``.
"""

from __future__ import annotations

import copy
from typing import Any

from examples.customer_service.airline import FAQ_AGENT, SEAT_AGENT, TRIAGE_AGENT, base_behaviour

MATCH = {
    TRIAGE_AGENT: {"system": r"(?i)\btriaging agent"},  # both versions' prompts; the members say "triage agent"
    FAQ_AGENT: {"tools": ["faq_lookup_tool"]},
    SEAT_AGENT: {"tools": ["update_seat"]},
}
#: Agno's member ids: the members' names made URL-safe (``agno.utils.string.url_safe_string``).
MEMBER_IDS = {FAQ_AGENT: "faq-agent", SEAT_AGENT: "seat-booking-agent"}


def _choices(agent: str, choose: Any) -> Any:
    if isinstance(choose, str):
        return _choices(agent, {choose: 1.0})
    out: dict[str, float] = {}
    for choice, weight in choose.items():
        target = choice.partition(":")[2] if choice.startswith("handoff:") else None
        if target == TRIAGE_AGENT:
            choice = "respond"  # a member hands back by answering
        elif target in MEMBER_IDS:
            choice = f"handoff:{MEMBER_IDS[target]}"
        out[choice] = out.get(choice, 0.0) + float(weight)
    return out


def behaviour(routing: dict[str, float]) -> dict[str, Any]:
    """``base_behaviour(routing)`` for an Agno team (see the module docstring)."""
    table = copy.deepcopy(base_behaviour(routing))
    for name, body in table.items():
        body["match"] = MATCH[name]
        for rule in body["rules"]:
            rule["choose"] = _choices(name, rule["choose"])
    return table
