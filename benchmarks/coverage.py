"""Behavioural coverage (agentassay._features.coverage): speed on a stored suite, and how honest Chao1 is.

    python benchmarks/coverage.py           # full run -> benchmarks/results/coverage-behavioural.json, docs/coverage-behavioural.md
    python benchmarks/coverage.py --quick   # small run, for smoke checks

(a) Speed: 10,000 synthetic traces of a five-agent airline workflow (triage routing to FAQ, seat,
booking and refund agents; tool retries, hand-backs, ``as_tool`` delegations; three models) are
written to a real SQLite trace store, and ``coverage_from_store`` is timed end to end (open, read,
parse, compute; median of 5) with its tracemalloc peak, next to the same computation through
``TraceStore.query`` + ``Trace`` objects. (b) Chao1: path distributions with a known number S of
feasible paths (uniform, Zipf s = 1, geometric with p_S / p_1 = 0.01; S = 10, 30, 100) are sampled
n = 20, 50, 100, 500 times, 2,000 reps per cell; the bias and RMSE of the bias-corrected Chao1 we
use, of the paper's f1²/(2 f2) (where defined) and of the (n − 1)/n variant are reported with the
mean C_path = d / Ŝ against the true d / S. (c) How often C_path falls when one trace is added
(Thm. 4.1 part 3). The generated section of docs/coverage-behavioural.md is rewritten from this run.
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.coverage import behavioural_coverage, coverage_from_store  # noqa: E402
from agentassay._integrations.adapters._base import ToolInfo  # noqa: E402
from agentassay._traces import Action, Cost, Step, Trace, TraceMetadata, TraceStore  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, write_report  # noqa: E402

SEED = 20261124
BEGIN, END = "<!-- BEGIN GENERATED: benchmarks/coverage.py -->", "<!-- END GENERATED: benchmarks/coverage.py -->"

# -- (a) a synthetic but realistic workflow ---------------------------------------------------------
TRIAGE, FAQ, SEAT, BOOK, REFUND, POLICY = (
    "Triage Agent", "FAQ Agent", "Seat Booking Agent", "Booking Agent", "Refund Agent", "Policy Agent",
)
MODELS = ("gpt-4.1-mini", "gpt-4.1", "claude-sonnet-4")
TARGET_MODELS = [*MODELS, "gemini-2.5-flash"]

TOOLS = [
    ToolInfo("faq_lookup_tool", "Answer airline FAQs.", {
        "type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"],
    }, FAQ),
    ToolInfo("update_seat", "Move a booking to a new seat.", {
        "type": "object",
        "properties": {
            "confirmation_number": {"type": "string", "minLength": 6, "maxLength": 6},
            "new_seat": {"type": "string"},
        },
        "required": ["confirmation_number", "new_seat"],
    }, SEAT),
    ToolInfo("search_flights", "Search flights.", {
        "type": "object",
        "$defs": {"Cabin": {"type": "string", "enum": ["economy", "premium", "business"]}},
        "properties": {
            "origin": {"type": "string", "minLength": 3, "maxLength": 3},
            "destination": {"type": "string", "minLength": 3, "maxLength": 3},
            "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
            "cabin": {"$ref": "#/$defs/Cabin"},
            "flexible": {"type": "boolean"},
            "dates": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        },
    }, BOOK),
    ToolInfo("issue_refund", "Refund a booking.", {
        "type": "object",
        "$defs": {"Reason": {"type": "object", "properties": {
            "code": {"enum": ["cancelled", "delayed", "downgrade", "other"]},
            "note": {"type": "string", "maxLength": 200},
        }}},
        "properties": {
            "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 5000},
            "currency": {"enum": ["USD", "EUR", "GBP"]},
            "reason": {"$ref": "#/$defs/Reason"},
        },
    }, REFUND),
    ToolInfo("cancel_booking", "Cancel a booking.", {
        "type": "object", "properties": {"confirmation_number": {"type": "string"}},
    }, REFUND),
    ToolInfo("escalate_to_human", "Hand the chat to a human.", {
        "type": "object", "properties": {"priority": {"type": "integer", "minimum": 1, "maximum": 3}},
    }, TRIAGE),
]
ROUTES = {FAQ: 0.45, SEAT: 0.25, BOOK: 0.18, REFUND: 0.12}
FILLER = (
    "Thanks for your patience. I have looked into this for you and here is what I found on your booking; "
    "let me know if there is anything else I can help you with today."
)


def _arguments(rng: random.Random, tool: str) -> dict[str, Any]:
    edge = rng.random() < 0.04  # an edge-case input now and then
    if tool == "faq_lookup_tool":
        return {"question": "" if edge else rng.choice(["How much baggage?", "Is there wifi?", "Meals?"])}
    if tool == "update_seat":
        return {"confirmation_number": "ABC123", "new_seat": "" if edge else f"{rng.randint(1, 30)}{rng.choice('ABCDEF')}"}
    if tool == "search_flights":
        return {
            "origin": "SFO", "destination": rng.choice(["JFK", "LHR", "NRT"]),
            "passengers": rng.choice([1, 9]) if edge else rng.randint(1, 4),
            "cabin": rng.choices(["economy", "premium", "business"], [0.8, 0.15, 0.05])[0],
            "flexible": rng.random() < 0.3,
            "dates": [] if edge else ["2026-12-0" + str(rng.randint(1, 9))] * rng.randint(1, 2),
        }
    if tool == "issue_refund":
        return {
            "amount": 5000 if edge else round(rng.uniform(20, 900), 2),
            "currency": rng.choices(["USD", "EUR", "GBP"], [0.7, 0.2, 0.1])[0],
            "reason": {"code": rng.choice(["cancelled", "delayed", "other"]), "note": "customer request"},
        }
    return {"confirmation_number": "ABC123"}


def synthetic_trace(rng: random.Random, i: int) -> Trace:
    steps: list[Step] = []
    if rng.random() < 0.1:  # triage consults the policy agent through Agent.as_tool
        steps += [
            Step(Action.HANDOFF, agent=TRIAGE, tool="policy_agent", arguments={"input": "policy?"}, target=POLICY),
            Step(Action.RESPOND, agent=POLICY, output="Policy: refunds within 24 hours.", depth=1),
        ]
    hops = 0
    while True:
        if rng.random() < 0.04:
            steps.append(Step(Action.RESPOND, agent=TRIAGE, output="I can only help with flights."))
            break
        agent = rng.choices(list(ROUTES), list(ROUTES.values()))[0]
        steps.append(Step(Action.HANDOFF, agent=TRIAGE, target=agent))
        tools = [t.name for t in TOOLS if t.agent == agent]
        tool = tools[0] if len(tools) == 1 or rng.random() < 0.9 else tools[1]
        for _ in range(1 + (rng.random() < 0.25)):  # sometimes a second call
            failed = rng.random() < 0.08
            steps.append(Step(Action.CALL_TOOL, agent=agent, tool=tool, arguments=_arguments(rng, tool),
                              output=None if failed else FILLER, error="ValueError: bad input" if failed else None))
            if failed:  # retry once
                steps.append(Step(Action.CALL_TOOL, agent=agent, tool=tool, arguments=_arguments(rng, tool),
                                  output=FILLER))
        hops += 1
        if hops < 3 and rng.random() < 0.12:  # hand back to triage, which routes again
            steps.append(Step(Action.HANDOFF, agent=agent, target=TRIAGE))
            continue
        if rng.random() < 0.01:
            steps.append(Step(Action.ERROR, agent=agent, error="MaxTurnsExceeded"))
        else:
            steps.append(Step(Action.RESPOND, agent=agent, output=FILLER))
        break
    model = rng.choices(MODELS, [0.6, 0.35, 0.05])[0]
    return Trace(
        steps=tuple(steps), output=FILLER,
        cost=Cost(rng.randint(800, 2400), rng.randint(30, 200), rng.uniform(0.5, 4.0)),
        metadata=TraceMetadata(scenario=f"s{i % 40}", trial=i // 40, seed=i, agent_version="v1", model=model,
                               adapter="synthetic"),
        error="MaxTurnsExceeded" if steps[-1].action is Action.ERROR else None,
    )


def speed(n_traces: int, repeats: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    traces = [synthetic_trace(rng, i) for i in range(n_traces)]
    others = [synthetic_trace(rng, i).with_metadata(agent_version="v0") for i in range(n_traces // 5)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traces.db"
        t0 = time.perf_counter()
        with TraceStore(path) as store:
            for i, tr in enumerate(traces + others):
                m = tr.metadata
                store.add(tr, run_id=f"run-{m.agent_version}", suite="airline", scenario=m.scenario or "",
                          agent_version=m.agent_version or "", trial=i)
        write_s = time.perf_counter() - t0
        size = path.stat().st_size
        kw: dict[str, Any] = {"tools": TOOLS, "target_models": TARGET_MODELS}

        def fast() -> Any:
            return coverage_from_store(path, agent_version="v1", **kw)

        def via_trace_objects() -> Any:
            with TraceStore(path) as store:
                return behavioural_coverage((s.trace for s in store.query("v1")), **kw)

        def timed(fn: Any, k: int) -> tuple[float, list[float], Any]:
            times, out = [], None
            for _ in range(k):
                t = time.perf_counter()
                out = fn()
                times.append(time.perf_counter() - t)
            return statistics.median(times), times, out

        def peak(fn: Any) -> int:
            tracemalloc.start()
            fn()
            _, top = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            return top

        fast_s, fast_all, cov = timed(fast, repeats)
        slow_s, _, cov_slow = timed(via_trace_objects, max(1, repeats // 2 + 1))
        mem_s, _, _ = timed(lambda: behavioural_coverage(traces, **kw), repeats)
        fast_peak, slow_peak = peak(fast), peak(via_trace_objects)
    same = cov.to_dict() == cov_slow.to_dict()
    return {
        "traces": n_traces,
        "other_version_traces": len(others),
        "store_bytes": size,
        "mean_steps": sum(len(t.steps) for t in traces) / n_traces,
        "store_write_s": write_s,
        "coverage_from_store_s": fast_s,
        "coverage_from_store_runs_s": fast_all,
        "coverage_from_store_peak_bytes": fast_peak,
        "via_trace_objects_s": slow_s,
        "via_trace_objects_peak_bytes": slow_peak,
        "in_memory_traces_s": mem_s,
        "results_identical": same,
        "coverage": cov.to_dict(),
    }


# -- (b) Chao1 on path distributions with a known size ---------------------------------------------
def shape(name: str, s: int) -> np.ndarray:
    i = np.arange(1, s + 1, dtype=float)
    if name == "uniform":
        w = np.ones(s)
    elif name == "zipf":
        w = 1 / i
    else:  # geometric with p_S / p_1 = 0.01
        w = 0.01 ** ((i - 1) / (s - 1))
    return w / w.sum()


def chao1_cell(rng: np.random.Generator, p: np.ndarray, n: int, reps: int) -> dict[str, Any]:
    s = p.size
    counts = rng.multinomial(n, p, size=reps)
    d = (counts > 0).sum(1).astype(float)
    f1 = (counts == 1).sum(1).astype(float)
    f2 = (counts == 2).sum(1).astype(float)
    corr = f1 * (f1 - 1) / (2 * (f2 + 1))
    bc, bcn = d + corr, d + (n - 1) / n * corr
    undefined = (f1 > 0) & (f2 == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        classic = np.where(f1 == 0, d, d + f1 * f1 / (2 * f2))
    ok = ~undefined

    def stats_of(est: np.ndarray) -> dict[str, float]:
        if est.size == 0:
            return {"mean": math.nan, "bias": math.nan, "rmse": math.nan}
        return {"mean": float(est.mean()), "bias": float(est.mean() - s), "rmse": float(np.sqrt(((est - s) ** 2).mean()))}

    return {
        "S": s,
        "n": n,
        "mean_d": float(d.mean()),
        "bias_corrected": stats_of(bc),
        "bias_corrected_n1n": stats_of(bcn),
        "classic": stats_of(classic[ok]),
        "classic_undefined": float(undefined.mean()),
        "bias_corrected_on_defined": stats_of(bc[ok]),
        "c_path_mean": float((d / bc).mean()),
        "true_coverage_mean": float((d / s).mean()),
        "c_path_overstates": float((d / bc > d / s + 1e-12).mean()),
    }


def chao1_table(reps: int, ns: tuple[int, ...], sizes: tuple[int, ...]) -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    rows = []
    for name in ("uniform", "zipf", "geometric"):
        for s in sizes:
            p = shape(name, s)
            for n in ns:
                rows.append({"shape": name, **chao1_cell(rng, p, n, reps)})
    return rows


# -- (c) Thm. 4.1 part 3: does C_path fall when a trace is added? ----------------------------------
def monotonicity(reps: int, n_max: int, s: int = 30) -> dict[str, Any]:
    rng = np.random.default_rng(SEED + 1)
    out = {}
    for name in ("uniform", "zipf"):
        p = shape(name, s)
        draws = rng.choice(s, size=(reps, n_max), p=p)
        counts = np.zeros((reps, s), dtype=np.int64)
        rows = np.arange(reps)
        prev = np.zeros(reps)
        falls, worst, worst20, steps = 0, 0.0, 0.0, 0
        for t in range(n_max):
            counts[rows, draws[:, t]] += 1
            d = (counts > 0).sum(1)
            f1, f2 = (counts == 1).sum(1), (counts == 2).sum(1)
            c = d / (d + f1 * (f1 - 1) / (2 * (f2 + 1)))
            if t > 0:
                drop = prev - c
                falls += int((drop > 1e-12).sum())
                steps += reps
                worst = max(worst, float(drop.max()))
                big = d >= 20
                if big.any():
                    worst20 = max(worst20, float(drop[big].max()))
            prev = c
        out[name] = {
            "S": s, "reps": reps, "n_max": n_max, "fall_rate": falls / steps,
            "largest_fall": worst, "largest_fall_d_ge_20": worst20,
        }
    return out


# -- report -----------------------------------------------------------------------------------------
def _f(x: float, digits: int = 2) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    sp = result["speed"]
    cov = sp["coverage"]
    cmd = "python benchmarks/coverage.py" + (" --quick" if result["quick"] else "")
    lines = [
        BEGIN,
        f"Generated by `{cmd}` ({result['platform']}, Python {result['python']}, seed {SEED}, "
        f"{result['seconds']:.0f} s in all); every number in this section is from that run.",
        "",
        f"### Speed: {sp['traces']:,} stored traces",
        "",
        f"A real SQLite trace store holding {sp['traces']:,} traces of agent version `v1` "
        f"(mean {sp['mean_steps']:.1f} steps, six tools, three models) and {sp['other_version_traces']:,} of `v0`, "
        f"{sp['store_bytes'] / 1e6:.1f} MB on disk (written in {sp['store_write_s']:.1f} s). Times are end to end: "
        "open, query, parse, compute.",
        "",
        "| path | median time | tracemalloc peak |",
        "|---|---|---|",
        f"| `coverage_from_store(path, agent_version=\"v1\", ...)` (median of {len(sp['coverage_from_store_runs_s'])}) "
        f"| {sp['coverage_from_store_s']:.3f} s | {sp['coverage_from_store_peak_bytes'] / 1e6:.1f} MB |",
        f"| `behavioural_coverage(s.trace for s in TraceStore(path).query(\"v1\"))` "
        f"| {sp['via_trace_objects_s']:.3f} s | {sp['via_trace_objects_peak_bytes'] / 1e6:.1f} MB |",
        f"| `behavioural_coverage(traces)` on `Trace` objects already in memory | {sp['in_memory_traces_s']:.3f} s | — |",
        "",
        f"Both store paths give identical results: {'yes' if sp['results_identical'] else 'NO'}. "
        f"Acceptance (< 2 s for 10,000 stored traces): {'met' if sp['coverage_from_store_s'] < 2 and sp['traces'] >= 10000 else 'not measured at 10,000' if sp['traces'] < 10000 else 'NOT met'}. "
        f"Result on that suite: {_summary(cov)}. It has {cov['details']['states_observed']} distinct abstract "
        f"states, so with λ = {cov['details']['lambda']:g} C_state is saturated: λ has to be set for the agent.",
        "",
        f"### Chao1 on paths with a known total S ({result['chao1_reps']:,} reps per cell)",
        "",
        "*BC* is the bias-corrected d + f1(f1−1)/(2(f2+1)) we use; *paper* is d + f1²/(2f2), averaged "
        "over the reps where it is defined (f2 > 0 or f1 = 0), with the share of reps where it is "
        "undefined; *BC·(n−1)/n* is Chao (2005)'s form with the sample-size factor. Bias and RMSE are in "
        "paths. *C_path* is the mean d/Ŝ_BC; *true* the mean d/S; *over* the share of reps where "
        "C_path > d/S (Ŝ below S: coverage overstated).",
        "",
        "| shape | S | n | mean d | BC bias | BC RMSE | paper undefined | paper bias | paper RMSE | BC bias (same reps) | BC·(n−1)/n bias | C_path | true d/S | over |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["chao1"]:
        bc, cl, bcd, bcn = r["bias_corrected"], r["classic"], r["bias_corrected_on_defined"], r["bias_corrected_n1n"]
        lines.append(
            f"| {r['shape']} | {r['S']} | {r['n']} | {r['mean_d']:.1f} | {_f(bc['bias'], 1)} | {_f(bc['rmse'], 1)} | "
            f"{r['classic_undefined']:.0%} | {_f(cl['bias'], 1)} | {_f(cl['rmse'], 1)} | {_f(bcd['bias'], 1)} | "
            f"{_f(bcn['bias'], 1)} | {r['c_path_mean']:.3f} | {r['true_coverage_mean']:.3f} | {r['c_path_overstates']:.0%} |"
        )
    cells = result["chao1"]
    defined = [r for r in cells if not math.isnan(r["classic"]["rmse"])]
    bc_wins = [r for r in defined if r["bias_corrected_on_defined"]["rmse"] < r["classic"]["rmse"] - 1e-9]
    ties = [r for r in defined if abs(r["bias_corrected_on_defined"]["rmse"] - r["classic"]["rmse"]) <= 1e-9]
    losses = [r for r in defined if r not in bc_wins and r not in ties]
    n1n_row = max(cells, key=lambda r: abs(r["bias_corrected"]["bias"] - r["bias_corrected_n1n"]["bias"]))
    n1n = abs(n1n_row["bias_corrected"]["bias"] - n1n_row["bias_corrected_n1n"]["bias"])
    n1n_50 = max(abs(r["bias_corrected"]["bias"] - r["bias_corrected_n1n"]["bias"]) for r in cells if r["n"] >= 50)
    lines += [
        "",
        f"On the reps where the paper's form is defined, the bias-corrected estimate has the lower RMSE in "
        f"{len(bc_wins)} of {len(defined)} cells, the same RMSE in {len(ties)} (every path seen twice or more)"
        + (
            f", and the higher RMSE in {len(losses)}: "
            + "; ".join(f"{r['shape']} (S = {r['S']}, n = {r['n']})" for r in losses)
            + " (heavy-tailed, undersampled cells where both estimates fall far short of S)"
            if losses
            else ""
        )
        + f". The (n − 1)/n factor moves the mean estimate by at most {n1n:.1f} paths ({n1n_row['shape']}, S = {n1n_row['S']}, n = {n1n_row['n']}) and by at most "
        f"{n1n_50:.2f} for n ≥ 50. The paper's form is undefined in up to "
        f"{max(r['classic_undefined'] for r in cells):.0%} of the reps of a cell.",
    ]
    mono = result["monotonicity"]
    lines += [
        "",
        "### Does C_path fall when one trace is added? (Thm. 4.1 part 3)",
        "",
        "| shape | S | sequences × traces | share of additions that lower C_path | largest fall | largest fall once d ≥ 20 |",
        "|---|---|---|---|---|---|",
    ]
    for name, m in mono.items():
        lines.append(
            f"| {name} | {m['S']} | {m['reps']} × {m['n_max']} | {m['fall_rate']:.1%} | {m['largest_fall']:.3f} | "
            f"{m['largest_fall_d_ge_20']:.3f} |"
        )
    lines.append(END)
    return "\n".join(lines)


def _summary(cov: dict[str, Any]) -> str:
    dims = ", ".join(f"{d} {cov[d]:.2f}" for d in ("tool", "path", "state", "boundary", "model"))
    return f"overall {cov['overall']:.3f} ({dims}); weakest {cov['weakest']}: “{cov['suggestion']}”"


def splice(block: str, text: str | None) -> str:
    """``text`` with its generated section replaced by ``block`` (appended, or a new doc, if none)."""
    if text is None:
        return "# Behavioural coverage: benchmark\n\n" + block + "\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def page(result: dict[str, Any]) -> Callable[[str | None], str]:
    """The generated section of docs/coverage-behavioural.md, spliced into the page."""
    return lambda text: splice(markdown(result), text)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        result = load_result(args, "coverage-behavioural")
        write_report(args, "coverage-behavioural", result, page)
        return result
    q = args.quick
    timer = Timer()
    result: dict[str, Any] = run_info(
        q, seed=SEED, speed=speed(2_000 if q else 10_000, 3 if q else 5), chao1_reps=200 if q else 2_000
    )
    result["chao1"] = chao1_table(result["chao1_reps"], (20, 50, 100, 500), (10, 30, 100))
    result["monotonicity"] = monotonicity(100 if q else 1_000, 200 if q else 500)
    result["seconds"] = timer.seconds

    sp = result["speed"]
    print(f"{'':<52}{'median s':>10}{'peak MB':>10}")
    print(f"{'coverage_from_store (' + format(sp['traces'], ',') + ' traces)':<52}"
          f"{sp['coverage_from_store_s']:>10.3f}{sp['coverage_from_store_peak_bytes'] / 1e6:>10.1f}")
    print(f"{'via TraceStore.query + Trace objects':<52}"
          f"{sp['via_trace_objects_s']:>10.3f}{sp['via_trace_objects_peak_bytes'] / 1e6:>10.1f}")
    print(f"{'in-memory Trace objects':<52}{sp['in_memory_traces_s']:>10.3f}")
    print(f"identical results: {sp['results_identical']}; {_summary(sp['coverage'])}\n")
    print(f"{'shape':<10}{'S':>4}{'n':>5}{'mean d':>8}{'BC bias':>9}{'BC rmse':>9}{'undef':>7}"
          f"{'paper bias':>11}{'C_path':>8}{'true':>7}")
    for r in result["chao1"]:
        print(f"{r['shape']:<10}{r['S']:>4}{r['n']:>5}{r['mean_d']:>8.1f}{r['bias_corrected']['bias']:>9.1f}"
              f"{r['bias_corrected']['rmse']:>9.1f}{r['classic_undefined']:>7.0%}{_f(r['classic']['bias'], 1):>11}"
              f"{r['c_path_mean']:>8.3f}{r['true_coverage_mean']:>7.3f}")
    for name, m in result["monotonicity"].items():
        print(f"C_path falls ({name}, S={m['S']}): {m['fall_rate']:.1%} of additions, largest {m['largest_fall']:.3f}, "
              f"largest once d>=20 {m['largest_fall_d_ge_20']:.3f}")
    print(f"total {result['seconds']:.1f} s")

    write_report(args, "coverage-behavioural", result, page)
    return result


if __name__ == "__main__":
    main()
