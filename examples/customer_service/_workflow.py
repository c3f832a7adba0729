"""Tools and agents of the customer-service workflow, shared by ``v1`` and ``v2``.

The shape follows ``examples/customer_service/main.py`` of the OpenAI Agents SDK (the running
example of the structural-coverage paper): a triage agent hands off to an FAQ agent, which may call
``faq_lookup_tool``, and to a seat-booking agent, which may call ``update_seat``; both hand back to
triage. The tools are real ``@function_tool``s; only the model is simulated when run offline.
"""

from __future__ import annotations

from agents import Agent, function_tool
from agents.extensions.handoff_prompt import RECOMMENDED_PROMPT_PREFIX

from .airline import (  # noqa: F401  (re-exported: the suites and older imports name them here)
    FAQ_AGENT,
    FAQ_DESCRIPTION,
    FAQ_INSTRUCTIONS,
    OFFLINE_BEHAVIOUR_MINI,
    SEAT_AGENT,
    SEAT_DESCRIPTION,
    SEAT_INSTRUCTIONS,
    TRIAGE_AGENT,
    TRIAGE_DESCRIPTION,
    base_behaviour,
    faq_lookup_tool,
    mini_behaviour,
    update_seat,
)


def build_triage_agent(triage_instructions: str) -> Agent:
    """Fresh agents for one version: the leaves hand back to *this* version's triage agent."""
    faq_agent = Agent(
        name=FAQ_AGENT,
        handoff_description=FAQ_DESCRIPTION,
        instructions=f"{RECOMMENDED_PROMPT_PREFIX}\n{FAQ_INSTRUCTIONS}",
        tools=[function_tool(faq_lookup_tool)],
    )
    seat_booking_agent = Agent(
        name=SEAT_AGENT,
        handoff_description=SEAT_DESCRIPTION,
        instructions=f"{RECOMMENDED_PROMPT_PREFIX}\n{SEAT_INSTRUCTIONS}",
        tools=[function_tool(update_seat)],
    )
    triage_agent = Agent(
        name=TRIAGE_AGENT,
        handoff_description=TRIAGE_DESCRIPTION,
        instructions=f"{RECOMMENDED_PROMPT_PREFIX}\n{triage_instructions}",
        handoffs=[faq_agent, seat_booking_agent],
    )
    faq_agent.handoffs.append(triage_agent)
    seat_booking_agent.handoffs.append(triage_agent)
    return triage_agent
