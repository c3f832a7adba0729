"""Metamorphic relations in the gate: false-alarm rate and power of the relation test (Prop. 6.1).

    python benchmarks/metamorphic.py           # full run -> benchmarks/results/metamorphic.json, figures in docs/metamorphic.md
    python benchmarks/metamorphic.py --quick   # small run, for smoke checks

One scenario with one relation in ``check``: n pairs per arm; each pair of the baseline violates
the relation with probability q0 and each pair of the candidate with probability q1, independently
(paired violation indicators drawn one by one and counted). Every repetition goes through the very
function the plugin's evidence uses, ``agentassay._features.metamorphic.scenario_test`` on the two results
sections, and the gate's ``ScenarioTest.apply``: the relation is FAILed when its p-value is at most
alpha × SHARE (= 0.01; with one scenario Holm changes nothing). q1 = q0 measures the false-alarm
rate, q1 = q0 + 0.2 the power. The exact rejection probability of the same p-value table
(``agentassay._stats._exact``) is given beside each simulated rate as a cross-check.

Only the figures section of docs/metamorphic.md (between its markers) is rewritten; the prose stays.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.metamorphic import SHARE, scenario_test  # noqa: E402
from agentassay._gate import ScenarioVerdict  # noqa: E402
from agentassay._spec import Settings  # noqa: E402
from agentassay._stats import Verdict  # noqa: E402
from agentassay._stats._exact import pmf_grid, regression_pvalues  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

SEED = 20261124
PAIRS = (20, 30, 50)
RATES = (0.02, 0.1, 0.2)
SHIFT = 0.2
BEGIN, END = "<!-- benchmark:metamorphic -->", "<!-- /benchmark:metamorphic -->"
SETTINGS = Settings()  # alpha 0.05, beta 0.1, regression margin 0.1: the defaults a suite gets


def _section(pairs: int, violations: int) -> dict[str, Any]:
    relation = {
        "name": "r",
        "family": "perturbation",
        "transform": {"noise": 1},
        "check": "same_verdict",
        "pairs": pairs,
        "violations": violations,
    }
    return {"scenarios": {"s": {"relations": [relation]}}}


class Gate:
    """The plugin's evidence and the gate's test of it, memoised on the counts (the function is exact, so
    equal counts give equal answers; the exact non-inferiority bound inside costs ~0.1 s per call)."""

    def __init__(self) -> None:
        self.memo: dict[tuple[int, int, int], bool] = {}
        self.verdict = ScenarioVerdict(Verdict.INCONCLUSIVE, "regression", "", {}, 0)

    def fails(self, n: int, base: int, cand: int) -> bool:
        key = (n, base, cand)
        if key not in self.memo:
            test = scenario_test(_section(n, base), _section(n, cand), SETTINGS)
            assert test is not None
            out = test.apply({"s": self.verdict}, SETTINGS)["s"]
            self.memo[key] = out.evidence["metamorphic"]["verdict"] == "fail"
        return self.memo[key]


def exact_rate(n: int, q0: float, q1: float) -> float:
    """P(p <= alpha × SHARE) from the exact one-sided Fisher p-value table (non-violating counts)."""
    p = regression_pvalues(n, n, "fisher")  # [base passes, cand passes]
    reject = p <= SETTINGS.alpha * SHARE
    mb = pmf_grid(n, np.array([1 - q0]))[0]
    mc = pmf_grid(n, np.array([1 - q1]))[0]
    return float(mb @ reject @ mc)


def cell(n: int, q0: float, q1: float, reps: int, rng: np.random.Generator, gate: Gate) -> dict[str, Any]:
    """Rejection rate over ``reps`` repetitions of n paired indicators per arm."""
    base = (rng.random((reps, n)) < q0).sum(axis=1)
    cand = (rng.random((reps, n)) < q1).sum(axis=1)
    k = sum(gate.fails(n, int(b), int(c)) for b, c in zip(base, cand, strict=True))
    rate = k / reps
    return {
        "n": n,
        "q0": q0,
        "q1": round(q1, 4),
        "reps": reps,
        "rate": rate,
        "se": math.sqrt(max(rate * (1 - rate), 1e-12) / reps),
        "exact": exact_rate(n, q0, q1),
    }


def run(quick: bool) -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    reps = 2000 if quick else 20_000
    gate = Gate()
    rows = []
    for n in (20, 50) if quick else PAIRS:
        for q0 in RATES:
            for q1 in (q0, q0 + SHIFT):
                rows.append(cell(n, q0, q1, reps, rng, gate))
                r = rows[-1]
                print(
                    f"n={n} q0={q0} q1={r['q1']}: {r['rate']:.4f} ± {r['se']:.4f} (exact {r['exact']:.4f})",
                    flush=True,
                )
    return rows


def figures(result: dict[str, Any]) -> str:
    rows = result["rows"]
    level = result["level"]
    nulls = [r for r in rows if r["q1"] == r["q0"]]
    alts = [r for r in rows if r["q1"] != r["q0"]]
    lines = [
        BEGIN,
        "## Figures",
        "",
        f"Measured by `python benchmarks/metamorphic.py` on {result['platform']} (Python {result['python']}), "
        f"{result['date']}, {rows[0]['reps']:,} repetitions per cell, seed {result['seed']}, {result['seconds']:.0f} s. "
        f"One scenario, one relation, n pairs per arm, alpha = {result['alpha']}, SHARE = {result['share']}: the "
        f"relation is FAILed when its p-value is at most {level:g}. Every repetition goes through "
        "`agentassay._features.metamorphic.scenario_test` and the gate's `ScenarioTest.apply`; *exact* is the rejection "
        "probability computed from the same Fisher p-value table. ± is one standard error.",
        "",
        "### False alarms: the candidate violates as often as the baseline (q1 = q0)",
        "",
        "| pairs n | q0 | FAIL rate | exact |",
        "|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['n']} | {r['q0']:.2f} | {r['rate']:.4f} ± {r['se']:.4f} | {r['exact']:.4f} |" for r in nulls
    ]
    worst = max(nulls, key=lambda r: r["rate"])
    ok = all(r["rate"] <= level + 2 * r["se"] for r in nulls)
    lines += [
        "",
        f"The largest false-alarm rate is {worst['rate']:.4f} (n = {worst['n']}, q0 = {worst['q0']}), "
        + (f"within {level:g} + 2 s.e. in every cell" if ok else f"ABOVE {level:g} + 2 s.e. in some cell")
        + ". Fisher's exact test is conservative, most of all when violations are rare (q0 = 0.02), so the test "
        "spends well under its level there.",
        "",
        f"### Power: the candidate violates {SHIFT:g} more often (q1 = q0 + {SHIFT:g})",
        "",
        "| pairs n | q0 → q1 | FAIL rate | exact |",
        "|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['n']} | {r['q0']:.2f} → {r['q1']:.2f} | {r['rate']:.4f} ± {r['se']:.4f} | {r['exact']:.4f} |"
        for r in alts
    ]
    by_n = {n: [r["rate"] for r in alts if r["n"] == n] for n in sorted({r["n"] for r in alts})}
    spans = "; ".join(f"n = {n}: {min(v):.2f}–{max(v):.2f}" for n, v in by_n.items())
    lines += [
        "",
        f"Power over q0 ({spans}) grows with the pairs. "
        f"The test spends only alpha × {result['share']} and Fisher's test is conservative, so a relation is a "
        "detector for large shifts in violations at the usual 30 pairs; give relations that matter 50 or more "
        "pairs (`config.metamorphic.trials`, and as many source trials).",
        END,
    ]
    return "\n".join(lines)


def markdown_of(result: dict[str, Any]) -> Any:
    """The harness's callable form: replace the figures between the markers, keep every other line."""

    def render(current: str | None) -> str:
        block = figures(result)
        if current is None:
            return "# Metamorphic relations\n\n" + block + "\n"
        if BEGIN in current and END in current:
            head, rest = current.split(BEGIN, 1)
            return head + block + rest.split(END, 1)[1]
        return current.rstrip("\n") + "\n\n" + block + "\n"

    return render


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        write_report(args, "metamorphic", load_result(args, "metamorphic"), markdown_of)
        return
    timer = Timer()
    rows = run(args.quick)
    result = run_info(
        args.quick,
        date=today(),
        seed=SEED,
        alpha=SETTINGS.alpha,
        share=SHARE,
        level=SETTINGS.alpha * SHARE,
        delta=SETTINGS.margin,
        test="fisher",
        rows=rows,
        seconds=timer.seconds,
    )
    write_report(args, "metamorphic", result, markdown_of, seconds=result["seconds"])


if __name__ == "__main__":
    main()
