"""Import speed and memory: 100,000 GenAI spans in under 10 s, in memory that does not grow with the file.

    python benchmarks/importers.py           # 10k and 100k spans -> benchmarks/results/importers.json, figures in docs/trace-first.md
    python benchmarks/importers.py --quick   # 2k and 20k spans, for CI smoke checks

Each file holds traces of 10 spans (an ``invoke_agent`` root, 5 ``chat`` and 4 ``execute_tool`` spans
with usage, messages, arguments and results), written the way the collector's file exporter writes:
one OTLP/JSON document per line, a batch of 512 spans each, spans in the order they end with 20
traces in flight, so a trace's spans are spread over several lines and interleaved with others.
The same spans are also written as one JSON document. Every import runs in a fresh interpreter:
wall time of the import, peak RSS of the process (``ru_maxrss``, which counts SQLite's memory too)
against the RSS of an interpreter that only imported the package, and the Python heap's peak
(``tracemalloc``, a separate run because tracing slows the import). For scale, the peak RSS of
``json.load`` of the one-document file is measured too.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

SEED = 20261123
SPANS_PER_TRACE = 10
BATCH = 512
IN_FLIGHT = 20
TARGET_S = 10.0
BEGIN, END = "<!-- importers:figures -->", "<!-- /importers:figures -->"

_CHILD = r"""
import json, resource, sys, time, tracemalloc
sys.path.insert(0, sys.argv[1])
mode, path = sys.argv[2], sys.argv[3]
if mode == "json.load":
    with open(path, encoding="utf-8") as f:
        json.load(f)
    out = {}
else:
    from agentassay._integrations.importers import ImportStats, import_traces
    if mode == "tracemalloc":
        tracemalloc.start()
    stats = ImportStats()
    start = time.perf_counter()
    n = sum(1 for _ in import_traces(path, stats=stats)) if mode != "baseline" else 0
    out = {"seconds": time.perf_counter() - start, "traces": n, "spans": stats.spans, "skipped": stats.skipped}
    if mode == "tracemalloc":
        out["heap_peak"] = tracemalloc.get_traced_memory()[1]
out["max_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(out))
"""


def _av(v: Any) -> dict[str, Any]:
    return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}


def _span(t: int, i: int, parent: int | None, name: str, start: int, attrs: dict[str, Any]) -> dict[str, Any]:
    s = {
        "traceId": f"{t:032x}",
        "spanId": f"{t:08x}{i:08x}",
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 900_000),
        "attributes": [{"key": k, "value": _av(v)} for k, v in attrs.items()],
        "status": {"code": 1},
    }
    if parent is not None:
        s["parentSpanId"] = f"{t:08x}{parent:08x}"
    return s


def _trace(t: int, rng: random.Random) -> list[dict[str, Any]]:
    """One run in end order: the children as they finish, the agent span last."""
    base = 1_795_000_000_000_000_000 + t * 50_000_000
    question = f"Where is order {rng.randrange(10**6):06d}?"
    children = []
    for k in range(1, SPANS_PER_TRACE):
        if k % 2:
            text = "Let me look that up." if k < SPANS_PER_TRACE - 1 else f"Order {t} ships tomorrow."
            children.append(
                _span(
                    t,
                    k,
                    0,
                    "chat gpt-4.1-mini",
                    base + k * 1_000_000,
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.provider.name": "openai",
                        "gen_ai.request.model": "gpt-4.1-mini",
                        "gen_ai.usage.input_tokens": rng.randrange(200, 900),
                        "gen_ai.usage.output_tokens": rng.randrange(5, 60),
                        "gen_ai.output.messages": json.dumps(
                            [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
                        ),
                    },
                )
            )
        else:
            children.append(
                _span(
                    t,
                    k,
                    0,
                    "execute_tool lookup_order",
                    base + k * 1_000_000,
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "lookup_order",
                        "gen_ai.tool.call.id": f"call_{t}_{k}",
                        "gen_ai.tool.call.arguments": json.dumps({"order": t, "fields": ["status", "eta"]}),
                        "gen_ai.tool.call.result": json.dumps({"status": "packed", "eta": "tomorrow"}),
                    },
                )
            )
    root = _span(
        t,
        0,
        None,
        "invoke_agent Support",
        base,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "Support",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": question}]}]
            ),
        },
    )
    root["endTimeUnixNano"] = str(base + SPANS_PER_TRACE * 1_000_000)
    return [*children, root]


def _doc(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "support-bot"}}]
                },
                "scopeSpans": [{"scope": {"name": "bench"}, "spans": spans}],
            }
        ]
    }


def _ended(traces: int) -> Any:
    """Spans in the order they end, IN_FLIGHT traces at a time."""
    rng = random.Random(SEED)
    for first in range(0, traces, IN_FLIGHT):
        runs = [_trace(t, rng) for t in range(first, min(traces, first + IN_FLIGHT))]
        for k in range(SPANS_PER_TRACE):
            for run in runs:
                yield run[k]


def write_files(tmp: Path, spans: int) -> tuple[Path, Path]:
    traces = spans // SPANS_PER_TRACE
    lines, single = tmp / f"spans-{spans}.jsonl", tmp / f"spans-{spans}.json"
    with lines.open("w", encoding="utf-8") as f:
        batch: list[dict[str, Any]] = []
        for s in _ended(traces):
            batch.append(s)
            if len(batch) == BATCH:
                f.write(json.dumps(_doc(batch), separators=(",", ":")) + "\n")
                batch = []
        if batch:
            f.write(json.dumps(_doc(batch), separators=(",", ":")) + "\n")
    with single.open("w", encoding="utf-8") as f:  # written span by span: the generator streams too
        f.write(
            '{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"bench"},"spans":['
        )
        for i, s in enumerate(_ended(traces)):
            f.write(("," if i else "") + json.dumps(s, separators=(",", ":")))
        f.write("]}]}]}\n")
    return lines, single


def child(mode: str, path: Path | str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), mode, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def run(quick: bool) -> dict[str, Any]:
    sizes = (2_000, 20_000) if quick else (10_000, 100_000)
    load_before = os.getloadavg()[0]
    baseline = child("baseline", "-")["max_rss"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="agentassay-bench-") as tmp:
        for spans in sizes:
            lines, single = write_files(Path(tmp), spans)
            for layout, path in (("JSON Lines", lines), ("one document", single)):
                timed = child("time", path)
                traced = child("tracemalloc", path)
                row = {
                    "layout": layout,
                    "spans": timed["spans"],
                    "traces": timed["traces"],
                    "skipped": timed["skipped"],
                    "file_mb": round(path.stat().st_size / 1e6, 1),
                    "seconds": round(timed["seconds"], 2),
                    "spans_per_s": round(timed["spans"] / timed["seconds"]),
                    "peak_rss_mb": round(timed["max_rss"] / 2**20, 1),
                    "rss_over_baseline_mb": round((timed["max_rss"] - baseline) / 2**20, 1),
                    "heap_peak_mb": round(traced["heap_peak"] / 2**20, 2),
                }
                if layout == "one document":
                    row["json_load_rss_mb"] = round(child("json.load", path)["max_rss"] / 2**20, 1)
                rows.append(row)
                print(
                    f"{layout:>12} {row['spans']:>7} spans  {row['seconds']:>5.2f} s  RSS {row['peak_rss_mb']} MB "
                    f"(+{row['rss_over_baseline_mb']} MB)  heap {row['heap_peak_mb']} MB",
                    flush=True,
                )
    big = [r for r in rows if r["spans"] == max(sizes)]
    small = [r for r in rows if r["spans"] == min(sizes)]
    return {
        **run_info(quick, date=today(), cpus=os.cpu_count()),
        # Timings are wall time: other work on the machine slows them down, so say how much there was.
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "target_seconds": TARGET_S,
        "baseline_rss_mb": round(baseline / 2**20, 1),
        "runs": rows,
        "meets_time_target": all(r["seconds"] < TARGET_S for r in big),
        "memory_growth": {
            r["layout"]: round(r["peak_rss_mb"] / s["peak_rss_mb"], 2)
            for r, s in zip(big, small, strict=True)
        },
    }


def figures(result: dict[str, Any]) -> str:
    lines = [
        BEGIN,
        f"Measured {result['date']} on {result['platform']}, Python {result['python']}, {result['cpus']} CPUs, "
        f"1-minute load average {result['load_average'][0]} before and {result['load_average'][1]} after "
        f"(`python benchmarks/importers.py`; every figure in benchmarks/results/importers.json). An interpreter that only "
        f"imports the package peaks at {result['baseline_rss_mb']} MB RSS.",
        "",
        "| layout | spans | traces | file | import | spans/s | peak RSS | Python heap peak |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['layout']} | {r['spans']:,} | {r['traces']:,} | {r['file_mb']} MB | {r['seconds']:.2f} s | "
            f"{r['spans_per_s']:,} | {r['peak_rss_mb']} MB | {r['heap_peak_mb']} MB |"
        )
    doc = next((r for r in reversed(result["runs"]) if "json_load_rss_mb" in r), None)
    growth = ", ".join(f"{k} x{v}" for k, v in result["memory_growth"].items())
    lines += [
        "",
        f"Ten times the spans, peak RSS {growth}; the target of {result['target_seconds']:.0f} s for the larger file is "
        f"{'met' if result['meets_time_target'] else 'NOT met'}."
        + (
            f" For scale, `json.load` of the {doc['file_mb']} MB one-document file alone peaks at "
            f"{doc['json_load_rss_mb']} MB."
            if doc
            else ""
        ),
        END,
    ]
    return "\n".join(lines)


def page(result: dict[str, Any]) -> Callable[[str | None], str | None]:
    """The figures block of docs/trace-first.md, put between its markers; None (the page left alone)
    when there is no page or it has no markers."""

    def update(text: str | None) -> str | None:
        if text is None or BEGIN not in text or END not in text:
            return None
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head + figures(result) + tail

    return update


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        write_report(args, "importers", load_result(args, "importers"), page, page="trace-first")
        return
    timer = Timer()
    result = run(args.quick)
    write_report(args, "importers", result, page, page="trace-first", seconds=timer.seconds)


if __name__ == "__main__":
    main()
