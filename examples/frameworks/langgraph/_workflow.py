"""The LangGraph version of the airline workflow: triage hands off to FAQ or seat booking, both hand back.

The chat model is langchain-openai's ``ChatOpenAI``: its base URL and key come from the environment
(``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``), so the same graph runs against OpenAI, any compatible server or
AgentAssay's offline simulator (``model: {provider: offline}``) without a change here.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain.tools import InjectedState
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

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


def snake(name: str) -> str:
    """``"Seat Booking Agent"`` -> ``seat_booking_agent`` (tool and message names allow no spaces)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def transfer_tool(agent: str, description: str) -> BaseTool:
    """``transfer_to_<agent>``: the model's way to hand the conversation to another agent of the graph."""
    name = f"transfer_to_{snake(agent)}"

    @tool(name, description=f"Transfer the conversation to the {agent}. {description}")
    def transfer(
        state: Annotated[dict[str, Any], InjectedState], tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> Command:
        done = ToolMessage(f"Transferred to {agent}.", tool_call_id=tool_call_id, name=name)
        return Command(goto=agent, graph=Command.PARENT, update={"messages": [*state["messages"], done]})

    return transfer


def build_graph(triage_instructions: str, model: BaseChatModel | None = None) -> CompiledStateGraph:
    """One version's graph; ``model`` replaces the OpenAI-compatible chat model (a fake one, in tests)."""
    llm = model if model is not None else ChatOpenAI(model=MODEL, temperature=0)
    faq_tool = tool(faq_lookup_tool, parse_docstring=True)
    seat_tool = tool(update_seat, parse_docstring=True)
    back = transfer_tool(TRIAGE_AGENT, TRIAGE_DESCRIPTION)
    agents = {
        TRIAGE_AGENT: create_agent(
            llm,
            [transfer_tool(FAQ_AGENT, FAQ_DESCRIPTION), transfer_tool(SEAT_AGENT, SEAT_DESCRIPTION)],
            system_prompt=triage_instructions,
            name=snake(TRIAGE_AGENT),
        ),
        FAQ_AGENT: create_agent(llm, [faq_tool, back], system_prompt=FAQ_INSTRUCTIONS, name=snake(FAQ_AGENT)),
        SEAT_AGENT: create_agent(llm, [seat_tool, back], system_prompt=SEAT_INSTRUCTIONS, name=snake(SEAT_AGENT)),
    }
    graph = StateGraph(MessagesState)
    graph.add_node(TRIAGE_AGENT, agents[TRIAGE_AGENT], destinations=(FAQ_AGENT, SEAT_AGENT))
    graph.add_node(FAQ_AGENT, agents[FAQ_AGENT], destinations=(TRIAGE_AGENT,))
    graph.add_node(SEAT_AGENT, agents[SEAT_AGENT], destinations=(TRIAGE_AGENT,))
    graph.add_edge(START, TRIAGE_AGENT)
    return graph.compile(name="airline")
