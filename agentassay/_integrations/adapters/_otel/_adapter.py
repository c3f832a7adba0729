"""Run any framework's agent as trials and read each trial's trace from its OpenTelemetry spans.

One adapter for every framework: the profile says how to run the object; the capture hands each trial its
own spans; the importer builds the trace from them exactly as ``agentassay analyze`` would from a file.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any

from ...._traces import Action, Step, Trace
from ...importers import ImportStats, import_spans
from .._base import AgentRunError, ToolInfo, describe_exception, user_exception
from .._threads import call_in_thread
from ._capture import Captured, TrialScope, install
from ._profile import Profile

_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _framework_loop() -> asyncio.AbstractEventLoop:
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None:
            _LOOP = asyncio.new_event_loop()
            threading.Thread(target=_LOOP.run_forever, name="agentassay-frameworks", daemon=True).start()
        return _LOOP


async def in_framework_loop(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` in the process's one event loop for framework code (a daemon thread), the context carried.

    Frameworks' OpenAI clients are often built once (at import, or cached per base URL) and their pooled
    connections belong to the event loop that first used them: a second ``asyncio.run`` in the process
    (``run`` then ``check`` in-process, the pytest plugin, ``mutate``) would reuse them from a closed loop
    ("Event loop is closed"). One long-lived loop for every trial keeps them valid; the trial's root span
    stays current (the task copies the caller's context), and cancelling the caller cancels the task.
    """
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, _framework_loop()))


_INSTRUMENTED: set[str] = set()
_INSTRUMENT_LOCK = threading.Lock()


def instrument_once(profile: Profile) -> None:
    """A framework's instrumentation runs once per process, whatever the number of adapters."""
    with _INSTRUMENT_LOCK:
        if profile.name not in _INSTRUMENTED:
            profile.instrument()
            _INSTRUMENTED.add(profile.name)


class OTelAdapter:
    """Trials of a framework's agent (or of a callable that runs one), traced through OpenTelemetry.

    ``offline`` (the process's offline endpoint, ``model: {provider: offline}``) is told each trial's trace id,
    seed and ``behaviour`` while it runs: the offline server reads the trial from a request's ``traceparent``.
    """

    def __init__(
        self,
        obj: Any,
        profile: Profile,
        *,
        entry: str | None = None,
        through_callable: bool = False,
        offline: Any = None,
        behaviour: Any = None,
    ) -> None:
        self.obj = obj
        self.profile = profile
        self.entry = entry
        self.name = f"otel:{profile.name}"
        self._callable = through_callable
        self._offline = offline
        self._behaviour = behaviour
        self._capture, self._provider = install()
        instrument_once(profile)
        # Without traceparent on its requests, the offline server can only tell trials apart one at a time.
        self._serial = profile.serial or (offline is not None and not offline.traceparent)
        self._serial_lock = asyncio.Lock()
        self.escaped = 0  # spans that ended outside their trial's trace while this adapter's trials ran

    # -- AgentAdapter ---------------------------------------------------------------------------------
    async def run(self, input: str, *, seed: int) -> Trace:
        if self._serial:
            async with self._serial_lock:
                return await self._trial(input, seed)
        return await self._trial(input, seed)

    @property
    def graph(self) -> Any:
        """The framework's own agent object (None for a callable that runs one): where a manifest is read."""
        return None if self._callable else self.obj

    def tools(self) -> list[ToolInfo]:
        return [] if self._callable else self.profile.tools(self.obj)

    def config(self) -> dict[str, Any]:
        described = {"type": "callable"} if self._callable else self.profile.describe(self.obj)
        out = {"adapter": self.name, "entry": self.entry, "framework": self.profile.name, **described}
        if self._behaviour is not None:
            out["model"] = {"provider": "offline", "behaviour": self._behaviour.source}
        return out

    # -- one trial ------------------------------------------------------------------------------------
    async def _trial(self, input: str, seed: int) -> Trace:
        scope = TrialScope(
            self._capture,
            self._provider,
            attributes={
                # The trial is a workflow in the GenAI conventions: its input is the run's, in the trace and
                # in any export of these spans (so `agentassay analyze` can match it to its scenario).
                "gen_ai.operation.name": "invoke_workflow",
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": input}]}], ensure_ascii=False
                ),
                "agentassay.seed": seed,
                "agentassay.framework": self.profile.name,
            },
            exclusive=self._serial,
        )
        escaped_before = self._capture.escaped
        collected: Captured | None = None
        result: Any = None
        failure: BaseException | None = None
        try:
            with scope.running():
                if self._offline is not None:
                    self._offline.registry.register(scope.trace_id, seed, self._behaviour)
                try:
                    result = await self._invoke(input)
                except asyncio.CancelledError:
                    raise
                except BaseException as exc:  # the agent's failure is the trial's error, never the process's
                    failure = user_exception(exc)
                finally:
                    if self._offline is not None:
                        self._offline.registry.unregister(scope.trace_id)
            self.profile.flush(self.obj)
            collected = scope.collect()
        finally:
            if collected is None:
                scope.abandon()
        escaped = self._capture.escaped - escaped_before
        if escaped:
            self.escaped += escaped
            self._serial = True  # this framework leaves the trial's context: its next trials run one at a time
        trace = self._trace(collected, seed, result, failure, escaped)
        if failure is not None:
            raise AgentRunError(describe_exception(failure), trace) from failure
        return trace

    async def _invoke(self, input: str) -> Any:
        call = self.obj if self._callable else None
        if call is not None:
            if self.profile.is_async(call):
                return await in_framework_loop(call(input))
            ctx = contextvars.copy_context()  # the trial's root span stays current in the worker thread
            return await call_in_thread(ctx.run, call, input)
        if self.profile.is_async(self.obj):
            return await in_framework_loop(self.profile.invoke(self.obj, input))
        ctx = contextvars.copy_context()
        return await call_in_thread(ctx.run, self.profile.invoke, self.obj, input)

    def _trace(
        self, collected: Captured, seed: int, result: Any, failure: BaseException | None, escaped: int = 0
    ) -> Trace:
        stats = ImportStats()
        imported = import_spans(
            collected.spans, resource=dict(collected.resource), stats=stats, fix_spans=self.profile.fix_spans
        )
        trace = imported[0].trace if imported else None
        extra: dict[str, Any] = {"trace_id": collected.trace_id}
        if collected.overflow:
            extra["spans_dropped"] = collected.overflow
        if stats.unfixed:  # a bug of the profile on these spans: the trace is as the framework reported it
            extra["span_fixups_failed"] = True
        if escaped:  # spans that ended outside any trial's trace while this one ran (other trials' may be among them)
            extra["spans_escaped"] = escaped
        if trace is None:
            output = None if failure is not None else self.profile.output(result)
            steps = (Step(Action.RESPOND, output=output),) if failure is None else ()
            trace = Trace(steps=steps, output=output)
        elif trace.output is None and failure is None:
            output = self.profile.output(result)
            steps = tuple(trace.steps)
            if steps and steps[-1].action is Action.RESPOND and steps[-1].output is None:
                steps = (*steps[:-1], replace(steps[-1], output=output))
            trace = replace(trace, output=output, steps=steps)
        if failure is not None and trace.error is None:
            error = describe_exception(failure)
            trace = replace(trace, error=error, steps=(*trace.steps, Step(Action.ERROR, error=error)))
        metadata = replace(
            trace.metadata, seed=seed, adapter=self.name, extra={**trace.metadata.extra, **extra}
        )
        return replace(trace, metadata=metadata)
