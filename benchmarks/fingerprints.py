"""Speed, calibration and power of behavioural fingerprints (agentassay._features.fingerprints).

    python benchmarks/fingerprints.py           # full run -> benchmarks/results/fingerprints.json, docs/fingerprints.md
    python benchmarks/fingerprints.py --quick   # small run, for CI smoke checks

Measures (a) extraction throughput on synthetic traces shaped like the customer-service example
(triage hands off to an FAQ or a seat-booking agent, which calls its tool, sometimes fails and
retries, then answers); (b) the time of one 2,000-permutation test at n = 50 per side; (c) the A/A
false-alarm rate of the permutation and Hotelling tests on feature families with constant,
sum-to-one and integer columns, and on real extracted fingerprints; (d) power on three behaviour
shifts with at most 30 trials per side. Every number in the written report comes from this run.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.fingerprints import extract, extract_pair, fingerprint_test  # noqa: E402
from agentassay._traces._model import Action, Cost, Step, Trace  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, write_report  # noqa: E402

ALPHA = 0.05
SEED = 20261122
TRIAGE, FAQ, SEAT = "Triage Agent", "FAQ Agent", "Seat Booking Agent"
ANSWER = "Updated seat to 14C for confirmation number ABC123."
FAQ_ANSWER = "You are allowed to bring one bag on the plane. It must be under 50 pounds."


def customer_service_trace(
    rng: np.random.Generator, *, seat_share: float = 0.5, extra_call: float = 0.0, answer_scale: float = 1.0
) -> Trace:
    """One synthetic run; the keyword arguments are the knobs the power cases turn."""
    seat = rng.random() < seat_share
    agent, tool = (SEAT, "update_seat") if seat else (FAQ, "faq_lookup_tool")
    steps = [Step(Action.REASON, agent=TRIAGE), Step(Action.HANDOFF, agent=TRIAGE, target=agent)]
    if rng.random() < 0.15:  # a bad argument, then a retry that succeeds
        steps.append(Step(Action.CALL_TOOL, agent=agent, tool=tool, arguments={}, error="invalid seat"))
    steps.append(Step(Action.CALL_TOOL, agent=agent, tool=tool, arguments={"q": "x"}, output="ok"))
    if rng.random() < extra_call:
        steps.append(Step(Action.CALL_TOOL, agent=agent, tool=tool, arguments={"q": "y"}, output="ok"))
    steps.append(Step(Action.RESPOND, agent=agent, output="done"))
    base = ANSWER if seat else FAQ_ANSWER
    words = base.split()
    n_words = max(1, int(rng.normal(len(words), 3) * answer_scale))
    text = " ".join((words * (n_words // len(words) + 1))[:n_words])
    cost = Cost(
        int(rng.normal(900, 120)), int(rng.normal(60, 15) * answer_scale), float(rng.lognormal(0, 0.3))
    )
    return Trace(steps=tuple(steps), output=text, cost=cost)


# -- feature families for the A/A runs -------------------------------------------------------------
def fam_constant(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.hstack([np.full((n, 3), 2.0), rng.normal(size=(n, 5))])


def fam_sum_to_one(rng: np.random.Generator, n: int) -> np.ndarray:
    counts = rng.multinomial(rng.integers(0, 4, n), [0.5, 0.3, 0.15, 0.05], size=n).astype(float)
    total = counts.sum(axis=1, keepdims=True)
    shares = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
    return np.hstack([shares, counts])


def fam_integer(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.hstack(
        [
            rng.poisson(1.0, (n, 3)),
            rng.integers(2, 5, (n, 2)),
            (rng.random((n, 2)) < 0.05),
            rng.binomial(1, 0.5, (n, 1)),
        ]
    ).astype(float)


def fam_fingerprint(rng: np.random.Generator, n: int) -> np.ndarray:
    tools = ["faq_lookup_tool", "update_seat"]
    return extract([customer_service_trace(rng) for _ in range(n)], tools=tools).values


FAMILIES: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "constant": fam_constant,
    "sum_to_one": fam_sum_to_one,
    "integer": fam_integer,
    "fingerprint": fam_fingerprint,
}

SHIFTS: dict[str, dict[str, float]] = {
    "one extra tool call in half the runs": {"extra_call": 0.5},
    "tool mix 50/50 -> 25/75 (seat/FAQ)": {"seat_share": 0.25},
    "answers 30% longer": {"answer_scale": 1.3},
}


def throughput(n_traces: int, rng: np.random.Generator) -> dict[str, float]:
    traces = [customer_service_trace(rng) for _ in range(n_traces)]
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        fm = extract(traces)
        best = min(best, time.perf_counter() - t0)
    return {"traces": n_traces, "features": len(fm.names), "seconds": best, "traces_per_s": n_traces / best}


def permutation_time(rng: np.random.Generator) -> dict[str, float]:
    a, b = rng.normal(size=(50, 25)), rng.normal(size=(50, 25))
    fingerprint_test(a, b, seed=0)  # warm-up
    times = []
    for i in range(10):
        t0 = time.perf_counter()
        fingerprint_test(a, b, permutations=2000, seed=i)
        times.append(time.perf_counter() - t0)
    return {
        "n_per_side": 50,
        "features": 25,
        "permutations": 2000,
        "median_ms": 1000 * float(np.median(times)),
    }


def false_alarms(reps: int, perms: int, ns: tuple[int, ...], rng: np.random.Generator) -> list[dict]:
    rows = []
    for family, gen in FAMILIES.items():
        for n in ns:
            hits = {"permutation": 0, "hotelling": 0}
            for _ in range(reps):
                a, b = gen(rng, n), gen(rng, n)
                hits["permutation"] += fingerprint_test(a, b, permutations=perms, seed=rng).pvalue <= ALPHA
                hits["hotelling"] += fingerprint_test(a, b, method="hotelling").pvalue <= ALPHA
            for method, h in hits.items():
                rate = h / reps
                rows.append(
                    {
                        "family": family,
                        "n": n,
                        "method": method,
                        "false_alarm": rate,
                        "se": math.sqrt(ALPHA * (1 - ALPHA) / reps),
                        "ok": rate <= ALPHA + 2 * math.sqrt(ALPHA * (1 - ALPHA) / reps),
                    }
                )
    return rows


def power(reps: int, perms: int, ns: tuple[int, ...], rng: np.random.Generator) -> list[dict]:
    rows = []
    for label, knobs in SHIFTS.items():
        for n in ns:
            hits = {"permutation": 0, "hotelling": 0}
            top: dict[str, int] = {}
            for _ in range(reps):
                base = [customer_service_trace(rng) for _ in range(n)]
                cand = [customer_service_trace(rng, **knobs) for _ in range(n)]
                fb, fc = extract_pair(base, cand)
                res = fingerprint_test(fb, fc, permutations=perms, seed=rng)
                hits["permutation"] += res.shifted
                if res.shifted and res.significant():
                    top[res.significant()[0].name] = top.get(res.significant()[0].name, 0) + 1
                hits["hotelling"] += fingerprint_test(fb, fc, method="hotelling").shifted
            most = max(top, key=lambda k: top[k]) if top else None
            for method, h in hits.items():
                rows.append(
                    {"shift": label, "n": n, "method": method, "power": h / reps, "top_feature": most}
                )
    return rows


def markdown(result: dict) -> str:
    tp, pt = result["throughput"], result["permutation_time"]
    lines = [
        "# Behavioural fingerprints: speed, calibration, power",
        "",
        f"Generated by `python benchmarks/fingerprints.py{' --quick' if result['quick'] else ''}` "
        f"({result['platform']}, Python {result['python']}, seed {SEED}); every number below is from that run.",
        "",
        "## Speed",
        "",
        "| measure | value |",
        "|---|---|",
        f"| extraction, {tp['traces']:,} customer-service traces ({tp['features']} features) | "
        f"{tp['traces_per_s']:,.0f} traces/s ({tp['seconds']:.3f} s) |",
        f"| permutation test, {pt['permutations']:,} permutations, n = {pt['n_per_side']} per side, "
        f"{pt['features']} features | {pt['median_ms']:.1f} ms (median of 10) |",
        "",
        f"## A/A false-alarm rate (alpha = {ALPHA}, {result['aa_reps']:,} reps per cell, "
        f"{result['aa_permutations']} permutations)",
        "",
        "Pass criterion: rate ≤ alpha + 2 s.e. Families: `constant` = 3 constant + 5 normal columns; "
        "`sum_to_one` = 4 tool shares (all zero when no call) + their counts; `integer` = Poisson, "
        "small-range and rare 0/1 columns; `fingerprint` = features extracted from synthetic "
        "customer-service traces.",
        "",
        "| family | n per side | permutation | hotelling |",
        "|---|---|---|---|",
    ]
    cells: dict[tuple[str, int], dict[str, dict]] = {}
    for r in result["false_alarm"]:
        cells.setdefault((r["family"], r["n"]), {})[r["method"]] = r
    for (family, n), m in cells.items():
        fmt = [f"{m[k]['false_alarm']:.4f}{'' if m[k]['ok'] else ' ✗'}" for k in ("permutation", "hotelling")]
        lines.append(f"| {family} | {n} | {fmt[0]} | {fmt[1]} |")
    se = result["false_alarm"][0]["se"]
    lines += [
        "",
        f"One s.e. at alpha = {ALPHA} is {se:.4f}. ✗ marks a rate above alpha + 2 s.e. Hotelling's T² "
        "assumes multivariate normality; rates far *below* alpha mean it is conservative and "
        "correspondingly weak, rates above mean it is anti-conservative.",
        "",
        f"## Power ({result['power_reps']:,} reps per cell, {result['power_permutations']} permutations)",
        "",
        "| shift | n per side | permutation | hotelling | feature most often ranked first |",
        "|---|---|---|---|---|",
    ]
    pcells: dict[tuple[str, int], dict[str, dict]] = {}
    for r in result["power"]:
        pcells.setdefault((r["shift"], r["n"]), {})[r["method"]] = r
    for (shift, n), m in pcells.items():
        lines.append(
            f"| {shift} | {n} | {m['permutation']['power']:.3f} | {m['hotelling']['power']:.3f} | "
            f"`{m['permutation']['top_feature']}` |"
        )
    lines += ["", f"Total benchmark time: {result['seconds']:.0f} s.", "", *EXPLANATION_ORDER]
    return "\n".join(lines)


# Static text after the measured tables: how reports order the features the test names (_test.py rank_shifts).
EXPLANATION_ORDER = [
    '## How an explanation orders the shifts',
    '',
    "The test (permutation max-T, Westfall-Young adjusted p-values) decides *which* features moved; the explanation names those (adjusted p ≤ α) in this order: tool calls and routing (`calls:*`, `share:*`, handoffs, agents and tools reached), then the run's structure and errors, then answer lengths, then tokens and latency; within a group by a bounded effect size, largest first: the difference in proportions for shares and 0/1 indicators, the relative change `|Δ| / max(baseline, candidate)` for counts and lengths (both in [0, 1]).",
    '',
    "Not by the test's standardised shift: it divides by the within-arm spread, so a feature that barely varies (answer length 12.0 → 11.5 words) outranks a tool that stopped being called in half the runs (0.97 → 0.52 per run). A relative change ignores the spread, so a near-constant feature cannot dominate, and it needs no pooled range, which one outlying run would set; a rank-based size (Cliff's δ) was rejected because it is 1 for *any* perfectly separated pair, which a near-constant feature is. A tool that starts or stops being called scores 1, the largest move there is.",
    '',
]


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        write_report(args, "fingerprints", load_result(args, "fingerprints"), markdown)
        return
    rng = np.random.default_rng(SEED)
    timer = Timer()
    q = args.quick
    aa_reps, aa_perms = (200, 199) if q else (2000, 499)
    pw_reps, pw_perms = (100, 199) if q else (500, 499)
    result: dict = run_info(
        q,
        alpha=ALPHA,
        throughput=throughput(20_000 if q else 100_000, rng),
        permutation_time=permutation_time(rng),
        aa_reps=aa_reps,
        aa_permutations=aa_perms,
        false_alarm=false_alarms(aa_reps, aa_perms, (10, 20, 50), rng),
        power_reps=pw_reps,
        power_permutations=pw_perms,
        power=power(pw_reps, pw_perms, (20, 30), rng),
    )
    result["seconds"] = timer.seconds
    print(json.dumps(result, indent=2))
    write_report(args, "fingerprints", result, markdown)


if __name__ == "__main__":
    main()
