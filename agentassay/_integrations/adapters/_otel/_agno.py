"""Agno: an ``agno.agent.Agent`` or ``agno.team.Team``, traced by OpenInference's Agno instrumentor.

What ``openinference-instrumentation-agno`` records (measured on agno 3.1, issue 24): an AGENT span per run
(``<Name>.arun``, with ``agent.name``), an LLM span per model call (messages, tool calls, token counts, model
name) and a TOOL span per tool call (``tool.name``, JSON arguments, the result as text). A team's leader
delegates with its ``delegate_task_to_member(member_id, task)`` tool, but the member's run is recorded beside
that TOOL span (a sibling under the leader), not inside it, so the importer would read a call of a tool named
``delegate_task_to_member`` followed by an undeclared handoff. :meth:`AgnoProfile.fix_spans` repairs this:

* a delegation whose answer comes back to the leader (the leader's model is called again after it): the
  member's run moves inside the TOOL span, which the importer reads as a delegation (``HANDOFF`` leader ->
  member, the member's steps one level deeper, its answer, then the leader again);
* a delegation that ends the leader's run (``respond_directly``, ``TeamMode.route``: the member answers the
  user itself): the TOOL span becomes a GenAI handoff span from the leader to the member, so control passes
  as after an SDK handoff and the final answer is the member's;
* ``delegate_task_to_members`` (broadcast) runs every member inside its TOOL span, a delegation to each.

The member is the AGENT span that ran within the TOOL span's time under the same parent whose
``agno.agent.id`` / ``agno.team.id`` is the call's ``member_id`` (else the first one that ran within it).
Token counts are on the LLM spans only; agent spans carry no run totals, so nothing is counted twice.

Agno phones home with anonymous telemetry unless ``AGNO_TELEMETRY=false`` (:attr:`AgnoProfile.env`). Its
``OpenAIChat`` model without ``base_url`` reads ``OPENAI_BASE_URL`` through the OpenAI client, whose HTTP
client (httpx2 under openai 3) carries ``traceparent`` once instrumented, so concurrent trials stay apart.
Each trial is ``arun(input)`` on the one object: Agno keeps a run's state in the run and its session (a new
session id per call, no database), not in the agent.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from .._base import ToolInfo
from ._profile import Profile
from ._spans import as_handoff
from ._spans import attrs as _attrs
from ._spans import loads_json as _json

DELEGATE = "delegate_task_to_member"  # the leader's tool in coordinate / route mode
DELEGATE_ALL = "delegate_task_to_members"  # broadcast mode: every member gets the task
_KIND = "openinference.span.kind"


class AgnoProfile(Profile):
    """An Agno ``Agent`` or ``Team``, run with ``arun(input)``; spans from OpenInference."""

    name: ClassVar[str] = "agno"
    extra: ClassVar[str] = "agno"
    env: ClassVar[Mapping[str, str]] = {"AGNO_TELEMETRY": "false"}  # no anonymous telemetry to Agno's API

    def instrument(self) -> None:
        for key, value in self.env.items():  # Agno reads it when it runs: an agent imported earlier obeys it
            os.environ.setdefault(key, value)
        # optional heavy dependency: the instrumentor comes with agentassay[agno]
        from openinference.instrumentation.agno import AgnoInstrumentor

        instrumentor = AgnoInstrumentor()
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument()

    def invoke(self, obj: Any, input: str) -> Any:
        if not callable(getattr(obj, "arun", None)):
            return super().invoke(obj, input)
        return _run(obj, input)

    def is_async(self, obj: Any) -> bool:
        return True if callable(getattr(obj, "arun", None)) else super().is_async(obj)

    def output(self, result: Any) -> Any:
        """A ``RunOutput`` / ``TeamRunOutput``'s content (a structured output as its JSON-like data)."""
        if hasattr(result, "content") and hasattr(result, "run_id"):
            content = result.content
            dump = getattr(content, "model_dump", None)
            return super().output(dump(mode="json") if callable(dump) else content)
        return super().output(result)

    def describe(self, obj: Any) -> dict[str, Any]:
        # optional heavy dependency: only to report the framework's version
        from importlib.metadata import version

        return {**super().describe(obj), "agents": [_name(a) for a in agents_of(obj)], "agno": version("agno")}

    def tools(self, obj: Any) -> list[ToolInfo]:
        """Every tool of the team's leader and members (teams nested too); the delegation tools Agno adds at
        run time are handoffs, not tools, and are not listed."""
        return [
            ToolInfo(name, description, parameters, _name(agent))
            for agent in agents_of(obj)
            for name, description, parameters in _functions(agent)
        ]

    def manifest(self, obj: Any) -> dict[str, Any]:
        """The agent graph for structural coverage: the entry (the team's leader, or the agent), every agent with
        its tools, and a delegation from each team to each of its members by Agno's delegation tool."""
        handoffs: list[tuple[str, str, str | None]] = []
        for agent in agents_of(obj):
            members = getattr(agent, "members", None)
            if isinstance(members, (list, tuple)):
                broadcast = str(getattr(getattr(agent, "mode", None), "value", "")) == "broadcast"
                tool = DELEGATE_ALL if broadcast or getattr(agent, "delegate_to_all_members", False) else DELEGATE
                handoffs += [(_name(agent), _name(m), tool) for m in members]
        agents = [
            {
                "name": _name(a),
                "description": str(getattr(a, "role", None) or getattr(a, "description", None) or ""),
                "tools": [ToolInfo(n, d, p, _name(a)) for n, d, p in _functions(a)],
            }
            for a in agents_of(obj)
        ]
        return {"entry": _name(obj), "agents": agents, "handoffs": handoffs}

    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return fix_spans(spans)


async def _run(obj: Any, input: str) -> Any:
    """``arun``, its failure raised: Agno catches a run's exception (a model error, say) and returns an output
    whose status is ``ERROR`` and whose content is the message, which would read as the agent's answer."""
    result = await obj.arun(input)
    status = getattr(result, "status", None)
    if str(getattr(status, "value", status)).upper() == "ERROR":
        raise RuntimeError(f"the Agno run failed: {getattr(result, 'content', None)}")
    return result


# -- the agent graph --------------------------------------------------------------------------------
def _name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or getattr(agent, "id", None) or type(agent).__name__)


def agents_of(obj: Any) -> list[Any]:
    """A team (its leader first) and its members depth first, or the agent itself."""
    found: list[Any] = []
    stack = [obj]
    while stack:
        agent = stack.pop(0)
        if any(agent is f for f in found):
            continue
        found.append(agent)
        members = getattr(agent, "members", None)
        if isinstance(members, (list, tuple)):  # a callable (run-time) member list cannot be read here
            stack[:0] = list(members)
    return found


def _functions(agent: Any) -> Iterator[tuple[str, str, dict[str, Any] | None]]:
    """(name, description, parameters) of an agent's tools: functions, ``Function``s and toolkits'."""
    # optional heavy dependency: Agno's own reading of a tool (its name, docstring and JSON schema)
    from agno.tools.function import Function
    from agno.tools.toolkit import Toolkit

    tools = getattr(agent, "tools", None)
    for tool in tools if isinstance(tools, (list, tuple)) else ():  # a tools factory runs only in a run
        if isinstance(tool, Toolkit):
            functions = list(tool.get_functions().values())
        elif isinstance(tool, Function):
            functions = [tool]
        elif isinstance(tool, Mapping) or not callable(tool):
            continue  # a provider's built-in tool (a dict): nothing Agno runs
        else:
            try:
                functions = [Function.from_callable(tool)]
            except Exception:  # a callable Agno cannot describe: listed by its name only
                yield str(getattr(tool, "__name__", tool)), "", None
                continue
        for function in functions:
            parameters = function.parameters if isinstance(function.parameters, dict) else None
            yield function.name, str(function.description or ""), parameters


# -- span repair (OTLP JSON span objects) -----------------------------------------------------------
def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _within(inner: Mapping[str, Any], outer: Mapping[str, Any]) -> bool:
    start, end = _int(outer.get("startTimeUnixNano")), _int(outer.get("endTimeUnixNano"))
    return start <= _int(inner.get("startTimeUnixNano")) and (
        not end or _int(inner.get("endTimeUnixNano")) <= end
    )


def _members(
    call: dict[str, Any], spans: list[dict[str, Any]], attrs: list[dict[str, Any]], member_id: Any
) -> list[int]:
    """The AGENT spans (indexes) of the members the delegation ran: siblings within its time, the one named by
    ``member_id`` first (all of them for a broadcast, ``member_id`` None)."""
    ran = [
        i
        for i, (span, a) in enumerate(zip(spans, attrs, strict=True))
        if str(a.get(_KIND, "")).upper() == "AGENT"
        and span.get("parentSpanId") == call.get("parentSpanId")
        and _within(span, call)
    ]
    if member_id is None:
        return ran
    named = [i for i in ran if member_id in (attrs[i].get("agno.agent.id"), attrs[i].get("agno.team.id"))]
    return named[:1] or ran[:1]


def _returns(call: dict[str, Any], spans: list[dict[str, Any]], attrs: list[dict[str, Any]]) -> bool:
    """Whether the leader's model is called after the delegation (its answer came back to the leader)."""
    end = _int(call.get("endTimeUnixNano"))
    return any(
        str(a.get(_KIND, "")).upper() == "LLM"
        and span.get("parentSpanId") == call.get("parentSpanId")
        and _int(span.get("startTimeUnixNano")) >= end
        for span, a in zip(spans, attrs, strict=True)
    )


def fix_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Agno's OpenInference spans, repaired (see the module docstring); the input is not modified."""
    spans = copy.deepcopy(spans)
    attrs = [_attrs(s) for s in spans]
    by_id = {s.get("spanId"): i for i, s in enumerate(spans)}
    for span, a in zip(spans, attrs, strict=True):
        tool = a.get("tool.name")
        if str(a.get(_KIND, "")).upper() != "TOOL" or tool not in (DELEGATE, DELEGATE_ALL):
            continue
        arguments = _json(a.get("input.value"))
        member_id = arguments.get("member_id") if isinstance(arguments, Mapping) and tool == DELEGATE else None
        members = _members(span, spans, attrs, member_id)
        if not members:
            continue  # an unknown member id: Agno answered the leader with an error text, a plain tool call
        leader = by_id.get(span.get("parentSpanId"))
        if tool == DELEGATE and span.get("status", {}).get("code") != 2 and not _returns(span, spans, attrs):
            source = attrs[leader].get("agent.name") if leader is not None else None
            as_handoff(span, source, attrs[members[0]].get("agent.name"), DELEGATE, a.get("tool.id"))
            continue
        for i in members:
            spans[i]["parentSpanId"] = span.get("spanId")
    return spans
