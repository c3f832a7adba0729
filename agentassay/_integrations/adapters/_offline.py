"""The offline simulator as the OpenAI Agents SDK's ``Model`` (no network, no weights).

``OfflineModel`` implements the SDK's ``Model`` interface, so the real ``Runner``, real function
tools, real handoffs and ``Agent.as_tool`` sub-runs execute unchanged; only the model's choices are
simulated, by :func:`._simulator.decide` — the framework-free core that also serves other frameworks
over HTTP (``_offline_server``). The behaviour format and the determinism contract are documented in
``_simulator``'s module docstring. This module is the SDK glue: reading the SDK's tools, handoffs and
input items, and answering with Responses-API items and stream events.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import ModelResponse, TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from agents.model_settings import ModelSettings
from agents.models.interface import Model, ModelTracing
from agents.tool import FunctionTool, Tool
from agents.tracing import generation_span, get_current_span
from agents.tracing.span_data import AgentSpanData, TurnSpanData
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from ._simulator import (
    DEFAULT_MAX_HANDOFFS,
    DEFAULT_RESPONSE,
    MODEL_NAME,
    NO_BEHAVIOUR_TEXT,
    AgentBehaviour,
    Behaviour,
    Conversation,
    HandoffSpec,
    ToolSpec,
    decide,
    load_behaviour,
    read_conversation,
)

__all__ = [
    "DEFAULT_MAX_HANDOFFS",
    "DEFAULT_RESPONSE",
    "MODEL_NAME",
    "NO_BEHAVIOUR_TEXT",
    "AgentBehaviour",
    "Behaviour",
    "OfflineModel",
    "load_behaviour",
]


def _read_conversation(input: str | list[TResponseInputItem], handoff_tools: set[str]) -> Conversation:
    """The SDK's projection: a handoff is a result of one of the agent's handoff tools."""
    return read_conversation(input, handoff_tools)


# -- the model ----------------------------------------------------------------------------------
def _current_agent() -> str | None:
    """The agent the runner is asking: its turn span (or agent span) is current during the call.

    The SDK marks these spans current even when tracing is disabled (no-op spans keep their data).
    """
    data = getattr(get_current_span(), "span_data", None)
    if isinstance(data, TurnSpanData):
        return data.agent_name
    if isinstance(data, AgentSpanData):
        return data.name
    return None


class OfflineModel(Model):
    """A seeded simulator of a model, driven by a ``Behaviour`` (see the module docstring).

    ``agent`` pins the policy to one agent name, for use as ``Agent(model=...)``; by default the
    agent is read from the runner's current span, so one instance serves a whole workflow.
    """

    def __init__(
        self,
        behaviour: Behaviour | Mapping[str, Any] | None = None,
        seed: int = 0,
        *,
        agent: str | None = None,
    ) -> None:
        self.behaviour = load_behaviour(behaviour)
        self.seed = int(seed)
        self.agent = agent

    def __repr__(self) -> str:
        return f"OfflineModel(seed={self.seed}, behaviour={self.behaviour.source})"

    # The SDK's two entry points ---------------------------------------------------------------
    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
        **_: Any,
    ) -> ModelResponse:
        agent = self.agent or _current_agent()
        # Yield once, as a network call would, so concurrent trials genuinely interleave.
        await asyncio.sleep(0)
        with generation_span(
            model=MODEL_NAME, model_config={"seed": self.seed}, disabled=tracing.is_disabled()
        ) as span:
            output, usage = self._decide(
                agent, system_instructions, input, model_settings, tools, output_schema, handoffs
            )
            span.span_data.usage = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
            if tracing.include_data():
                span.span_data.output = [item.model_dump(exclude_unset=True) for item in output]
        return ModelResponse(output=output, usage=usage, response_id=None)

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
        **_: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """The same decision as ``get_response``, delivered as Responses-API stream events."""
        result = await self.get_response(
            system_instructions, input, model_settings, tools, output_schema, handoffs, tracing
        )
        usage = result.usage
        response = Response(
            id="resp_offline",
            created_at=0,
            model=MODEL_NAME,
            object="response",
            output=list(result.output),
            tool_choice="auto",
            tools=[],
            top_p=None,
            parallel_tool_calls=False,
            status="completed",
            usage=ResponseUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_tokens=usage.total_tokens,
                input_tokens_details=InputTokensDetails.model_validate(
                    {"cached_tokens": 0, "cache_write_tokens": 0}
                ),
                output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
            ),
        )
        seq = 0
        yield ResponseCreatedEvent(
            type="response.created",
            response=response.model_copy(update={"output": [], "status": "in_progress"}),
            sequence_number=seq,
        )
        for index, item in enumerate(result.output):
            seq += 1
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added", item=item, output_index=index, sequence_number=seq
            )
            if isinstance(item, ResponseOutputMessage):
                for content_index, part in enumerate(item.content):
                    seq += 1
                    yield ResponseTextDeltaEvent(
                        type="response.output_text.delta",
                        item_id=item.id,
                        output_index=index,
                        content_index=content_index,
                        delta=getattr(part, "text", ""),
                        logprobs=[],
                        sequence_number=seq,
                    )
            seq += 1
            yield ResponseOutputItemDoneEvent(
                type="response.output_item.done", item=item, output_index=index, sequence_number=seq
            )
        yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=seq + 1)

    # The simulation ---------------------------------------------------------------------------
    def _decide(
        self,
        agent: str | None,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
    ) -> tuple[list[TResponseOutputItem], Usage]:
        """The SDK's arguments as plain data for :func:`decide`, and its decision as Responses-API items."""
        specs = [
            ToolSpec(
                name=str(getattr(t, "name", "")),
                description=getattr(t, "description", "") or "",
                schema=t.params_json_schema if isinstance(t, FunctionTool) else None,
            )
            for t in tools
        ]
        handoff_specs = [
            HandoffSpec(h.agent_name, h.tool_name, h.tool_description, h.input_json_schema or {}) for h in handoffs
        ]
        structured = output_schema is not None and not output_schema.is_plain_text()
        forced = model_settings.tool_choice
        decision = decide(
            self.behaviour,
            seed=self.seed,
            agent=agent,
            system=system_instructions,
            conversation=read_conversation(input, {h.tool_name for h in handoffs}),
            tools=specs,
            handoffs=handoff_specs,
            tool_choice=forced if isinstance(forced, str) else None,
            output_schema=output_schema.json_schema() if structured and output_schema is not None else None,
            validate=output_schema.validate_json if structured and output_schema is not None else None,
        )
        output: TResponseOutputItem
        if decision.call is None:
            output = ResponseOutputMessage(
                id=f"msg_{decision.tag}",
                type="message",
                role="assistant",
                status="completed",
                content=[
                    ResponseOutputText(
                        text=decision.text or "", type="output_text", annotations=[], logprobs=[]
                    )
                ],
            )
        else:
            output = ResponseFunctionToolCall(
                id=f"fc_{decision.tag}",
                call_id=f"call_{decision.tag}",
                type="function_call",
                name=decision.call,
                arguments=decision.arguments or "{}",
                status="completed",
            )
        n_in, n_out = decision.input_tokens, decision.output_tokens
        usage = Usage(requests=1, input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
        return [output], usage
