"""The OpenTelemetry capture adapter (issue 24, point 1), with a callable that reports GenAI spans itself.

No framework is needed here: the agent below emits the spans a GenAI-instrumented framework would (an
``invoke_agent`` span per agent, ``execute_tool`` spans, a ``chat`` span with token usage), through the real
OpenTelemetry SDK on the process's tracer provider. Each framework's own tests drive the real framework.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace

from agentassay._integrations.adapters import AgentLoadError, AgentRunError, adapter_for
from agentassay._integrations.adapters._otel._capture import install
from agentassay._integrations.importers import import_traces
from agentassay._traces import Action


def agent(question: str) -> str:
    """Triage hands off to Orders, which looks the order up; every step is a GenAI span."""
    tracer = trace.get_tracer("example.agents")
    order = "".join(c for c in question if c.isdigit()) or "0"
    with tracer.start_as_current_span("invoke_agent Triage", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Triage",
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
    }):
        with tracer.start_as_current_span("chat", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 3,
        }):
            pass
        with tracer.start_as_current_span("handoff", attributes={
            "gen_ai.operation.name": "handoff", "gen_ai.handoff.from_agent": "Triage",
            "gen_ai.handoff.to_agent": "Orders",
        }):
            pass
    with tracer.start_as_current_span("invoke_agent Orders", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Orders",
    }) as span:
        with tracer.start_as_current_span("execute_tool lookup_order", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
            "gen_ai.tool.call.arguments": json.dumps({"order_id": order}),
            "gen_ai.tool.call.result": json.dumps({"status": "shipped", "order": order}),
        }):
            pass
        with tracer.start_as_current_span("chat", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
            "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 5,
        }):
            pass
        answer = f"Order {order} has shipped."
        span.set_attribute("gen_ai.output.messages", json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]))
    return answer


async def async_agent(question: str) -> str:
    await asyncio.sleep(0)  # interleave with the other trials in flight
    return agent(question)


def _check_full(trace, order: str) -> None:
    assert [s.action for s in trace.steps] == [Action.HANDOFF, Action.CALL_TOOL, Action.RESPOND]
    handoff, call, respond = trace.steps
    assert (handoff.agent, handoff.target) == ("Triage", "Orders")
    assert (call.agent, call.tool, call.arguments) == ("Orders", "lookup_order", {"order_id": order})
    assert call.output == {"status": "shipped", "order": order}
    assert respond.agent == "Orders" and trace.output == f"Order {order} has shipped."
    assert (trace.cost.input_tokens, trace.cost.output_tokens) == (30, 8)


def test_a_trial_becomes_a_full_trace() -> None:
    adapter = adapter_for(agent, entry="tests:agent", framework="otel")
    assert adapter.name == "otel:otel"
    trace_ = asyncio.run(adapter.run("Where is order 123?", seed=7))
    _check_full(trace_, "123")
    assert trace_.metadata.seed == 7 and trace_.metadata.adapter == "otel:otel"
    assert len(trace_.metadata.extra["trace_id"]) == 32


def test_eight_concurrent_trials_keep_their_spans_apart() -> None:
    adapter = adapter_for(async_agent, entry="tests:async_agent", framework="otel")

    async def main() -> list:
        return await asyncio.gather(*(adapter.run(f"order {100 + i}?", seed=i) for i in range(8)))

    traces = asyncio.run(main())
    for i, t in enumerate(traces):
        _check_full(t, str(100 + i))
    assert len({t.metadata.extra["trace_id"] for t in traces}) == 8
    assert adapter.escaped == 0


def test_threads_carry_the_trial_context() -> None:
    """A blocking agent runs in a worker thread; its spans still land in its own trial."""
    adapter = adapter_for(agent, entry="tests:agent", framework="otel")

    async def main() -> list:
        return await asyncio.gather(*(adapter.run(f"order {200 + i}?", seed=i) for i in range(8)))

    for i, t in enumerate(asyncio.run(main())):
        _check_full(t, str(200 + i))


def test_a_live_trace_equals_the_import_of_its_spans(tmp_path: Path) -> None:
    """The same spans, exported as an OTLP JSON file and read by `agentassay analyze`'s importer."""
    capture, provider = install()
    from agentassay._integrations.adapters._otel._capture import TrialScope

    scope = TrialScope(capture, provider, attributes={"gen_ai.operation.name": "invoke_workflow", "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "order 42"}]}])})
    with scope.running():
        agent("order 42")
    captured = scope.collect()
    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {}, "spans": list(captured.spans)}]}]}
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    [from_file] = list(import_traces(path))

    from agentassay._integrations.importers import import_spans

    [live] = import_spans(list(captured.spans))
    assert live.trace == from_file.trace and live.input == from_file.input == "order 42"


def test_memory_stays_bounded_over_many_trials() -> None:
    adapter = adapter_for(agent, entry="tests:agent", framework="otel")
    capture, _ = install()

    async def main() -> None:
        for i in range(200):
            await adapter.run(f"order {i}", seed=i)

    asyncio.run(main())
    assert capture.open_trials == 0
    assert capture._open == {}


def test_the_agent_failing_keeps_the_steps_seen() -> None:
    def broken(question: str) -> str:
        tracer = trace.get_tracer("example.agents")
        with tracer.start_as_current_span("execute_tool lookup_order", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
            "gen_ai.tool.call.arguments": "{\"order_id\": \"1\"}",
        }):
            pass
        raise RuntimeError("provider down")

    adapter = adapter_for(broken, entry="tests:broken", framework="otel")
    with pytest.raises(AgentRunError) as info:
        asyncio.run(adapter.run("order 1", seed=0))
    steps = info.value.trace.steps
    assert steps[0].tool == "lookup_order" and steps[-1].action is Action.ERROR
    assert "RuntimeError: provider down" in str(info.value)


def test_spans_that_escape_the_trial_are_counted_and_trials_turn_serial() -> None:
    """A framework that hands work to a thread without the context: its span has no trial's trace id."""

    def leaky(question: str) -> str:
        done = threading.Event()

        def work() -> None:
            token = otel_context.attach(otel_context.Context())  # the context is not carried over
            try:
                with trace.get_tracer("x").start_as_current_span("execute_tool t", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}):
                    pass
            finally:
                otel_context.detach(token)
                done.set()

        threading.Thread(target=work).start()
        done.wait()
        return "ok"

    adapter = adapter_for(leaky, entry="tests:leaky", framework="otel")
    first = asyncio.run(adapter.run("q", seed=0))
    assert adapter.escaped == 1 and adapter._serial
    assert [s.tool for s in first.steps if s.tool] == []  # the escaped span is not this trial's
    assert first.metadata.extra["spans_escaped"] == 1  # reported with the trial
    second = asyncio.run(adapter.run("q", seed=1))  # serial now: whatever ends while it runs is its own
    assert [s.tool for s in second.steps if s.tool] == ["t"]


def test_an_unknown_framework_is_a_clear_load_error() -> None:
    with pytest.raises(AgentLoadError, match=r"unknown framework 'langgrph'"):
        adapter_for(agent, entry="m:agent", framework="langgrph")
