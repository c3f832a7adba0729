"""What AgentAssay knows about one agent framework: how to recognise, instrument, run and read it.

The capture is the same for every framework (``_capture.py``); a profile is the small part that is not:
which objects are the framework's, how it turns OpenTelemetry on, which environment it needs, how to run
one input, how to flush spans it buffers, how to read its agent graph's tools, and the fix-ups its spans
need before the importer reads them. A framework without a profile of its own is run through a callable
(``framework:`` names the profile whose instrumentation applies).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Mapping
from typing import Any, ClassVar

from .._base import ToolInfo


class Profile:
    """One framework. Subclasses set the class attributes and override what differs."""

    #: The name users write in ``framework:`` and the adapter reports (``otel:<name>``).
    name: ClassVar[str] = "otel"  # the generic profile: a callable that reports spans itself
    #: The ``pip install agentassay[<extra>]`` that brings the framework and its instrumentation.
    extra: ClassVar[str] = ""
    #: Environment defaults set before the framework runs (never overriding the user's).
    env: ClassVar[Mapping[str, str]] = {}
    #: Its spans leave the trial's context (work handed to threads without it): run trials one at a time.
    serial: ClassVar[bool] = False

    def instrument(self) -> None:
        """Turn the framework's OpenTelemetry on, once per process, on the global tracer provider."""

    def invoke(self, obj: Any, input: str) -> Awaitable[Any] | Any:
        """Run one input; a coroutine for async frameworks, else a blocking call (run in a thread)."""
        if not callable(obj):
            raise TypeError(f"{type(obj).__name__} is not callable; the {self.name} profile cannot run it")
        return obj(input)

    def is_async(self, obj: Any) -> bool:
        """Whether :meth:`invoke` returns a coroutine for this object."""
        if inspect.isroutine(obj):
            return inspect.iscoroutinefunction(obj)
        return inspect.iscoroutinefunction(type(obj).__call__) if callable(obj) else False

    def output(self, result: Any) -> Any:
        """The run's final answer from what :meth:`invoke` returned (when the spans carry none)."""
        return result if isinstance(result, (str, int, float, bool, dict, list)) or result is None else str(result)

    def flush(self, obj: Any) -> None:
        """Deliver spans the framework buffers (an event bus, a batch) before the trial's are collected."""

    def tools(self, obj: Any) -> list[ToolInfo]:
        """The tools of the agent graph, with the agent each belongs to (for unknown-tool checks, coverage)."""
        return []

    def fix_spans(self, spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Repair what this framework's spans get wrong before the importer reads them (OTLP span objects)."""
        return spans

    def describe(self, obj: Any) -> dict[str, Any]:
        """What identifies the object for the run's identity (its type and the framework's version)."""
        return {"type": f"{type(obj).__module__}.{type(obj).__qualname__}"}

