"""Does the judge's noise attribution recover a judge of known noise?

    python benchmarks/judge.py           # full run -> benchmarks/results/judge.json and the figures block of docs/judge.md
    python benchmarks/judge.py --quick   # small run, for CI smoke checks

A simulated judge with flip rate f: each of its k repeats grades a trace's truth flipped with
probability f, independently. The traces come from an agent whose trace passes with probability q.
Then, exactly: E[Var(G | trace)] = f(1 - f) (the judge's variance), Var(E[G | trace]) = (1 - 2f)^2
q(1 - q) (the agent's), the judge share is their ratio to the sum, and a trace's k grades disagree
with probability 1 - (1 - f)^k - f^k. Each repetition draws n traces, grades them k times and runs
the shipped estimator (``agentassay._features.judge.attribution``); the mean over the repetitions is compared
with the truth in Monte-Carlo standard errors, and the share's own jackknife interval (estimate ± 2
s.e.) is checked for coverage. Two cells also go through the whole judge path — the example's
scripted judge (``examples/customer_service/judge.py``), seeds per (content, repeat), the cache —
with ``grade_traces``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.judge import JudgeConfig, attribution, grade_traces  # noqa: E402
from agentassay._spec import ModelConfig  # noqa: E402
from agentassay._traces import Trace  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

SEED = 20261216
FLIPS = (0.0, 0.05, 0.15)
REPEATS = (3, 5)
TRIALS = (30, 100)
PASS_RATES = (0.5, 0.8)
BEGIN, END = "<!-- BEGIN GENERATED: benchmarks/judge.py -->", "<!-- END GENERATED: benchmarks/judge.py -->"
SEAT = "I'd like to change my seat to 14C. My confirmation number is ABC123."
RUBRIC = "The reply tells the customer their new seat number and does not promise a refund."
# The example's scripted judges: flip 0 and flip 0.15 (examples/customer_service/judge.py).
END_TO_END = ((0.0, "seat_judge"), (0.15, "noisy_seat_judge"))


def truth(f: float, k: int, q: float) -> dict[str, float]:
    m = q * (1 - f) + (1 - q) * f
    return {
        "disagreement": 1 - (1 - f) ** k - f**k,
        "judge_variance": f * (1 - f),
        "agent_variance": (1 - 2 * f) ** 2 * q * (1 - q),
        "judge_share": f * (1 - f) / (m * (1 - m)),
    }


def _summary(values: list[float], true: float) -> dict[str, Any]:
    """Mean, its Monte-Carlo s.e., and whether the truth is within 2 s.e. of the mean."""
    x = np.asarray(values, dtype=float)
    mean = float(x.mean()) if len(x) else math.nan
    se = float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else math.nan
    z = 0.0 if se == 0 and abs(mean - true) < 1e-12 else (mean - true) / se if se > 0 else math.inf
    return {
        "true": true,
        "mean": mean,
        "se": se,
        "z": z,
        "within_2se": bool(abs(z) <= 2),
        "sd": float(x.std(ddof=1)),
    }


def cell(f: float, k: int, n: int, q: float, reps: int, rng: np.random.Generator) -> dict[str, Any]:
    t = truth(f, k, q)
    passing = rng.random((reps, n)) < q
    grades = passing[:, :, None] ^ (rng.random((reps, n, k)) < f)
    got: dict[str, list[float]] = {key: [] for key in t}
    covered = undefined = 0
    for r in range(reps):
        rows = grades[r].tolist()
        a = attribution(rows, rows)
        got["disagreement"].append(a.disagreement)
        got["judge_variance"].append(a.judge_variance)
        got["agent_variance"].append(a.agent_variance)
        if a.judge_share is None:
            undefined += 1
            continue
        got["judge_share"].append(a.judge_share)
        se = a.judge_share_se or 0.0
        covered += abs(a.judge_share - t["judge_share"]) <= 2 * se + 1e-12
    defined = reps - undefined
    out: dict[str, Any] = {"f": f, "k": k, "n": n, "q": q, "reps": reps, "share_undefined": undefined}
    out |= {key: _summary(vals, t[key]) for key, vals in got.items()}
    out["share_coverage"] = covered / defined if defined else None
    return out


def end_to_end(
    f: float, attr: str, k: int, n: int, q: float, reps: int, rng: np.random.Generator
) -> dict[str, Any]:
    """The same cell through grade_traces and the example's scripted judge (fresh content each repetition)."""
    config = JudgeConfig(
        RUBRIC, ModelConfig("offline", behaviour=f"examples.customer_service.judge:{attr}"), repeats=k
    )
    t = truth(f, k, q)
    got: dict[str, list[float]] = {key: [] for key in t}
    calls = 0
    for r in range(reps):
        passing = rng.random(n) < q
        items = [
            (SEAT, Trace(output=f"Updated seat to {'14C' if ok else 'a new seat'} (ref {r}-{i})."))
            for i, ok in enumerate(passing)
        ]
        _, stats = grade_traces(config, items)
        calls += stats.calls
        a = stats.attribution
        got["disagreement"].append(a.disagreement)
        got["judge_variance"].append(a.judge_variance)
        got["agent_variance"].append(a.agent_variance)
        if a.judge_share is not None:
            got["judge_share"].append(a.judge_share)
    out: dict[str, Any] = {"f": f, "judge": attr, "k": k, "n": n, "q": q, "reps": reps, "calls": calls}
    out |= {key: _summary(vals, t[key]) for key, vals in got.items()}
    return out


def run(quick: bool) -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    reps = 300 if quick else 2000
    rows = []
    for f in FLIPS:
        for k in REPEATS:
            for n in TRIALS:
                for q in PASS_RATES:
                    rows.append(cell(f, k, n, q, reps, rng))
                    r = rows[-1]
                    print(
                        f"f={f} k={k} n={n} q={q}: share {r['judge_share']['mean']:.4f} (true "
                        f"{r['judge_share']['true']:.4f}, z {r['judge_share']['z']:+.1f}); disagreement z "
                        f"{r['disagreement']['z']:+.1f}",
                        flush=True,
                    )
    e2e = [end_to_end(f, attr, 3, 30, 0.8, 200 if quick else 2000, rng) for f, attr in END_TO_END]
    return {"reps": reps, "rows": rows, "end_to_end": e2e}


def _cellfmt(s: dict[str, Any], digits: int = 4) -> str:
    mark = "" if s["within_2se"] else " ✗"
    return f"{s['mean']:.{digits}f} ± {s['se']:.{digits}f} ({s['true']:.{digits}f}){mark}"


KEYS = {
    "disagreement": "disagreement",
    "judge_variance": "judge variance",
    "agent_variance": "agent variance",
    "judge_share": "judge share",
}


def pooled(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per quantity over the cells where it varies: cells outside 2 s.e., and sum z^2 ~ chi^2(cells) if unbiased."""
    from scipy.stats import chi2

    out = {}
    for key in KEYS:
        cells = [
            r for r in rows if r["f"] > 0 or key == "agent_variance"
        ]  # with f = 0 the others are exactly 0
        z2 = math.fsum(r[key]["z"] ** 2 for r in cells)
        out[key] = {
            "cells": len(cells),
            "outside_2se": sum(not r[key]["within_2se"] for r in cells),
            "chi2": z2,
            "p": float(chi2.sf(z2, len(cells))),
        }
    return out


def summary(rows: list[dict[str, Any]]) -> list[str]:
    p = pooled(rows)
    expected = 2 * (1 - 0.9772498680518208)  # P(|Z| > 2)
    counts = ", ".join(f"{KEYS[k]} {v['outside_2se']}/{v['cells']}" for k, v in p.items())
    chis = "; ".join(
        f"{KEYS[k]} χ² = {v['chi2']:.1f} on {v['cells']} df (p = {v['p']:.2f})" for k, v in p.items()
    )
    biased = [KEYS[k] for k, v in p.items() if v["p"] < 0.05]
    verdict = (
        "no quantity shows a bias that this many repetitions can detect: the attribution recovers the judge's noise"
        if not biased
        else f"a bias is detectable at this precision for: {', '.join(biased)}"
    )
    noisy = [r for r in rows if r["f"] > 0]
    coverage = [r["share_coverage"] for r in noisy if r["share_coverage"] is not None]
    worst = max(noisy, key=lambda r: abs(r["judge_share"]["mean"] - r["judge_share"]["true"]))
    bias = worst["judge_share"]["mean"] - worst["judge_share"]["true"]
    return [
        f"Cells whose mean lies more than 2 s.e. from the truth: {counts} (the cells where the quantity varies; with "
        f"f = 0 the judge never disagrees with itself and the disagreement, the judge variance and the judge share are "
        f"exactly 0 in every repetition). Unbiased estimators miss in {expected:.1%} of cells by chance alone. Pooled, "
        f"Σz² over the cells is χ²-distributed with one degree of freedom per cell when the estimator is unbiased: "
        f"{chis}. So {verdict}.",
        "",
        "The disagreement rate and the two variance components are unbiased by construction; the judge share is a "
        "ratio of two estimates, whose O(1/n) bias the jackknife removes to first order. Its largest remaining "
        f"difference from the truth is {bias:+.4f} (f = {worst['f']:g}, k = {worst['k']}, n = {worst['n']}, "
        f"q = {worst['q']:g}), against a single run's standard deviation of {worst['judge_share']['sd']:.3f} there. "
        f"A run's own interval (share ± 2 jackknife s.e.) covers the true share in {min(coverage):.1%}–"
        f"{max(coverage):.1%} of the runs of the noisy cells (nominal 95%; lowest with 30 traces).",
    ]


def markdown_block(result: dict[str, Any]) -> str:
    rows = result["rows"]
    cmd = "python benchmarks/judge.py" + (" --quick" if result["quick"] else "")
    lines = [
        BEGIN,
        f"Generated by `{cmd}` on {result['platform']} (Python {result['python']}), {result['date']}, "
        f"{result['reps']:,} repetitions per cell, seed {result['seed']}, {result['seconds']:.0f} s.",
        "",
        "Each entry: the mean estimate over the repetitions ± its Monte-Carlo standard error (the truth in "
        "brackets); ✗ marks a mean more than 2 s.e. from the truth. f is the judge's flip rate, k its repeats, n the "
        "graded traces, q the agent's pass probability.",
        "",
        "| f | k | n | q | disagreement | judge variance | agent variance | judge share | share ± 2 s.e. covers |",
        "|---:|---:|---:|---:|---|---|---|---|---:|",
    ]
    for r in rows:
        cov = "—" if r["share_coverage"] is None or r["f"] == 0 else f"{r['share_coverage']:.3f}"
        lines.append(
            f"| {r['f']:g} | {r['k']} | {r['n']} | {r['q']:g} | {_cellfmt(r['disagreement'])} | "
            f"{_cellfmt(r['judge_variance'])} | {_cellfmt(r['agent_variance'])} | {_cellfmt(r['judge_share'])} | {cov} |"
        )
    lines += [
        "",
        *summary(rows),
        "",
        "Through the whole judge path (`grade_traces`, the example's scripted judge, seeds per (content, repeat), "
        "k = 3, n = 30, q = 0.8):",
        "",
        "| judge | f | repetitions | calls | disagreement | judge variance | agent variance | judge share |",
        "|---|---:|---:|---:|---|---|---|---|",
    ]
    for e in result["end_to_end"]:
        lines.append(
            f"| `{e['judge']}` | {e['f']:g} | {e['reps']:,} | {e['calls']:,} | {_cellfmt(e['disagreement'])} | "
            f"{_cellfmt(e['judge_variance'])} | {_cellfmt(e['agent_variance'])} | {_cellfmt(e['judge_share'])} |"
        )
    lines.append(END)
    return "\n".join(lines)


def splice(block: str, text: str | None) -> str:
    """``text`` with its generated block replaced by ``block`` (appended, or a new doc, if none)."""
    if text is None:
        return "# The LLM judge\n\n" + block + "\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def page(result: dict[str, Any]) -> Callable[[str | None], str]:
    """The generated block of docs/judge.md, spliced into the page."""
    return lambda text: splice(markdown_block(result), text)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        result = load_result(args, "judge")
        write_report(args, "judge", result, page)
        return result
    timer = Timer()
    found = run(args.quick)
    result = run_info(args.quick, date=today(), seed=SEED, **found, seconds=timer.seconds)
    result["pooled"] = pooled(result["rows"])
    write_report(args, "judge", result, page, seconds=result["seconds"])
    return result


if __name__ == "__main__":
    main()
