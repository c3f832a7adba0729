"""Google ADK: an agent tree (``LlmAgent`` with ``sub_agents``, workflow agents) or an ``App``, traced by ADK's
own OpenTelemetry tracer.

ADK reports GenAI spans on the global tracer provider (``invoke_workflow <root>`` > ``invoke_agent <name>`` >
``generate_content <model>`` / ``execute_tool <tool>``); its tracer is made at import from OpenTelemetry's
proxy, which forwards to the SDK provider the capture installs later. Message content, tool arguments and
results are on the spans only with ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``
(:attr:`env`; ADK reads it per span, so setting it late still works).

What :meth:`AdkProfile.fix_spans` repairs:

* handoffs: a transfer is ADK's ``transfer_to_agent(agent_name)`` tool; a successful call becomes a GenAI
  handoff span from the calling agent to ``agent_name``;
* results: a tool's result is ADK's function response, ``{"result": <value>}`` for a plain function's
  return value: it becomes the value (a ``{"error": ...}`` response is the span's error);
* the workflow: ADK's ``invoke_workflow`` span is the run of the tree, not an agent: no step is credited to it.

Each trial runs the tree in a runner of its own (``InMemoryRunner``: a fresh in-memory session), so trials share
no conversation. LiteLLM (ADK's route to OpenAI-compatible servers) would fetch its model cost map from the
internet at import: ``LITELLM_LOCAL_MODEL_COST_MAP`` keeps it local. LiteLLM sends requests through an aiohttp
transport under its httpx client by default, which httpx's instrumentation does not see, so requests would
carry no ``traceparent`` (the offline server would then run trials one at a time):
``DISABLE_AIOHTTP_TRANSPORT`` makes it use httpx's own transport.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping
from typing import Any, ClassVar

from .._base import ToolInfo
from ._profile import Profile
from ._spans import as_handoff
from ._spans import attrs as _attrs
from ._spans import loads_json as _json
from ._spans import set_attr as _set

HANDOFF_TOOL = "transfer_to_agent"  # the tool ADK gives every agent that can transfer
APP = "agentassay"  # the runner's app name (ADK keys sessions by app and user)
USER = "agentassay"
_OP = "gen_ai.operation.name"


class AdkProfile(Profile):
    """An ADK agent (or ``App``), run with ``Runner.run_async`` on a fresh in-memory session per trial."""

    name: ClassVar[str] = "adk"
    extra: ClassVar[str] = "adk"
    env: ClassVar[Mapping[str, str]] = {
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "DISABLE_AIOHTTP_TRANSPORT": "True",
    }

    def instrument(self) -> None:
        """ADK's tracer is built in (on the global provider, where the capture listens): the environment only,
        and LiteLLM imported ahead of the trials."""
        for key, value in self.env.items():  # also when the agent was not imported by AgentAssay
            os.environ.setdefault(key, value)
        if "google.adk.models.lite_llm" in sys.modules and importlib.util.find_spec("litellm") is not None:
            # ADK imports LiteLLM at an agent's first model call (seconds): here, so the first trial's latency
            # is the agent's, not the import's.
            importlib.import_module("litellm")

    def invoke(self, obj: Any, input: str) -> Any:
        return run_once(obj, input)

    def is_async(self, obj: Any) -> bool:
        return True

    def output(self, result: Any) -> Any:
        """The text of the run's last final response (``invoke`` returns the run's events)."""
        if isinstance(result, list):
            for event in reversed(result):
                text = _event_text(event)
                if text is not None:
                    return text
            return None
        return super().output(result)

    def describe(self, obj: Any) -> dict[str, Any]:
        # optional heavy dependency: only to report the framework's version
        from importlib.metadata import version

        return {**super().describe(obj), "agents": [a.name for a in agents_of(obj)], "adk": version("google-adk")}

    def tools(self, obj: Any) -> list[ToolInfo]:
        """Every tool of every agent of the tree (ADK's transfer tool excluded: it is a handoff, not a call)."""
        # optional heavy dependency: ADK comes with agentassay[adk]
        from google.adk.tools.function_tool import FunctionTool

        out = []
        for agent in agents_of(obj):
            for tool in getattr(agent, "tools", None) or []:
                made = FunctionTool(tool) if callable(tool) and not hasattr(tool, "_get_declaration") else tool
                if not hasattr(made, "_get_declaration") or made.name == HANDOFF_TOOL:
                    continue  # a toolset (resolved per request) or the transfer tool
                declaration = made._get_declaration()
                schema = _schema(declaration)
                out.append(ToolInfo(made.name, made.description or "", schema, str(agent.name)))
        return out

    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return fix_spans(spans)


# -- running ----------------------------------------------------------------------------------------
async def run_once(obj: Any, input: str) -> list[Any]:
    """One input through a fresh runner and session; the run's events."""
    # optional heavy dependency: ADK comes with agentassay[adk]
    from google.adk.apps import App
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runner = InMemoryRunner(app=obj) if isinstance(obj, App) else InMemoryRunner(agent=obj, app_name=APP)
    app_name = runner.app_name
    session = await runner.session_service.create_session(app_name=app_name, user_id=USER)
    message = types.Content(role="user", parts=[types.Part(text=input)])
    events = []
    try:
        async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message):
            events.append(event)
    finally:
        await runner.close()
    return events


def _event_text(event: Any) -> str | None:
    content = getattr(event, "content", None)
    parts = getattr(content, "parts", None) or []
    texts = [p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", False)]
    return "".join(texts) if texts and event.is_final_response() else None


# -- the agent tree ---------------------------------------------------------------------------------
def agents_of(obj: Any) -> list[Any]:
    """Every agent of the tree (an ``App``'s root agent's), depth first, each once."""
    root = getattr(obj, "root_agent", None) or obj
    out: list[Any] = []
    stack = [root]
    while stack:
        agent = stack.pop()
        if any(a is agent for a in out) or not hasattr(agent, "sub_agents"):
            continue
        out.append(agent)
        stack.extend(reversed(list(agent.sub_agents or [])))
    return out


def _schema(declaration: Any) -> dict[str, Any] | None:
    if declaration is None:
        return None
    if getattr(declaration, "parameters_json_schema", None) is not None:
        return dict(declaration.parameters_json_schema)
    parameters = getattr(declaration, "parameters", None)
    if parameters is None:
        return None
    return parameters.model_dump(mode="json", exclude_none=True)


# -- span repair (OTLP JSON span objects) -----------------------------------------------------------
def result_value(result: Any) -> tuple[Any, str | None]:
    """ADK's function response as (the tool's result, its error): ``{"result": v}`` is ``v``."""
    data = _json(result)
    if isinstance(data, Mapping) and len(data) == 1:
        if "result" in data:
            return data["result"], None
        if "error" in data:
            return None, str(data["error"])
    return data, None


def _handoff(span: dict[str, Any], attrs: Mapping[str, Any]) -> bool:
    """A successful ``transfer_to_agent`` call as a GenAI handoff span; False when it is not one."""
    arguments = _json(attrs.get("gen_ai.tool.call.arguments"))
    target = arguments.get("agent_name") if isinstance(arguments, Mapping) else None
    if not isinstance(target, str) or not target or (span.get("status") or {}).get("code") == 2:
        return False
    as_handoff(span, attrs.get("gen_ai.agent.name"), target, HANDOFF_TOOL, attrs.get("gen_ai.tool.call.id"))
    return True


def fix_spans(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ADK's spans, repaired (see the module docstring); the input is not modified."""
    spans = copy.deepcopy(spans)
    for span in spans:
        a = _attrs(span)
        op = a.get(_OP)
        if op == "execute_tool":
            if a.get("gen_ai.tool.name") == HANDOFF_TOOL and _handoff(span, a):
                continue
            if "gen_ai.tool.call.result" in a:
                value, error = result_value(a.get("gen_ai.tool.call.result"))
                _set(span, "gen_ai.tool.call.result", value)
                if error is not None:
                    span["status"] = {"code": 2, "message": error}
    return spans
