"""Runner speed: concurrency efficiency, per-trial overhead, and the offline example's throughput.

    python benchmarks/runner.py            # writes docs/performance.md and benchmarks/results/performance.json

1. A blocking callable sleeping 0.5 s, 10 scenarios x 40 trials at concurrency 20 (fixed-n, so
   all 400 trials run): ideal wall time 400 x 0.5 / 20 = 10 s; target <= 1.3x.
2. Runner overhead with a zero-latency callable (sync and async), with the SQLite trace store
   on: wall time per trial; target <= 2 ms.
3. 1,000 trials of the offline customer-service example (OpenAI Agents SDK + seeded offline
   model) at concurrency 20; target <= 60 s.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._integrations.adapters import CallableAdapter  # noqa: E402
from agentassay._runner import run_suite  # noqa: E402
from agentassay._spec import AgentConfig, Check, Scenario, Settings, Suite, load_suite  # noqa: E402
from agentassay._traces import TraceStore  # noqa: E402
from benchmarks._harness import load_result, parser, today, write_report  # noqa: E402
from benchmarks.fingerprints import permutation_time  # noqa: E402
from benchmarks.fingerprints import throughput as fingerprint_throughput  # noqa: E402


def _suite(scenarios: int, trials: int, concurrency: int) -> Suite:
    return Suite(
        name="bench",
        agent=AgentConfig("bench:agent"),
        scenarios=tuple(
            Scenario(f"s{i}", f"input {i}", checks=(Check("contains", "ok"),)) for i in range(scenarios)
        ),
        settings=Settings(trials=trials, method="fixed", concurrency=concurrency, timeout=30, seed=1),
    )


def _sleepy(text: str) -> str:
    time.sleep(0.5)
    return "ok"


def _instant(text: str) -> str:
    return "ok"


async def _instant_async(text: str) -> str:
    return "ok"


def _run(suite: Suite, adapter: object, store: TraceStore | None) -> tuple[float, int]:
    t0 = time.perf_counter()
    report = run_suite(suite, adapter=adapter, store=store, progress=False, handle_signals=False, version="bench")
    wall = time.perf_counter() - t0
    return wall, sum(len(s.trials) for s in report.results.scenarios)


def concurrency_efficiency() -> dict[str, float]:
    wall, n = _run(_suite(10, 40, 20), CallableAdapter(_sleepy), None)
    ideal = n * 0.5 / 20
    return {"trials": n, "wall_s": round(wall, 3), "ideal_s": ideal, "ratio": round(wall / ideal, 3)}


def overhead(trials_per_scenario: int) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, fn in (("sync", _instant), ("async", _instant_async)):
            for with_store in (False, True):
                store = TraceStore(Path(tmp) / f"{label}-{with_store}.db") if with_store else None
                wall, n = _run(_suite(10, trials_per_scenario, 20), CallableAdapter(fn), store)
                if store is not None:
                    store.close()
                key = f"{label}_{'store' if with_store else 'nostore'}_ms_per_trial"
                out[key] = round(1000 * wall / n, 3)
        out["trials"] = n
    return out


def offline_example(total: int, entry: str | None = None) -> dict:
    """``total`` fixed-n trials of the offline example; wall time and per-scenario pass rates."""
    from dataclasses import replace

    suite = load_suite(ROOT / "examples" / "customer_service" / "agentassay.yml")
    per = total // len(suite.scenarios)
    suite = replace(suite, settings=replace(suite.settings, trials=per, max_trials=None, method="fixed", concurrency=20))
    with tempfile.TemporaryDirectory() as tmp, TraceStore(Path(tmp) / "t.db") as store:
        t0 = time.perf_counter()
        report = run_suite(suite, entry=entry, store=store, progress=False, handle_signals=False)
        wall = time.perf_counter() - t0
        n = sum(len(s.trials) for s in report.results.scenarios)
        tokens = report.results.cost()
    return {
        "trials": n,
        "wall_s": round(wall, 2),
        "ms_per_trial": round(1000 * wall / n, 2),
        "tokens": tokens["input_tokens"] + tokens["output_tokens"],
        "pass_rates": {s.name: round(s.passes / len(s.trials), 3) for s in report.results.scenarios},
    }


def help_time(repeats: int = 7) -> dict[str, float]:
    """Wall time of `agentassay --help` in a fresh interpreter (median of ``repeats``)."""
    import statistics
    import subprocess

    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "agentassay", "--help"], check=True, capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return {"median_s": round(statistics.median(times), 3), "max_s": round(max(times), 3)}


def render(res: dict) -> str:
    c, o, e, h = res["concurrency"], res["overhead"], res["offline_example"], res["help"]
    fx, fp = res["fingerprint_extraction"], res["fingerprint_test"]
    ok = lambda b: "met" if b else "**missed**"  # noqa: E731
    v2 = res["offline_example_v2"]["pass_rates"]
    rates = "\n".join(f"| {k} | {v} | {v2.get(k)} |" for k, v in e["pass_rates"].items())
    worst_overhead = max(v for k, v in o.items() if k.endswith("_ms_per_trial"))
    return f"""# Runner performance

Measured by `python benchmarks/runner.py` on {res['machine']} (Python {res['python']}), {res['date']}.
Every figure below is read from `benchmarks/results/performance.json`, written by that run.

| measurement | result | target | |
|---|---|---|---|
| 10 scenarios x 40 trials of a blocking callable sleeping 0.5 s, concurrency 20 | {c['wall_s']} s for {c['trials']} trials; ideal {c['ideal_s']} s; ratio **{c['ratio']}** | <= 1.3 | {ok(c['ratio'] <= 1.3)} |
| runner overhead, zero-latency callable, worst of sync/async with/without store | **{worst_overhead} ms per trial** | <= 2 ms | {ok(worst_overhead <= 2)} |
| {e['trials']} trials of the offline customer-service example, concurrency 20 | **{e['wall_s']} s** ({e['ms_per_trial']} ms per trial, {e['tokens']:,} simulated tokens) | <= 60 s | {ok(e['wall_s'] <= 60)} |
| `agentassay --help` in a fresh interpreter (median of 7) | **{h['median_s']} s** (max {h['max_s']} s) | < 0.5 s | {ok(h['max_s'] < 0.5)} |
| fingerprint extraction, batch of {fx['traces']:,} customer-service-shaped traces ({fx['features']} features), best of 3 | **{fx['traces_per_s']:,.0f} traces/s** | >= 50,000 | {ok(fx['traces_per_s'] >= 50_000)} |
| fingerprint permutation test, {fp['permutations']:,} permutations, n = {fp['n_per_side']} per side, {fp['features']} features (median of 10) | **{fp['median_ms']:.1f} ms** | <= 50 ms | {ok(fp['median_ms'] <= 50)} |

Overhead detail ({o['trials']} trials each, ms per trial of wall time, including evaluation and,
with the store, one committed SQLite insert per trial):

| callable | no store | SQLite store |
|---|---|---|
| sync (runs in a daemon thread) | {o['sync_nostore_ms_per_trial']} | {o['sync_store_ms_per_trial']} |
| async (awaited on the loop) | {o['async_nostore_ms_per_trial']} | {o['async_store_ms_per_trial']} |

Pass rates of the offline example's checks in those runs ({e['trials'] // len(e['pass_rates'])} trials per scenario; `v2` is the
regressed version, measured the same way):

| scenario | v1 | v2 |
|---|---|---|
{rates}

How: trials are asyncio tasks, at most `concurrency` in flight; blocking callables run in a
daemon thread each (the default thread pool would cap concurrency at cpu + 4 and hang the
process on an agent that never returns). The store commits each trial in its own WAL-mode
transaction with `synchronous=NORMAL`.
"""


def page(res: dict) -> Callable[[str | None], str]:
    """docs/performance.md: this benchmark's part, then benchmarks/speed.py's block as it is."""
    return lambda old: render(res) + speed_block(old)


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__, quick_help="smaller overhead and example runs; writes nothing").parse_args(argv)
    if args.render:
        write_report(args, "performance", load_result(args, "performance"), page, indent=1)
        return
    res = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(),
        "date": today(),
        "concurrency": concurrency_efficiency(),
        "overhead": overhead(20 if args.quick else 200),
        "offline_example": offline_example(100 if args.quick else 1000),
        "offline_example_v2": offline_example(100 if args.quick else 1000, "examples.customer_service.v2:triage_agent"),
        "help": help_time(),
        "fingerprint_extraction": fingerprint_throughput(20_000 if args.quick else 100_000, np.random.default_rng(1)),
        "fingerprint_test": permutation_time(np.random.default_rng(2)),
    }
    print(json.dumps(res, indent=1))
    if not args.quick:
        write_report(args, "performance", res, page, indent=1)


def speed_block(old: str | None) -> str:
    """The part of docs/performance.md from benchmarks/speed.py's block on, kept as it is: the block that
    benchmark writes and the prose after it (written by hand, e.g. the large-suite note)."""
    from benchmarks.speed import BEGIN, END

    if old is None or BEGIN not in old or END not in old:
        return ""
    return "\n" + BEGIN + old.split(BEGIN, 1)[1].rstrip("\n") + "\n"


if __name__ == "__main__":
    main()
