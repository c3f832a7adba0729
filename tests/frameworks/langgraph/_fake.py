"""A seeded fake chat model of LangChain's own kind that plays the airline agents (no server, no network).

It recognises the agent by the tools bound to it (as the offline server does by the tools offered), answers
with tool calls and text, and reports token usage, so a graph built on it yields full traces.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from examples.customer_service.airline import FAQ_TOPICS, OUT_OF_SCOPE, SEAT_CHANGE


class AirlineFakeModel(BaseChatModel):
    """Triage routes by the request's words, FAQ looks it up, seat booking updates the seat; seeded call ids."""

    seed: int = 0
    tool_names: tuple[str, ...] = ()

    @property
    def _llm_type(self) -> str:
        return "airline-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> AirlineFakeModel:  # type: ignore[override]
        names = tuple(getattr(t, "name", None) or t.get("name") or t["function"]["name"] for t in tools)
        return self.model_copy(update={"tool_names": names})

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> ChatResult:
        question = next((str(m.content) for m in messages if isinstance(m, HumanMessage)), "")
        rng = random.Random(f"{self.seed}:{question}:{len(messages)}")
        last = messages[-1]
        handed = isinstance(last, ToolMessage) and str(last.name or "").startswith("transfer_to_")
        if isinstance(last, ToolMessage) and not handed:
            reply = AIMessage(content=str(last.content))
        else:
            reply = self._act(question, rng)
        reply.usage_metadata = {"input_tokens": 10 * len(messages), "output_tokens": 5, "total_tokens": 10 * len(messages) + 5}
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _act(self, question: str, rng: random.Random) -> AIMessage:
        def call(name: str, args: dict[str, Any]) -> AIMessage:
            return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{rng.getrandbits(48):012x}"}])

        if "update_seat" in self.tool_names:
            seat = re.search(r"\b(\d{1,2}[A-F])\b", question)
            confirmation = re.search(r"\b([A-Z0-9]{6})\b", question)
            return call("update_seat", {
                "confirmation_number": confirmation.group(1) if confirmation else "",
                "new_seat": seat.group(1) if seat else "",
            })
        if "faq_lookup_tool" in self.tool_names:
            return call("faq_lookup_tool", {"question": question})
        if re.search(SEAT_CHANGE, question) and "transfer_to_seat_booking_agent" in self.tool_names:
            return call("transfer_to_seat_booking_agent", {})
        if re.search(FAQ_TOPICS, question) and "transfer_to_faq_agent" in self.tool_names:
            return call("transfer_to_faq_agent", {})
        return AIMessage(content=OUT_OF_SCOPE)
