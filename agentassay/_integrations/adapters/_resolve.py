"""Turn an entry point (``package.module:attr``) into an adapter, choosing it from the object."""

from __future__ import annotations

import contextlib
import importlib
import sys
import traceback
from pathlib import Path
from typing import Any

from ..._config_check import closest, did_you_mean
from ..._errors import AgentAssayError, ExitCode
from ._base import AgentAdapter
from ._otel import PROFILES, apply_env_defaults, detect, load_profile
from ._otel._offline import behaviour_for, endpoint


class AgentLoadError(AgentAssayError):
    """The agent entry point could not be imported or is not something we can run (exit code 4)."""

    exit_code = ExitCode.AGENT


def _ensure_path(dirs: list[Path]) -> None:
    for d in reversed(dirs):
        s = str(d.resolve())
        if s not in sys.path:
            sys.path.insert(0, s)


def import_entry(entry: str, *, search: list[Path] | None = None) -> Any:
    """Import ``module:attr`` (attr may be dotted), searching ``search`` folders first."""
    module_name, sep, attr = entry.partition(":")
    if not sep or not module_name or not attr:
        raise AgentLoadError(f"agent entry point {entry!r} must look like 'package.module:attribute'")
    _ensure_path(search or [Path.cwd()])
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        hint = ""
        if exc.name and module_name.startswith(exc.name):
            hint = (
                f" Run from the folder that contains '{module_name.split('.')[0]}', or install it in this "
                "environment."
            )
        raise AgentLoadError(f"cannot import agent module '{module_name}' for entry '{entry}': {exc}.{hint}") from exc
    except BaseException as exc:  # SystemExit at import (a script without a __main__ guard) too: exit 4, never 0
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        hint = (
            " A module that calls sys.exit() when imported ends any program that imports it: put the script's "
            "code under `if __name__ == \"__main__\":`."
            if isinstance(exc, SystemExit)
            else ""
        )
        raise AgentLoadError(
            f"importing agent module '{module_name}' for entry '{entry}' raised {last}.{hint}"
        ) from exc
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            hint = did_you_mean(closest(part, names))
            raise AgentLoadError(f"module '{module_name}' has no attribute '{attr}' (entry '{entry}').{hint}")
        obj = getattr(obj, part)
    return obj


def is_sdk_agent(obj: Any) -> bool:
    """True for an OpenAI Agents SDK ``Agent`` — checked without importing the SDK ourselves."""
    sdk = sys.modules.get("agents")
    agent_cls = getattr(sdk, "Agent", None) if sdk is not None else None
    return agent_cls is not None and isinstance(obj, agent_cls)


def adapter_for(
    obj: Any,
    *,
    entry: str | None = None,
    model: Any = None,
    root: Path | None = None,
    framework: str | None = None,
    offline: Any = None,
) -> AgentAdapter:
    """Pick the adapter from the object: an SDK ``Agent``, a framework's agent, or a plain callable.

    ``root`` is the suite's folder: relative paths in the model configuration resolve there. ``framework``
    (``agent.framework``) names the framework a callable runs inside, so its spans are captured. ``offline``
    is the offline endpoint entered around the import (``model: {provider: offline}``), for framework agents.
    """
    if is_sdk_agent(obj) and framework is None:
        # lazy: only the adapter this entry needs (the Agents SDK is heavy, optional)
        from ._openai_agents import OpenAIAgentsAdapter

        module = entry.partition(":")[0] if entry else None
        try:
            return OpenAIAgentsAdapter(obj, model=model, module=module, root=root)
        except ValueError as exc:  # bad provider settings, missing offline behaviour, missing extra
            raise AgentLoadError(f"cannot set up agent '{entry}': {exc}") from exc
    detected = detect(obj)
    if framework is not None and framework not in PROFILES:
        hint = did_you_mean(closest(framework, list(PROFILES)))
        raise AgentLoadError(
            f"agent.framework: unknown framework {framework!r} (entry '{entry}'); one of {', '.join(PROFILES)}.{hint}"
        )
    if framework is not None or detected is not None:
        if framework is not None and detected is None and not callable(obj):
            raise AgentLoadError(
                f"agent entry '{entry}' is a {type(obj).__name__}: with agent.framework it must be a callable "
                "taking the scenario input"
            )
        return _otel_adapter(
            obj, framework or detected or "otel", entry=entry, through_callable=detected is None, model=model,
            root=root, offline=offline,
        )
    if callable(obj):
        # lazy: only the adapter this entry needs (the Agents SDK is heavy, optional)
        from ._callable import CallableAdapter

        return CallableAdapter(obj, entry=entry)
    raise AgentLoadError(
        f"agent entry '{entry}' is a {type(obj).__name__}, which AgentAssay cannot run; point it at an "
        "OpenAI Agents SDK Agent, an agent of a supported framework (docs/frameworks.md) or a callable taking "
        "the scenario input"
    )


def _otel_adapter(
    obj: Any, name: str, *, entry: str | None, through_callable: bool, model: Any, root: Path | None, offline: Any
) -> AgentAdapter:
    """The OpenTelemetry capture adapter with ``name``'s profile; a missing framework or extra is exit 4.

    With ``model: {provider: offline}`` the framework's own client reaches the offline server (``offline``,
    entered before the import); with ``model:`` omitted the object runs with the model it was built with."""
    try:
        # lazy: OpenTelemetry's SDK and the framework load only when such an agent runs
        from ._otel._adapter import OTelAdapter

        profile = load_profile(name)
        behaviour = None
        if offline is not None:
            module = sys.modules.get((entry or "").partition(":")[0])
            behaviour = behaviour_for(getattr(model, "behaviour", None), root, module)
            offline.keep()
        return OTelAdapter(
            obj, profile, entry=entry, through_callable=through_callable, offline=offline, behaviour=behaviour
        )
    except ValueError as exc:  # no behaviour table, a bad one
        raise AgentLoadError(f"cannot set up agent '{entry}': {exc}") from exc
    except ImportError as exc:
        raise AgentLoadError(
            f"cannot trace the {name} agent '{entry}': {exc}. Install the extra: pip install 'agentassay[{name}]'"
        ) from exc
    except AgentAssayError as exc:
        raise AgentLoadError(f"cannot trace the {name} agent '{entry}': {exc}") from exc


def load_adapter(
    entry: str,
    *,
    factory: bool = False,
    model: Any = None,
    search: list[Path] | None = None,
    root: Path | None = None,
    framework: str | None = None,
) -> AgentAdapter:
    """Import the entry point (calling it first when it is a factory) and wrap it in an adapter.

    ``model`` None means the suite names no model: an SDK agent runs offline (the default), another
    framework's agent with the model it was built with. An offline model is in place before the import."""
    offline = endpoint() if getattr(model, "provider", None) == "offline" else None
    apply_env_defaults()
    with offline.importing() if offline is not None else contextlib.nullcontext():
        obj = import_entry(entry, search=search)
        if factory:
            if not callable(obj):
                raise AgentLoadError(f"agent factory '{entry}' is a {type(obj).__name__}, not a callable")
            try:
                obj = obj()
            except BaseException as exc:  # SystemExit & co. too: a factory never ends the process
                raise AgentLoadError(f"agent factory '{entry}' raised {type(exc).__name__}: {exc}") from exc
        return adapter_for(obj, entry=entry, model=model, root=root, framework=framework, offline=offline)
