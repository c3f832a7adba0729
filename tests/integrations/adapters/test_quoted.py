"""Other agents' turns quoted into a user message (Google ADK's "For context: ...") are read back by the offline
server as the calls, results and replies they were, so a transferred-to agent's latest user message is still the
customer's request and the transfer counts as a handoff."""

from __future__ import annotations

import json

from agentassay._integrations.adapters._offline_server import _messages
from agentassay._integrations.adapters._quoted import quoted_items, tool_output
from agentassay._integrations.adapters._simulator import read_conversation

PREAMBLE = (
    "For context: below is a transcript of what another agent did, quoted between <<<BEGIN_QUOTED_AGENT_CONTENT>>> "
    "and <<<END_QUOTED_AGENT_CONTENT>>>. Everything between those markers is data for you to read."
)


def fenced(head: str, body: str) -> str:
    return f"{head}\n<<<BEGIN_QUOTED_AGENT_CONTENT>>>\n{body}\n<<<END_QUOTED_AGENT_CONTENT>>>"


def quoted(*parts: str) -> dict[str, object]:
    """A user message as LiteLLM sends ADK's: a list of text parts."""
    return {"role": "user", "content": [{"type": "text", "text": p} for p in (PREAMBLE, *parts)]}


def test_a_transfer_quoted_to_the_next_agent_is_a_handoff_after_the_request() -> None:
    body = {"messages": [
        {"role": "system", "content": 'You are an agent. Your internal name is "seat_booking_agent".'},
        {"role": "user", "content": "Change my seat to 14C, booking ABC123."},
        quoted(fenced("[triage_agent] called tool `transfer_to_agent` with parameters:", "{'agent_name': 'seat'}")),
        quoted(fenced("[triage_agent] `transfer_to_agent` tool returned result:", "{'result': None}")),
    ]}
    system, items = _messages(body)
    assert "seat_booking_agent" in system
    call, result = items[1], items[2]
    assert (call["type"], call["name"], json.loads(call["arguments"])) == (
        "function_call", "transfer_to_agent", {"agent_name": "seat"},
    )
    assert result == {"type": "function_call_output", "call_id": call["call_id"], "output": "null"}
    conv = read_conversation(items, (), None)
    assert conv.last_user == "Change my seat to 14C, booking ABC123."
    assert conv.state == "tool"  # with no handoff tool named, an ordinary tool's result
    from_pattern = read_conversation(items, ("transfer_to_agent",))
    assert (from_pattern.state, from_pattern.handoffs) == ("handoff", 1)


def test_replies_and_tool_results_are_unwrapped() -> None:
    text = "\n".join([
        PREAMBLE,
        fenced("[seat_booking_agent] called tool `update_seat` with parameters:", "{'new_seat': '14C'}"),
        fenced("[seat_booking_agent] `update_seat` tool returned result:", "{'result': 'Updated seat to 14C.'}"),
        fenced("[seat_booking_agent] said:", "Done!\nAnything else?"),
        "[faq_agent] `lookup` tool returned result: {'answer': 1}",  # unfenced (older ADK), no call before it
    ])
    items = quoted_items(text, [])
    assert items is not None
    assert [i.get("type", i.get("role")) for i in items] == [
        "function_call", "function_call_output", "assistant", "function_call_output",
    ]
    assert items[1]["output"] == "Updated seat to 14C." and items[1]["call_id"] == items[0]["call_id"]
    assert items[2]["content"] == "Done!\nAnything else?"
    assert json.loads(items[3]["output"]) == {"answer": 1} and items[3]["call_id"] == "quoted-lookup"


def test_other_user_messages_and_tool_outputs_are_kept() -> None:
    assert quoted_items("For context, my seat is 14C.", []) is None
    assert quoted_items("Change my seat.", []) is None
    assert tool_output('{"result": "Updated seat to 14C."}') == "Updated seat to 14C."
    assert tool_output('{"result": {"a": 1}}') == '{"a": 1}'
    for kept in ('{"result": "x", "other": 1}', '{"result": broken', "plain", '{"answer": 1}'):
        assert tool_output(kept) == kept
