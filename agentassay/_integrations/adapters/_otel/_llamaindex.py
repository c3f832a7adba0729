"""LlamaIndex agent workflows: an ``AgentWorkflow`` (or one ``FunctionAgent`` / ``ReActAgent``), traced by
OpenInference, completed from the workflow's own event stream where the spans lose things.

What ``openinference-instrumentation-llama-index`` records: one CHAIN span per workflow step
(``AgentWorkflow.init_run`` / ``setup_agent`` / ``run_agent_step`` / ``parse_agent_output`` / ``call_tool`` /
``aggregate_tool_results``, all siblings under ``AgentWorkflow.run``), the LLM spans under ``run_agent_step``
(``OpenAI.astream_chat``: messages, tool calls, model name, tokens) and a TOOL span (``FunctionTool.acall``)
under ``call_tool``. No span names the agent that runs (it is only inside the steps' event reprs, which the
instrumentor truncates), a tool's arguments are wrapped (``{"kwargs": {..., "ctx": "<Context ...>"}}``), its
result is the serialized ``ToolOutput``, and a handoff is an ordinary call of the ``handoff(to_agent, reason)``
tool the workflow gives every agent with ``can_handoff_to``.

The native route: :meth:`LlamaIndexProfile.invoke` reads ``handler.stream_events()`` while the workflow runs —
``AgentInput`` / ``AgentOutput`` carry the agent's name and the tool calls it chose (by id), ``ToolCallResult``
the call's arguments and result — and keeps that record under the trial's trace id until the trial's spans
reach :meth:`LlamaIndexProfile.fix_spans`, which rewrites them (:func:`fix_spans`):

* agents: each ``run_agent_step`` span (in start order, one per ``AgentOutput``) becomes an AGENT span of its
  agent, so its model calls and the run's answer are credited to it;
* tool calls: each TOOL span becomes a GenAI ``execute_tool`` span with the calling agent, the call id, the
  arguments the model chose (the workflow's ``Context`` left out) and the result's text; a failed call (the
  workflow turns the exception into an error result) is the span's error;
* handoffs: a ``handoff`` call after which the named agent took over becomes a GenAI handoff span from the
  calling agent to ``to_agent`` (a refused one, e.g. an unknown agent, stays a tool call);
* ``OpenAI._prepare_chat_with_tools`` is bookkeeping, not a model call: it becomes structure.

Tokens come from the LLM spans, which carry them only when the server sends usage with a streamed answer:
a ``FunctionAgent`` streams, and OpenAI sends usage then only on ``stream_options.include_usage`` (the
example's ``OpenAI(additional_kwargs={"stream_options": {"include_usage": True}})``). Without the events
(an app's own export, read with ``agentassay analyze --framework llamaindex``) the same rewriting reads each
agent's name from the full repr of the step's input event, a tool call's id from its ``ToolCall`` repr and a
handoff's success from the agent of the next turn.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from opentelemetry import trace as otel_trace

from .._base import ToolInfo
from ._profile import Profile
from ._spans import as_handoff
from ._spans import attr as _attr
from ._spans import attrs as _attrs
from ._spans import loads_json as _json
from ._spans import set_attr as _set

HANDOFF_TOOL = "handoff"  # the tool an AgentWorkflow gives each agent with can_handoff_to
_KIND = "openinference.span.kind"
_AGENT_NAME = re.compile(r"current_agent_name='((?:[^'\\]|\\.)*)'")
_TOOL_ID = re.compile(r"tool_id='((?:[^'\\]|\\.)*)'")
_CONTEXT_REPR = re.compile(r"^<\S+ object at 0x[0-9a-f]+>$")
#: Trials whose events are kept until their spans are fixed (a trial that never gets there is dropped first).
MAX_PENDING = 1024


@dataclass
class ToolRecord:
    """One tool call as the workflow's events report it."""

    agent: str | None
    name: str
    arguments: dict[str, Any]
    output: str | None = None
    error: bool = False
    next_agent: str | None = None  # the agent whose turn came next (a handoff's target, if it took)


@dataclass
class Events:
    """What a run's event stream says that its spans do not: each turn's agent and each tool call."""

    turns: list[str] = field(default_factory=list)  # the agent of each AgentOutput, in order
    tools: dict[str, ToolRecord] = field(default_factory=dict)  # tool id -> call, in order of results
    _chosen: dict[str, str] = field(default_factory=dict)  # tool id -> the agent whose output chose it
    _waiting: list[str] = field(default_factory=list)  # tool ids whose next turn is not known yet

    def add(self, event: Any) -> None:
        kind = type(event).__name__
        agent = getattr(event, "current_agent_name", None)
        if kind == "AgentInput" and isinstance(agent, str):
            for tool_id in self._waiting:
                self.tools[tool_id].next_agent = agent
            self._waiting.clear()
        elif kind == "AgentOutput" and isinstance(agent, str):
            self.turns.append(agent)
            for call in getattr(event, "tool_calls", None) or ():
                self._chosen[str(getattr(call, "tool_id", ""))] = agent
        elif kind == "ToolCallResult":
            tool_id = str(getattr(event, "tool_id", ""))
            output = getattr(event, "tool_output", None)
            kwargs = getattr(event, "tool_kwargs", None)
            self.tools[tool_id] = ToolRecord(
                agent=self._chosen.get(tool_id),
                name=str(getattr(event, "tool_name", "")),
                arguments=dict(kwargs) if isinstance(kwargs, Mapping) else {},
                output=None if output is None else str(getattr(output, "content", output)),
                error=bool(getattr(output, "is_error", False)),
            )
            self._waiting.append(tool_id)


class LlamaIndexProfile(Profile):
    """A LlamaIndex ``AgentWorkflow`` or workflow agent, run with ``run(user_msg=input)`` (a fresh context per
    run: concurrent trials on one workflow object do not share state)."""

    name: ClassVar[str] = "llamaindex"
    extra: ClassVar[str] = "llamaindex"
    env: ClassVar[Mapping[str, str]] = {}  # LlamaIndex sends no telemetry of its own

    def __init__(self) -> None:
        self._events: OrderedDict[str, Events] = OrderedDict()  # trial trace id -> its run's events
        self._lock = threading.Lock()

    def instrument(self) -> None:
        # optional heavy dependency: the instrumentor comes with agentassay[llamaindex]
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

        instrumentor = LlamaIndexInstrumentor()
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument()

    def invoke(self, obj: Any, input: str) -> Any:
        if not _agents(obj):
            return super().invoke(obj, input)
        return self._run(obj, input)

    async def _run(self, obj: Any, input: str) -> Any:
        """The run, its events recorded under the trial's trace id (the current span is the trial's root)."""
        events = Events()
        context = otel_trace.get_current_span().get_span_context()
        if context.is_valid:
            with self._lock:
                self._events[format(context.trace_id, "032x")] = events
                while len(self._events) > MAX_PENDING:
                    self._events.popitem(last=False)
        handler = obj.run(user_msg=input)
        async for event in handler.stream_events():
            events.add(event)
        return await handler

    def is_async(self, obj: Any) -> bool:
        return bool(_agents(obj)) or super().is_async(obj)

    def output(self, result: Any) -> Any:
        """An ``AgentOutput``'s answer text (its structured response, when the workflow has an output class)."""
        structured = getattr(result, "structured_response", None)
        if structured is not None:
            return structured
        response = getattr(result, "response", None)
        if response is not None and hasattr(result, "current_agent_name"):
            return str(getattr(response, "content", None) or "")
        return super().output(result)

    def describe(self, obj: Any) -> dict[str, Any]:
        # optional heavy dependency: only to report the framework's version
        from importlib.metadata import version

        return {**super().describe(obj), "agents": list(_agents(obj)), "llama-index-core": version("llama-index-core")}

    def tools(self, obj: Any) -> list[ToolInfo]:
        """Every agent's tools (the ``handoff`` tool the workflow adds at run time is a handoff, not a tool)."""
        out = []
        for agent_name, agent in _agents(obj).items():
            for tool in getattr(agent, "tools", None) or ():
                meta = getattr(tool, "metadata", None)
                name = meta.get_name() if meta is not None else getattr(tool, "__name__", None)
                if not isinstance(name, str) or name == HANDOFF_TOOL:
                    continue
                parameters = meta.get_parameters_dict() if meta is not None else None
                out.append(ToolInfo(name, str(getattr(meta, "description", "") or ""), parameters, agent_name))
        return out

    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        trace_id = next((s.get("traceId") for s in spans if s.get("traceId")), None)
        with self._lock:
            events = self._events.pop(str(trace_id), None) if trace_id else None
        return fix_spans(spans, events)


def _agents(obj: Any) -> dict[str, Any]:
    """Agent name -> agent: an ``AgentWorkflow``'s agents, or the workflow agent itself."""
    agents = getattr(obj, "agents", None)
    if isinstance(agents, Mapping) and hasattr(obj, "root_agent"):
        return {str(k): v for k, v in agents.items()}
    if hasattr(obj, "can_handoff_to") and isinstance(getattr(obj, "name", None), str):
        return {obj.name: obj}
    return {}


# -- span repair (OTLP JSON span objects) -----------------------------------------------------------
def _named(step: Mapping[str, Any]) -> str | None:
    """The agent of a ``run_agent_step`` span without the events: its input is the full repr of the
    ``AgentSetup`` event, whose last field is ``current_agent_name`` (its output, a summary cut at 200
    characters, keeps it only when the answer is short)."""
    for key in ("input.value", "output.value"):
        found = _AGENT_NAME.findall(str(_attr(step, key) or ""))
        if found:
            return str(found[-1])
    return None


def _step(span: Mapping[str, Any], step: str) -> bool:
    return str(span.get("name") or "").endswith("." + step)


def _start(span: Mapping[str, Any]) -> int:
    return int(span.get("startTimeUnixNano") or 0)


def _arguments(raw: Any, record: ToolRecord | None) -> dict[str, Any] | None:
    """The call's arguments: the event's, else the span's ``{"kwargs": ...}`` without the workflow's Context."""
    if record is not None:
        return record.arguments
    given = _json(raw)
    kwargs = given.get("kwargs") if isinstance(given, dict) else None
    if not isinstance(kwargs, dict):
        return None
    return {k: v for k, v in kwargs.items() if not (isinstance(v, str) and _CONTEXT_REPR.match(v))}


def _result(raw: Any, record: ToolRecord | None) -> tuple[str | None, bool]:
    """The call's result text and whether it is an error: the event's, else the span's serialized ToolOutput."""
    if record is not None:
        return record.output, record.error
    given = _json(raw)
    if isinstance(given, dict) and ("raw_output" in given or "blocks" in given):
        blocks = [b.get("text") for b in given.get("blocks") or () if isinstance(b, dict)]
        text = "".join(t for t in blocks if isinstance(t, str)) if blocks else None
        return (text if text is not None else str(given.get("raw_output"))), bool(given.get("is_error"))
    return (raw if isinstance(raw, str) else None), False


def _tool_span(
    span: dict[str, Any], call_id: str | None, record: ToolRecord | None, agent: str | None, next_agent: str | None
) -> None:
    """A TOOL span as a GenAI ``execute_tool`` span, or a handoff span when it is a handoff that took (the agent
    whose turn came next is its target)."""
    a = _attrs(span)
    name = record.name if record is not None else str(a.get("tool.name") or span.get("name"))
    arguments = _arguments(a.get("input.value"), record)
    text, error = _result(a.get("output.value"), record)
    target = arguments.get("to_agent") if isinstance(arguments, dict) else None
    if name == HANDOFF_TOOL and isinstance(target, str) and next_agent == target:
        as_handoff(span, agent, target, HANDOFF_TOOL, call_id)
        return
    span["attributes"] = []
    _set(span, "gen_ai.operation.name", "execute_tool")
    _set(span, "gen_ai.tool.name", name)
    _set(span, "gen_ai.agent.name", agent)
    _set(span, "gen_ai.tool.call.id", call_id)
    if arguments is not None:
        _set(span, "gen_ai.tool.call.arguments", json.dumps(arguments, ensure_ascii=False, default=str))
    if text is not None:
        _set(span, "gen_ai.tool.call.result", text)
    if error:
        span["status"] = {"code": 2, "message": text or "tool error"}


def fix_spans(spans: list[dict[str, Any]], events: Events | None = None) -> list[dict[str, Any]]:
    """LlamaIndex's OpenInference spans, repaired (see the module docstring); the input is not modified."""
    spans = copy.deepcopy(spans)
    by_id = {s.get("spanId"): s for s in spans}
    steps = sorted((s for s in spans if _step(s, "run_agent_step")), key=_start)
    turns = list(events.turns) if events is not None else []
    agent_of: dict[Any, str] = {}  # run_agent_step span id -> its agent
    for i, span in enumerate(steps):
        name = turns[i] if i < len(turns) else None
        if name is None:  # no events (an exported file): the name in the step's input event
            name = _named(span)
        if name is not None:
            agent_of[span.get("spanId")] = name
            span["attributes"] = []
            _set(span, _KIND, "AGENT")
            _set(span, "agent.name", name)
    records = dict(events.tools) if events is not None else {}
    unclaimed: dict[str, list[str]] = {}  # tool name -> record ids not matched to a span by id, in order
    for tool_id, record in records.items():
        unclaimed.setdefault(record.name, []).append(tool_id)
    tool_spans = sorted((s for s in spans if str(_attr(s, _KIND) or "").upper() == "TOOL"), key=_start)
    claimed: dict[Any, str | None] = {}
    for span in tool_spans:  # the call id, from the enclosing call_tool span's ToolCall repr
        parent = by_id.get(span.get("parentSpanId"))
        found = _TOOL_ID.search(str(_attr(parent, "input.value") or "")) if parent is not None else None
        claimed[span.get("spanId")] = found.group(1) if found else None
        if found and found.group(1) in unclaimed.get(str(_attr(span, "tool.name")), []):
            unclaimed[str(_attr(span, "tool.name"))].remove(found.group(1))
    for span in tool_spans:
        tool = str(_attr(span, "tool.name"))
        call_id = claimed[span.get("spanId")]
        if (call_id is None or call_id not in records) and unclaimed.get(tool):
            call_id = unclaimed[tool].pop(0)
        record = records.get(call_id) if call_id else None
        agent = record.agent if record is not None else None
        before = [agent_of.get(s.get("spanId")) for s in steps if _start(s) <= _start(span)]
        after = [agent_of.get(s.get("spanId")) for s in steps if _start(s) > _start(span)]
        if agent is None:  # without events: the agent of the latest turn before the call
            agent = before[-1] if before else None
        next_agent = record.next_agent if record is not None else (after[0] if after else None)
        _tool_span(span, call_id, record, agent, next_agent)
    for span in spans:
        if _step(span, "_prepare_chat_with_tools"):  # the request's assembly, not a model call
            _set(span, _KIND, "CHAIN")
    return spans
