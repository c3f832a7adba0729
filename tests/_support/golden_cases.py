"""Golden results files: what every feature of a run writes, recorded once and compared ever after.

Each case runs the CLI in-process on the offline examples with ``--concurrency 1`` (so no trial is in
flight when a test decides, and the files are reproducible bit for bit) and a fixed
``--agent-version``. :func:`normalise` removes what differs between two runs of the same code: run
ids, times, wall-clock latencies and the interpreter's versions. The files under ``tests/golden/``
were written before the run's lifecycle became hooks (issue 13); ``tests/product/test_golden_results.py``
checks that the refactor changed nothing else. Regenerate them only for a deliberate change of
behaviour::

    python tests/_support/golden_cases.py --write
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
CS = "examples/customer_service/agentassay.yml"
STRUCTURAL = "examples/customer_service/agentassay.structural.yml"
TICKETS = "examples/ticket_routing/agentassay.yml"
V2 = "examples.customer_service.v2:triage_agent"

PROXY_SUITE = """\
name: customer-service-proxy
agent: examples.customer_service.v1:triage_agent
model: offline
config:
  trials: 40
  method: fixed
  concurrency: 1
  seed: 7
  prices:
    "*": {input: 0.40, output: 1.60}
    offline-mini: {input: 0.02, output: 0.08}
  proxy:
    model: {provider: offline, name: offline-mini}
    paired: 10
scenarios:
  - name: seat_change
    input: "I'd like to change my seat to 14C. My confirmation number is ABC123."
    properties:
      - must_reach: Seat Booking Agent
      - must_call: update_seat
    evaluator:
      - contains: "14C"
  - name: baggage
    input: "How much baggage can I bring?"
    properties:
      - must_call: faq_lookup_tool
    evaluator:
      - contains: "bag"
"""

BUDGET_SUITE = """\
name: customer-service-budget
agent: examples.customer_service.v1:triage_agent
model: offline
config:
  trials: 60
  concurrency: 1
  seed: 7
  budget_usd: 0.004
  prices:
    "*": {input: 0.40, output: 1.60}
scenarios:
  - name: seat_change
    input: "I'd like to change my seat to 14C. My confirmation number is ABC123."
    properties:
      - must_call: update_seat
    evaluator:
      - contains: "14C"
  - name: baggage
    input: "How much baggage can I bring?"
    evaluator:
      - contains: "bag"
"""

# volatile key -> the value it is replaced by (of the same type, so a normalised file still loads)
_VOLATILE: dict[str, Any] = {
    "run_id": "<id>", "started_at": "<time>", "finished_at": "<time>", "timestamp": "<time>",
    "latency_s": 0.0, "versions": {},
}


def normalise(data: Any) -> Any:
    """The results file without what differs between two runs of the same code (ids, times, latencies)."""
    if isinstance(data, dict):
        return {k: (_VOLATILE[k] if k in _VOLATILE else normalise(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [normalise(v) for v in data]
    if isinstance(data, str):
        # merged run ids and shard notes quote the shards' run ids
        return re.sub(r"\b[0-9a-f]{16}\b", "<id>", data)
    return data


@contextlib.contextmanager
def _in_root() -> Iterator[None]:
    old = Path.cwd()
    os.chdir(ROOT)
    added = str(ROOT) not in sys.path
    if added:
        sys.path.insert(0, str(ROOT))
    try:
        yield
    finally:
        os.chdir(old)
        if added:
            sys.path.remove(str(ROOT))


def _cli(*args: str) -> int:
    from agentassay._integrations.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(args))


def _run(folder: Path, name: str, *args: str) -> tuple[int, Path]:
    out = folder / f"{name}.json"
    code = _cli(*args, "-o", str(out), "--no-store", "-q", "--concurrency", "1")
    return code, out


def cases(folder: Path) -> dict[str, tuple[int, Path]]:
    """Run every case into ``folder``; name -> (exit code, results file)."""
    folder.mkdir(parents=True, exist_ok=True)
    proxy = folder / "proxy.yml"
    proxy.write_text(PROXY_SUITE, encoding="utf-8")
    budget = folder / "budget.yml"
    budget.write_text(BUDGET_SUITE, encoding="utf-8")
    out: dict[str, tuple[int, Path]] = {}
    with _in_root():
        out["cs_base"] = base = _run(folder, "cs_base", "run", CS, "--full", "--agent-version", "v1")
        b = str(base[1])
        out["cs_check_v2"] = v2 = _run(
            folder, "cs_check_v2", "check", CS, "--baseline", b, "--agent", V2, "--agent-version", "v2"
        )
        out["cs_check_v1"] = _run(folder, "cs_check_v1", "check", CS, "--baseline", b, "--agent-version", "v1b")
        cmp_out = folder / "cs_compare.json"
        out["cs_compare"] = (_cli("compare", b, str(v2[1]), "-o", str(cmp_out), "-q"), cmp_out)
        out["cs_warm"] = _run(folder, "cs_warm", "run", CS, "--warm-start", b, "--agent-version", "v1c")
        out["structural_base"] = sb = _run(
            folder, "structural_base", "run", STRUCTURAL, "--trials", "10", "--method", "fixed", "--agent-version", "v1"
        )
        out["structural_check_v2"] = _run(
            folder, "structural_check_v2", "check", STRUCTURAL, "--trials", "10", "--method", "fixed",
            "--baseline", str(sb[1]), "--agent", V2, "--agent-version", "v2",
        )
        out["tickets_base"] = tb = _run(folder, "tickets_base", "run", TICKETS, "--full", "--agent-version", "v1")
        out["tickets_check_v2"] = _run(
            folder, "tickets_check_v2", "check", TICKETS, "--baseline", str(tb[1]),
            "--agent", "examples.ticket_routing.router:route_ticket_v2", "--agent-version", "v2",
        )
        out["proxy_base"] = pb = _run(folder, "proxy_base", "run", str(proxy), "--agent-version", "v1")
        out["proxy_check_v2"] = _run(
            folder, "proxy_check_v2", "check", str(proxy), "--baseline", str(pb[1]), "--agent", V2,
            "--agent-version", "v2",
        )
        out["budget_run"] = _run(folder, "budget_run", "run", str(budget), "--agent-version", "v1")
        shards = []
        for i in (1, 2):
            name = f"shard_check_{i}"
            out[name] = _run(
                folder, name, "check", CS, "--baseline", b, "--agent", V2, "--agent-version", "v2",
                "--shard", f"{i}/2",
            )
            shards.append(str(out[name][1]))
        merged = folder / "shard_merged.json"
        out["shard_merged"] = (_cli("merge", *shards, "--baseline", b, "-o", str(merged), "-q"), merged)
    return out


def _read(results_file: Path) -> Any:
    """The normalised file; the temporary folder the cases ran in is written ``<tmp>``, the checkout ``<root>``."""
    text = results_file.read_text(encoding="utf-8").replace(str(results_file.parent), "<tmp>").replace(str(ROOT), "<root>")
    return normalise(json.loads(text))


def reports(results_file: Path) -> dict[str, str]:
    """The terminal table and the PR comment (with the coverage section the Action adds) of a normalised file."""
    from agentassay._features.coverage._report import as_section, coverage_section
    from agentassay._reports import render_pr_comment, render_table
    from agentassay._results import Results

    data = _read(results_file)
    results = Results.from_dict(data)
    cov = results.sections.get("coverage")
    section = None
    if cov and (cov.get("structural") or cov.get("behavioural")):
        section = coverage_section(cov.get("structural"), cov.get("behavioural"))
    return {
        "table": render_table(results, width=100),  # not the terminal's width: the same text everywhere
        "comment": render_pr_comment(results, replacing=[as_section(section)] if section else [], run_url="https://example.invalid/run/1"),
    }


REPORTED = ("cs_check_v2", "structural_check_v2", "proxy_check_v2", "budget_run", "shard_merged", "tickets_check_v2")


def snapshot(folder: Path) -> dict[str, Any]:
    """Everything the golden file holds: per case, the exit code and the normalised results; some reports."""
    ran = cases(folder)
    out: dict[str, Any] = {}
    for name, (code, path) in ran.items():
        out[name] = {"exit_code": code, "results": _read(path)}
        if name in REPORTED:
            out[name]["reports"] = reports(path)
    return out


def golden_file() -> Path:
    return GOLDEN / "results.json.gz"


def load_golden() -> dict[str, Any]:
    with gzip.open(golden_file(), "rt", encoding="utf-8") as f:
        return json.load(f)


def write_golden(data: dict[str, Any]) -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False).encode()
    with open(golden_file(), "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0) as z:
        z.write(raw)


def differences(want: Any, got: Any, path: str = "", limit: int = 25) -> list[str]:
    """The first ``limit`` paths where two JSON values differ, with both values."""
    out: list[str] = []

    def walk(a: Any, b: Any, p: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                walk(a.get(k, "<missing>"), b.get(k, "<missing>"), f"{p}.{k}")
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                out.append(f"{p}: length {len(a)} != {len(b)}")
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                walk(x, y, f"{p}[{i}]")
        elif a != b:
            out.append(f"{p}: {str(a)[:200]!r} != {str(b)[:200]!r}")

    walk(want, got, path)
    return out


def main(argv: list[str]) -> int:
    import tempfile

    if argv != ["--write"]:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        data = snapshot(Path(tmp))
    write_golden(data)
    print(f"wrote {golden_file()} ({golden_file().stat().st_size:,} bytes, {len(data)} cases)")
    return 0



if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main(sys.argv[1:]))
