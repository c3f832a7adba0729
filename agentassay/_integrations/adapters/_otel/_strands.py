"""Strands Agents: an ``Agent`` or a ``multiagent.Swarm``, traced by Strands' own OpenTelemetry tracer.

Strands reports GenAI spans (``invoke_swarm`` > ``invoke_agent <name>`` > ``execute_event_loop_cycle`` >
``chat`` / ``execute_tool <tool>``) on the global tracer provider. Its tracer is a singleton made when the
first agent is built, usually when the agent's module is imported, before AgentAssay runs: it then holds
OpenTelemetry's proxy provider, which forwards to the SDK provider the capture installs later, so nothing
has to happen before that import. The message content is on span attributes only with
``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental,...,gen_ai_span_attributes_only`` (:attr:`env`),
which the tracer reads when it is made: AgentAssay sets it before importing the agent's module (a value the
user set is kept; without these options the trace has no tool arguments, results or messages), and a tracer
made before that (an agent built earlier in the process) is replaced for the trials' agents.

What :meth:`StrandsProfile.fix_spans` repairs:

* agents: tool and chat spans name no agent; each gets ``gen_ai.agent.name`` from its ``invoke_agent`` span;
* handoffs: a swarm's handoff is its ``handoff_to_agent(agent_name, message, context)`` tool; a successful
  call becomes a GenAI handoff span from the calling agent to ``agent_name``;
* results: a tool's ``gen_ai.tool.call.result`` is Strands' tool-result content list; it becomes its text
  (a result with ``status: error`` is the span's error);
* the workflow: ``invoke_swarm`` is a workflow, not an agent, so no step is credited to it.

Strands agents keep their conversation (and a swarm its state) from one call to the next and refuse
concurrent calls, so each trial runs a fresh copy (:func:`fresh`): each agent's model, system prompt, tools,
name, description, state and initial messages, and the swarm's limits. Hooks, plugins, session and
conversation managers are not copied; streamed text is not printed.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
from collections.abc import Mapping
from typing import Any, ClassVar

from .._base import ToolInfo
from ._profile import Profile
from ._spans import as_handoff
from ._spans import attrs as _attrs
from ._spans import loads_json as _json
from ._spans import set_attr as _set

HANDOFF_TOOL = "handoff_to_agent"  # the tool a Swarm gives each of its agents
SEMCONV = "gen_ai_latest_experimental,gen_ai_tool_definitions,gen_ai_span_attributes_only"


class StrandsProfile(Profile):
    """A Strands ``Agent`` or ``Swarm``, run with ``invoke_async(input)`` on a fresh copy per trial."""

    name: ClassVar[str] = "strands"
    extra: ClassVar[str] = "strands"
    env: ClassVar[Mapping[str, str]] = {"OTEL_SEMCONV_STABILITY_OPT_IN": SEMCONV}

    def __init__(self) -> None:
        self._locks: dict[tuple[int, int], asyncio.Lock] = {}  # objects that cannot be copied run one trial at a time

    def instrument(self) -> None:
        """Strands' tracer is built in (on the global provider, where the capture listens): make it read the
        content opt-in, even when an agent was built before AgentAssay set it."""
        # optional heavy dependency: Strands comes with agentassay[strands]
        from strands.telemetry import tracer as strands_tracer

        for key, value in self.env.items():  # also when the agent was not imported by AgentAssay
            os.environ.setdefault(key, value)
        made = getattr(strands_tracer, "_tracer_instance", None)
        if made is not None and not made.use_latest_genai_conventions and _opted_in():
            # Made before the opt-in was set (an agent built before AgentAssay set it): the fresh agents each
            # trial runs take a new one, which reads it.
            strands_tracer._tracer_instance = None

    def invoke(self, obj: Any, input: str) -> Any:
        copied = fresh(obj)
        if copied is not None:
            return copied.invoke_async(input)
        return self._one_at_a_time(obj, input)

    async def _one_at_a_time(self, obj: Any, input: str) -> Any:
        # A lock per event loop: a process may run several (one per command).
        lock = self._locks.setdefault((id(obj), id(asyncio.get_running_loop())), asyncio.Lock())
        async with lock:
            return await obj.invoke_async(input)

    def is_async(self, obj: Any) -> bool:
        return True

    def output(self, result: Any) -> Any:
        """The final text: the agent's answer, or the answer of the swarm's last agent."""
        history = getattr(result, "node_history", None)
        results = getattr(result, "results", None)
        if history and isinstance(results, Mapping):
            last = results.get(getattr(history[-1], "node_id", None))
            inner = getattr(last, "result", None)
            if inner is not None and not isinstance(inner, BaseException):
                return self.output(inner)
        if hasattr(result, "message") and hasattr(result, "stop_reason"):  # an AgentResult
            return str(result).strip()
        return super().output(result)

    def describe(self, obj: Any) -> dict[str, Any]:
        # optional heavy dependency: only to report the framework's version
        from importlib.metadata import version

        agents = [a.name for a in agents_of(obj)]
        return {**super().describe(obj), "agents": agents, "strands": version("strands-agents")}

    def tools(self, obj: Any) -> list[ToolInfo]:
        """Every tool of every agent (the swarm's handoff tool excluded: it is a handoff, not a call)."""
        out = []
        for agent in agents_of(obj):
            for name, tool in _registry(agent).items():
                if name == HANDOFF_TOOL:
                    continue
                spec = getattr(tool, "tool_spec", None) or {}
                schema = (spec.get("inputSchema") or {}).get("json")
                out.append(ToolInfo(name, spec.get("description") or "", schema, str(agent.name)))
        return out

    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return fix_spans(spans)


def _opted_in() -> bool:
    values = os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "").split(",")
    return "gen_ai_latest_experimental" in {v.strip() for v in values}


# -- the agent graph --------------------------------------------------------------------------------
def agents_of(obj: Any) -> list[Any]:
    """The agents of a swarm (its nodes' agents, in order), or the agent itself."""
    nodes = getattr(obj, "nodes", None)
    if isinstance(nodes, Mapping):
        return [getattr(n, "executor", n) for n in nodes.values() if hasattr(getattr(n, "executor", n), "name")]
    return [obj] if hasattr(obj, "tool_registry") else []


def _registry(agent: Any) -> dict[str, Any]:
    registry = getattr(getattr(agent, "tool_registry", None), "registry", None)
    return dict(registry) if isinstance(registry, Mapping) else {}


def _copy_agent(agent: Any) -> Any:
    # optional heavy dependency: Strands comes with agentassay[strands]
    from strands import Agent

    return Agent(
        model=agent.model,
        messages=copy.deepcopy(agent.messages),
        tools=[t for name, t in _registry(agent).items() if name != HANDOFF_TOOL],
        system_prompt=agent.system_prompt,
        callback_handler=None,
        record_direct_tool_call=agent.record_direct_tool_call,
        trace_attributes=dict(agent.trace_attributes or {}),
        agent_id=agent.agent_id,
        name=agent.name,
        description=agent.description,
        state=copy.deepcopy(agent.state.get()),
    )


def fresh(obj: Any) -> Any:
    """A copy of an ``Agent`` or ``Swarm`` for one trial (module docstring), or None for other objects."""
    # optional heavy dependency: Strands comes with agentassay[strands]
    from strands import Agent
    from strands.multiagent import Swarm

    if type(obj) is Agent:
        return _copy_agent(obj)
    if type(obj) is not Swarm:
        return None
    agents = {node_id: _copy_agent(node.executor) for node_id, node in obj.nodes.items()}
    entry = obj.entry_point.name if obj.entry_point is not None else next(iter(agents))
    return Swarm(
        list(agents.values()),
        entry_point=agents[entry],
        max_handoffs=obj.max_handoffs,
        max_iterations=obj.max_iterations,
        execution_timeout=obj.execution_timeout,
        node_timeout=obj.node_timeout,
        repetitive_handoff_detection_window=obj.repetitive_handoff_detection_window,
        repetitive_handoff_min_unique_agents=obj.repetitive_handoff_min_unique_agents,
        id=obj.id,
        trace_attributes=dict(obj.trace_attributes or {}),
    )


# -- span repair (OTLP JSON span objects) -----------------------------------------------------------
_OP = "gen_ai.operation.name"


def result_text(result: Any) -> str | None:
    """Strands' tool-result content (``[{"text": ...}, {"json": ...}]``) as one text; None if it is not one."""
    blocks = _json(result)
    if not isinstance(blocks, list) or not all(isinstance(b, Mapping) for b in blocks):
        return None
    parts = []
    for block in blocks:
        if isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif "json" in block:
            parts.append(json.dumps(block["json"], ensure_ascii=False))
    return "\n".join(parts)


def _enclosing_agent(span: Mapping[str, Any], spans: list[dict[str, Any]], agents: dict[str, str]) -> str | None:
    by_id = {s.get("spanId"): s for s in spans}
    parent, seen = span.get("parentSpanId"), 0
    while parent in by_id and seen < len(spans):
        if parent in agents:
            return agents[parent]
        parent, seen = by_id[parent].get("parentSpanId"), seen + 1
    return None


def _handoff(span: dict[str, Any], attrs: Mapping[str, Any], source: str | None) -> bool:
    """A successful ``handoff_to_agent`` call as a GenAI handoff span; False when it is not one."""
    arguments = _json(attrs.get("gen_ai.tool.call.arguments"))
    target = arguments.get("agent_name") if isinstance(arguments, Mapping) else None
    if not isinstance(target, str) or not target or attrs.get("gen_ai.tool.status") == "error":
        return False
    as_handoff(span, source, target, HANDOFF_TOOL, attrs.get("gen_ai.tool.call.id"))
    return True


def fix_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Strands' spans, repaired (see the module docstring); the input is not modified."""
    spans = copy.deepcopy(spans)
    attrs = [_attrs(s) for s in spans]
    agents = {
        s.get("spanId"): str(a.get("gen_ai.agent.name"))
        for s, a in zip(spans, attrs, strict=True)
        if a.get(_OP) == "invoke_agent" and a.get("gen_ai.agent.name")
    }
    for span, a in zip(spans, attrs, strict=True):
        op = a.get(_OP)
        if op in ("invoke_swarm", "invoke_graph"):
            _set(span, _OP, "invoke_workflow")  # the multi-agent run: a workflow, not an agent
        elif op == "execute_event_loop_cycle":  # one turn of an agent's loop: nothing a step records
            span["attributes"] = [kv for kv in span.get("attributes") or [] if not kv["key"].startswith("gen_ai.")]
        elif op in ("execute_tool", "chat"):
            agent = a.get("gen_ai.agent.name") or _enclosing_agent(span, spans, agents)
            if op == "execute_tool" and a.get("gen_ai.tool.name") == HANDOFF_TOOL and _handoff(span, a, agent):
                continue
            _set(span, "gen_ai.agent.name", agent)
            text = result_text(a.get("gen_ai.tool.call.result")) if op == "execute_tool" else None
            if text is not None:
                _set(span, "gen_ai.tool.call.result", text)
                if a.get("gen_ai.tool.status") == "error":
                    span["status"] = {"code": 2, "message": text}
    return spans
