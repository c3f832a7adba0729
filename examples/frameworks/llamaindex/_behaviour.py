"""The offline behaviour of the LlamaIndex version: the SDK version's table, recognised the way LlamaIndex talks.

* recognising a request: requests carry no agent name (the system prompt is the agent's own), so triage is
  recognised by its prompt and each specialist by the tool only it is offered;
* a handoff is the workflow's one ``handoff(to_agent, reason)`` tool: ``handoff_tools`` names it, so the
  simulator fills ``to_agent`` with the chosen target and counts its result as a handoff (the agent taking
  over sees the whole conversation, the handoff's result last, as in the SDK).
"""

from __future__ import annotations

import copy
from typing import Any

from examples.customer_service.airline import FAQ_AGENT, SEAT_AGENT, TRIAGE_AGENT, base_behaviour

MATCH = {
    TRIAGE_AGENT: {"system": r"(?i)\btriaging agent"},  # both versions' prompts; the others say "triage agent"
    FAQ_AGENT: {"tools": ["faq_lookup_tool"]},
    SEAT_AGENT: {"tools": ["update_seat"]},
}
HANDOFF_TOOLS = r"^handoff$"


def behaviour(routing: dict[str, float]) -> dict[str, Any]:
    """``base_behaviour(routing)`` for a LlamaIndex ``AgentWorkflow`` (see the module docstring)."""
    table: dict[str, Any] = copy.deepcopy(base_behaviour(routing))
    for name, match in MATCH.items():
        table[name]["match"] = match
    table["handoff_tools"] = HANDOFF_TOOLS
    return table
