"""The Agno version of the airline workflow: a team whose leader (triage) delegates to the FAQ or seat agent.

Agno's multi-agent unit is a ``Team``: its leader has a model and instructions of its own and delegates with the
``delegate_task_to_member(member_id, task)`` tool (a member's id is its name made URL-safe: ``seat-booking-agent``).
With ``respond_directly`` the member's answer is the team's answer, as after the SDK version's handoff (the
leader does not rewrite it); a member that cannot help answers so, which hands the customer back to triage.

The model is Agno's ``OpenAIChat`` without ``base_url`` or ``api_key``: its OpenAI client reads
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` from the environment, so the same team runs against OpenAI, any
compatible server or AgentAssay's offline simulator (``model: {provider: offline}``) unchanged.
"""

from __future__ import annotations

from agno.agent import Agent
from agno.models.base import Model
from agno.models.openai import OpenAIChat
from agno.team import Team

from examples.customer_service.airline import (
    FAQ_AGENT,
    FAQ_DESCRIPTION,
    FAQ_INSTRUCTIONS,
    SEAT_AGENT,
    SEAT_DESCRIPTION,
    SEAT_INSTRUCTIONS,
    TRIAGE_AGENT,
    TRIAGE_DESCRIPTION,
    faq_lookup_tool,
    update_seat,
)

MODEL = "gpt-4.1-mini"


def build_team(triage_instructions: str, model: Model | None = None, *, respond_directly: bool = True) -> Team:
    """One version's team; ``model`` replaces the OpenAI-compatible model (a scripted one, in tests);
    ``respond_directly=False`` makes the leader answer after its member (Agno's default coordinate mode)."""

    def llm() -> Model:
        return model if model is not None else OpenAIChat(id=MODEL)

    faq = Agent(
        name=FAQ_AGENT, role=FAQ_DESCRIPTION, instructions=FAQ_INSTRUCTIONS, model=llm(), tools=[faq_lookup_tool]
    )
    seat = Agent(
        name=SEAT_AGENT, role=SEAT_DESCRIPTION, instructions=SEAT_INSTRUCTIONS, model=llm(), tools=[update_seat]
    )
    return Team(
        name=TRIAGE_AGENT,
        description=TRIAGE_DESCRIPTION,
        instructions=triage_instructions,
        members=[faq, seat],
        model=llm(),
        respond_directly=respond_directly,
    )
