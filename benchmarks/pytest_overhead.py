"""What the pytest plugin costs: a session with no marked test, and each trial of a marked one.

    python benchmarks/pytest_overhead.py           # -> benchmarks/results/pytest-overhead.json, docs/pytest-overhead.md
    python benchmarks/pytest_overhead.py --quick   # fewer repetitions

(a) Session overhead for a temporary project of 200 plain tests that marks nothing (target < 30 ms),
as the sum of what the plugin adds: its import (``python -X importtime``, median of repeated fresh
interpreters) and its hooks during the session (the same session run in one process, alternately
with the plugin and with ``-p no:agentassay``, median of the paired differences; in one process the
interpreter start-up, whose noise on a shared 2-core machine is ±100 ms, cancels out). The wall
time of whole fresh sessions with and without the plugin is reported beside it, noise and all.
(b) Per-trial overhead: in one session, marked tests with an empty body and 100 and 1,100 trials
(fixed-n, so every trial runs); the difference of their durations over 1,000 trials is the
plugin's cost per trial — one full pytest protocol (fresh fixtures) and the verdict's bookkeeping —
with the default timeout (each trial in a daemon thread) and with ``timeout=None`` (target < 1 ms).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

PLAIN = "\n\n".join(f"def test_plain_{i}():\n    assert {i} == {i}" for i in range(200)) + "\n"
MARKED = '''\
import pytest


@pytest.mark.agentassay(trials=20, threshold=0.5, method="fixed")
def test_warm_up(trial):
    pass
'''
for _n in (100, 1100):
    for _label, _timeout in (("thread", ""), ("main", ", timeout=None")):
        MARKED += f'''

@pytest.mark.agentassay(trials={_n}, threshold=0.5, method="fixed"{_timeout})
def test_{_label}_{_n}(trial):
    pass
'''


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder, capture_output=True, text=True, check=False,
    )


IMPORT = "import pytest; import agentassay._integrations.pytest_plugin"
IN_PROCESS = """
import contextlib, io, statistics, sys, time
import pytest
args = ["-q", "-p", "no:cacheprovider"]
diffs, times = [], {"with": [], "without": []}
for i in range(int(sys.argv[1]) + 1):
    pair = {}
    for label, extra in (("with", []), ("without", ["-p", "no:agentassay"])):
        with contextlib.redirect_stdout(io.StringIO()):
            t0 = time.perf_counter()
            code = pytest.main(args + extra)
            pair[label] = time.perf_counter() - t0
        assert code == 0, code
    if i:  # the first pair warms caches
        diffs.append(pair["with"] - pair["without"])
        for k, v in pair.items():
            times[k].append(v)
print(statistics.median(diffs) * 1000, statistics.median(times["with"]), statistics.median(times["without"]), file=sys.stderr)
"""


def _import_ms() -> float:
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", IMPORT], capture_output=True, text=True, check=True)
    total = 0
    for line in done.stderr.splitlines():
        parts = [p.strip() for p in line.removeprefix("import time:").split("|")]
        # top-level imports only (no leading spaces in the name column): the plugin and what it pulls in
        if len(parts) == 3 and parts[1].isdigit() and line.split("|")[2][1:2] != " " and (
            parts[2].startswith("agentassay") or "agentassay" in parts[2]
        ):
            total += int(parts[1])
    return total / 1000


def session_overhead(reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_plain.py").write_text(PLAIN)
        imports = [_import_ms() for _ in range(reps)]
        done = subprocess.run([sys.executable, "-c", IN_PROCESS, str(reps)], cwd=folder, capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise SystemExit(f"in-process sessions failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        hooks_ms, in_with, in_without = (float(x) for x in done.stderr.split()[-3:])
        wall: dict[str, list[float]] = {"with": [], "without": []}
        for i in range(reps * 2 + 2):
            label = "with" if i % 2 == 0 else "without"
            t0 = time.perf_counter()
            run = _pytest(folder, *(() if label == "with" else ("-p", "no:agentassay")))
            if run.returncode != 0:
                raise SystemExit(f"pytest failed:\n{run.stdout[-2000:]}")
            if i >= 2:
                wall[label].append(time.perf_counter() - t0)
    import_ms = statistics.median(imports)
    return {
        "tests": 200,
        "reps": reps,
        "import_ms": import_ms,
        "hooks_ms": hooks_ms,
        "median_overhead_ms": import_ms + hooks_ms,
        "in_process_with_s": in_with,
        "in_process_without_s": in_without,
        "wall_with_s": statistics.median(wall["with"]),
        "wall_without_s": statistics.median(wall["without"]),
        "wall_difference_ms": (statistics.median(wall["with"]) - statistics.median(wall["without"])) * 1000,
    }


def per_trial() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_marked.py").write_text(MARKED)
        done = _pytest(folder, "--durations=0", "-vv")
    if done.returncode != 0:
        raise SystemExit(f"pytest failed:\n{done.stdout[-3000:]}")
    durations: dict[str, float] = {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "call" and parts[0].endswith("s"):
            durations[parts[2].split("::")[-1]] = float(parts[0][:-1])
    out: dict[str, Any] = {"durations_s": durations}
    for label in ("thread", "main"):
        out[f"{label}_ms_per_trial"] = (durations[f"test_{label}_1100"] - durations[f"test_{label}_100"]) / 1000 * 1000
    return out


def markdown(result: dict[str, Any]) -> str:
    s, t = result["session"], result["trials"]
    return "\n".join([
        "# The pytest plugin's overhead",
        "",
        f"Measured by `python benchmarks/pytest_overhead.py` on {result['platform']} (Python {result['python']}), "
        f"{result['date']}.",
        "",
        "| what | measured | target |",
        "|---|---:|---:|",
        f"| a session of {s['tests']} plain tests: what installing the plugin adds (its import "
        f"{s['import_ms']:.1f} ms + its hooks {s['hooks_ms']:+.1f} ms; medians of {s['reps']}) | "
        f"{s['median_overhead_ms']:.1f} ms | < 30 ms |",
        f"| per trial of a marked test, default timeout (the body in a daemon thread) | "
        f"{t['thread_ms_per_trial']:.2f} ms | < 1 ms |",
        f"| per trial, `timeout=None` (the body in the main thread) | {t['main_ms_per_trial']:.2f} ms | < 1 ms |",
        "",
        f"Whole fresh sessions, for reference: {s['wall_with_s']:.3f} s with the plugin, {s['wall_without_s']:.3f} s "
        f"with `-p no:agentassay` (medians of {s['reps']}; difference {s['wall_difference_ms']:+.0f} ms, within the "
        "±100 ms noise of interpreter start-up on this machine, which is why the overhead is measured in parts). "
        f"In one process: {s['in_process_with_s']:.3f} s vs {s['in_process_without_s']:.3f} s per session.",
        "",
        "A trial is one full pytest protocol (setup, call and teardown of the test's function-scoped fixtures, "
        "so every trial gets fresh ones) plus the verdict's bookkeeping; the figure is the difference between "
        "1,100 and 100 trials of an empty test in one session, over 1,000. The first marked test of a session "
        "also pays for importing the engine (NumPy, SciPy) once; a session without one never does.",
        "",
    ])


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        write_report(args, "pytest-overhead", load_result(args, "pytest-overhead"), markdown)
        return
    timer = Timer()
    result = run_info(args.quick, date=today(), session=session_overhead(5 if args.quick else 15), trials=per_trial(),
                      seconds=timer.seconds)
    write_report(args, "pytest-overhead", result, markdown, seconds=result["seconds"])


if __name__ == "__main__":
    main()
