"""The AutoGen version of the airline workflow: triage hands off to FAQ or seat booking, both may hand back.

The model client is AutoGen's ``OpenAIChatCompletionClient`` without ``base_url`` or ``api_key``: the OpenAI
client it wraps reads ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, so the same swarm runs against OpenAI, any
compatible server or AgentAssay's offline simulator (``model: {provider: offline}``) unchanged.
"""

from __future__ import annotations

from typing import Annotated

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import Handoff
from autogen_agentchat.conditions import MaxMessageTermination, TextMessageTermination
from autogen_agentchat.teams import Swarm
from autogen_core.models import ChatCompletionClient
from autogen_core.tools import FunctionTool
from autogen_ext.models.openai import OpenAIChatCompletionClient

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
#: Messages per run: a swarm stops at an agent's text answer; this caps a conversation that bounces.
MAX_MESSAGES = 16
#: Model calls per agent turn: a tool call, then the answer (or a hand-back) with its result in view.
TOOL_ITERATIONS = 3


def identifier(name: str) -> str:
    """An airline.py agent name as AutoGen accepts it (a Python identifier): ``Seat Booking Agent`` ->
    ``Seat_Booking_Agent``."""
    return name.replace(" ", "_")


TRIAGE, FAQ, SEAT = identifier(TRIAGE_AGENT), identifier(FAQ_AGENT), identifier(SEAT_AGENT)
#: How a handed-over request opens (the receiving agent's latest user message).
HANDOFF_PREFIX = "Handoff: "


class RequestHandoff(Handoff):
    """A handoff whose ``transfer_to_<agent>`` tool passes the customer's request on.

    AutoGen's own handoff tool takes no arguments and tells the next agent only "Transferred to <agent>";
    this one's result (which becomes the ``HandoffMessage`` the next agent reads last) is the request itself,
    so the next agent works on what the customer asked, as the SDK version's specialists do.
    """

    @property
    def handoff_tool(self) -> FunctionTool:
        def handoff(request: Annotated[str, "The customer's request, in their words."]) -> str:
            return HANDOFF_PREFIX + request

        return FunctionTool(handoff, name=self.name, description=self.description, strict=True)


def build_swarm(triage_instructions: str, model: ChatCompletionClient | None = None) -> Swarm:
    """One version's swarm; ``model`` replaces the OpenAI-compatible client (a scripted one, in tests)."""
    client = model if model is not None else OpenAIChatCompletionClient(model=MODEL)
    triage = AssistantAgent(
        TRIAGE, model_client=client, description=TRIAGE_DESCRIPTION, system_message=triage_instructions,
        handoffs=[RequestHandoff(target=FAQ), RequestHandoff(target=SEAT)],
    )  # fmt: skip
    faq = AssistantAgent(
        FAQ, model_client=client, description=FAQ_DESCRIPTION, system_message=FAQ_INSTRUCTIONS,
        tools=[FunctionTool(faq_lookup_tool, description=faq_lookup_tool.__doc__ or "")], handoffs=[RequestHandoff(target=TRIAGE)],
        max_tool_iterations=TOOL_ITERATIONS,
    )  # fmt: skip
    seat = AssistantAgent(
        SEAT, model_client=client, description=SEAT_DESCRIPTION, system_message=SEAT_INSTRUCTIONS,
        tools=[FunctionTool(update_seat, description=update_seat.__doc__ or "")], handoffs=[RequestHandoff(target=TRIAGE)],
        max_tool_iterations=TOOL_ITERATIONS,
    )  # fmt: skip
    # A swarm never stops by itself: it ends at an agent's first text answer (not the task, a handoff or a
    # tool call).
    stop = (
        TextMessageTermination(TRIAGE) | TextMessageTermination(FAQ) | TextMessageTermination(SEAT)
        | MaxMessageTermination(MAX_MESSAGES)
    )
    return Swarm([triage, faq, seat], termination_condition=stop)
