"""The airline workflow as PydanticAI agents, shared by ``v1`` and ``v2``.

PydanticAI's multi-agent idiom is *agent delegation*: the triage agent has one tool per specialist,
``transfer_to_faq_agent`` / ``transfer_to_seat_booking_agent``, that runs that agent on the request and returns
its answer (sharing the run's usage); a specialist hands the conversation back with the output tool
``transfer_to_triage_agent``, which ends its run. The tools are airline.py's plain functions; the model is
OpenAI-compatible Chat Completions from the environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``): one model
(one HTTP client) for all three agents, built at import when a key is set, else named and resolved by PydanticAI
when an agent runs (so reading the agent graph needs no key).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic_ai import Agent, RunContext, Tool, ToolOutput
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from ...customer_service.airline import (
    FAQ_AGENT,
    FAQ_DESCRIPTION,
    FAQ_INSTRUCTIONS,
    SEAT_AGENT,
    SEAT_DESCRIPTION,
    SEAT_INSTRUCTIONS,
    TRIAGE_AGENT,
    base_behaviour,
    faq_lookup_tool,
    update_seat,
)

MODEL_NAME = "gpt-4.1-mini"
HAND_BACK = "transfer_to_triage_agent"


def transfer_to_triage_agent(reason: str) -> str:
    """Hand the conversation back to the triage agent: the request is not one this agent handles.

    Args:
        reason: What the customer still needs.
    """
    return f"Handed back to the triage agent: {reason}"


def chat_model(name: str = MODEL_NAME) -> Any:
    """A Chat Completions model on the environment's endpoint; its ``openai-chat:`` name when no key is set yet.

    (A name is resolved anew at each run, with a new HTTP client; ``openai:`` would mean the Responses API.)
    """
    if not os.environ.get("OPENAI_API_KEY"):
        return f"openai-chat:{name}"
    return OpenAIChatModel(name, provider=OpenAIProvider())


def _specialist(model: Any, name: str, instructions: str, tool: Any) -> Agent[None, str]:
    return Agent(
        model,
        name=name,
        instructions=instructions,
        tools=[tool],
        output_type=[str, ToolOutput(transfer_to_triage_agent, name=HAND_BACK)],
        defer_model_check=True,
    )


def build_triage_agent(triage_instructions: str, model: Any = None) -> Agent[None, str]:
    """One version's agents; ``model`` is a model name or a PydanticAI ``Model`` (e.g. a seeded FunctionModel),
    by default :func:`chat_model`."""
    model = chat_model() if model is None else model
    faq_agent = _specialist(model, FAQ_AGENT, FAQ_INSTRUCTIONS, faq_lookup_tool)
    seat_agent = _specialist(model, SEAT_AGENT, SEAT_INSTRUCTIONS, update_seat)

    async def transfer_to_faq_agent(ctx: RunContext[None], request: str) -> str:
        """Delegate to the FAQ agent.

        Args:
            request: The customer's request, in their words.
        """
        return (await faq_agent.run(request, usage=ctx.usage)).output

    async def transfer_to_seat_booking_agent(ctx: RunContext[None], request: str) -> str:
        """Delegate to the seat booking agent.

        Args:
            request: The customer's request, in their words.
        """
        return (await seat_agent.run(request, usage=ctx.usage)).output

    return Agent(
        model,
        name=TRIAGE_AGENT,
        instructions=triage_instructions,
        tools=[
            Tool(transfer_to_faq_agent, description=f"Delegate to the {FAQ_AGENT}: {FAQ_DESCRIPTION}"),
            Tool(transfer_to_seat_booking_agent, description=f"Delegate to the {SEAT_AGENT}: {SEAT_DESCRIPTION}"),
        ],
        defer_model_check=True,
    )


def offline_behaviour(routing: dict[str, float]) -> dict[str, Any]:
    """airline.py's behaviour for this workflow's requests, which carry no agent name.

    Each agent is recognised by its tools. A delegation comes back to triage as an ordinary tool result
    (only the hand-back tool passes control), so triage relays the specialist's answer.
    """
    behaviour = base_behaviour(routing)
    behaviour[TRIAGE_AGENT]["match"] = {"tools": ["transfer_to_faq_agent"]}  # type: ignore[index]
    behaviour[TRIAGE_AGENT]["rules"].insert(  # type: ignore[index]
        0, {"after": "tool", "choose": "respond", "respond": "{tool_output}"}
    )
    behaviour[FAQ_AGENT]["match"] = {"tools": ["faq_lookup_tool"]}  # type: ignore[index]
    behaviour[SEAT_AGENT]["match"] = {"tools": ["update_seat"]}  # type: ignore[index]
    behaviour["handoff_tools"] = f"^{HAND_BACK}$"
    return behaviour
