"""The offline behaviour of the Strands version: the SDK version's table, adapted to how a swarm talks.

* recognising a request: requests carry no agent name, so triage is recognised by its prompt and each
  specialist by the tool only it is offered;
* a handoff is the swarm's one ``handoff_to_agent`` tool; the simulator fills its ``agent_name`` with the
  chosen target (and its ``message`` with the user's request);
* a swarm member's user message is the swarm's context ("Handoff Message: ...", "User Request: <input>",
  the other agents with their descriptions, ...), so the rules' and arguments' regexes are held to the
  ``User Request:`` line (else "Seat Booking Agent" in the list of agents would read as a seat question);
* after its own ``handoff_to_agent`` call an agent's loop asks the model once more: it ends its turn;
* a member handed the task back starts a fresh conversation whose context opens with "Handoff Message:";
  triage then wraps up (the SDK version's ``after: handoff`` rule: in a swarm, no agent sees the result of
  another's handoff).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from examples.customer_service.airline import FAQ_AGENT, SEAT_AGENT, TRIAGE_AGENT, base_behaviour

MATCH = {
    TRIAGE_AGENT: {"system": r"(?i)\btriaging agent"},  # both versions' prompts; the others say "triage agent"
    FAQ_AGENT: {"tools": ["faq_lookup_tool"]},
    SEAT_AGENT: {"tools": ["update_seat"]},
}
REQUEST = r"(?m)^User Request: ([^\n]*)"
#: After its own handoff call the agent's loop asks the model once more: it ends its turn.
HANDED_OFF = {"after": "handoff", "choose": "respond", "respond": "I have handed this over to a colleague."}
HANDED_BACK = {
    "input": r"(?m)^Handoff Message:",
    "choose": "respond",
    "respond": "Thanks for waiting. Is there anything else I can help you with on your flight?",
}


def on_request_line(pattern: str) -> str:
    """A regex searched in the latest user message, held to its ``User Request:`` line (groups kept)."""
    found = re.match(r"\(\?([a-zA-Z]+)\)", pattern)
    flags, body = (found.group(1), pattern[found.end():]) if found else ("", pattern)
    return f"(?m{flags})^User Request: [^\\n]*?(?:{body})"


def behaviour(routing: dict[str, float]) -> dict[str, Any]:
    """``base_behaviour(routing)`` for a Strands swarm (see the module docstring)."""
    table = copy.deepcopy(base_behaviour(routing))
    for name, match in MATCH.items():
        agent = table[name]
        agent["match"] = match
        for rule in agent["rules"]:
            if "input" in rule:
                rule["input"] = on_request_line(rule["input"])
        arguments = agent.setdefault("arguments", {})
        for params in arguments.values():
            for spec in params.values():
                if isinstance(spec, dict) and "regex" in spec:
                    spec["regex"] = on_request_line(spec["regex"])
        arguments["handoff_to_agent"] = {"message": {"regex": REQUEST}}
        agent["rules"][:] = [HANDED_OFF, *(r for r in agent["rules"] if r.get("after") != "handoff")]
    table[FAQ_AGENT]["arguments"]["faq_lookup_tool"] = {"question": {"regex": REQUEST}}
    table[TRIAGE_AGENT]["rules"].insert(1, HANDED_BACK)
    return table
