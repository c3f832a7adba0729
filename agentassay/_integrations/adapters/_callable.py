"""Adapter for any Python callable, sync or async, returning an output or a Trace."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..._traces import Action, Cost, Step, Trace
from ._base import AgentRunError, ToolInfo
from ._threads import call_in_thread

_OUTPUT_TYPES = (str, dict, list, int, float, bool)


def _accepts_seed(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _is_async(fn: Callable[..., Any]) -> bool:
    call = type(fn).__call__ if not inspect.isroutine(fn) else None  # an instance with async __call__
    return inspect.iscoroutinefunction(fn) or (call is not None and inspect.iscoroutinefunction(call))


class CallableAdapter:
    """Wraps ``fn(input)`` or ``fn(input, seed=...)``.

    The callable may return a string, a JSON-serialisable dict/list/number, or a full
    :class:`~agentassay._traces.Trace` (for agents that record their own steps). Anything else
    (``None``, arbitrary objects) is a programming error reported as an error trial naming
    the type, because silently stringifying it would make every evaluator pass or fail for
    the wrong reason.
    """

    name = "callable"

    def __init__(self, fn: Callable[..., Any], *, entry: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"{entry or fn!r} is not callable")
        self.fn = fn
        self.entry = entry
        self._seed = _accepts_seed(fn)
        self._async = _is_async(fn)

    async def run(self, input: str, *, seed: int) -> Trace:
        kwargs = {"seed": seed} if self._seed else {}
        start = time.perf_counter()
        if self._async:
            out = await self.fn(input, **kwargs)
        else:
            out = await call_in_thread(self.fn, input, **kwargs)
        latency = time.perf_counter() - start
        return self._to_trace(out, latency)

    def _to_trace(self, out: Any, latency: float) -> Trace:
        if isinstance(out, Trace):
            if out.cost.latency_s:
                return out
            return replace(out, cost=replace(out.cost, latency_s=latency))
        if not isinstance(out, _OUTPUT_TYPES):
            raise AgentRunError(
                f"the agent {self.entry or self.fn!r} returned {type(out).__name__}; expected a str, a "
                "JSON-serialisable dict, list or number, or an agentassay._traces.Trace"
            )
        if isinstance(out, (dict, list)):
            try:
                json.dumps(out)
            except (TypeError, ValueError) as exc:
                raise AgentRunError(
                    f"the agent {self.entry or self.fn!r} returned a {type(out).__name__} that is not "
                    f"JSON-serialisable ({exc}); return plain data or a str"
                ) from exc
        return Trace(steps=(Step(Action.RESPOND, output=out),), output=out, cost=Cost(latency_s=latency))

    def tools(self) -> list[ToolInfo]:
        return []

    def config(self) -> dict[str, Any]:
        return {"adapter": self.name, "entry": self.entry, "async": self._async, "receives_seed": self._seed}
