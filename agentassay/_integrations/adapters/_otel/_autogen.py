"""AutoGen AgentChat: a team (``Swarm``, ``RoundRobinGroupChat``, ``SelectorGroupChat``, ...) or one agent.

AutoGen's built-in spans (``invoke_agent <name>``, ``execute_tool <tool>`` and the runtime's ``autogen
publish/process ...``) name agents and tools but carry no arguments, results, model calls or tokens, and the
OpenInference instrumentor adds model calls without tokens. What a run returns does have everything: a
``TaskResult`` whose ``messages`` are each agent's tool-call requests (with arguments and the model call's
token usage), tool results (with errors), handoffs and answers, each with its ``source`` agent and time.

So this profile takes the *native route*: after a run, :func:`emit_spans` writes the messages as GenAI spans
in the trial's trace (``invoke_agent`` per agent turn, ``chat`` per model call with its tokens and text,
``execute_tool`` with arguments and result, ``handoff`` from the source agent to the target), timed by the
messages' ``created_at``; :func:`fix_spans` then drops AutoGen's own spans, which would count every agent and
tool twice. Everything still goes through the importer. For a callable that runs AutoGen inside
(``framework: autogen``) there is no result to read: its built-in spans are kept, each tool span gets the
agent around it, and a ``transfer_to_<agent>`` call becomes a handoff (target as the tool spells it, lower
case); no arguments, results or tokens.

``AUTOGEN_DISABLE_RUNTIME_TRACING`` (:attr:`AutogenProfile.env`) turns the runtime's message spans off (dozens
per run, nothing a trace uses). A team refuses concurrent runs and keeps its conversation between runs, so
each trial runs a copy (:func:`fresh`: the participants with empty model contexts, a copy of the termination
condition); an object that cannot be copied runs one trial at a time and is reset after each.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from opentelemetry import trace as otel_trace

from .._base import ToolInfo
from ._profile import Profile
from ._spans import as_handoff
from ._spans import attr as _attr
from ._spans import attrs as _attrs
from ._spans import set_attr as _set

NATIVE = "agentassay.native"  # marks the spans this profile writes from a run's messages
_OP = "gen_ai.operation.name"


class AutogenProfile(Profile):
    """An AutoGen team or agent, run with ``run(task=input)`` on a per-trial copy; its trace from the result."""

    name: ClassVar[str] = "autogen"
    extra: ClassVar[str] = "autogen"
    env: ClassVar[Mapping[str, str]] = {"AUTOGEN_DISABLE_RUNTIME_TRACING": "true"}

    def __init__(self) -> None:
        self._locks: dict[tuple[int, int], asyncio.Lock] = {}  # objects that cannot be copied: one trial at a time

    def invoke(self, obj: Any, input: str) -> Any:
        return self._run(obj, input)

    async def _run(self, obj: Any, input: str) -> Any:
        copied = fresh(obj)
        if copied is not None:
            result = await copied.run(task=input)
        else:
            lock = self._locks.setdefault((id(obj), id(asyncio.get_running_loop())), asyncio.Lock())
            async with lock:
                try:
                    result = await obj.run(task=input)
                finally:
                    await _reset(obj)
        emit_spans(result, copied if copied is not None else obj)
        return result

    def is_async(self, obj: Any) -> bool:
        return True

    def output(self, result: Any) -> Any:
        """The last agent's answer: the last message of the run that is not the task or an event."""
        for message in reversed(getattr(result, "messages", None) or []):
            if getattr(message, "source", "user") != "user" and type(message).__name__ in _ANSWERS:
                return message.to_text()
        return super().output(result)

    def describe(self, obj: Any) -> dict[str, Any]:
        # optional heavy dependency: only to report the framework's version
        from importlib.metadata import version

        return {
            **super().describe(obj),
            "agents": [str(a.name) for a in agents_of(obj)],
            "autogen-agentchat": version("autogen-agentchat"),
        }

    def tools(self, obj: Any) -> list[ToolInfo]:
        """Every agent's tools (the ``transfer_to_<agent>`` handoff tools left out: handoffs, not calls)."""
        out = []
        for agent in agents_of(obj):
            for tool in getattr(agent, "_tools", None) or []:
                schema = getattr(tool, "schema", None) or {}
                out.append(
                    ToolInfo(
                        str(tool.name), str(schema.get("description") or getattr(tool, "description", "") or ""),
                        dict(schema["parameters"]) if isinstance(schema.get("parameters"), Mapping) else None,
                        str(agent.name),
                    )
                )  # fmt: skip
        return out

    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return fix_spans(spans)


_ANSWERS = {"TextMessage", "StructuredMessage", "ToolCallSummaryMessage", "StopMessage"}


# -- the agent graph ----------------------------------------------------------------------------------------
def agents_of(obj: Any) -> list[Any]:
    """A team's participants (nested teams' too, in order), or the agent itself."""
    participants = getattr(obj, "_participants", None)
    if isinstance(participants, list):
        return [a for p in participants for a in agents_of(p)]
    return [obj] if hasattr(obj, "name") and hasattr(obj, "on_messages") else []


def _copy_agent(agent: Any) -> Any | None:
    """An ``AssistantAgent`` with its own (empty) model context; None for other agents."""
    # optional heavy dependency: AutoGen comes with agentassay[autogen]
    from autogen_agentchat.agents import AssistantAgent

    if type(agent) is not AssistantAgent:
        return None
    clone = copy.copy(agent)
    clone._model_context = copy.deepcopy(agent._model_context)
    clone._is_running = False
    return clone


def fresh(obj: Any) -> Any | None:
    """A copy of a ``Swarm``, ``RoundRobinGroupChat`` or ``AssistantAgent`` for one trial, or None."""
    # optional heavy dependency: AutoGen comes with agentassay[autogen]
    from autogen_agentchat.teams import RoundRobinGroupChat, Swarm

    if type(obj) not in (Swarm, RoundRobinGroupChat):
        return _copy_agent(obj)
    participants = [_copy_agent(p) for p in obj._participants]
    if any(p is None for p in participants):
        return None
    try:
        condition = copy.deepcopy(obj._termination_condition)
    except Exception:  # a condition that holds something uncopyable: run the original, one trial at a time
        return None
    return type(obj)(
        participants, name=obj._name, description=obj._description, termination_condition=condition,
        max_turns=obj._max_turns, emit_team_events=obj._emit_team_events,
    )  # fmt: skip


async def _reset(obj: Any) -> None:
    if callable(getattr(obj, "reset", None)):
        await obj.reset()
    elif callable(getattr(obj, "on_reset", None)):
        # optional heavy dependency: AutoGen comes with agentassay[autogen]
        from autogen_core import CancellationToken

        await obj.on_reset(CancellationToken())


# -- the native route: a run's messages as GenAI spans ------------------------------------------------------
def _ns(message: Any, default: int) -> int:
    created = getattr(message, "created_at", None)
    return int(created.timestamp() * 1e9) if isinstance(created, datetime) else default


def _models(obj: Any) -> dict[str, str]:
    """Agent name -> the model its client asks for (AutoGen's OpenAI clients keep it in their create args)."""
    out = {}
    for agent in agents_of(obj):
        args = getattr(getattr(agent, "_model_client", None), "_create_args", None)
        if isinstance(args, Mapping) and isinstance(args.get("model"), str):
            out[str(agent.name)] = args["model"]
    return out


def _handoff_tools(obj: Any) -> set[str]:
    return {str(name) for a in agents_of(obj) for name in (getattr(a, "_handoffs", None) or {})}


def _turns(messages: list[Any]) -> list[tuple[str, list[Any]]]:
    """Consecutive messages of one agent (the task, from ``user``, left out)."""
    turns: list[tuple[str, list[Any]]] = []
    for message in messages:
        source = str(getattr(message, "source", "") or "")
        if not source or source == "user":
            continue
        if turns and turns[-1][0] == source:
            turns[-1][1].append(message)
        else:
            turns.append((source, [message]))
    return turns


def _text_part(text: str) -> str:
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}], ensure_ascii=False)


class _Writer:
    """Writes one run's spans under the current span (the trial's root), each agent turn in turn."""

    def __init__(self, obj: Any) -> None:
        self.tracer = otel_trace.get_tracer("agentassay.autogen")
        self.models = _models(obj)
        self.handoff_tools = _handoff_tools(obj)

    def span(self, name: str, parent: Any, start: int, attributes: dict[str, Any]) -> Any:
        ctx = otel_trace.set_span_in_context(parent) if parent is not None else None
        return self.tracer.start_span(
            name, context=ctx, start_time=start, attributes={NATIVE: "autogen", **attributes}
        )

    def turn(self, agent: str, messages: list[Any], cursor: int) -> int:
        end = max(cursor, _ns(messages[-1], cursor))
        turn = self.span(f"invoke_agent {agent}", None, cursor, {_OP: "invoke_agent", "gen_ai.agent.name": agent})
        calls: dict[str, tuple[str, str]] = {}  # call id -> (tool name, arguments) of this turn's requests
        for message in messages:
            at = max(cursor, _ns(message, cursor))
            kind = type(message).__name__
            if getattr(message, "models_usage", None) is not None or kind == "ToolCallRequestEvent":
                self.model_call(turn, agent, message, kind, cursor, at)
            if kind == "ToolCallRequestEvent":
                for call in message.content:
                    calls[str(call.id)] = (str(call.name), str(call.arguments))
            elif kind == "ToolCallExecutionEvent":
                self.tool_results(turn, agent, message.content, calls, cursor, at)
            elif kind == "HandoffMessage":
                handoff = self.span(f"handoff {agent} -> {message.target}", turn, at, {
                    _OP: "handoff", "gen_ai.handoff.from_agent": agent,
                    "gen_ai.handoff.to_agent": str(message.target), "gen_ai.agent.name": agent,
                })  # fmt: skip
                handoff.end(end_time=at)
            cursor = at
        turn.end(end_time=end)
        return end

    def model_call(self, turn: Any, agent: str, message: Any, kind: str, start: int, end: int) -> None:
        attributes: dict[str, Any] = {_OP: "chat", "gen_ai.agent.name": agent}
        if agent in self.models:
            attributes["gen_ai.request.model"] = self.models[agent]
        usage = message.models_usage
        if usage is not None:
            attributes["gen_ai.usage.input_tokens"] = int(usage.prompt_tokens)
            attributes["gen_ai.usage.output_tokens"] = int(usage.completion_tokens)
        if kind in _ANSWERS:
            attributes["gen_ai.output.messages"] = _text_part(message.to_text())
        span = self.span(f"chat {attributes.get('gen_ai.request.model', '')}".strip(), turn, start, attributes)
        span.end(end_time=end)

    def tool_results(
        self, turn: Any, agent: str, results: list[Any], calls: dict[str, tuple[str, str]], start: int, end: int
    ) -> None:
        for result in results:
            name, arguments = calls.get(str(result.call_id), (str(getattr(result, "name", "") or ""), "{}"))
            if name in self.handoff_tools:
                continue  # the handoff: its HandoffMessage says where to
            span = self.span(f"execute_tool {name}", turn, start, {
                _OP: "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": str(result.call_id),
                "gen_ai.agent.name": agent, "gen_ai.tool.call.arguments": arguments,
                "gen_ai.tool.call.result": str(result.content),
            })  # fmt: skip
            if getattr(result, "is_error", False):
                span.set_status(otel_trace.Status(otel_trace.StatusCode.ERROR, str(result.content)))
            span.end(end_time=end)


def emit_spans(result: Any, obj: Any) -> None:
    """A run's ``TaskResult.messages`` as GenAI spans under the current span (the module docstring)."""
    messages = list(getattr(result, "messages", None) or [])
    if not messages:
        return
    writer = _Writer(obj)
    cursor = _ns(messages[0], 0)
    for agent, turn in _turns(messages):
        cursor = writer.turn(agent, turn, cursor)


# -- span repair (OTLP JSON span objects) -------------------------------------------------------------------
def _enclosing_agent(span: Mapping[str, Any], by_id: Mapping[Any, dict[str, Any]]) -> str | None:
    parent, seen = span.get("parentSpanId"), 0
    while parent in by_id and seen < len(by_id):
        a = _attrs(by_id[parent])
        if a.get(_OP) == "invoke_agent" and a.get("gen_ai.agent.name"):
            return str(a["gen_ai.agent.name"])
        parent, seen = by_id[parent].get("parentSpanId"), seen + 1
    return None


def fix_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """With the native spans: those and the trial's root only. Without: AutoGen's own, each tool span with
    its agent and ``transfer_to_<x>`` as a handoff (see the module docstring). The input is not modified."""
    ids = {s.get("spanId") for s in spans}
    native = [bool(_attr(s, NATIVE)) for s in spans]  # one attribute looked up, not every span's read as a dict
    if any(native):
        kept = zip(spans, native, strict=True)
        return [copy.deepcopy(s) for s, n in kept if n or s.get("parentSpanId") not in ids]
    spans = copy.deepcopy(spans)
    by_id = {s.get("spanId"): s for s in spans}
    for span in spans:
        a = _attrs(span)
        if a.get(_OP) != "execute_tool":
            continue
        agent = a.get("gen_ai.agent.name") or _enclosing_agent(span, by_id)
        tool = str(a.get("gen_ai.tool.name") or "")
        if tool.startswith("transfer_to_") and len(tool) > len("transfer_to_"):
            as_handoff(span, agent, tool[len("transfer_to_"):], None, a.get("gen_ai.tool.call.id"))
        else:
            _set(span, "gen_ai.handoff.from_agent" if tool.startswith("transfer_to_") else "gen_ai.agent.name", agent)
    return spans
