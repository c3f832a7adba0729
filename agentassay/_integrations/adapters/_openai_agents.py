"""Adapter for the OpenAI Agents SDK: run an ``agents.Agent`` with the real ``Runner`` and return a Trace.

How a trial is observed: ``RunResult.new_items`` and run hooks do not see inside ``Agent.as_tool``
sub-runs, but the SDK's tracing does, so the adapter installs one global tracing processor
(``agents.set_trace_processors``) that records spans, and gives every run its own ``trace_id``
so that spans of trials running concurrently in one event loop are routed to the right trial.
Installing it also replaces the SDK's default exporter, so nothing is sent to OpenAI's tracing
backend. Tool error text is redacted in spans, so it is captured through
``RunConfig(tool_error_formatter=...)``, which runs inside the tool's span.

If tracing is disabled globally (``OPENAI_AGENTS_DISABLE_TRACING``), spans are no-ops and the
trace falls back to ``RunResult.new_items``: top-level steps only, no sub-run steps.

Which model drives the agents comes from ``ModelConfig`` (suite ``model:``), never from code:
``offline`` is the seeded simulator in ``_offline``; ``openai``, ``openai-compatible`` and
``litellm`` are real providers.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import sys
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import agents
import openai
from agents import Agent, Handoff, RunConfig, Runner
from agents.items import HandoffOutputItem, ToolCallItem, ToolCallOutputItem
from agents.model_settings import ModelSettings
from agents.models.interface import Model
from agents.run_config import ToolErrorFormatterArgs
from agents.tool import FunctionTool
from agents.tracing import Span, TracingProcessor, get_current_span, get_trace_provider, set_trace_processors
from agents.tracing import Trace as SdkTrace
from agents.tracing.span_data import AgentSpanData, FunctionSpanData, HandoffSpanData

from ..._spec._model import ModelConfig
from ..._traces import Action, Cost, Step, Trace, TraceMetadata
from ._base import AgentRunError, ToolInfo
from ._base import describe_exception as _describe
from ._offline import MODEL_NAME, Behaviour, OfflineModel, load_behaviour
from ._preflight import key_variable
from ._probe import RESTRICTED_CALL, TOOL_NOT_FOUND, Probe, ProbeInstaller
from ._transient import is_transient as is_transient_error

__all__ = ["OpenAIAgentsAdapter", "Probe", "install_trace_router", "is_transient_error"]


# -- routing spans to trials ----------------------------------------------------------------------
class _Recorder:
    """The spans of one trial (in start order) and the tool errors captured for them."""

    __slots__ = ("errors", "missing", "spans")

    def __init__(self) -> None:
        self.spans: list[Span[Any]] = []
        self.errors: dict[str, str] = {}  # function span id -> error text
        self.missing: list[tuple[str | None, str]] = []  # (agent, tool) calls to tools the agent lacks


class _TraceRouter(TracingProcessor):
    """One global processor; hands each span to the recorder registered for its trace id.

    Spans of traces nobody registered (runs outside AgentAssay) are dropped, which also means
    nothing is exported anywhere.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recorders: dict[str, _Recorder] = {}

    def open(self, trace_id: str) -> _Recorder:
        recorder = _Recorder()
        with self._lock:
            self._recorders[trace_id] = recorder
        return recorder

    def close(self, trace_id: str) -> None:
        with self._lock:
            self._recorders.pop(trace_id, None)

    def on_trace_start(self, trace: SdkTrace) -> None:
        pass

    def on_trace_end(self, trace: SdkTrace) -> None:
        pass

    def on_span_start(self, span: Span[Any]) -> None:
        recorder = self._recorders.get(span.trace_id)
        if recorder is not None:
            recorder.spans.append(span)

    def on_span_end(self, span: Span[Any]) -> None:
        pass  # span data is filled in place; it is read when the run is over

    def shutdown(self) -> None:
        pass

    def force_flush(self) -> None:
        pass


_ROUTER = _TraceRouter()
_INSTALL_LOCK = threading.Lock()
_INSTALLED = False


def _installed_processors() -> tuple[Any, ...] | None:
    multi = getattr(get_trace_provider(), "_multi_processor", None)
    processors = getattr(multi, "_processors", None)
    return tuple(processors) if processors is not None else None


def install_trace_router() -> TracingProcessor:
    """Make the router the SDK's tracing processor; idempotent and thread-safe.

    The first call replaces every processor (the default one exports to OpenAI). Later calls only
    re-add the router if someone removed it, keeping processors the user installed since.
    """
    global _INSTALLED
    with _INSTALL_LOCK:
        current = _installed_processors()
        if not _INSTALLED:
            set_trace_processors([_ROUTER])
            _INSTALLED = True
        elif current is not None and _ROUTER not in current:
            set_trace_processors([*current, _ROUTER])
    return _ROUTER


# -- helpers --------------------------------------------------------------------------------------
def _jsonable(value: Any) -> Any:
    """Tool outputs and final outputs as plain JSON data, so traces serialise and compare."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return _jsonable(dump(mode="json"))
        except Exception:
            return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value))
    return str(value)


def _parse_arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return _jsonable(raw)
    try:
        return json.loads(raw) if raw.strip() else {}
    except ValueError:
        return raw


def _handoff_target(h: Any) -> Agent[Any] | None:
    if isinstance(h, Handoff):
        ref = getattr(h, "_agent_ref", None)
        return ref() if callable(ref) else None
    return h if isinstance(h, Agent) else None


def _agent_tool_target(tool: Any) -> Agent[Any] | None:
    target = getattr(tool, "_agent_instance", None)
    return target if isinstance(target, Agent) else None


def _reachable(start: Agent[Any]) -> list[Agent[Any]]:
    """Every agent reachable through handoffs and ``as_tool``, breadth first, each once."""
    seen: dict[int, Agent[Any]] = {}
    queue = [start]
    while queue:
        agent = queue.pop(0)
        if id(agent) in seen:
            continue
        seen[id(agent)] = agent
        queue.extend(t for t in map(_handoff_target, agent.handoffs) if t is not None)
        queue.extend(t for t in map(_agent_tool_target, agent.tools) if t is not None)
    return list(seen.values())


def _handoff_name(h: Any) -> str:
    return h.agent_name if isinstance(h, Handoff) else getattr(h, "name", str(h))


def _find_behaviour_module(agent: Agent[Any]) -> str | None:
    """The loaded module that defines ``agent`` as a global and has ``OFFLINE_BEHAVIOUR``."""
    for name, module in list(sys.modules.items()):
        try:
            namespace = vars(module)  # not getattr: a module's __getattr__ may import things
        except TypeError:
            continue
        if namespace.get("OFFLINE_BEHAVIOUR") is not None and any(
            v is agent for v in list(namespace.values())
        ):
            return name
    return None


# -- the adapter ----------------------------------------------------------------------------------
class OpenAIAgentsAdapter:
    """Runs an OpenAI Agents SDK agent; one ``run`` is one trial, returned as a ``Trace``.

    ``model`` picks the provider (default: the offline simulator). For ``offline`` the behaviour
    is, in order: ``behaviour`` given here; ``model.behaviour`` (``module:attr`` or a YAML path,
    relative to ``root``); ``OFFLINE_BEHAVIOUR`` of ``module``; else ``OFFLINE_BEHAVIOUR`` of the
    loaded module that holds ``agent`` as a global. Without any, agents answer a fixed text.
    """

    name = "openai-agents"

    def __init__(
        self,
        agent: Agent[Any],
        *,
        model: ModelConfig | None = None,
        behaviour: Mapping[str, Any] | Behaviour | None = None,
        max_turns: int = 10,
        module: str | None = None,
        root: str | Path | None = None,
        probe: Probe | None = None,
    ) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"OpenAIAgentsAdapter needs an agents.Agent, got {type(agent).__name__}")
        self.agent = agent
        self.model_config = model or ModelConfig()
        self.max_turns = max_turns
        self.root = root
        self.probe = probe
        self._installer: ProbeInstaller | None = None
        self._behaviour: Behaviour | None = None
        self._behaviour_source: str | None = None
        self._real_model: Model | None = None
        self._model_settings = (
            ModelSettings(temperature=self.model_config.temperature)
            if self.model_config.temperature is not None
            else None
        )
        provider = self.model_config.provider
        if provider == "offline":
            self._behaviour = self._resolve_behaviour(behaviour, module)
            self._behaviour_source = self._behaviour.source
        elif provider == "openai-compatible":
            if not self.model_config.name:
                raise ValueError("model provider 'openai-compatible' needs model.name")
            if not self.model_config.base_url:
                raise ValueError("model provider 'openai-compatible' needs model.base_url")
            env = self.model_config.api_key_env
            if env and env not in os.environ:
                raise ValueError(f"model.api_key_env: environment variable {env} is not set")
        elif provider == "litellm":
            if not self.model_config.name:
                raise ValueError("model provider 'litellm' needs model.name, e.g. anthropic/claude-sonnet-4")
            self._real_model = self._litellm_model()
        elif provider != "openai":
            raise ValueError(f"unknown model provider {provider!r}")
        install_trace_router()

    # -- model selection -------------------------------------------------------------------------
    def _resolve_behaviour(
        self, given: Mapping[str, Any] | Behaviour | None, module: str | None
    ) -> Behaviour:
        if given is not None:
            return load_behaviour(given)
        if self.model_config.behaviour:
            return load_behaviour(self.model_config.behaviour, root=self.root)
        for name in (module, _find_behaviour_module(self.agent)):
            if not name:
                continue
            mod = sys.modules.get(name) or importlib.import_module(name)
            spec = vars(mod).get("OFFLINE_BEHAVIOUR")
            if isinstance(spec, Behaviour):
                return spec
            if spec is not None:
                return Behaviour(spec, source=f"{name}:OFFLINE_BEHAVIOUR")
        return Behaviour(source="<none>")

    def _litellm_model(self) -> Model:
        try:
            from agents.extensions.models.litellm_model import LitellmModel
        except ImportError:
            raise ValueError(
                "model provider 'litellm' needs LiteLLM: pip install 'openai-agents[litellm]'"
            ) from None
        env = self.model_config.api_key_env
        return LitellmModel(
            model=str(self.model_config.name),
            base_url=self.model_config.base_url,
            api_key=os.environ.get(env) if env else None,
        )

    def _openai_compatible_model(self) -> tuple[Model, openai.AsyncOpenAI]:
        """A model on a client of its own, for one trial; the trial closes the client in its own loop.

        Not cached: an async client holds connections of the event loop it first ran in, and a run (or
        each mutant of `agentassay mutate`) has loops of its own; a client left to the garbage collector
        schedules its close on whichever loop is running then, which fails with "Event loop is closed".
        """
        from agents import OpenAIChatCompletionsModel

        env = self.model_config.api_key_env
        if self.model_config.provider == "openai":
            # ``openai`` with its own key variable or URL: OpenAI's API (the SDK's default Responses or chat
            # choice), on a client given that key. Without either, the SDK's own client reads OPENAI_API_KEY.
            from agents.models.openai_provider import OpenAIProvider

            client = openai.AsyncOpenAI(
                base_url=self.model_config.base_url, api_key=os.environ.get(env) if env else None
            )
            return OpenAIProvider(openai_client=client).get_model(self.model_config.name), client
        client = openai.AsyncOpenAI(
            base_url=self.model_config.base_url,
            api_key=os.environ.get(env, "") if env else "not-needed",  # local servers often need none
        )
        return OpenAIChatCompletionsModel(model=str(self.model_config.name), openai_client=client), client

    @property
    def own_client(self) -> bool:
        """Each trial gets a client of its own: ``openai-compatible``, and ``openai`` given ``api_key_env`` or
        ``base_url`` (issue 22, defect 11: before, those two were ignored and OPENAI_API_KEY was read)."""
        m = self.model_config
        return m.provider == "openai-compatible" or (m.provider == "openai" and bool(m.api_key_env or m.base_url))

    @property
    def credentials_hint(self) -> str:
        """What to check when the provider rejects the key mid-run (the engine stops the run on it)."""

        env = key_variable(self.model_config)
        where = f" in {env}" + (" (model.api_key_env)" if self.model_config.api_key_env else "") if env else ""
        return f"check the API key{where} and that it may use model {self.model_label!r}"

    def _model_for(self, seed: int) -> Model | str | None:
        provider = self.model_config.provider
        if provider == "offline":
            return OfflineModel(self._behaviour, seed)
        if provider == "openai":
            return self.model_config.name  # None: each agent's own model, else the SDK default
        return self._real_model

    @property
    def model_label(self) -> str:
        if self.model_config.provider == "offline":
            return self.model_config.name or MODEL_NAME  # a name lets prices tell two simulators apart
        if self.model_config.name:
            return self.model_config.name
        own = self.agent.model
        return own if isinstance(own, str) else f"{self.model_config.provider}:default"

    # -- running ---------------------------------------------------------------------------------
    async def run(self, input: str, *, seed: int) -> Trace:
        """Run one trial. Transient provider errors propagate (retry them); others raise AgentRunError."""
        install_trace_router()
        client: openai.AsyncOpenAI | None = None
        if self.own_client:
            model, client = self._openai_compatible_model()
        else:
            model = self._model_for(seed)
        trace_id = f"trace_{uuid.uuid4().hex}"
        recorder = _ROUTER.open(trace_id)
        probe = self.probe
        if probe is not None and self._installer is None:
            self._installer = ProbeInstaller(_reachable(self.agent), probe)
        installer = self._installer if probe is not None else None

        def capture_tool_error(args: ToolErrorFormatterArgs[Any]) -> None:
            if args.kind == "tool_not_found":
                recorder.missing.append((_latest_agent(recorder), str(args.tool_name)))
                return None
            text = _describe(args.error) if args.error is not None else args.default_message
            span = get_current_span()
            if span is not None and isinstance(span.span_data, FunctionSpanData):
                recorder.errors[span.span_id] = text
            return None  # keep the SDK's message to the model: we observe, we do not change behaviour

        run_config = RunConfig(
            model=model,
            model_settings=self._model_settings,
            tracing_disabled=False,
            trace_include_sensitive_data=True,
            workflow_name=f"agentassay {self.agent.name}",
            trace_id=trace_id,
            tool_error_formatter=capture_tool_error,
            # A call to a tool the agent does not have is an observation (a restricted or unknown
            # edge), not a crash: the model is told the tool does not exist and the run goes on.
            tool_not_found_behavior="return_error_to_model" if probe is not None else "raise_error",
        )
        metadata = TraceMetadata(seed=seed, model=self.model_label, adapter=self.name)
        started = time.perf_counter()
        if installer is not None:
            installer.acquire()
        try:
            result = await Runner.run(self.agent, input, max_turns=self.max_turns, run_config=run_config)
        except Exception as exc:
            if is_transient_error(exc):
                raise
            latency = time.perf_counter() - started
            run_data = getattr(exc, "run_data", None)
            steps = _steps_from_spans(recorder)
            if not steps and run_data is not None:
                steps = _steps_from_items(run_data.new_items)
            steps = _mark_probe_steps(steps, recorder, installer)
            last = getattr(getattr(run_data, "last_agent", None), "name", None) or _last_agent(steps)
            message = _describe(exc)
            steps.append(Step(Action.ERROR, agent=last, error=message))
            usage = getattr(getattr(run_data, "context_wrapper", None), "usage", None)
            trace = Trace(
                steps=tuple(steps),
                cost=_cost(usage, latency),
                metadata=metadata,
                error=message,
            )
            raise AgentRunError(message, trace) from exc
        finally:
            _ROUTER.close(trace_id)
            if installer is not None:
                installer.release()
            if client is not None:
                await client.close()
        latency = time.perf_counter() - started
        steps = _steps_from_spans(recorder) or _steps_from_items(result.new_items)
        steps = _mark_probe_steps(steps, recorder, installer)
        output = _jsonable(result.final_output)
        steps.append(Step(Action.RESPOND, agent=result.last_agent.name, output=output))
        return Trace(
            steps=tuple(steps),
            output=output,
            cost=_cost(result.context_wrapper.usage, latency),
            metadata=metadata,
        )

    # -- description -----------------------------------------------------------------------------
    def tools(self) -> list[ToolInfo]:
        """Function and hosted tools of every reachable agent (``as_tool`` delegations are in config)."""
        infos: list[ToolInfo] = []
        for agent in _reachable(self.agent):
            for tool in agent.tools:
                if _agent_tool_target(tool) is not None:
                    continue
                if isinstance(tool, FunctionTool):
                    infos.append(
                        ToolInfo(tool.name, tool.description, dict(tool.params_json_schema), agent.name)
                    )
                else:
                    infos.append(
                        ToolInfo(str(getattr(tool, "name", type(tool).__name__)), "", None, agent.name)
                    )
        return infos

    def config(self) -> dict[str, Any]:
        described = []
        for agent in _reachable(self.agent):
            instructions = agent.instructions
            described.append(
                {
                    "name": agent.name,
                    "instructions": instructions if isinstance(instructions, str | None) else "<dynamic>",
                    "tools": [
                        str(getattr(t, "name", type(t).__name__))
                        for t in agent.tools
                        if _agent_tool_target(t) is None
                    ],
                    "handoffs": [_handoff_name(h) for h in agent.handoffs],
                    "agent_tools": {
                        t.name: target.name
                        for t in agent.tools
                        if (target := _agent_tool_target(t)) is not None
                    },
                    "model": agent.model
                    if isinstance(agent.model, str | None)
                    else type(agent.model).__name__,
                }
            )
        model: dict[str, Any] = {
            "provider": self.model_config.provider,
            "name": self.model_label,
            "temperature": self.model_config.temperature,
        }
        if self.model_config.base_url:
            model["base_url"] = self.model_config.base_url
        if self._behaviour_source is not None:
            model["behaviour"] = self._behaviour_source
        return {
            "framework": "openai-agents",
            "sdk_version": getattr(agents, "__version__", None),
            "entry_agent": self.agent.name,
            "max_turns": self.max_turns,
            "model": model,
            "agents": described,
        }


# -- building traces ------------------------------------------------------------------------------
def _latest_agent(recorder: _Recorder) -> str | None:
    """The agent that started last in this trial: the one making a call right now (sequential runs)."""
    for span in reversed(recorder.spans):
        if isinstance(span.span_data, AgentSpanData):
            return span.span_data.name
    return None


def _mark_probe_steps(steps: list[Step], recorder: _Recorder, installer: ProbeInstaller | None) -> list[Step]:
    """Label calls that hit a recording stub as refused restricted calls; add missing-tool calls."""
    if installer is None:
        return steps
    marked = [
        dataclasses.replace(s, error=RESTRICTED_CALL, output=None)
        if s.action is Action.CALL_TOOL and (s.agent, s.tool) in installer.restricted
        else s
        for s in steps
    ]
    for agent, tool in recorder.missing:
        marked.append(Step(Action.CALL_TOOL, agent=agent, tool=tool, error=f"{TOOL_NOT_FOUND}: {tool}"))
    return marked


def _cost(usage: Any, latency: float) -> Cost:
    return Cost(
        input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
        latency_s=latency,
    )


def _last_agent(steps: list[Step]) -> str | None:
    for step in reversed(steps):
        if step.depth == 0:
            return step.target if step.action is Action.HANDOFF and step.tool is None else step.agent
    return None


def _span_error(span: Span[Any], recorder: _Recorder) -> str | None:
    if span.span_id in recorder.errors:
        return recorder.errors[span.span_id]
    error = span.error
    if not error:
        return None
    data = error.get("data") or {}
    detail = data.get("error") if isinstance(data, Mapping) else None
    return f"{error.get('message')}: {detail}" if detail else str(error.get("message"))


def _steps_from_spans(recorder: _Recorder) -> list[Step]:
    """Flatten the span tree of one trial into steps, in start order, with as_tool depth."""
    spans = list(recorder.spans)
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[Span[Any]]] = defaultdict(list)
    for s in spans:
        children[s.parent_id if s.parent_id in ids else None].append(s)

    def sub_agents(span: Span[Any]) -> list[str]:
        """Agents that ran inside a function span (an ``as_tool`` sub-run), not nested deeper."""
        found: list[str] = []
        stack = list(reversed(children[span.span_id]))
        while stack:
            s = stack.pop()
            if isinstance(s.span_data, AgentSpanData):
                found.append(s.span_data.name)
            elif not isinstance(s.span_data, FunctionSpanData):
                stack.extend(reversed(children[s.span_id]))
        return found

    steps: list[Step] = []

    def walk(span: Span[Any], agent: str | None, depth: int) -> None:
        data = span.span_data
        if isinstance(data, AgentSpanData):
            agent = data.name
        elif isinstance(data, HandoffSpanData):
            steps.append(
                Step(Action.HANDOFF, agent=data.from_agent or agent, target=data.to_agent, depth=depth)
            )
        elif isinstance(data, FunctionSpanData):
            inner = sub_agents(span)
            arguments = _parse_arguments(data.input)
            error = _span_error(span, recorder)
            if not inner:
                steps.append(
                    Step(
                        Action.CALL_TOOL,
                        agent=agent,
                        tool=data.name,
                        arguments=arguments,
                        output=None if error else _jsonable(data.output),
                        error=error,
                        depth=depth,
                    )
                )
                return
            steps.append(
                Step(
                    Action.HANDOFF,
                    agent=agent,
                    tool=data.name,
                    arguments=arguments,
                    target=inner[0],
                    depth=depth,
                )
            )
            for child in children[span.span_id]:
                walk(child, agent, depth + 1)
            if error is not None:
                steps.append(
                    Step(Action.ERROR, agent=inner[-1], tool=data.name, error=error, depth=depth + 1)
                )
            elif span.ended_at is not None:
                steps.append(
                    Step(Action.RESPOND, agent=inner[-1], output=_jsonable(data.output), depth=depth + 1)
                )
            return
        for child in children[span.span_id]:
            walk(child, agent, depth)

    for root in children[None]:
        walk(root, None, 0)
    return steps


def _steps_from_items(items: list[Any]) -> list[Step]:
    """Fallback when tracing is globally disabled: top-level tool calls and handoffs only."""
    steps: list[Step] = []
    pending: dict[str, int] = {}
    for item in items:
        agent = getattr(getattr(item, "agent", None), "name", None)
        if isinstance(item, ToolCallItem):
            raw = item.raw_item
            name = getattr(raw, "name", None) or (raw.get("name") if isinstance(raw, Mapping) else None)
            arguments = getattr(raw, "arguments", None) or (
                raw.get("arguments") if isinstance(raw, Mapping) else None
            )
            call_id = getattr(raw, "call_id", None) or (
                raw.get("call_id") if isinstance(raw, Mapping) else None
            )
            if call_id is not None:
                pending[str(call_id)] = len(steps)
            steps.append(
                Step(Action.CALL_TOOL, agent=agent, tool=name, arguments=_parse_arguments(arguments))
            )
        elif isinstance(item, ToolCallOutputItem):
            raw = item.raw_item
            call_id = raw.get("call_id") if isinstance(raw, Mapping) else getattr(raw, "call_id", None)
            index = pending.get(str(call_id))
            if index is not None:
                steps[index] = dataclasses.replace(steps[index], output=_jsonable(item.output))
        elif isinstance(item, HandoffOutputItem):
            steps.append(Step(Action.HANDOFF, agent=item.source_agent.name, target=item.target_agent.name))
    return steps
