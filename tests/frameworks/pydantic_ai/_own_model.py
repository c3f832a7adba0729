"""A user's callable that runs PydanticAI inside: it builds the airline agents around its own seeded fake model.

This is what a team does when its entry point is a function rather than an ``Agent`` (``agent: {entry: ...,
framework: pydantic_ai}``): AgentAssay cannot see the model, only the spans PydanticAI reports.
"""

from __future__ import annotations

import random
import re

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from examples.customer_service.airline import FAQ_TOPICS, OUT_OF_SCOPE, SEAT_CHANGE, TRIAGE_INSTRUCTIONS_V1
from examples.frameworks.pydantic_ai._workflow import build_triage_agent

SEED = 20261127
MODEL_NAME = "seeded-fake"


def _user(messages: list[ModelMessage]) -> str:
    for message in messages:
        for part in getattr(message, "parts", ()):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return ""


def decide(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The fake model: route by the tools offered, answer with the last tool result; draws seeded by the chat."""
    user = _user(messages)
    rng = random.Random(f"{SEED}:{len(messages)}:{user}")
    last = messages[-1]
    returned = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
    if returned:
        text = str(returned[-1].content)
        return ModelResponse(parts=[TextPart(text if rng.random() < 0.5 else f"{text} Anything else?")])
    tools = {t.name for t in info.function_tools}
    if "transfer_to_seat_booking_agent" in tools:
        if re.search(SEAT_CHANGE, user):
            return ModelResponse(parts=[ToolCallPart("transfer_to_seat_booking_agent", {"request": user})])
        if re.search(FAQ_TOPICS, user):
            return ModelResponse(parts=[ToolCallPart("transfer_to_faq_agent", {"request": user})])
        return ModelResponse(parts=[TextPart(OUT_OF_SCOPE)])
    if "update_seat" in tools:
        seat = re.search(r"\b(\d{1,2}[A-F])\b", user)
        confirmation = re.search(r"\b([A-Z0-9]{6})\b", user)
        args = {"confirmation_number": confirmation.group(1) if confirmation else "ABC123",
                "new_seat": seat.group(1) if seat else "1A"}
        return ModelResponse(parts=[ToolCallPart("update_seat", args)])
    if "faq_lookup_tool" in tools:
        return ModelResponse(parts=[ToolCallPart("faq_lookup_tool", {"question": user})])
    return ModelResponse(parts=[TextPart(OUT_OF_SCOPE)])


async def answer(question: str) -> str:
    """The user's entry point: fresh agents on the seeded fake model, one run."""
    agent = build_triage_agent(TRIAGE_INSTRUCTIONS_V1, model=FunctionModel(decide, model_name=MODEL_NAME))
    return (await agent.run(question)).output
