"""Capture overhead per trial and memory over 1,000 trials, per agent framework (issue 24).

    python benchmarks/frameworks.py                        # the generic profile, in this environment
    .venv-fw-langgraph/bin/python benchmarks/frameworks.py --framework langgraph
    python benchmarks/frameworks.py --render               # docs/frameworks.md's table from the data
    .venv-fw-adk/bin/python benchmarks/frameworks.py --framework adk --trace-heap   # where its heap grows

Each framework runs in its own environment (.ci/frameworks.sh makes them), so each run measures one
framework and replaces its entry in ``benchmarks/results/frameworks.json``; the table of docs/frameworks.md
is rendered from that file. A framework is driven by its example workflow
(examples/frameworks/<name>/v1.py) on the offline model, through the real adapter; the generic profile
(``otel``) by a callable that reports GenAI spans itself (no HTTP).

*Capture overhead* is what the capture adds to a trial: the trial's wall time through ``OTelAdapter`` minus
the time of the framework's own call inside it (root span, filing the spans, turning them into the trace
through the importer, the boundary), over 200 trials timed without ``tracemalloc``. *Memory* is the Python
heap (``tracemalloc``) after 100 more trials, halfway through the rest and after 1,000: flat means the capture
keeps nothing of a finished trial (a one-off allocation of the framework's shows as a step before the midpoint).
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

BEGIN, END = "<!-- frameworks:figures -->", "<!-- /frameworks:figures -->"
INPUT = "I'd like to change my seat to 14C. My confirmation number is ABC123."


def generic_agent(question: str) -> str:
    """What a GenAI-instrumented framework reports for a two-agent run, without the framework."""
    from opentelemetry import trace

    tracer = trace.get_tracer("benchmark")
    with tracer.start_as_current_span("invoke_agent Triage", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Triage Agent"}):
        with tracer.start_as_current_span("chat", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 90, "gen_ai.usage.output_tokens": 9}):
            pass
        with tracer.start_as_current_span("handoff", attributes={
            "gen_ai.operation.name": "handoff", "gen_ai.handoff.from_agent": "Triage Agent",
            "gen_ai.handoff.to_agent": "Seat Booking Agent"}):
            pass
    with tracer.start_as_current_span("invoke_agent Seat", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Seat Booking Agent"}):
        with tracer.start_as_current_span("execute_tool update_seat", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "update_seat",
            "gen_ai.tool.call.arguments": '{"confirmation_number": "ABC123", "new_seat": "14C"}',
            "gen_ai.tool.call.result": "Updated seat to 14C for confirmation number ABC123."}):
            pass
        with tracer.start_as_current_span("chat", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 14}):
            pass
    return "Updated seat to 14C for confirmation number ABC123."


def _adapter(framework: str) -> Any:
    from agentassay._integrations.adapters import adapter_for, load_adapter
    from agentassay._spec import ModelConfig

    if framework == "otel":
        return adapter_for(generic_agent, entry="benchmarks.frameworks:generic_agent", framework="otel")
    entry = f"examples.frameworks.{framework}.v1:agent"
    return load_adapter(entry, model=ModelConfig(provider="offline"), search=[ROOT], root=ROOT)


def measure(framework: str, trials: int, warm: int, timed_trials: int) -> dict[str, Any]:
    from agentassay._integrations.adapters._otel._capture import install

    adapter = _adapter(framework)
    inner: list[float] = []
    invoke = adapter._invoke

    async def timed(input: str) -> Any:  # the framework's own call, timed inside the trial
        start = time.perf_counter()
        try:
            return await invoke(input)
        finally:
            inner.append(time.perf_counter() - start)

    adapter._invoke = timed
    totals: list[float] = []
    heap: dict[str, float] = {}

    async def run(n: int, offset: int) -> None:
        for i in range(n):
            start = time.perf_counter()
            await adapter.run(INPUT, seed=offset + i)
            totals.append(time.perf_counter() - start)

    def current() -> float:  # a full collection also empties CPython's free lists, which would look like growth
        gc.collect()
        return tracemalloc.get_traced_memory()[0] / 2**20

    # Time first, without tracemalloc (it slows every allocation, the capture's most of all) ...
    asyncio.run(run(timed_trials, 0))
    overhead = [t - i for t, i in zip(totals, inner, strict=True)]
    timing = (list(totals), list(inner))
    totals.clear()
    inner.clear()
    # ... then memory over ``trials`` more, under tracemalloc.
    tracemalloc.start()
    asyncio.run(run(warm, timed_trials))
    heap["after_warm_mib"] = current()
    half = (trials - warm) // 2  # a one-off allocation (a cache filled, a lazy import) shows as a step before
    asyncio.run(run(half, timed_trials + warm))  # the midpoint; growth per trial shows as a slope after it
    heap["after_half_mib"] = current() - _floats(half) * 2
    asyncio.run(run(trials - warm - half, timed_trials + warm + half))
    heap["after_all_mib"] = current() - _floats(trials - warm) * 2  # not the capture's: the timing lists
    tracemalloc.stop()
    totals, inner = timing
    capture, _ = install()
    return {
        "framework": framework,
        "trials": trials,
        "timed_trials": timed_trials,
        "trial_ms_median": statistics.median(totals) * 1e3,
        "framework_ms_median": statistics.median(inner) * 1e3,
        "overhead_ms_median": statistics.median(overhead) * 1e3,
        "overhead_ms_p90": statistics.quantiles(overhead, n=10)[-1] * 1e3,
        "heap_mib_after_warm": heap["after_warm_mib"],
        "heap_mib_after_half": heap["after_half_mib"],
        "trials_at_half": timed_trials + warm + half,
        "heap_mib_after_all": heap["after_all_mib"],
        "heap_growth_kib_per_1000_trials": (heap["after_all_mib"] - heap["after_warm_mib"]) * 1024
        * 1000 / max(1, trials - warm),
        "open_trials_after": capture.open_trials,
        "escaped_spans": adapter.escaped,
    }


def _floats(n: int) -> float:
    """MiB the benchmark's own timing lists hold for ``n`` more trials (a float and a list slot each)."""
    return n * (sys.getsizeof(1.0) + 8) / 2**20


def _row(r: dict[str, Any]) -> str:
    half = r.get("heap_mib_after_half")  # runs before the midpoint was measured have two points
    heap = [r["heap_mib_after_warm"], *([] if half is None else [half]), r["heap_mib_after_all"]]
    return (
        f"| {r['framework']} | {r['trials']:,} | {r['framework_ms_median']:.1f} | {r['overhead_ms_median']:.2f} "
        f"| {r['overhead_ms_p90']:.2f} | {' → '.join(f'{h * 1024:.0f}' for h in heap)} "
        f"| {r['escaped_spans']} |"
    )


def markdown(data: dict[str, Any]) -> Any:
    """docs/frameworks.md's figures block from ``frameworks.json`` (framework -> its latest run)."""
    results = [data[name] for name in sorted(data)]
    lines = [
        BEGIN,
        "",
        "Measured by `benchmarks/frameworks.py`, each framework in its own environment, on its example workflow "
        "driven by the offline model (the seat-change input: triage, a handoff, `update_seat`, the answer); "
        "`otel` is a callable reporting the same GenAI spans itself, no HTTP. *Overhead* is the trial's time "
        "through the capture adapter minus the framework's own call inside it, over 200 trials timed without "
        "tracing allocations; *heap* is `tracemalloc`'s current size after 100 more trials, (newer runs) halfway "
        "through the rest, and after all of them: a one-off allocation is a step, growth a slope.",
        "",
        "| framework | trials | framework's call (ms, median) | capture overhead (ms, median) | p90 | heap (KiB) 100 → (half →) all | escaped spans |",
        "|---|---:|---:|---:|---:|---|---:|",
        *(_row(r["result"]) for r in results),
        "",
        "Dates and machines: " + "; ".join(f"{r['result']['framework']} {r['date']} ({r['platform']})" for r in results)
        + ".",
        "",
        END,
    ]
    block = "\n".join(lines)

    def update(text: str | None) -> str | None:
        if text is None or BEGIN not in text:
            return None
        head, _, rest = text.partition(BEGIN)
        _, _, tail = rest.partition(END)
        return head + block + tail

    return update


def trace_heap(framework: str, trials: int) -> None:
    """Where the heap grows: the traced heap every 100 trials and the three largest allocation differences
    between trial 100 and the end with their stacks, so a step (one object allocated once) is told from
    growth (many, rising with the trials). Prints only; writes no data."""
    adapter = _adapter(framework)

    async def run(n: int, offset: int) -> None:
        for i in range(n):
            await adapter.run(INPUT, seed=offset + i)

    asyncio.run(run(20, 0))  # imports and first-call caches
    tracemalloc.start(25)
    asyncio.run(run(100, 100))
    gc.collect()
    first = tracemalloc.take_snapshot()
    print(f"after 100: {tracemalloc.get_traced_memory()[0] / 2**20:.3f} MiB", flush=True)
    for done in range(200, trials + 1, 100):
        asyncio.run(run(100, 1000 + done))
        gc.collect()
        print(f"after {done}: {tracemalloc.get_traced_memory()[0] / 2**20:.3f} MiB", flush=True)
    for stat in tracemalloc.take_snapshot().compare_to(first, "traceback")[:3]:
        print(stat)
        for line in stat.traceback.format()[-24:]:
            print("   ", line)



def main(argv: list[str] | None = None) -> None:
    ap = parser(__doc__)
    ap.add_argument("--framework", default="otel", help="the profile to measure (its environment must have it)")
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--trace-heap", action="store_true", help="print where the heap grows (tracebacks); no data")
    args = ap.parse_args(argv)
    if args.trace_heap:
        trace_heap(args.framework, min(args.trials, 500))
        return
    if args.render:
        write_report(args, "frameworks", load_result(args, "frameworks"), markdown)
        return
    timer = Timer()
    trials = 200 if args.quick else args.trials
    result = measure(args.framework, trials, warm=min(100, trials // 2), timed_trials=min(200, trials))
    print(json.dumps(result, indent=2))
    # One file for every framework, each run replacing its own framework's entry (each runs in its own venv).
    try:
        data = load_result(args, "frameworks")
    except FileNotFoundError:
        data = {}
    data[args.framework] = {**run_info(args.quick, date=today()), "result": result, "seconds": timer.seconds}
    write_report(args, "frameworks", dict(sorted(data.items())), markdown, seconds=timer.seconds)


if __name__ == "__main__":
    main()
