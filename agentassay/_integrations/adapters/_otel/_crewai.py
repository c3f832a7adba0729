"""CrewAI: a ``crewai.Crew`` run through OpenInference's CrewAI instrumentation in event-listener mode.

Measured on crewai 1.15 (issue 24): the instrumentor's default mode records two spans per run; its
event-listener mode (``use_event_listener=True``) records the crew, every agent execution, every tool
with its arguments and result, and every model call with its token counts (``create_llm_spans``), each
nested where it ran — a delegated coworker's agent span inside triage's ``delegate_work_to_coworker``
span, which the importer reads as a delegation (a handoff that returns to the caller). CrewAI emits
its events to handlers in a thread pool, so spans can end after ``kickoff`` returns: :meth:`flush`
waits for the event bus. OpenInference's OpenAI instrumentor is not used: its model spans hang from
the trial's root rather than from the agent that made the call, and would count every token twice.

Input convention: a run is ``crew.copy().kickoff(inputs={"input": <scenario input>})`` — a copy per
trial, since a crew keeps its tasks' interpolated inputs and outputs — so a task's description holds
``{input}``. The answer is the ``CrewOutput``'s raw text.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from importlib.metadata import version
from typing import Any, ClassVar

from .._base import ToolInfo
from ._profile import Profile
from ._spans import attr as _attr
from ._spans import set_attr as _set

#: The key of ``kickoff(inputs=...)`` that carries the scenario input (a task description holds ``{input}``).
INPUT_KEY = "input"
ASSEMBLER_LOGGER = "openinference.instrumentation.crewai._event_assembler"


class CrewAIProfile(Profile):
    """A CrewAI ``Crew`` (``crewai.Crew``): ``kickoff`` of a copy per trial, spans from OpenInference."""

    name: ClassVar[str] = "crewai"
    extra: ClassVar[str] = "crewai"
    env: ClassVar[Mapping[str, str]] = {
        "CREWAI_DISABLE_TELEMETRY": "true",  # no anonymous telemetry to CrewAI's servers
        "CREWAI_TRACING_ENABLED": "false",  # no CrewAI-platform trace prompt or upload
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # LiteLLM (when a crew uses it) reads no price list online
        # Never OTEL_SDK_DISABLED: it would silence AgentAssay's own capture too.
    }

    def instrument(self) -> None:
        # CrewAI reads these when it runs, not only at import: a crew imported before this still obeys them.
        for key, value in self.env.items():
            os.environ.setdefault(key, value)
        # lazy: CrewAI's instrumentation is an optional extra (agentassay[crewai])
        from openinference.instrumentation.crewai import CrewAIInstrumentor

        CrewAIInstrumentor().instrument(use_event_listener=True, create_llm_spans=True)
        # Its cache of finished span contexts is capped at 1,024 and warns on every eviction after that: memory
        # stays flat as designed, but a long run would print a warning per event (unless the user set a level).
        assembler = logging.getLogger(ASSEMBLER_LOGGER)
        if assembler.level == logging.NOTSET:
            assembler.setLevel(logging.ERROR)

    def invoke(self, obj: Any, input: str) -> Any:
        # lazy: CrewAI is only imported once a crew runs
        from crewai import Crew

        if not isinstance(obj, Crew):
            raise TypeError(
                f"the crewai profile runs a crewai.Crew, not a {type(obj).__module__}.{type(obj).__qualname__}: "
                "point agent: at the Crew (its task descriptions holding {input}), or at a callable that runs "
                "yours with agent.framework: crewai"
            )
        return obj.copy().kickoff(inputs={INPUT_KEY: input})

    def is_async(self, obj: Any) -> bool:
        return False  # kickoff blocks; the adapter runs it in a thread with the trial's context

    def output(self, result: Any) -> Any:
        raw = getattr(result, "raw", None)
        return raw if isinstance(raw, str) else super().output(result)

    def flush(self, obj: Any) -> None:
        # lazy: CrewAI is only imported once a crew runs
        from crewai.events import crewai_event_bus

        crewai_event_bus.flush()

    def tools(self, obj: Any) -> list[ToolInfo]:
        # lazy: CrewAI is only imported once a crew runs
        from crewai.tools.agent_tools.agent_tools import AgentTools
        from crewai.utilities.string_utils import sanitize_tool_name

        found: list[ToolInfo] = []
        agents = list(getattr(obj, "agents", None) or ())
        for agent in agents:
            role = str(getattr(agent, "role", "") or "") or None
            tools = list(getattr(agent, "tools", None) or ())
            coworkers = [a for a in agents if a is not agent]
            if getattr(agent, "allow_delegation", False) and coworkers:
                tools += AgentTools(agents=coworkers).tools()  # what CrewAI adds at run time
            for tool in tools:
                schema = getattr(tool, "args_schema", None)
                parameters = schema.model_json_schema() if hasattr(schema, "model_json_schema") else None
                found.append(
                    ToolInfo(
                        sanitize_tool_name(tool.name), str(tool.description or ""), parameters, agent=role
                    )
                )
        return found

    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Agent spans get ``agent.name`` from ``graph.node.id`` (their names are "<role>.<task>.execute")."""
        for span in spans:
            if _attr(span, "openinference.span.kind") == "AGENT" and _attr(span, "agent.name") is None:
                role = _attr(span, "graph.node.id")
                if isinstance(role, str) and role:
                    _set(span, "agent.name", role)
        return spans

    def describe(self, obj: Any) -> dict[str, Any]:
        agents = [str(getattr(a, "role", "")) for a in getattr(obj, "agents", None) or ()]
        return {**super().describe(obj), "crewai": version("crewai"), "agents": agents}
