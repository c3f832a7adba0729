"""Any agent framework through OpenTelemetry: one capture adapter plus a small profile per framework.

The table below is all that is read to recognise a framework's object (by the modules of its classes), so
an object of no framework costs nothing and no framework is imported until its agent runs.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from ._profile import Profile

#: name -> (the profile's module here, the module prefixes whose classes are that framework's)
PROFILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "adk": ("._adk", ("google.adk",)),  # an ADK agent tree (LlmAgent with sub_agents, workflow agents) or App
    "agno": ("._agno", ("agno",)),  # an agno Agent or Team
    "autogen": ("._autogen", ("autogen_agentchat",)),  # a team (Swarm, RoundRobinGroupChat, ...) or an agent
    "crewai": ("._crewai", ("crewai",)),  # a crewai.Crew
    "langgraph": ("._langgraph", ("langgraph",)),  # a compiled graph (CompiledStateGraph / Pregel)
    "llamaindex": ("._llamaindex", ("llama_index",)),  # an AgentWorkflow, a FunctionAgent / ReActAgent
    "otel": ("._profile", ()),  # a callable that reports OpenTelemetry GenAI / OpenInference spans itself
    "pydantic_ai": ("._pydantic_ai", ("pydantic_ai",)),
    "smolagents": ("._smolagents", ("smolagents",)),
    "strands": ("._strands", ("strands",)),  # strands.Agent, strands.multiagent.Swarm
}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def framework_of(dotted: str) -> str | None:
    """The framework whose modules hold ``dotted`` (a module or a name in one, e.g. ``crewai.Crew``), or None:
    what ``agentassay init`` reads from an agent's imports without importing them."""
    for name, (_, prefixes) in PROFILES.items():
        if _within(dotted, prefixes):
            return name
    return None


def detect(obj: Any) -> str | None:
    """The framework whose object this is (its type's modules), or None."""
    modules = [getattr(cls, "__module__", "") or "" for cls in type(obj).__mro__]
    for name, (_, prefixes) in PROFILES.items():
        if any(_within(m, prefixes) for m in modules):
            return name
    return None


def load_profile(name: str) -> Profile:
    """The profile called ``name`` (KeyError for an unknown one: callers list :data:`PROFILES`)."""
    module, _ = PROFILES[name]
    found = [
        v for v in vars(importlib.import_module(module, __package__)).values()
        if isinstance(v, type) and issubclass(v, Profile) and v.name == name
    ]
    return found[0]()


def apply_env_defaults() -> None:
    """Every profile's environment defaults (telemetry that phones home off, message content in spans on),
    set before an agent module is imported — frameworks read some at import — and never over the user's."""
    for name in PROFILES:
        for key, value in load_profile(name).env.items():
            os.environ.setdefault(key, value)


__all__ = ["PROFILES", "Profile", "apply_env_defaults", "detect", "framework_of", "load_profile"]
