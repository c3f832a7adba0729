"""The Strands version of the airline workflow: triage hands off to FAQ or seat booking, both may hand back.

The model is Strands' ``OpenAIModel`` without ``client_args``: each request's OpenAI client reads the base URL
and key from the environment (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``), so the same swarm runs against
OpenAI, any compatible server or AgentAssay's offline simulator (``model: {provider: offline}``) unchanged.
"""

from __future__ import annotations

from strands import Agent, tool
from strands.models import Model
from strands.models.openai import OpenAIModel
from strands.multiagent import Swarm

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
#: Node executions per run: triage, a specialist, a hand-back and one more route at most.
MAX_HANDOFFS = 6


def build_swarm(triage_instructions: str, model: Model | None = None) -> Swarm:
    """One version's swarm; ``model`` replaces the OpenAI-compatible model (a scripted one, in tests)."""
    llm = model if model is not None else OpenAIModel(model_id=MODEL)

    def agent(name: str, description: str, prompt: str, tools: list[object]) -> Agent:
        # callback_handler=None: Strands would otherwise print the streamed text to stdout.
        return Agent(
            name=name, description=description, system_prompt=prompt, model=llm, tools=tools, callback_handler=None
        )

    triage = agent(TRIAGE_AGENT, TRIAGE_DESCRIPTION, triage_instructions, [])
    faq = agent(FAQ_AGENT, FAQ_DESCRIPTION, FAQ_INSTRUCTIONS, [tool(faq_lookup_tool)])
    seat = agent(SEAT_AGENT, SEAT_DESCRIPTION, SEAT_INSTRUCTIONS, [tool(update_seat)])
    return Swarm([triage, faq, seat], entry_point=triage, max_handoffs=MAX_HANDOFFS, max_iterations=MAX_HANDOFFS)
