"""smolagents: a ``MultiStepAgent`` (``ToolCallingAgent``, ``CodeAgent``), traced by OpenInference.

What ``openinference-instrumentation-smolagents`` records, and what :meth:`SmolagentsProfile.fix_spans`
repairs:

* agents: each run is an AGENT span ``<name>.run`` without ``agent.name``; the name comes from the span name
  (an unnamed agent's span is named after its class);
* tool calls: a TOOL span per call, named after the tool's class, its ``tool.name`` set, its arguments wrapped
  as ``{"args": [...], "kwargs": {...}}``: they become the call's keyword arguments (positional ones named
  after the tool's parameters), and the result, an arbitrary ``str()``, stays text;
* delegation: a managed agent is called as a tool named after it, but runs without a TOOL span (the
  manager calls the agent directly, its ``<name>.run`` span nested in the manager's step). A TOOL span of
  that name is put around the run, with the arguments and call id the manager's model chose (``task``) and
  the agent's answer as its result: the importer reads a tool span with an agent inside as a delegation,
  so the trace shows ``HANDOFF triage -> specialist`` (tool ``<specialist>``), the specialist's steps and
  answer one level deeper, then the manager again;
* ``final_answer``: a run ends by calling this built-in tool. Its span is dropped (it is the run's answer,
  not a tool the agent used: counting it would put it in every tool check and coverage figure), and the
  answer becomes the text of the model call that chose it, which is where the importer reads a run's output;
* tokens: the LLM spans carry ``llm.token_count.*`` already; the agent spans' run totals are removed so a
  total is never counted twice.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar

from .._base import ToolInfo
from ._profile import Profile
from ._spans import attrs as _attrs
from ._spans import loads_json as _json
from ._spans import set_attr as _set

_KIND = "openinference.span.kind"
FINAL_ANSWER = "final_answer"
_RUN = re.compile(r"^(.+)\.run$")
_CALLS = "llm.output_messages.0.message.tool_calls."
_TOKEN_KEYS = ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total")


class SmolagentsProfile(Profile):
    """A smolagents agent, run with ``agent.run(input)`` on a per-trial copy (its run lives in the agent)."""

    name: ClassVar[str] = "smolagents"
    extra: ClassVar[str] = "smolagents"
    env: ClassVar[Mapping[str, str]] = {}  # smolagents sends no telemetry of its own

    def instrument(self) -> None:
        # optional heavy dependency: the instrumentor comes with agentassay[smolagents]
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor

        instrumentor = SmolagentsInstrumentor()
        if not instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.instrument()

    def invoke(self, obj: Any, input: str) -> Any:
        """``run`` on a fresh copy: an agent's memory, state and step counter belong to one run at a time, so
        concurrent trials on one object would share (and reset) each other's conversation."""
        if not _is_agent(obj):
            return super().invoke(obj, input)
        return trial_copy(obj).run(input)

    def is_async(self, obj: Any) -> bool:
        return False if _is_agent(obj) else super().is_async(obj)

    def output(self, result: Any) -> Any:
        """``run`` returns the final answer, or a ``RunResult`` (``return_full_result=True``) holding it."""
        if hasattr(result, "output") and hasattr(result, "state") and hasattr(result, "steps"):
            result = result.output
        return super().output(result)

    def describe(self, obj: Any) -> dict[str, Any]:
        # optional heavy dependency: only to report the framework's version
        from importlib.metadata import version

        return {
            **super().describe(obj),
            "name": getattr(obj, "name", None),
            "smolagents": version("smolagents"),
        }

    # -- the agent graph ------------------------------------------------------------------------------
    def tools(self, obj: Any) -> list[ToolInfo]:
        """Every tool of every agent (managed agents' too); ``final_answer`` and the managed agents themselves
        are left out (the run's answer and delegations, not tools)."""
        out: list[ToolInfo] = []
        for agent_name, agent in agents(obj).items():
            for tool in (getattr(agent, "tools", None) or {}).values():
                name = getattr(tool, "name", None)
                if isinstance(name, str) and name != FINAL_ANSWER:
                    out.append(
                        ToolInfo(
                            name, str(getattr(tool, "description", "") or ""), _parameters(tool), agent_name
                        )
                    )
        return out

    # -- spans ----------------------------------------------------------------------------------------
    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return fix_spans(spans)


# -- the agent object -------------------------------------------------------------------------------
def _is_agent(obj: Any) -> bool:
    return callable(getattr(obj, "run", None)) and isinstance(getattr(obj, "managed_agents", None), Mapping)


def agent_name(agent: Any) -> str:
    """What smolagents calls the agent in its span names: its ``name``, else its class."""
    return str(getattr(agent, "name", None) or type(agent).__name__)


def agents(obj: Any) -> dict[str, Any]:
    """Agent name -> agent, the manager first, then its managed agents depth first."""
    found: dict[str, Any] = {}
    stack = [obj]
    while stack:
        agent = stack.pop(0)
        name = agent_name(agent)
        if name in found:
            continue
        found[name] = agent
        stack[:0] = list((getattr(agent, "managed_agents", None) or {}).values())
    return found


def trial_copy(agent: Any) -> Any:
    """A shallow copy with its own run state and copies of its managed agents.

    Its own: memory, state, step counter, monitor (and the step callback that feeds it), a local
    ``CodeAgent``'s Python executor. Shared: the model, tools and prompt templates, which hold no run state;
    a remote executor (Docker, E2B, ...) too, so a ``CodeAgent`` on one is best run with ``concurrency: 1``.
    """
    # optional heavy dependency: smolagents' own classes for the copy's fresh run state
    from smolagents.memory import AgentMemory, CallbackRegistry
    from smolagents.monitoring import Monitor

    clone = copy.copy(agent)
    clone.managed_agents = {name: trial_copy(m) for name, m in (agent.managed_agents or {}).items()}
    clone.state = {}
    clone.step_number = 0
    clone.memory = AgentMemory(clone.system_prompt)
    clone.monitor = Monitor(clone.model, clone.logger)
    registry = CallbackRegistry()
    for step_cls, callbacks in getattr(agent.step_callbacks, "_callbacks", {}).items():
        for callback in callbacks:
            if getattr(callback, "__self__", None) is agent.monitor:  # the original's metrics: the copy's own
                callback = getattr(clone.monitor, callback.__name__)
            registry.register(step_cls, callback)
    clone.step_callbacks = registry
    if getattr(agent, "executor_type", None) == "local" and callable(
        getattr(agent, "create_python_executor", None)
    ):
        clone.python_executor = clone.create_python_executor()
    return clone


def _parameters(tool: Any) -> dict[str, Any] | None:
    """The JSON schema the model is offered for this tool (smolagents' own conversion)."""
    # optional heavy dependency: smolagents converts its ``inputs`` format to the OpenAI tool schema
    from smolagents.models import get_tool_json_schema

    try:
        return dict(get_tool_json_schema(tool)["function"]["parameters"])
    except Exception:  # a tool smolagents cannot describe: listed without a schema
        return None


# -- span repair (OTLP JSON span objects) -----------------------------------------------------------


def _kind(attrs: Mapping[str, Any]) -> str:
    return str(attrs.get(_KIND, "")).upper()


def _unwrap(raw: Any, parameters: Any) -> dict[str, Any] | None:
    """``{"args": [...], "kwargs": {...}, ...}`` (how the instrumentor records ``Tool.__call__``) -> the
    keyword arguments (positional ones named after the tool's parameters; the call's options dropped)."""
    given = _json(raw)
    if not (isinstance(given, dict) and ("args" in given or "kwargs" in given)):
        return None
    kwargs = dict(given.get("kwargs") or {}) if isinstance(given.get("kwargs"), dict) else {}
    args = list(given.get("args") or []) if isinstance(given.get("args"), list) else []
    names = list(parameters) if isinstance(parameters, dict) else []
    if len(args) == 1 and isinstance(args[0], dict) and not kwargs and set(args[0]) <= set(names or args[0]):
        return dict(args[0])  # Tool.__call__({"a": 1}): smolagents may pass a dict as the sole argument
    for i, value in enumerate(args):
        kwargs[names[i] if i < len(names) else f"arg{i}"] = value
    return kwargs


def _chosen_calls(
    spans: list[dict[str, Any]], attrs: list[dict[str, Any]], parent: Any
) -> list[tuple[str, Any, Any]]:
    """(tool name, arguments, call id) the LLM spans directly under ``parent`` (a step span) chose."""
    calls: list[tuple[str, Any, Any]] = []
    for span, a in zip(spans, attrs, strict=True):
        if span.get("parentSpanId") != parent or _kind(a) != "LLM":
            continue
        i = 0
        while (prefix := f"{_CALLS}{i}.tool_call.") + "function.name" in a:
            arguments = a.get(prefix + "function.arguments")
            decoded = _json(arguments)
            calls.append(
                (
                    str(a[prefix + "function.name"]),
                    arguments if decoded is None else decoded,
                    a.get(prefix + "id"),
                )
            )
            i += 1
    return calls


def _delegation_span(
    run: dict[str, Any], run_attrs: Mapping[str, Any], target: str, call: Any
) -> dict[str, Any]:
    """The TOOL span smolagents does not record for a managed agent's call: same time and parent as the
    agent's run, which moves under it (the importer reads a tool span with an agent inside as delegation)."""
    span: dict[str, Any] = {
        "traceId": run.get("traceId"),
        "spanId": hashlib.blake2b(f"delegate {run.get('spanId')}".encode(), digest_size=8).hexdigest(),
        "parentSpanId": run.get("parentSpanId"),
        "name": target,
        "kind": 1,
        "startTimeUnixNano": run.get("startTimeUnixNano"),
        "endTimeUnixNano": run.get("endTimeUnixNano"),
        "attributes": [],
        "status": dict(run.get("status") or {}),
    }
    _set(span, _KIND, "TOOL")
    _set(span, "tool.name", target)
    if call is not None:
        arguments, call_id = call
        _set(
            span,
            "input.value",
            json.dumps(arguments, ensure_ascii=False) if not isinstance(arguments, str) else arguments,
        )
        _set(span, "input.mime_type", "application/json")
        _set(span, "tool.id", call_id)
    if run_attrs.get("output.value") is not None:
        _set(span, "output.value", run_attrs["output.value"])
        _set(span, "output.mime_type", "text/plain")
    run["parentSpanId"] = span["spanId"]
    return span


def _answer_as_text(spans: list[dict[str, Any]], attrs: list[dict[str, Any]], step: Any, answer: Any) -> None:
    """The model's ``final_answer`` call becomes its answer text too: the run's output, where the importer
    reads a model's final answer (the last model call of the outermost agent)."""
    if answer is None:
        return
    for span, a in zip(spans, attrs, strict=True):
        if (
            span.get("parentSpanId") == step
            and _kind(a) == "LLM"
            and a.get(f"{_CALLS}0.tool_call.function.name") == FINAL_ANSWER
            and not a.get("llm.output_messages.0.message.content")
        ):
            _set(span, "llm.output_messages.0.message.content", answer)


def _nested(index: int, spans: list[dict[str, Any]], names: dict[int, str], by_id: dict[str, int]) -> bool:
    """Whether this agent span runs inside another agent's span (a managed agent)."""
    parent, seen = spans[index].get("parentSpanId"), 0
    while parent in by_id and seen < len(spans):
        j = by_id[parent]
        if j in names:
            return True
        parent, seen = spans[j].get("parentSpanId"), seen + 1
    return False


def fix_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """smolagents' OpenInference spans, repaired (see the module docstring); the input is not modified."""
    spans = copy.deepcopy(spans)
    attrs = [_attrs(s) for s in spans]
    by_id = {s.get("spanId"): i for i, s in enumerate(spans)}
    names: dict[int, str] = {}
    for i, (span, a) in enumerate(zip(spans, attrs, strict=True)):
        found = _RUN.match(str(span.get("name") or ""))
        if _kind(a) == "AGENT" and found is not None:
            names[i] = found.group(1)
    chosen: dict[Any, dict[str, list[tuple[Any, Any]]]] = {}  # step span id -> tool name -> calls in order
    out: list[dict[str, Any]] = []
    dropped: dict[str, Any] = {}
    for i, (span, a) in enumerate(zip(spans, attrs, strict=True)):
        if i in names:
            _set(span, "agent.name", names[i])
            for key in _TOKEN_KEYS:  # the run's totals: the LLM spans below carry the same tokens
                _set(span, key, None)
            if _nested(i, spans, names, by_id):  # a managed agent: the manager called it as a tool
                step = span.get("parentSpanId")
                if step not in chosen:
                    chosen[step] = {}
                    for name, arguments, call_id in _chosen_calls(spans, attrs, step):
                        chosen[step].setdefault(name, []).append((arguments, call_id))
                queue = chosen[step].get(names[i]) or []
                out.append(_delegation_span(span, a, names[i], queue.pop(0) if queue else None))
        elif _kind(a) == "TOOL":
            if a.get("tool.name") == FINAL_ANSWER:
                dropped[str(span.get("spanId"))] = span.get("parentSpanId")
                _answer_as_text(spans, attrs, span.get("parentSpanId"), a.get("output.value"))
                continue
            arguments = _unwrap(a.get("input.value"), _json(a.get("tool.parameters")))
            if arguments is not None:
                _set(span, "input.value", json.dumps(arguments, ensure_ascii=False, default=str))
                _set(span, "input.mime_type", "application/json")
        out.append(span)
    for span in out:  # children of a dropped span (none expected) hang from its parent instead
        seen = 0
        while span.get("parentSpanId") in dropped and seen < len(spans):
            span["parentSpanId"], seen = dropped[span["parentSpanId"]], seen + 1
    return out
