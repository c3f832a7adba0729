"""PydanticAI: its built-in OpenTelemetry (GenAI conventions), agent delegation read as handoffs.

PydanticAI reports every run as ``invoke_agent <name>`` spans with ``chat <model>`` spans (token usage, input
and output messages) and ``execute_tool <name>`` spans (arguments and results as attributes) once
``Agent.instrument_all`` is on; the importer reads them as they are. Its multi-agent idiom is *delegation*: a
tool of one agent runs another (``transfer_to_faq_agent`` calling ``faq_agent.run(...)``), so the delegate's
``invoke_agent`` span nests under the tool span, which the importer already reads as a handoff and back. The
fix-ups here name what the spans leave implicit: a ``transfer_to_<agent>`` / ``handoff_to_<agent>`` tool is a
transfer to that agent even when its run failed before the delegate started, and such a tool that names an
agent already running above it (an output tool that ends the delegate's run) hands the conversation back.

The agent graph (tools per agent, delegation edges) is read from the objects: each agent's function tools and
output tools, and the agents a tool's function reaches (closure cells and module globals it names).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar

from ...._features.structure._extract import SlugClaims
from ...._features.structure._model import AgentNode, Delegation, Edge, Manifest, ToolNode
from .._base import ToolInfo
from ._profile import Profile
from ._spans import attr as _attr
from ._spans import set_attr as _set

#: A tool whose name says it transfers to an agent (snake-cased agent name after the prefix).
TRANSFER = re.compile(r"^(?:transfer_to|handoff_to)_(?P<agent>.+)$")
#: Instrumentation data format: 6 puts tool results in ``role: tool`` messages, as the GenAI conventions pair them.
FORMAT_VERSION = 6


def _snake(name: str) -> str:
    """An agent name as a tool name spells it (``Seat Booking Agent`` -> ``seat_booking_agent``)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", re.sub(r"\s", "_", name)).lower()


class PydanticAIProfile(Profile):
    """A ``pydantic_ai.Agent`` (its delegates found through its tools)."""

    name: ClassVar[str] = "pydantic_ai"
    extra: ClassVar[str] = "pydantic_ai"

    def instrument(self) -> None:
        # optional heavy dependency: only a PydanticAI agent's run imports it
        from pydantic_ai import Agent

        # optional heavy dependency (as above)
        from pydantic_ai.models.instrumented import InstrumentationSettings

        # Content (messages, tool arguments and results) as span attributes; the global tracer provider,
        # where the capture already sits. Agents with their own ``instrument=`` keep it.
        Agent.instrument_all(InstrumentationSettings(include_content=True, version=FORMAT_VERSION))

    def invoke(self, obj: Any, input: str) -> Any:
        return obj.run(input)

    def is_async(self, obj: Any) -> bool:
        return True

    def output(self, result: Any) -> Any:
        value = getattr(result, "output", result)
        dump = getattr(value, "model_dump", None)
        return super().output(dump(mode="json") if callable(dump) else value)

    def describe(self, obj: Any) -> dict[str, Any]:
        # optional heavy dependency: the version of the framework the object comes from (already imported)
        from pydantic_ai import __version__

        described = super().describe(obj)
        model = getattr(obj, "model", None)
        model_name = model if isinstance(model, str) or model is None else getattr(model, "model_name", None)
        return {**described, "pydantic_ai": __version__, "name": getattr(obj, "name", None), "model": model_name}

    # -- the agent graph ------------------------------------------------------------------------------
    def tools(self, obj: Any) -> list[ToolInfo]:
        """Every agent's function tools and output tools (a delegation tool too: the model calls it)."""
        return [
            ToolInfo(tool.name, tool.description or "", dict(tool.parameters or {}), agent_name(agent))
            for agent in agents_of(obj)
            for tool in _tool_defs(agent)
        ]

    def manifest(self, obj: Any) -> Manifest:
        """The coordination graph: agents, tools per agent (allow edges), delegations by tool (``as_tool``).

        ``system`` is the entry agent's slug and ``source`` is unset: the caller names both.
        """
        agents = list(agents_of(obj))
        claims = SlugClaims()
        ids = [claims.claim(agent_name(a)) for a in agents]
        agent_ids = {id(a): ids[i] for i, a in enumerate(agents)}
        by_name = {_snake(agent_name(a)): a for a in agents}
        tools: list[ToolNode] = []
        tool_ids: dict[tuple[str, str], str] = {}
        allow: list[Edge] = []
        delegations: list[Delegation] = []
        for agent in agents:
            reached = {id(a) for a in _delegates(agent)}
            for tool in _tool_defs(agent):
                target = _target_of(tool.name, by_name)
                if target is not None and (id(target) in reached or tool.kind == "output"):
                    via = "as_tool" if id(target) in reached else "handoff"
                    delegations.append(Delegation(agent_ids[id(agent)], agent_ids[id(target)], via, "delegate",
                                                  tool.name))
                    continue
                key = (tool.name, tool.description or "")
                if key not in tool_ids:
                    tool_ids[key] = claims.claim(tool.name)
                    tools.append(ToolNode(tool_ids[key], tool.name, "function", _first_line(tool.description),
                                          dict(tool.parameters or {})))
                allow.append((agent_ids[id(agent)], tool_ids[key]))
        return Manifest(
            system=ids[0],
            entry_agent=ids[0],
            agents=tuple(AgentNode(agent_ids[id(a)], agent_name(a), "agent", _first_line(_instructions(a)))
                         for a in agents),
            tools=tuple(tools),
            allow=tuple(dict.fromkeys(allow)),
            delegations=tuple(dict.fromkeys(delegations)),
            notes=("PydanticAI delegation: a tool whose function runs another agent is an 'as_tool' delegation; "
                   "an output tool transfer_to_<agent> hands back ('handoff')",),
        )

    # -- spans ----------------------------------------------------------------------------------------
    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Transfers named as such: a delegation's target, and a hand-back as a GenAI handoff span."""
        by_id = {s.get("spanId"): s for s in spans}
        agents = {
            _snake(name): name
            for s in spans
            if _attr(s, "gen_ai.operation.name") == "invoke_agent" and (name := _attr(s, "gen_ai.agent.name"))
        }
        for span in spans:
            if _attr(span, "gen_ai.operation.name") != "execute_tool":
                continue
            found = TRANSFER.match(str(_attr(span, "gen_ai.tool.name") or ""))
            target = agents.get(found.group("agent")) if found else None
            if target is None:
                continue
            source = _attr(span, "gen_ai.agent.name")
            if target in _running_above(span, by_id):
                _set(span, "gen_ai.operation.name", "handoff")  # back to an agent that is waiting for the answer
                _set(span, "gen_ai.handoff.from_agent", source or "")
                _set(span, "gen_ai.handoff.to_agent", target)
            else:
                _set(span, "gen_ai.transfer.target.name", target)
                _set(span, "gen_ai.transfer.mode", "return_to_caller")  # a delegation: its answer comes back
        return spans


# -- reading agents -----------------------------------------------------------------------------------
class _ToolDef:
    def __init__(self, name: str, description: str | None, parameters: Any, kind: str, function: Any) -> None:
        self.name, self.description, self.parameters, self.kind, self.function = (
            name, description, parameters, kind, function,
        )  # fmt: skip


def agent_name(agent: Any) -> str:
    return str(getattr(agent, "name", None) or "agent")


def _is_agent(value: Any) -> bool:
    return any(
        cls.__name__ == "Agent" and (cls.__module__ or "").startswith("pydantic_ai") for cls in type(value).__mro__
    )


def _instructions(agent: Any) -> str:
    parts = getattr(agent, "_instructions", None)
    if isinstance(parts, str):
        return parts
    texts = [p if isinstance(p, str) else getattr(p, "instruction", None) for p in parts or ()]
    return "\n".join(t for t in texts if isinstance(t, str))


def _first_line(text: object) -> str:
    return text.strip().splitlines()[0].strip() if isinstance(text, str) and text.strip() else ""


def _function_tools(agent: Any) -> Iterator[Any]:
    for toolset in getattr(agent, "toolsets", ()) or ():
        tools = getattr(toolset, "tools", None)
        if isinstance(tools, dict):
            yield from tools.values()


def _output_tools(agent: Any) -> Iterator[Any]:
    schema = getattr(agent, "_output_schema", None)
    toolset = getattr(schema, "toolset", None)
    for tool_def in getattr(toolset, "_tool_defs", None) or ():
        processor = getattr(toolset, "processors", {}).get(tool_def.name)
        yield tool_def, getattr(getattr(processor, "_function_schema", None), "function", None)


def _tool_defs(agent: Any) -> list[_ToolDef]:
    found = [
        _ToolDef(t.name, t.description, t.function_schema.json_schema, "function", t.function)
        for t in _function_tools(agent)
    ]
    for tool_def, function in _output_tools(agent):
        found.append(
            _ToolDef(tool_def.name, tool_def.description, tool_def.parameters_json_schema, "output", function)
        )
    return found


def _referenced(function: Any) -> Iterator[Any]:
    """Values a function reaches by name: its closure cells and the module globals its code names."""
    for cell in getattr(function, "__closure__", None) or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            continue
    code = getattr(function, "__code__", None)
    module_globals = getattr(function, "__globals__", {})
    for name in getattr(code, "co_names", ()):
        if name in module_globals:
            yield module_globals[name]


def _delegates(agent: Any) -> list[Any]:
    """The agents this agent's tool functions run."""
    found: dict[int, Any] = {}
    for tool in _tool_defs(agent):
        for value in _referenced(tool.function):
            if _is_agent(value) and value is not agent:
                found.setdefault(id(value), value)
    return list(found.values())


def agents_of(root: Any) -> list[Any]:
    """The root agent and every agent reachable through delegation tools, breadth first."""
    seen: dict[int, Any] = {id(root): root}
    queue = [root]
    while queue:
        for delegate in _delegates(queue.pop(0)):
            if id(delegate) not in seen:
                seen[id(delegate)] = delegate
                queue.append(delegate)
    return list(seen.values())


def _target_of(tool_name: str, by_snake: dict[str, Any]) -> Any:
    found = TRANSFER.match(tool_name)
    return by_snake.get(found.group("agent")) if found else None


# -- OTLP span dicts ------------------------------------------------------------------------------------


def _running_above(span: dict[str, Any], by_id: dict[Any, dict[str, Any]]) -> set[str]:
    """Agents whose ``invoke_agent`` span encloses this one, except the span's own agent."""
    own = _attr(span, "gen_ai.agent.name")
    names: set[str] = set()
    parent = by_id.get(span.get("parentSpanId"))
    hops = 0
    while parent is not None and hops < 10_000:
        if _attr(parent, "gen_ai.operation.name") == "invoke_agent":
            name = _attr(parent, "gen_ai.agent.name")
            if name and name != own:
                names.add(name)
        parent = by_id.get(parent.get("parentSpanId"))
        hops += 1
    return names
