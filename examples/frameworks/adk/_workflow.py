"""The ADK agents of the airline workflow, built from examples/customer_service/airline.py.

``LiteLlm(model="openai/gpt-4.1-mini")`` is given no ``api_base``/``api_key``: LiteLLM's OpenAI route reads
``OPENAI_BASE_URL`` / ``OPENAI_API_BASE`` and ``OPENAI_API_KEY`` from the environment (with
``model: {provider: offline}`` AgentAssay points them at the simulator before this module is imported).
"""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.lite_llm import LiteLlm

from examples.customer_service.airline import (
    FAQ_DESCRIPTION,
    FAQ_INSTRUCTIONS,
    SEAT_DESCRIPTION,
    SEAT_INSTRUCTIONS,
    TRIAGE_DESCRIPTION,
    faq_lookup_tool,
    update_seat,
)

TRIAGE = "triage_agent"
FAQ = "faq_agent"
SEAT = "seat_booking_agent"
MODEL = "openai/gpt-4.1-mini"  # LiteLLM's provider/model: the OpenAI-compatible route


def build_triage_agent(triage_instructions: str, model: BaseLlm | None = None) -> LlmAgent:
    """One version's agent tree; ``model`` replaces the LiteLLM model (a scripted one, in tests)."""
    llm = model if model is not None else LiteLlm(model=MODEL)
    faq = LlmAgent(
        name=FAQ, model=llm, description=FAQ_DESCRIPTION, instruction=FAQ_INSTRUCTIONS, tools=[faq_lookup_tool]
    )
    seat = LlmAgent(
        name=SEAT, model=llm, description=SEAT_DESCRIPTION, instruction=SEAT_INSTRUCTIONS, tools=[update_seat]
    )
    return LlmAgent(
        name=TRIAGE, model=llm, description=TRIAGE_DESCRIPTION, instruction=triage_instructions, sub_agents=[faq, seat]
    )
