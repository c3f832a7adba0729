"""The smolagents agents of the airline workflow, built from examples/customer_service/airline.py.

``OpenAIServerModel`` is given no ``api_base``/``api_key``: its OpenAI client reads ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` from the environment (with ``model: {provider: offline}`` AgentAssay points them at the
simulator before this module is imported). ``ToolCallingAgent`` rather than ``CodeAgent``: its actions are
JSON function calls, which any OpenAI-compatible model (and the offline simulator) makes.
"""

from __future__ import annotations

from smolagents import OpenAIServerModel, ToolCallingAgent, tool

from examples.customer_service.airline import (
    FAQ_DESCRIPTION,
    FAQ_INSTRUCTIONS,
    SEAT_DESCRIPTION,
    SEAT_INSTRUCTIONS,
    faq_lookup_tool,
    update_seat,
)

TRIAGE = "triage_agent"
FAQ = "faq_agent"
SEAT = "seat_booking_agent"
MODEL = "gpt-4.1-mini"
MAX_STEPS = 6  # a specialist needs 2 (its tool, final_answer), triage 2 (delegate, final_answer)


def build_triage_agent(triage_instructions: str) -> ToolCallingAgent:
    """Fresh agents for one version; one model object (one client) serves all three."""
    model = OpenAIServerModel(model_id=MODEL)
    faq_agent = ToolCallingAgent(
        tools=[tool(faq_lookup_tool)],
        model=model,
        name=FAQ,
        description=FAQ_DESCRIPTION,
        instructions=FAQ_INSTRUCTIONS,
        max_steps=MAX_STEPS,
        verbosity_level=0,
    )
    seat_agent = ToolCallingAgent(
        tools=[tool(update_seat)],
        model=model,
        name=SEAT,
        description=SEAT_DESCRIPTION,
        instructions=SEAT_INSTRUCTIONS,
        max_steps=MAX_STEPS,
        verbosity_level=0,
    )
    return ToolCallingAgent(
        tools=[],
        model=model,
        managed_agents=[faq_agent, seat_agent],
        name=TRIAGE,
        instructions=triage_instructions,
        max_steps=MAX_STEPS,
        verbosity_level=0,
    )
