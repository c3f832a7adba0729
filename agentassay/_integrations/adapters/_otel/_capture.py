"""One OpenTelemetry span processor for every framework: each trial gets its own spans, then they are gone.

Frameworks report what an agent did as OpenTelemetry spans (their own instrumentation or OpenInference's).
Rather than one hand-written integration per framework, a trial runs under a root span of its own, started
in a fresh context, and :class:`SpanCapture` — added once to the process's tracer provider, never replacing
a provider the user installed — files every span that ends under the trial's trace id. When the trial is
over its spans are handed back and dropped, so memory is bounded by the trials in flight, whatever the
number of trials. A span that ends under no open trial's trace while trials are open has *escaped* its
root (a framework that starts work in a thread without carrying the context): it is counted, and the
adapter runs that framework's trials one at a time, where a span's trial is the one open when it ends.

Spans become the OTLP JSON span objects ``agentassay analyze`` reads from a file (:func:`otlp_span`), so a
live trial and an import of its exported spans build the same trace (agentassay/_integrations/importers).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.trace import StatusCode

from ...._errors import AgentAssayError, ExitCode
from ...importers._otlp import key_values

#: Spans kept per trial; beyond this a trial's further spans are counted, not kept (a runaway loop).
MAX_SPANS_PER_TRIAL = 20_000
ROOT_SPAN = "agentassay.trial"
SCOPE = "agentassay"


class CaptureError(AgentAssayError):
    """Spans cannot be captured in this process (another kind of tracer provider, or the SDK disabled)."""

    exit_code = ExitCode.AGENT


@dataclass
class _Bucket:
    spans: list[ReadableSpan] = field(default_factory=list)
    overflow: int = 0


@dataclass(frozen=True)
class Captured:
    """One trial's spans, in the order they ended, as OTLP span objects; what did not fit is counted."""

    trace_id: str
    spans: tuple[dict[str, Any], ...]
    overflow: int
    resource: Mapping[str, Any]


class SpanCapture(SpanProcessor):
    """Files ended spans by trace id for the trials that are open; counts the ones that escaped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, _Bucket] = {}
        self._exclusive: int | None = None  # a serial trial: spans of any trace id are its own
        self.escaped = 0

    # -- SpanProcessor -------------------------------------------------------------------------------
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        """Nothing to do when a span starts: a span is filed once it has ended and is complete."""

    def on_end(self, span: ReadableSpan) -> None:
        ctx = span.context
        if ctx is None:
            return
        with self._lock:
            bucket = self._open.get(ctx.trace_id)
            if bucket is None and self._exclusive is not None:
                bucket = self._open.get(self._exclusive)
            if bucket is None:
                if self._open:
                    self.escaped += 1
                return
            if len(bucket.spans) < MAX_SPANS_PER_TRIAL:
                bucket.spans.append(span)
            else:
                bucket.overflow += 1

    def shutdown(self) -> None:
        with self._lock:
            self._open.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    # -- trials --------------------------------------------------------------------------------------
    def open(self, trace_id: int, *, exclusive: bool = False) -> None:
        with self._lock:
            self._open[trace_id] = _Bucket()
            if exclusive:
                self._exclusive = trace_id

    def close(self, trace_id: int) -> tuple[list[ReadableSpan], int]:
        with self._lock:
            bucket = self._open.pop(trace_id, None) or _Bucket()
            if self._exclusive == trace_id:
                self._exclusive = None
        return bucket.spans, bucket.overflow

    @property
    def open_trials(self) -> int:
        with self._lock:
            return len(self._open)


_INSTALLED: tuple[SpanCapture, TracerProvider] | None = None
_INSTALL_LOCK = threading.Lock()


def install() -> tuple[SpanCapture, TracerProvider]:
    """The process's capture, added to its tracer provider on first use (one provider, one processor).

    A provider the user set (an SDK ``TracerProvider``) keeps its own processors and exporters; ours is
    added beside them. With none set, an SDK provider is installed as the global one, so frameworks that
    use the global provider report to it.
    """
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED is not None:
            return _INSTALLED
        if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            raise CaptureError(
                "OTEL_SDK_DISABLED=true turns OpenTelemetry off in this process, so the agent's steps cannot be "
                "captured: unset it for the run (agentassay keeps every span in memory; nothing is exported)"
            )
        provider = otel_trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            if type(provider).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider"):
                raise CaptureError(
                    f"the process's tracer provider is a {type(provider).__module__}.{type(provider).__name__}, "
                    "not OpenTelemetry's SDK TracerProvider, so no span processor can be added to it: install "
                    "an opentelemetry.sdk.trace.TracerProvider (with your exporters) instead"
                )
            otel_trace.set_tracer_provider(TracerProvider())
            provider = otel_trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):  # set by someone else in between: not an SDK one
                raise CaptureError("another tracer provider was installed while AgentAssay installed its own")
        capture = SpanCapture()
        provider.add_span_processor(capture)
        _INSTALLED = (capture, provider)
        return _INSTALLED


@dataclass
class TrialScope:
    """The root span of one trial, current in a fresh context while the agent runs.

    ``trace_id`` (32 hex digits) is what the offline model server sees in a request's ``traceparent``.
    """

    capture: SpanCapture
    provider: TracerProvider
    attributes: Mapping[str, Any] = field(default_factory=dict)
    exclusive: bool = False
    trace_id: str = ""
    _span: Any = None
    _id: int = 0

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Start the root span and make it current (in this task or thread); end it on the way out."""
        tracer = self.provider.get_tracer(SCOPE)
        span = tracer.start_span(ROOT_SPAN, context=otel_context.Context(), attributes=dict(self.attributes))
        self._span, self._id = span, span.get_span_context().trace_id
        self.trace_id = format(self._id, "032x")
        self.capture.open(self._id, exclusive=self.exclusive)
        token = otel_context.attach(otel_trace.set_span_in_context(span, otel_context.Context()))
        try:
            yield
        except BaseException as exc:
            span.set_status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            otel_context.detach(token)
            span.end()

    def collect(self) -> Captured:
        """The trial's spans (call after the framework's flush); the capture forgets them."""
        spans, overflow = self.capture.close(self._id)
        resource = dict(spans[0].resource.attributes) if spans and spans[0].resource is not None else {}
        return Captured(self.trace_id, tuple(otlp_span(s) for s in spans), overflow, resource)

    def abandon(self) -> None:
        """Drop the trial's spans without reading them (it timed out or was cancelled)."""
        self.capture.close(self._id)


# -- ReadableSpan -> OTLP JSON ------------------------------------------------------------------------
def otlp_span(span: ReadableSpan) -> dict[str, Any]:
    """A finished SDK span in the OTLP JSON mapping (the shape of a collector's file export)."""
    ctx = span.context
    out: dict[str, Any] = {
        "traceId": format(ctx.trace_id, "032x") if ctx else "",
        "spanId": format(ctx.span_id, "016x") if ctx else "",
        "name": span.name,
        "startTimeUnixNano": str(span.start_time or 0),
        "endTimeUnixNano": str(span.end_time or 0),
        "attributes": key_values(span.attributes),
    }
    if span.parent is not None:
        out["parentSpanId"] = format(span.parent.span_id, "016x")
    if span.events:
        out["events"] = [
            {"name": e.name, "timeUnixNano": str(e.timestamp), "attributes": key_values(e.attributes)}
            for e in span.events
        ]
    if span.status is not None and span.status.status_code is StatusCode.ERROR:
        out["status"] = {"code": 2, "message": span.status.description or ""}
    return out
