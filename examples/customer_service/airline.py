"""The airline customer-service workflow without any framework: names, prompts, tools, simulated behaviour.

The OpenAI Agents SDK version (``_workflow.py``, ``v1``/``v2``) and the versions in other frameworks
(examples/frameworks/) build their agents from these, so every version has the same tools, prompts and
offline behaviour, and one suite's scenarios and checks apply to each (only ``agent:`` differs).
"""

from __future__ import annotations

import re

TRIAGE_AGENT = "Triage Agent"
FAQ_AGENT = "FAQ Agent"
SEAT_AGENT = "Seat Booking Agent"

# First matching topic wins, so the more specific words come first.
FAQ_ANSWERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("bag", "luggage", "carry-on", "carry on", "suitcase"),
        "You are allowed to bring one bag on the plane. It must be under 50 pounds and "
        "22 inches x 14 inches x 9 inches.",
    ),
    (
        ("wifi", "wi-fi", "internet"),
        "We have free wifi on the plane; join the Airline-Wifi network.",
    ),
    (
        ("seat", "plane"),
        "There are 120 seats on the plane. There are 22 business class seats and 98 economy seats. "
        "Exit rows are rows 4 and 16. Rows 5-8 are Economy Plus, with extra legroom.",
    ),
    (
        ("food", "meal", "drink", "snack"),
        "We serve complimentary snacks and soft drinks; hot meals can be bought on flights over three hours.",
    ),
)
UNKNOWN_ANSWER = "I'm sorry, I don't know the answer to that question."

_SEAT = re.compile(r"\d{1,2}[A-F]")
_CONFIRMATION = re.compile(r"[A-Z0-9]{6}")


FAQ_DESCRIPTION = "A helpful agent that can answer questions about the airline."
FAQ_INSTRUCTIONS = (
    "You are an FAQ agent. If you are speaking to a customer, you probably were transferred "
    "to from the triage agent.\n"
    "Use the following routine to support the customer.\n"
    "# Routine\n"
    "1. Identify the last question asked by the customer.\n"
    "2. Use the faq lookup tool to answer the question. Do not rely on your own knowledge.\n"
    "3. If you cannot answer the question, transfer back to the triage agent."
)
SEAT_DESCRIPTION = "A helpful agent that can update a seat on a flight."
SEAT_INSTRUCTIONS = (
    "You are a seat booking agent. If you are speaking to a customer, you probably were "
    "transferred to from the triage agent.\n"
    "Use the following routine to support the customer.\n"
    "# Routine\n"
    "1. Ask for their confirmation number unless they gave it.\n"
    "2. Ask the customer what their desired seat number is unless they gave it.\n"
    "3. Use the update seat tool to update the seat on the flight.\n"
    "If the customer asks a question that is not related to the routine, transfer back to "
    "the triage agent."
)
TRIAGE_DESCRIPTION = "A triage agent that can delegate a customer's request to the appropriate agent."
# The two versions' triage prompts: v2 asks to answer general questions first (the regression).
TRIAGE_INSTRUCTIONS_V1 = (
    "You are a helpful triaging agent. You can use your tools to delegate questions to other "
    "appropriate agents."
)
TRIAGE_INSTRUCTIONS_V2 = (
    "You are a helpful triaging agent. Answer general questions first: whenever a request mentions "
    "seats, baggage, wifi or food, let the FAQ agent look it up before anything else. You can use "
    "your tools to delegate questions to other appropriate agents."
)
# How each version's triage routes a seat-change request (the simulated behaviour's one difference).
ROUTING_V1 = {f"handoff:{SEAT_AGENT}": 0.985, f"handoff:{FAQ_AGENT}": 0.01, "respond": 0.005}
ROUTING_V2 = {f"handoff:{SEAT_AGENT}": 0.62, f"handoff:{FAQ_AGENT}": 0.37, "respond": 0.01}


def faq_lookup_tool(question: str) -> str:
    """Look up frequently asked questions about baggage, wifi, seats and food on board.

    Args:
        question: The customer's question.
    """
    text = question.lower()
    for keywords, answer in FAQ_ANSWERS:
        if any(k in text for k in keywords):
            return answer
    return UNKNOWN_ANSWER


def update_seat(confirmation_number: str, new_seat: str) -> str:
    """Move the passenger with this booking to a new seat.

    Args:
        confirmation_number: The six-character booking confirmation number, e.g. ABC123.
        new_seat: The new seat: a row number and a letter A-F, e.g. 14C.
    """
    seat = new_seat.strip().upper()
    if not _SEAT.fullmatch(seat):
        raise ValueError(f"invalid seat {new_seat!r}: expected a row 1-99 and a letter A-F, like 14C")
    confirmation = confirmation_number.strip().upper()
    if not _CONFIRMATION.fullmatch(confirmation):
        raise ValueError(f"invalid confirmation number {confirmation_number!r}: expected six letters/digits")
    return f"Updated seat to {seat} for confirmation number {confirmation}."


# The simulated behaviour common to both versions (docs/adapters.md, "Offline behaviour").
# Regexes run against the latest user message.
SEAT_CHANGE = r"(?i)\b(change|switch|move|update)\b.*\bseat|\bseat\b.*\b(change|switch|move)\b"
FAQ_TOPICS = r"(?i)bag|luggage|carry.?on|wi-?fi|internet|seat|plane|food|meal|drink|snack"
SOMETHING_ELSE = r"(?i)\bsomething else\b"
OUT_OF_SCOPE = "I can only help with questions about your flight and with seat changes."


def base_behaviour(seat_change_routing: dict[str, float]) -> dict[str, object]:
    """The per-agent behaviour; ``seat_change_routing`` is how triage routes seat-change requests."""
    return {
        TRIAGE_AGENT: {
            "rules": [
                # Handed back by a specialist: wrap up with whatever it found.
                {"after": "handoff", "choose": "respond", "respond": "Thanks for waiting. {tool_output}"},
                {"input": SEAT_CHANGE, "choose": seat_change_routing},
                {
                    "input": FAQ_TOPICS,
                    "choose": {
                        f"handoff:{FAQ_AGENT}": 0.985,
                        f"handoff:{SEAT_AGENT}": 0.005,
                        "respond": 0.01,
                    },
                },
                {"choose": {"respond": 0.97, f"handoff:{FAQ_AGENT}": 0.03}},
            ],
            "respond": OUT_OF_SCOPE,
        },
        FAQ_AGENT: {
            "rules": [
                {
                    "choose": {
                        "tool:faq_lookup_tool": 0.985,
                        f"handoff:{TRIAGE_AGENT}": 0.01,
                        "respond": 0.005,
                    },
                    "respond": "Let me check on that and get back to you.",
                },
                {
                    # "…and something else": after answering, hand back to triage for the rest.
                    "after": "tool",
                    "input": SOMETHING_ELSE,
                    "choose": {f"handoff:{TRIAGE_AGENT}": 0.95, "respond": 0.05},
                    "respond": "{tool_output}",
                },
                {
                    "after": "tool",
                    "choose": {"respond": 0.97, f"handoff:{TRIAGE_AGENT}": 0.03},
                    "respond": "{tool_output}",
                },
            ],
        },
        SEAT_AGENT: {
            "rules": [
                {
                    "input": SEAT_CHANGE,
                    "choose": {"tool:update_seat": 0.985, "respond": 0.01, f"handoff:{TRIAGE_AGENT}": 0.005},
                    "respond": "Could you confirm your confirmation number and the seat you would like?",
                },
                {"choose": {f"handoff:{TRIAGE_AGENT}": 0.9, "respond": 0.1}},
                {
                    "after": "tool",
                    "input": SOMETHING_ELSE,
                    "choose": {f"handoff:{TRIAGE_AGENT}": 0.95, "respond": 0.05},
                    "respond": "{tool_output}",
                },
                {
                    "after": "tool",
                    "choose": {"respond": 0.98, f"handoff:{TRIAGE_AGENT}": 0.02},
                    "respond": ["{tool_output}", "Done! {tool_output} Have a nice flight."],
                },
            ],
            "respond": "I can only change seats; let me get someone who can help.",
            "arguments": {
                "update_seat": {
                    "new_seat": {"regex": r"\b(\d{1,2}[A-Fa-f])\b"},
                    "confirmation_number": {"regex": r"\b([A-Z0-9]{6})\b"},
                },
            },
        },
    }


def mini_behaviour() -> dict[str, object]:
    """A smaller, weaker model for model mutants (``agentassay mutate``): it misroutes seat changes and skips the
    FAQ lookup more often. A second behaviour table is how the offline simulator stands in for a second model."""
    behaviour = base_behaviour(
        {f"handoff:{SEAT_AGENT}": 0.8, f"handoff:{FAQ_AGENT}": 0.15, "respond": 0.05}
    )
    faq = behaviour[FAQ_AGENT]
    assert isinstance(faq, dict)
    faq["rules"][0]["choose"] = {"tool:faq_lookup_tool": 0.8, "respond": 0.15, f"handoff:{TRIAGE_AGENT}": 0.05}
    return behaviour


OFFLINE_BEHAVIOUR_MINI = mini_behaviour()
