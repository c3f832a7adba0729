"""Behavioural contracts in the gate: false-alarm rate and power of the run-time and the check-time test.

    python benchmarks/contracts.py           # full run -> benchmarks/results/contracts.json and the figures in docs/contracts.md
    python benchmarks/contracts.py --quick   # small run, for CI smoke checks

One scenario with one contract, alpha = 0.05: the contract holds ``SHARE`` = 0.15 of alpha, so the gate
compares its p-value with 0.0075. *Run* (recording, no baseline): the exact one-sided binomial test of
"rate >= p - delta" on n trials; a false alarm is a FAIL when the true satisfaction rate is exactly
p - delta (the boundary: the worst case of the null), power is the FAIL rate at p - delta - 0.15.
*Check*: the satisfaction counts of baseline and candidate (n trials each) tested for regression as a pass
rate is (the exact one-sided Fisher test of ``regression_verdict``); a false alarm is a FAIL at equal
rates, power the FAIL rate after a drop of 0.15. Every repetition goes through the plugin's own evidence
hook (``agentassay._features.contracts._plugin``: plan, p-values, Bonferroni) and the real gate
(``agentassay._gate.decide``); outcomes are counts, so each distinct count is decided once and reused.
Exact rates (sums over the binomial pmf of the same decisions) are reported beside the simulated ones.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.contracts import _plugin as plugin  # noqa: E402
from agentassay._gate import Candidate, GatePlan, ScenarioVerdict, decide  # noqa: E402
from agentassay._spec import Settings  # noqa: E402
from agentassay._stats import Verdict  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

ALPHA, BETA, MARGIN = 0.05, 0.10, 0.10
SEED = 20261216
DROP = 0.15
NS = (30, 50, 100)
# (p, delta): the defaults (bound 0.95) and the example's seat-change contract (bound 0.80)
CONTRACTS = ((1.0, 0.05), (0.95, 0.15))
BEGIN, END = (
    "<!-- BEGIN GENERATED: benchmarks/contracts.py -->",
    "<!-- END GENERATED: benchmarks/contracts.py -->",
)
SETTINGS = Settings(alpha=ALPHA, beta=BETA, delta=MARGIN, method="fixed")


def _entry(satisfied: int, trials: int, p: float, delta: float) -> dict[str, Any]:
    return {
        "name": "c",
        "kind": "require",
        "text": "c",
        "scope": "scenario",
        "p": p,
        "delta": delta,
        "trials": trials,
        "satisfied": satisfied,
        "violations": [],
    }


def _section(entry: dict[str, Any]) -> dict[str, Any]:
    return {"share": plugin.SHARE, "scenarios": {"s": {"contracts": [entry]}}}


def blocked(satisfied: int, trials: int, p: float, delta: float, base: tuple[int, int] | None) -> bool:
    """Does the gate FAIL the scenario on its contract? Through the plugin's hooks and ``decide``."""
    baseline = None
    if base is not None:
        baseline = SimpleNamespace(sections={plugin.KIND: _section(_entry(base[0], base[1], p, delta))})
    plan = GatePlan(SETTINGS, ("s",), baseline=baseline)
    if baseline is None:
        plan.share("s", plugin.KIND, plugin.SHARE)  # what agentassay_configure reserves in a run
    else:
        plugin.agentassay_plan(plan)
    candidate = Candidate({"s": []}, {plugin.KIND: _section(_entry(satisfied, trials, p, delta))})
    evidence = plugin.agentassay_scenario_evidence(plan, candidate) or []
    verdicts = {"s": ScenarioVerdict(Verdict.PASS, "regression" if base else "sprt", "", {}, trials)}
    final, _ = decide(verdicts, SETTINGS, evidence=evidence)
    return final["s"].verdict is Verdict.FAIL


def run_cell(
    n: int, p: float, delta: float, rate: float, reps: int, rng: np.random.Generator
) -> dict[str, Any]:
    """The run-time test: n trials at the true ``rate``, one contract (p, delta)."""
    fails = np.array([blocked(k, n, p, delta, None) for k in range(n + 1)])
    draws = rng.binomial(n, rate, reps)
    rate_hat = float(fails[draws].mean())
    exact = float(stats.binom.pmf(np.arange(n + 1), n, rate) @ fails)
    return _row("run", n, p, delta, rate, rate, reps, rate_hat, exact)


def check_cell(
    n: int, p: float, delta: float, base_rate: float, cand_rate: float, reps: int, rng: np.random.Generator
) -> dict[str, Any]:
    """The check-time test: baseline and candidate n trials each, at their true rates."""
    kb = rng.binomial(n, base_rate, reps)
    kc = rng.binomial(n, cand_rate, reps)
    cache: dict[tuple[int, int], bool] = {}
    hits = 0
    for b, c in zip(kb.tolist(), kc.tolist(), strict=True):
        key = (b, c)
        if key not in cache:
            cache[key] = blocked(c, n, p, delta, (b, n))
        hits += cache[key]
    mb, mc = stats.binom.pmf(np.arange(n + 1), n, base_rate), stats.binom.pmf(np.arange(n + 1), n, cand_rate)
    # exact: every outcome with non-negligible mass, decided the same way
    keep_b, keep_c = np.nonzero(mb > 1e-12)[0], np.nonzero(mc > 1e-12)[0]
    exact = 0.0
    for b in keep_b.tolist():
        for c in keep_c.tolist():
            key = (b, c)
            if key not in cache:
                cache[key] = blocked(c, n, p, delta, (b, n))
            if cache[key]:
                exact += float(mb[b] * mc[c])
    return _row("check", n, p, delta, base_rate, cand_rate, reps, hits / reps, exact)


def _row(
    test: str, n: int, p: float, delta: float, base: float, cand: float, reps: int, rate: float, exact: float
) -> dict[str, Any]:
    level = ALPHA * plugin.SHARE
    null = math.isclose(base, cand) if test == "check" else math.isclose(cand, p - delta)
    row: dict[str, Any] = {
        "test": test,
        "n": n,
        "p": p,
        "delta": delta,
        "bound": round(p - delta, 10),
        "base_rate": base,
        "rate": cand,
        "null": null,
        "reps": reps,
        "fail_rate": rate,
        "se": math.sqrt(max(rate * (1 - rate), 1e-12) / reps),
        "exact": exact,
        "level": level,
    }
    if null:
        row["limit"] = level + 2 * math.sqrt(level * (1 - level) / reps)
        row["ok"] = rate <= row["limit"]
    return row


def run(quick: bool) -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    reps = 2_000 if quick else 20_000
    ns = (30,) if quick else NS
    rows = []
    for p, delta in CONTRACTS:
        bound = p - delta
        for n in ns:
            for rate in (bound, bound - DROP):
                rows.append(run_cell(n, p, delta, rate, reps, rng))
                _print(rows[-1])
            for cand in (bound, bound - DROP):
                rows.append(check_cell(n, p, delta, bound, cand, reps, rng))
                _print(rows[-1])
    return rows


def _print(r: dict[str, Any]) -> None:
    kind = "false alarm" if r["null"] else "power"
    print(
        f"{r['test']:<5} n={r['n']:<3} bound={r['bound']:.2f} {r['base_rate']:.2f}->{r['rate']:.2f}: "
        f"{kind} {r['fail_rate']:.4f} ± {r['se']:.4f} (exact {r['exact']:.4f})",
        flush=True,
    )


def block(result: dict[str, Any]) -> str:
    rows = result["rows"]
    level = ALPHA * plugin.SHARE
    lines = [
        BEGIN,
        "",
        f"Measured by `python benchmarks/contracts.py` on {result['platform']} (Python {result['python']}), "
        f"{result['date']}, {rows[0]['reps']:,} repetitions per cell, seed {result['seed']}, {result['seconds']:.0f} s. "
        f"One scenario, one contract, alpha = {ALPHA}: the contract is tested at alpha × {plugin.SHARE} = {level:.4f}. "
        "Every repetition goes through the plugin's evidence hook and the real gate; *exact* is the same decision "
        "summed over the binomial pmf. ± is one standard error.",
        "",
        "### Run: the exact binomial test of rate ≥ p − δ",
        "",
        "| p, δ | n | false alarms at rate = p − δ | exact | ≤ level + 2 s.e. | power at p − δ − 0.15 | exact |",
        "|---|---:|---:|---:|:---:|---:|---:|",
    ]
    lines += _table(rows, "run")
    lines += [
        "",
        "### Check: regression of the satisfaction count (n trials per arm)",
        "",
        "| p, δ | n | false alarms at equal rates (p − δ) | exact | ≤ level + 2 s.e. | power after a drop of 0.15 | exact |",
        "|---|---:|---:|---:|:---:|---:|---:|",
    ]
    lines += _table(rows, "check")
    nulls = [r for r in rows if r["null"]]
    worst = max(nulls, key=lambda r: r["fail_rate"])
    lines += [
        "",
        f"Every false-alarm rate is within level + 2 s.e. ({'yes' if all(r['ok'] for r in nulls) else 'NO'}); the largest is "
        f"{worst['fail_rate']:.4f} ({worst['test']}, n = {worst['n']}, bound {worst['bound']:.2f}). Both tests are exact and "
        "conservative, so their false-alarm rates sit below the level; power is what a 0.75 % test can do with n trials.",
        "",
        END,
    ]
    return "\n".join(lines)


def _table(rows: list[dict[str, Any]], test: str) -> list[str]:
    out = []
    mine = [r for r in rows if r["test"] == test]
    for r in (x for x in mine if x["null"]):
        alt = next(
            x
            for x in mine
            if not x["null"] and x["n"] == r["n"] and x["p"] == r["p"] and x["delta"] == r["delta"]
        )
        out.append(
            f"| {r['p']:g}, {r['delta']:g} | {r['n']} | {r['fail_rate']:.4f} ± {r['se']:.4f} | {r['exact']:.4f} | "
            f"{'yes' if r['ok'] else 'NO'} | {alt['fail_rate']:.4f} ± {alt['se']:.4f} | {alt['exact']:.4f} |"
        )
    return out


def splice(text: str | None, generated: str) -> str:
    """``text`` with its generated block replaced (appended, or a stub doc, when there is none)."""
    if text is None:
        return "# Behavioural contracts\n\n" + generated + "\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + generated + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + generated + "\n"


def page(result: dict[str, Any]) -> Callable[[str | None], str]:
    """The generated part of docs/contracts.md, spliced into the page."""
    return lambda text: splice(text, block(result))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parser(__doc__).parse_args(argv)
    if args.render:
        result = load_result(args, "contracts")
        write_report(args, "contracts", result, page)
        return result
    timer = Timer()
    rows = run(args.quick)
    result = run_info(
        args.quick,
        date=today(),
        seed=SEED,
        alpha=ALPHA,
        share=plugin.SHARE,
        level=ALPHA * plugin.SHARE,
        rows=rows,
        seconds=timer.seconds,
    )
    write_report(args, "contracts", result, page, seconds=result["seconds"])
    return result


if __name__ == "__main__":
    main()
