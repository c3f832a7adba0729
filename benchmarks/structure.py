"""Speed of structural coverage: manifest extraction, obligations, bundles, and C1–C4 over stored traces.

    python benchmarks/structure.py           # full run -> benchmarks/results/structure-speed.json (figures in docs/coverage.md)
    python benchmarks/structure.py --quick   # fewer repetitions

Issue 6, acceptance 5: extraction and obligation construction for a 12-agent, 12-tool workflow in
< 1 s; coverage over 10,000 stored traces in < 2 s. The workflow is built from real OpenAI Agents
SDK objects (a coordinator hands off to 11 specialists, each with its own function tool, one shared
hosted-style tool set, handoffs back); the 10,000 traces are written to a real SQLite trace store
and read back for the measurement, as `agentassay coverage` on a store would.
"""

from __future__ import annotations

import json
import platform
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import Agent, function_tool  # noqa: E402

from agentassay._features.structure import (  # noqa: E402
    extract_manifest,
    merge_bundles,
    objectives,
    obligations,
    structural_coverage,
)
from agentassay._traces import Action, Step, Trace, TraceMetadata, TraceStore  # noqa: E402
from benchmarks._harness import parser, write_report  # noqa: E402

SEED = 20261121


def workflow(agents: int = 12, tools: int = 12) -> Agent:
    """A coordinator and ``agents - 1`` specialists; tool i belongs to specialist i (the last two share one)."""

    def make_tool(i: int):
        @function_tool(name_override=f"tool_{i}")
        def tool(query: str, limit: int = 10) -> str:
            """A specialist lookup.

            Args:
                query: What to look up.
                limit: At most this many results.
            """
            return f"{i}:{query}:{limit}"

        return tool

    made = [make_tool(i) for i in range(tools)]
    specialists = []
    for i in range(agents - 1):
        own = [made[i]] if i < tools else []
        if i == agents - 2 and tools > agents - 1:
            own += made[agents - 1 :]
        specialists.append(Agent(name=f"Specialist {i}", instructions=f"Specialist {i}.", tools=own))
    coordinator = Agent(name="Coordinator", instructions="Route.", handoffs=list(specialists))
    for s in specialists:
        s.handoffs.append(coordinator)
    return coordinator


def traces(n: int, entry: Agent, rng: random.Random) -> list[Trace]:
    specialists = [h for h in entry.handoffs]
    out = []
    for k in range(n):
        s = rng.choice(specialists)
        steps = [Step(Action.HANDOFF, agent=entry.name, target=s.name)]
        for tool in s.tools:
            if rng.random() < 0.8:
                steps.append(Step(Action.CALL_TOOL, agent=s.name, tool=tool.name, arguments={"query": "x", "limit": 10}))
        if rng.random() < 0.3:
            steps.append(Step(Action.HANDOFF, agent=s.name, target=entry.name))
        steps.append(Step(Action.RESPOND, agent=steps[-1].target or s.name, output="done"))
        out.append(Trace(steps=tuple(steps), output="done", metadata=TraceMetadata(scenario=f"s{k % 20}", trial=k)))
    return out


def timed(fn, reps: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__, quick_help="fewer repetitions; writes nothing", render=False).parse_args(argv)
    reps = 3 if args.quick else 7
    entry = workflow()

    def build():
        m = extract_manifest(entry, system="bench")
        o = obligations(m)
        return m, o, merge_bundles(objectives(o))

    t_build, (manifest, obl, bundles) = timed(build, reps)

    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory() as tmp:
        store = TraceStore(Path(tmp) / "traces.db")
        for t in traces(10_000, entry, rng):
            md = t.metadata
            store.add(t, run_id="r1", suite="bench", scenario=str(md.scenario), agent_version="v1", trial=int(md.trial or 0))
        store.close()

        def cover():
            st = TraceStore(Path(tmp) / "traces.db")
            try:
                loaded = [row.trace for row in st.query("v1", suite="bench")]
            finally:
                st.close()
            return structural_coverage(manifest, loaded)

        t_cover, cov = timed(cover, reps)
        tracemalloc.start()  # a separate run: tracing allocations slows Python several-fold
        cover()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()

    result = {
        "machine": f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}",
        "workflow": {"agents": len(manifest.agents), "tools": len(manifest.tools), **obl.counts(), "bundles": len(bundles)},
        "extract_and_obligations_s": round(t_build, 4),
        "coverage_10000_stored_traces_s": round(t_cover, 4),
        "coverage_peak_mib": round(peak / 2**20, 1),
        "coverage_summary": cov.summary(),
        "targets": {"extract_and_obligations_s": 1.0, "coverage_10000_stored_traces_s": 2.0},
        "repetitions": reps,
    }
    print(json.dumps(result, indent=1))
    if not args.quick:
        write_report(args, "structure-speed", result, indent=1)


if __name__ == "__main__":
    main()
