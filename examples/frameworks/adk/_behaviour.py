"""The offline behaviour of the ADK version: the SDK version's table under ADK's agent names.

* names: ADK agent names are identifiers, so the table's agents and its ``handoff:`` targets are renamed
  (``Seat Booking Agent`` -> ``seat_booking_agent``); the simulator resolves a handoff to ADK's one
  ``transfer_to_agent`` tool with ``agent_name`` set to the target;
* recognising a request: ADK writes each agent's name into its system prompt (``Your internal name is
  "triage_agent"``), and each specialist is the only agent offered its tool;
* the conversation: ADK shows an agent the other agents' turns as quoted user messages ("For context: ...");
  the offline server reads them back as the calls and results they were (``adapters/_quoted.py``), so the
  SDK version's rules (``after: handoff``, the request's regexes) apply unchanged.
"""

from __future__ import annotations

import copy
from typing import Any

from examples.customer_service.airline import FAQ_AGENT, SEAT_AGENT, TRIAGE_AGENT, base_behaviour

from ._workflow import FAQ, SEAT, TRIAGE

#: The SDK agent name -> the ADK agent name.
NAMES = {TRIAGE_AGENT: TRIAGE, FAQ_AGENT: FAQ, SEAT_AGENT: SEAT}
MATCH = {
    TRIAGE_AGENT: {"system": rf'(?i)\binternal name is "{TRIAGE}"'},
    FAQ_AGENT: {"tools": ["faq_lookup_tool"]},
    SEAT_AGENT: {"tools": ["update_seat"]},
}


def _choices(choose: Any) -> Any:
    """One rule's choices with ADK's agent names as handoff targets."""
    if isinstance(choose, str):
        return choose
    out = {}
    for choice, weight in choose.items():
        kind, _, target = choice.partition(":")
        out[f"handoff:{NAMES[target]}" if kind == "handoff" else choice] = weight
    return out


def behaviour(routing: dict[str, float]) -> dict[str, Any]:
    """``base_behaviour(routing)`` for the ADK agent tree (see the module docstring)."""
    table: dict[str, Any] = {}
    for name, body in copy.deepcopy(base_behaviour(routing)).items():
        body["match"] = MATCH[name]
        for rule in body["rules"]:
            rule["choose"] = _choices(rule["choose"])
        table[NAMES[name]] = body
    return table
