"""LangGraph: a compiled graph (``CompiledStateGraph`` / ``Pregel``), traced by OpenInference's LangChain instrumentor.

What OpenInference records for a multi-agent graph, and what :meth:`LangGraphProfile.fix_spans` repairs:

* agents: it marks every span whose name contains "agent" as an AGENT (the inner ``agent`` node of each
  ``create_react_agent``, the subgraph's own span such as ``seat_booking_agent``, even a
  ``transfer_to_x_agent`` tool), so steps were credited to those names and the transfer was an agent. The agents are the parent graph's nodes that run a subgraph (the first segment of
  ``langgraph_checkpoint_ns`` in the span's metadata), or the graph itself when it has no subgraphs;
  those spans become the AGENT spans, named after the node, and no other span is one;
* handoffs: a ``transfer_to_<agent>`` / ``transfer_back_to_<agent>`` tool (the pattern of LangGraph's
  multi-agent docs, langgraph-supervisor and langgraph-swarm) returns ``Command(goto=<node>,
  graph=Command.PARENT)``: its span becomes a GenAI handoff span from the enclosing agent to ``goto``;
* results: a tool's ``output.value`` is the serialized ``ToolMessage``; it becomes the message's content (a
  ToolNode's ``status: error`` message is the span's error);
* errors: a span's status message is the exception without the traceback OpenInference appends;
* size: the copies of the whole graph state on every chain and model span are dropped (:func:`_slim`);
* arguments: taken from the tool call the ``tools`` node ran (``tool_call.args``, JSON typed as the model
  sent them), so a string stays a string whatever the tool's input text looked like.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Mapping
from importlib import metadata
from typing import Any, ClassVar

from .._base import ToolInfo
from ._profile import Profile
from ._spans import as_handoff
from ._spans import attrs as _attrs
from ._spans import loads_json as _json
from ._spans import set_attr as _set

#: Tools that pass control to another node of the parent graph (LangGraph docs, supervisor, swarm).
HANDOFF_TOOL = re.compile(r"^transfer_(?:back_)?to_(.+)$")
_KIND = "openinference.span.kind"


class LangGraphProfile(Profile):
    """A compiled LangGraph graph, run with ``ainvoke({"messages": [("user", input)]})``."""

    name: ClassVar[str] = "langgraph"
    extra: ClassVar[str] = "langgraph"
    env: ClassVar[Mapping[str, str]] = {
        # LangSmith's own tracing stays off unless the user turns it on (it would send runs to its API).
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
    }

    def instrument(self) -> None:
        # optional heavy dependency: the instrumentors come with agentassay[langgraph]
        from openinference.instrumentation.langchain import LangChainInstrumentor

        LangChainInstrumentor().instrument()

    def invoke(self, obj: Any, input: str) -> Any:
        return obj.ainvoke({"messages": [("user", input)]})  # in the adapter's one framework loop

    def is_async(self, obj: Any) -> bool:
        """A graph runs through ``ainvoke``; a user's callable (``framework: langgraph``) is what it is."""
        return _is_graph(obj) or super().is_async(obj)

    def output(self, result: Any) -> Any:
        """The text of the last AI message of the final state."""
        messages = result.get("messages") if isinstance(result, Mapping) else None
        for message in reversed(messages or []):
            if getattr(message, "type", None) == "ai":
                return _content_text(getattr(message, "content", None))
        return super().output(result)

    def describe(self, obj: Any) -> dict[str, Any]:
        try:
            version: str | None = metadata.version("langgraph")
        except metadata.PackageNotFoundError:  # vendored or run from a source tree
            version = None
        return {**super().describe(obj), "name": getattr(obj, "name", None), "langgraph": version}

    # -- the agent graph ------------------------------------------------------------------------------
    def tools(self, obj: Any) -> list[ToolInfo]:
        """Every tool of every agent node (handoff tools excluded: they are handoffs, not calls)."""
        return [
            ToolInfo(t.name, t.description or "", _parameters(t), agent)
            for agent, tools in agent_tools(obj).items()
            for t in tools
            if not HANDOFF_TOOL.match(t.name)
        ]

    def manifest(self, obj: Any) -> dict[str, Any]:
        """The agent graph for structural coverage: entry agent, agents with their tools, handoff edges.

        ``{"entry": name, "agents": [{"name", "description", "tools": [ToolInfo]}], "handoffs": [(source,
        target, tool or None)]}``; a handoff is a ``transfer_to_<agent>`` tool, or a node's declared
        destination (``add_node(..., destinations=...)``) when no tool names it.
        """
        by_agent = agent_tools(obj)
        names = list(by_agent)
        snakes = {_snake(n): n for n in names}
        handoffs: list[tuple[str, str, str | None]] = []
        agents = []
        for agent, tools in by_agent.items():
            plain = []
            for t in tools:
                found = HANDOFF_TOOL.match(t.name)
                target = snakes.get(found.group(1)) if found else None
                if target is not None:
                    handoffs.append((agent, target, t.name))
                else:
                    plain.append(ToolInfo(t.name, t.description or "", _parameters(t), agent))
            agents.append({"name": agent, "description": _description(obj, agent), "tools": plain})
        for source, targets in _destinations(obj).items():
            for target in targets:
                if source in by_agent and target in by_agent and all(h[:2] != (source, target) for h in handoffs):
                    handoffs.append((source, target, None))
        return {"entry": _entry(obj, names), "agents": agents, "handoffs": handoffs}

    # -- spans ----------------------------------------------------------------------------------------
    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return fix_spans(spans)


# -- reading the compiled graph ---------------------------------------------------------------------
def _is_graph(obj: Any) -> bool:
    return isinstance(getattr(obj, "nodes", None), Mapping) and hasattr(obj, "builder")


def _tool_node_tools(graph: Any) -> list[Any]:
    found: list[Any] = []
    for node in graph.nodes.values():
        by_name = getattr(getattr(node, "bound", None), "tools_by_name", None)
        if isinstance(by_name, Mapping):
            found.extend(by_name.values())
    return found


def agent_tools(graph: Any) -> dict[str, list[Any]]:
    """Agent name -> its LangChain tools: each node that runs a subgraph is an agent (its ToolNodes' tools);
    a graph without subgraphs is one agent, named after the graph."""
    agents: dict[str, list[Any]] = {}
    for name, node in graph.nodes.items():
        bound = getattr(node, "bound", None)
        if _is_graph(bound):
            agents[name] = _tool_node_tools(bound)
    if not agents:
        agents[str(getattr(graph, "name", None) or "LangGraph")] = _tool_node_tools(graph)
    return agents


def _parameters(tool: Any) -> dict[str, Any] | None:
    # optional heavy dependency: LangChain's own OpenAI-schema conversion (what the model is offered)
    from langchain_core.utils.function_calling import convert_to_openai_tool

    try:
        return dict(convert_to_openai_tool(tool)["function"].get("parameters") or {})
    except Exception:  # a tool LangChain cannot describe: listed without a schema
        return None


def _destinations(graph: Any) -> dict[str, tuple[str, ...]]:
    builder = getattr(graph, "builder", None)
    out: dict[str, list[str]] = {}
    for name, spec in (getattr(builder, "nodes", None) or {}).items():
        ends = getattr(spec, "ends", None) or ()
        out[name] = list(ends.keys() if isinstance(ends, Mapping) else ends)
    for source, target in getattr(builder, "edges", None) or ():
        out.setdefault(source, []).append(target)
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def _entry(graph: Any, agents: list[str]) -> str:
    """The agent START leads to (the first agent when START branches or leads elsewhere)."""
    first = _destinations(graph).get("__start__", ())
    return next((t for t in first if t in agents), agents[0])


def _description(graph: Any, agent: str) -> str:
    node = graph.nodes.get(agent)
    bound = getattr(node, "bound", None)
    text = getattr(bound, "description", None) or getattr(node, "metadata", None) or ""
    return text if isinstance(text, str) else ""


def _snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _content_text(content: Any) -> Any:
    """A message's content as text: a string, or the text blocks of a list joined."""
    if isinstance(content, list):
        parts = [
            p if isinstance(p, str) else p.get("text", "")
            for p in content
            if isinstance(p, str) or (isinstance(p, Mapping) and p.get("type", "text") == "text")
        ]
        return "".join(parts)
    return content


# -- span repair (OTLP JSON span objects) -----------------------------------------------------------


def _namespace(meta: Mapping[str, Any]) -> list[str]:
    """``"Triage Agent:<id>|tools:<id>"`` -> ``["Triage Agent", "tools"]`` (node names, outermost first)."""
    ns = meta.get("langgraph_checkpoint_ns")
    return [part.rpartition(":")[0] or part for part in ns.split("|")] if isinstance(ns, str) and ns else []


def _agent_spans(spans: list[dict[str, Any]], attrs: list[dict[str, Any]], metas: list[dict[str, Any]]) -> dict[int, str]:
    """Index of each span that is an agent -> the agent's name."""
    subgraph_nodes = {ns[0] for ns in map(_namespace, metas) if len(ns) > 1}
    agents: dict[int, str] = {}
    if subgraph_nodes:
        for i, (span, meta) in enumerate(zip(spans, metas, strict=True)):
            ns = _namespace(meta)
            name = span.get("name")
            if len(ns) == 1 and ns[0] == name == meta.get("langgraph_node") and name in subgraph_nodes:
                agents[i] = name
        return agents
    # No subgraphs: the graph itself is the agent (its outermost span, which names no node).
    ids = {s.get("spanId") for s, m in zip(spans, metas, strict=True) if "ls_integration" in m}
    for i, (span, meta) in enumerate(zip(spans, metas, strict=True)):
        kind = str(attrs[i].get(_KIND, "")).upper()
        if (
            "ls_integration" in meta and "langgraph_node" not in meta and kind in ("CHAIN", "AGENT")
            and span.get("parentSpanId") not in ids
        ):
            agents[i] = str(meta.get("lc_agent_name") or span.get("name") or "LangGraph")
    return agents


def _enclosing(index: int, spans: list[dict[str, Any]], agents: dict[int, str], by_id: dict[str, int]) -> str | None:
    seen = 0
    parent = spans[index].get("parentSpanId")
    while parent in by_id and seen < len(spans):
        j = by_id[parent]
        if j in agents:
            return agents[j]
        parent, seen = spans[j].get("parentSpanId"), seen + 1
    return None


def _tool_result(span: dict[str, Any], attrs: Mapping[str, Any]) -> None:
    """A serialized ToolMessage as its content; an error message as the span's error."""
    message = _json(attrs.get("output.value"))
    if not (isinstance(message, Mapping) and message.get("type") == "tool" and isinstance(message.get("data"), Mapping)):
        return
    data = message["data"]
    content = _content_text(data.get("content"))
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    _set(span, "output.value", text)
    _set(span, "output.mime_type", "application/json" if _json(text) is not None else "text/plain")
    if data.get("status") == "error":
        span["status"] = {"code": 2, "message": text}


def _tool_call(spans: list[dict[str, Any]], index: int, by_id: dict[str, int], attrs: list[dict[str, Any]]) -> Mapping[str, Any] | None:
    """The tool call the enclosing ``tools`` node ran for this span: its input is one call (``create_react_agent``)
    or the list of calls (``create_agent``); same-named calls pair with same-named tool spans in start order."""
    parent_id = spans[index].get("parentSpanId")
    parent = by_id.get(parent_id) if isinstance(parent_id, str) else None
    if parent is None:
        return None
    given = _json(attrs[parent].get("input.value"))
    if isinstance(given, Mapping):
        given = [given.get("tool_call")]
    name = attrs[index].get("tool.name")
    calls = [c for c in given if isinstance(c, Mapping) and c.get("name") == name] if isinstance(given, list) else []
    siblings = sorted(
        (j for j, s in enumerate(spans) if s.get("parentSpanId") == parent_id and attrs[j].get("tool.name") == name),
        key=lambda j: (int(spans[j].get("startTimeUnixNano") or 0), j),
    )
    position = siblings.index(index)
    return calls[position] if position < len(calls) else None


def _arguments(span: dict[str, Any], attrs: Mapping[str, Any], call: Mapping[str, Any] | None) -> None:
    if call is not None and isinstance(call.get("args"), Mapping):
        _set(span, "input.value", json.dumps(call["args"], ensure_ascii=False))
        _set(span, "input.mime_type", "application/json")
        if isinstance(call.get("id"), str):
            _set(span, "tool.id", call["id"])
        return
    raw = attrs.get("input.value")
    if isinstance(raw, str) and _json(raw) is None and raw[:1] == "{":
        try:  # the Python repr of the input dict, as LangChain's callbacks pass it
            literal = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return
        if isinstance(literal, dict):
            _set(span, "input.value", json.dumps(literal, ensure_ascii=False, default=str))


def _handoff(span: dict[str, Any], attrs: Mapping[str, Any], source: str | None, suffix: str, agents: set[str]) -> None:
    """The handoff tool's span as a GenAI handoff span: from the enclosing agent to the Command's ``goto``."""
    command = _json(attrs.get("output.value"))
    goto = command.get("goto") if isinstance(command, Mapping) else None
    if isinstance(goto, list) and goto:
        goto = goto[0]
    target = goto if isinstance(goto, str) and goto else next((a for a in agents if _snake(a) == suffix), suffix)
    as_handoff(span, source, target, attrs.get("tool.name"))
    _set(span, "metadata", str(attrs.get("metadata", "")))


_STATE = frozenset({"metadata", "input.value", "output.value", "input.mime_type", "output.mime_type"})


def _slim(span: dict[str, Any], *, keep_values: bool) -> None:
    """Drop what the importer does not read: LangGraph's run metadata, and the copies of the whole graph state
    that every chain, agent and model span carries as its input and output (the model's messages are in
    ``llm.*``). A tool's input and output, and the outermost span's (the run's own), stay. A trial's trace
    is the same; building it takes a tenth of the time (20 -> 3 ms for the example's 19 spans)."""
    drop = {"metadata"} if keep_values else _STATE
    span["attributes"] = [kv for kv in span.get("attributes") or [] if kv.get("key") not in drop]


def fix_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """LangGraph's OpenInference spans, repaired (see the module docstring); the input is not modified."""
    spans = copy.deepcopy(spans)
    attrs = [_attrs(s) for s in spans]
    metas = [m if isinstance(m := _json(a.get("metadata")), dict) else {} for a in attrs]
    by_id = {s.get("spanId"): i for i, s in enumerate(spans)}
    agents = _agent_spans(spans, attrs, metas)
    names = set(agents.values())
    in_graph = {s.get("spanId") for s, m in zip(spans, metas, strict=True) if "ls_integration" in m}
    for i, (span, a) in enumerate(zip(spans, attrs, strict=True)):
        if "metadata" in a:  # read; the graph state copies need not reach the importer
            _slim(span, keep_values="tool.name" in a or span.get("parentSpanId") not in in_graph)
        status = span.get("status")
        if isinstance(status, dict) and isinstance(status.get("message"), str):  # OpenInference appends the traceback
            status["message"] = status["message"].split("Traceback (most recent call last)")[0].strip()
        if i in agents:
            _set(span, _KIND, "AGENT")
            _set(span, "agent.name", agents[i])
            continue
        tool = a.get("tool.name")
        found = HANDOFF_TOOL.match(tool) if isinstance(tool, str) else None
        if found is not None:
            _handoff(span, a, _enclosing(i, spans, agents, by_id), found.group(1), names)
        elif isinstance(tool, str):
            _set(span, _KIND, "TOOL")
            _arguments(span, a, _tool_call(spans, i, by_id, attrs))
            _tool_result(span, a)
        elif str(a.get(_KIND, "")).upper() == "AGENT":
            _set(span, _KIND, "CHAIN")
    return spans
