"""`agentassay analyze` end to end on 100,000 recorded GenAI spans: < 10 s, memory that does not grow with them.

    python benchmarks/tracefirst.py           # 10k and 100k spans -> benchmarks/results/tracefirst.json, figures in docs/trace-first.md
    python benchmarks/tracefirst.py --quick   # 2k and 20k spans

The spans are the importer benchmark's (benchmarks/importers.py: traces of 10 spans, an agent with a
tool, written as the collector's file exporter writes them, traces interleaved). A suite of one scenario
matches every trace by an input regex and checks the answer and the tool call; `analyze` imports the
file (streamed, grouped by trace through SQLite), replays every trace through the run's checks, tests,
fingerprints and behavioural coverage, and writes the results file. Each run is a fresh interpreter:
wall time, and peak RSS (``ru_maxrss``) against an interpreter that imported the same modules.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402
from benchmarks.importers import write_files  # noqa: E402

TARGET_S = 10.0
SUITE = """\
name: support
agent: support_bot:agent
config: {trials: 50, method: sprt, seed: 1, coverage: {enabled: true}}
scenarios:
  - name: order_status
    input: "Where is order 000000?"
    match: {input: "^Where is order \\\\d{6}\\\\?$"}
    properties:
      - must_call: lookup_order
    evaluator:
      - contains: "ships tomorrow"
"""
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from agentassay._spec import load_suite
from agentassay._features.tracefirst import analyze
from agentassay._results import Results
import agentassay._integrations.importers, agentassay._runner, agentassay._features.coverage._plugin, agentassay._features.fingerprints._plugin
mode, source, suite_path, out = sys.argv[1:5]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if mode == "analyze":
    report = analyze([source], load_suite(suite_path), progress=False)
    report.results.save(out)
    s = report.results.scenarios[0]
    extra = {"traces": len(s.trials), "passes": s.passes, "verdict": s.verdict.verdict.value,
             "agent_calls": report.results.sections["analyze"]["agent_calls"]}
else:
    extra = {}
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall_s": wall, "base_rss_mb": base / 1024, "peak_rss_mb": peak / 1024, **extra}))
"""


def measure(source: Path, suite: Path, out: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "analyze", str(source), str(suite), str(out)],
        cwd=suite.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"analyze failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(quick: bool) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "support_bot.py").write_text("def agent(text: str) -> str:\n    return text\n")
        suite = folder / "agentassay.yml"
        suite.write_text(SUITE)
        for spans in (2_000, 20_000) if quick else (10_000, 100_000):
            lines, _ = write_files(folder, spans)
            row = {"spans": spans, **measure(lines, suite, folder / f"r{spans}.json")}
            row["delta_rss_mb"] = row["peak_rss_mb"] - row["base_rss_mb"]
            rows.append(row)
            print(
                f"{spans:,} spans: {row['wall_s']:.2f} s, peak RSS {row['peak_rss_mb']:.0f} MB "
                f"(+{row['delta_rss_mb']:.0f} MB), {row['traces']} traces analysed",
                flush=True,
            )
    return rows


BEGIN, END = "<!-- tracefirst:figures -->", "<!-- /tracefirst:figures -->"


def markdown(result: dict[str, Any]) -> str:
    """The figures block of docs/trace-first.md (between its markers)."""
    lines = [
        BEGIN,
        f"Measured by `python benchmarks/tracefirst.py` on {result['platform']} (Python {result['python']}), "
        f"{result['date']}; every figure in benchmarks/results/tracefirst.json. Each run is a fresh interpreter analysing one "
        "OTLP/JSON Lines file (traces of 10 spans, interleaved) with a one-scenario suite that matches every "
        "trace by an input regex and checks the answer and the tool call, coverage on.",
        "",
        "| spans | traces analysed | wall time | peak RSS | above a bare interpreter | agent calls |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['spans']:,} | {r['traces']:,} | {r['wall_s']:.2f} s | {r['peak_rss_mb']:.0f} MB | "
            f"+{r['delta_rss_mb']:.0f} MB | {r['agent_calls']} |"
        )
    big = result["rows"][-1]
    lines += [
        "",
        f"Target: 100,000 spans in < {TARGET_S:g} s ({'met' if big['wall_s'] < TARGET_S else 'NOT met'}: "
        f"{big['wall_s']:.1f} s). The import streams the file and groups spans by trace in SQLite, and the replay "
        "reads matched traces back from a spool one at a time, so no trace set is held whole; what grows with "
        "the number of traces is the results file itself (one outcome per trace, with its fingerprint).",
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
        return head + markdown(result) + tail

    return update


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        write_report(args, "tracefirst", load_result(args, "tracefirst"), page, page="trace-first")
        return
    timer = Timer()
    rows = run(args.quick)
    result = run_info(args.quick, date=today(), target_s=TARGET_S, rows=rows, seconds=timer.seconds)
    write_report(args, "tracefirst", result, page, page="trace-first", seconds=result["seconds"])


if __name__ == "__main__":
    main()
