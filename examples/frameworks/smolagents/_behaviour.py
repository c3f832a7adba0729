"""The offline behaviour of the smolagents version: the SDK version's table, read the way smolagents talks.

What a ``ToolCallingAgent`` sends differs from the SDK in three ways, and the table is rewritten for each:

* every step must be a tool call (``tool_choice: required``) and a run ends only with the ``final_answer``
  tool: each ``respond`` becomes ``tool:final_answer`` with ``answer`` filled as the SDK version's reply would
  be (the tool result just observed, else the agent's canned reply);
* a managed agent is a tool named after it, and returning to the manager *is* its final answer: a handoff
  to a specialist becomes ``handoff:<its tool>`` (the simulator resolves it to the offered tool by name), a
  specialist's handoff back to triage becomes ``final_answer``;
* the history is replayed as text: a tool result comes back as a *user* message ``Observation:\\n<result>``,
  so "after a tool result / after a handoff" is recognised by that message, not by a tool message.

Requests carry no agent name: each agent is recognised by the tools only it is offered.
"""

from __future__ import annotations

from typing import Any

from examples.customer_service.airline import (
    FAQ_AGENT,
    OUT_OF_SCOPE,
    SEAT_AGENT,
    TRIAGE_AGENT,
    base_behaviour,
)

from ._workflow import FAQ, SEAT, TRIAGE

#: The SDK agent name -> the smolagents agent name (the managed agents' tool names).
NAMES = {TRIAGE_AGENT: TRIAGE, FAQ_AGENT: FAQ, SEAT_AGENT: SEAT}
MATCH = {
    TRIAGE_AGENT: {"tools": [FAQ, SEAT]},
    FAQ_AGENT: {"tools": ["faq_lookup_tool"]},
    SEAT_AGENT: {"tools": ["update_seat"]},
}
#: The latest user message is a tool's result (smolagents replays results as ``Observation:`` text).
OBSERVATION = r"^Observation:"
#: The observed result, without a managed agent's report header.
RESULT = r"(?s)^Observation:\s*(?:Here is the final answer from your managed agent '\w+':\s*)?(.*)"
#: The user's request: the manager's task text, or the part of a specialist's task its manager wrote.
TASK = r"(?s)^New task:\s*(.*)"
DELEGATED = r"(?s)\nTask:\n(.*?)\n---\n"
#: What each agent answers when it has observed nothing (the SDK version's canned replies).
REPLY = {
    TRIAGE_AGENT: OUT_OF_SCOPE,
    FAQ_AGENT: "Let me check on that and get back to you.",
    SEAT_AGENT: "I can only change seats; let me get someone who can help.",
}


def _choices(agent: str, choose: Any) -> dict[str, float]:
    """One rule's choices in smolagents terms (weights of choices that become the same are added)."""
    table = {choose: 1.0} if isinstance(choose, str) else dict(choose)
    out: dict[str, float] = {}
    for choice, weight in table.items():
        target = choice.partition(":")[2]
        if choice == "respond" or (choice.startswith("handoff:") and target == TRIAGE_AGENT):
            key = "tool:final_answer"  # a specialist returns to its manager by answering
        elif choice.startswith("handoff:"):
            key = f"handoff:{NAMES[target]}"
        else:
            key = choice
        out[key] = out.get(key, 0.0) + float(weight)
    return out


def behaviour(routing: dict[str, float]) -> dict[str, object]:
    """``base_behaviour(routing)`` rewritten for smolagents (see the module docstring)."""
    table: dict[str, object] = {}
    for agent, body in base_behaviour(routing).items():
        assert isinstance(body, dict)
        after_result, first = [], []
        for rule in body["rules"]:
            if rule.get("after") in ("tool", "handoff"):
                # Its own ``input`` regex would read the observation, not the user's request: dropped.
                after_result.append({"input": OBSERVATION, "choose": _choices(agent, rule["choose"])})
            else:
                first.append({**rule, "choose": _choices(agent, rule["choose"])})
        first = [{k: v for k, v in r.items() if k != "respond"} for r in first]
        arguments: dict[str, Any] = dict(body.get("arguments") or {})
        arguments["final_answer"] = {"answer": {"regex": RESULT, "default": REPLY[agent]}}
        if agent == FAQ_AGENT:
            arguments["faq_lookup_tool"] = {"question": {"regex": DELEGATED}}
        if agent == TRIAGE_AGENT:
            for name in (FAQ, SEAT):
                arguments[name] = {"task": {"regex": TASK}, "additional_args": {"value": None}}
        table[agent] = {"match": MATCH[agent], "rules": after_result + first, "arguments": arguments}
    return table
