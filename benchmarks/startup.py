"""Start-up: how long `agentassay --help` takes, and which plugins a plain run imports.

    python benchmarks/startup.py           # -> benchmarks/results/startup.json, docs/startup.md
    python benchmarks/startup.py --quick   # fewer repetitions

(a) `agentassay --help`, wall time of the whole process, median of repeated runs (target < 0.5 s).
(b) `python -X importtime -m agentassay run` of the plain-callable example (ticket routing), with and
without the trace store: every agentassay module the run imported, its cumulative import time, and
which built-in plugins were loaded. A plain run must load only what its suite and options call for:
fingerprints and coverage (both on by default), the store writer only with a store, and never the
proxy, shards, warm start or budget cap.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._plugins import builtin_names  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

SUITE = "examples/ticket_routing/agentassay.yml"
EXPECTED = {"no store": ["coverage", "fingerprints"], "with store": ["coverage", "fingerprints", "store"]}


def help_time(reps: int) -> dict[str, Any]:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "agentassay", "--help"], cwd=ROOT, capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times), "reps": reps}


def imports(store: bool) -> dict[str, Any]:
    """The run's imports as `-X importtime` reports them (module -> cumulative microseconds)."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--store", str(Path(tmp) / "t.db")] if store else ["--no-store"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "agentassay", "run", SUITE, "-q", *args],
            cwd=ROOT, capture_output=True, text=True, env=env, check=False,
        )
        wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"the run failed ({done.returncode}): {done.stderr[-2000:]}")
    cumulative: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cum, name = (part.strip() for part in line[len("import time:"):].split("|"))
            if cum.isdigit():
                cumulative[name] = int(cum)
    ours = {k: v for k, v in cumulative.items() if k.startswith("agentassay")}
    # A built-in plugin is its feature's `_plugin` module (agentassay/_features/<name>/_plugin.py).
    plugins = sorted(k.split(".")[2] for k in ours if k.startswith("agentassay._features.") and k.endswith("._plugin"))
    return {
        "wall_s": wall,
        "plugins_loaded": plugins,
        "plugins_not_loaded": sorted(set(builtin_names()) - set(plugins)),
        "agentassay_modules": len(ours),
        "slowest": _slowest(cumulative),
    }


def _slowest(cumulative: dict[str, int], k: int = 5) -> list[tuple[str, float]]:
    """The costliest first imports, cumulative seconds: agentassay's packages (each with what it pulls in;
    `from scipy import stats` is not itself reported by -X importtime) and top-level third-party modules."""
    picked = {n: us for n, us in cumulative.items() if (n.startswith("agentassay.") and n.count(".") == 1) or "." not in n}
    return sorted(((n, us / 1e6) for n, us in picked.items() if n != "agentassay"), key=lambda kv: -kv[1])[:k]


def markdown(result: dict[str, Any]) -> str:
    h = result["help"]
    lines = [
        "# Start-up",
        "",
        f"Measured by `python benchmarks/startup.py` on {result['platform']} (Python {result['python']}), {result['date']}.",
        "",
        f"`agentassay --help`: median **{h['median_s']:.3f} s** over {h['reps']} runs (min {h['min_s']:.3f}, "
        f"max {h['max_s']:.3f}); target < 0.5 s. The CLI imports every command's dependencies inside the command.",
        "",
        f"`agentassay run {SUITE}` (a plain callable), under `python -X importtime`:",
        "",
        "| run | built-in plugins imported | not imported | wall time | slowest top-level imports (cumulative s) |",
        "|---|---|---|---:|---|",
    ]
    for label, r in result["runs"].items():
        slow = ", ".join(f"{k} {v:.2f}" for k, v in r["slowest"][:4])
        lines.append(
            f"| {label} | {', '.join(r['plugins_loaded'])} | {', '.join(r['plugins_not_loaded'])} | "
            f"{r['wall_s']:.2f} s | {slow} |"
        )
    lines += [
        "",
        "Built-in plugins are imported only when the suite or the options call for them (docs/architecture.md, "
        "\"Hooks\"): fingerprints and coverage are on by default, the store writer needs a store, and the proxy, "
        "shards, warm start and budget cap stay unimported. Most of a run's start-up is the first import of "
        "`agentassay._stats`, i.e. SciPy's statistics module, which the exact tests need.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        write_report(args, "startup", load_result(args, "startup"), markdown)
        return
    timer = Timer()
    runs = {"no store": imports(False), "with store": imports(True)}
    for label, r in runs.items():
        if r["plugins_loaded"] != EXPECTED[label]:
            raise SystemExit(f"{label}: imported plugins {r['plugins_loaded']}, expected {EXPECTED[label]}")
    result = run_info(args.quick, date=today(), help=help_time(5 if args.quick else 15), runs=runs, seconds=timer.seconds)
    write_report(args, "startup", result, markdown, seconds=result["seconds"])


if __name__ == "__main__":
    main()
