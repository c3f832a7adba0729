"""Calibration of every decision procedure in agentassay._stats, on a grid of truths.

    python benchmarks/calibration.py            # full grid -> benchmarks/results/calibration.json, docs/calibration.md
    python benchmarks/calibration.py --quick    # small grid, for CI smoke runs

Grid: true rate r in {0.5, 0.7, 0.8, 0.9, 0.95} x delta in {0.05, 0.10, 0.15} x n per arm in
{10, 20, 50, 100, 150, 200}; alpha = 0.05. For each procedure and cell it reports

* false alarm: P(FAIL) when nothing changed (p_base = p_cand = r);
* power: P(FAIL) at a true drop of delta (p_cand = r - delta);
* PASS when nothing changed, and PASS at a true drop of delta (the second is an error);
* for the sequential tests, the mean and 95th-percentile number of candidate trials.

Every verdict here depends only on counts, so every rate is computed *exactly*: the
fixed-n procedures by summing binomial probabilities over their verdict tables (the
very tables ``regression_verdict`` and ``threshold_verdict`` read), the sequential ones
by dynamic programming over the walk. Monte Carlo appears only as a cross-check of the
exact SPRT and sequential characteristics, and for the family-wise error across
scenarios, with >= 10,000 repetitions per cell and its standard error reported.

For one-sample procedures (threshold verdict, SPRT) "nothing changed" means the agent
sits exactly at the threshold theta = r, and "a drop of delta" means its rate is r - delta.
The pass criterion: each error rate <= 1.1 * alpha where computed exactly, <= alpha + 2
s.e. where simulated. Procedures marked *reference* (the paper's rules) are reported
for comparison and are not expected to meet it.
"""

from __future__ import annotations

import math
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._gate import sequential_design  # noqa: E402
from agentassay._gate._designs import LOOKS  # noqa: E402
from agentassay._stats import SequentialDesign, SPRTCharacteristic, SPRTDesign  # noqa: E402
from agentassay._stats._bayes import bayes_codes  # noqa: E402
from agentassay._stats._exact import fisher_pvalues  # noqa: E402
from agentassay._stats._multiple import adjust_pvalues  # noqa: E402
from agentassay._stats._onesample import threshold_codes  # noqa: E402
from agentassay._stats._regression import regression_codes, verdict_probability  # noqa: E402
from agentassay._stats._sprt import TrialCountDistribution  # noqa: E402
from agentassay._stats._verdict import CODE_FAIL, CODE_PASS  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, today, write_report  # noqa: E402

ALPHA = 0.05
RATES = (0.5, 0.7, 0.8, 0.9, 0.95)
DELTAS = (0.05, 0.10, 0.15)
NS = (10, 20, 50, 100, 150, 200)
SEED = 20261121

TWO_SAMPLE = {
    # name: (description, reference?, table builder)
    "regression-fisher": ("regression_verdict, test='fisher' (default)", False),
    "regression-boschloo": ("regression_verdict, test='boschloo'", False),
    "regression-z": ("regression_verdict, test='z' (pooled, continuity-corrected)", False),
    "bayesian": (
        "bayesian_regression verdict (paper Def. 3.10), uniform prior, alpha = beta = 0.05; informational, never gated on",
        True,
    ),
    "newcombe-ni": (
        "non-inferiority from Newcombe's hybrid score bound (a common choice), FAIL by Fisher",
        True,
    ),
    "paper-def-3.7": (
        "paper Def. 3.7 (observed-power rule, beta = 0.20 as in its reference implementation)",
        True,
    ),
}
ONE_SAMPLE = {
    "threshold-clopper-pearson": ("threshold_verdict, method='clopper-pearson' (default)", False),
    "threshold-wilson": (
        "threshold_verdict, method='wilson' (paper Def. 3.6; offered, not the default)",
        True,
    ),
}
SEQUENTIAL = {
    "sprt": ("SPRT (Def. 3.9), threshold = r, alpha = beta = 0.05, truncated at n", False),
    "sequential-regression": (
        "SequentialDesign: candidate vs a 1.5n-trial baseline (what `run --full` records), up to n candidate trials, a look every 10",
        False,
    ),
    "paper-alg-2-plugin-sprt": (
        "paper Alg. 2: SPRT with theta = baseline rate (beta = 0.10), truncated at n",
        True,
    ),
}


def two_sample_table(name: str, n: int, delta: float) -> np.ndarray:
    if name == "bayesian":
        return bayes_codes(n, n, delta, ALPHA, ALPHA, (1.0, 1.0))
    if name == "newcombe-ni":
        return newcombe_codes(n, delta)
    if name == "paper-def-3.7":
        return regression_codes(n, n, alpha=ALPHA, beta=0.20, delta=delta, test="fisher", rule="paper")
    test = name.split("-", 1)[1]
    return regression_codes(n, n, alpha=ALPHA, beta=0.10, delta=delta, test=test, rule="non-inferiority")


def newcombe_codes(n: int, delta: float) -> np.ndarray:
    """PASS when Newcombe's hybrid score upper bound of p_base - p_cand is below delta."""
    from agentassay._stats import proportion_ci
    from agentassay._stats._exact import regression_reject

    k = np.arange(n + 1)
    lo, hi = proportion_ci(k, n, confidence_level=1 - 2 * ALPHA, method="wilson")  # one-sided 1 - alpha
    p = k / n
    pb, pc = p[:, None], p[None, :]
    upper = pb - pc + np.sqrt((hi[:, None] - pb) ** 2 + (pc - lo[None, :]) ** 2)
    codes = np.zeros((n + 1, n + 1), dtype=np.int8)
    codes[regression_reject(n, n, "fisher", ALPHA)] = CODE_FAIL
    codes[upper < delta] = CODE_PASS
    return codes


def cell(fa: float, power: float, pass0: float, pass_d: float, **extra: float) -> dict[str, float]:
    return {"false_alarm": fa, "power": power, "pass_unchanged": pass0, "pass_at_drop": pass_d, **extra}


def sequential_cell(o0: TrialCountDistribution, o1: TrialCountDistribution) -> dict[str, float]:
    """Cell of a sequential procedure from its exact characteristics: unchanged (o0) and drop (o1)."""
    return cell(
        o0.fail_probability,
        o1.fail_probability,
        o0.pass_probability,
        o1.pass_probability,
        mean_trials_unchanged=o0.expected_trials,
        p95_trials_unchanged=o0.trials_quantile(0.95),
        mean_trials_drop=o1.expected_trials,
        p95_trials_drop=o1.trials_quantile(0.95),
    )


def plugin_sprt(n: int, r: float, delta: float, p_cand: float) -> SPRTCharacteristic:
    """Exact characteristic of paper Alg. 2: theta estimated from an n-trial baseline."""
    xb = np.arange(n + 1)
    w = stats.binom.pmf(xb, n, r)
    theta = np.clip(xb / n, delta + 0.5 / n, 1 - 0.5 / n)
    theta = np.maximum(theta, delta + 1e-6)
    lp = np.log((theta - delta) / theta)
    lf = np.log((1 - theta + delta) / (1 - theta))
    lower, upper = math.log(0.10 / (1 - ALPHA)), math.log((1 - 0.10) / ALPHA)
    alive = w[:, None].copy()
    fail = passed = 0.0
    dist = np.zeros(n)
    for k in range(1, n + 1):
        nxt = np.zeros((n + 1, k + 1))
        nxt[:, :-1] += alive * p_cand
        nxt[:, 1:] += alive * (1 - p_cand)
        f = np.arange(k + 1)[None, :]
        llr = (k - f) * lp[:, None] + f * lf[:, None]
        pm, fm = llr <= lower + 1e-12, llr >= upper - 1e-12
        passed += nxt[pm].sum()
        fail += nxt[fm].sum()
        dist[k - 1] = nxt[pm | fm].sum()
        nxt[pm | fm] = 0
        alive = nxt
    dist[-1] += alive.sum()
    mean = float(np.dot(np.arange(1, n + 1), dist))
    return SPRTCharacteristic(p_cand, float(passed), float(fail), float(1 - passed - fail), mean, tuple(dist))


def run_grid(rates: tuple[float, ...], deltas: tuple[float, ...], ns: tuple[int, ...]) -> dict:
    results: dict[str, dict] = {k: {} for k in (*TWO_SAMPLE, *ONE_SAMPLE, *SEQUENTIAL)}
    for delta in deltas:
        for n in ns:
            t0 = time.time()
            tables = {name: two_sample_table(name, n, delta) for name in TWO_SAMPLE}
            seq = sequential_design(-(-3 * n // 2), n, ALPHA, delta, 0.25, looks=LOOKS)  # as `check` runs it (cached)
            for r in rates:
                key = f"r={r}|delta={delta}|n={n}"
                d = r - delta
                for name, codes in tables.items():
                    results[name][key] = cell(
                        verdict_probability(codes, CODE_FAIL, r, r),
                        verdict_probability(codes, CODE_FAIL, r, d),
                        verdict_probability(codes, CODE_PASS, r, r),
                        verdict_probability(codes, CODE_PASS, r, d),
                    )
                for name in ONE_SAMPLE:
                    codes = threshold_codes(n, r, ALPHA, name.split("-", 1)[1])
                    p0, p1 = stats.binom.pmf(np.arange(n + 1), n, r), stats.binom.pmf(np.arange(n + 1), n, d)
                    results[name][key] = cell(
                        float(p0[codes == CODE_FAIL].sum()),
                        float(p1[codes == CODE_FAIL].sum()),
                        float(p0[codes == CODE_PASS].sum()),
                        float(p1[codes == CODE_PASS].sum()),
                    )
                sd = SPRTDesign(r, delta, ALPHA, ALPHA, n)
                results["sprt"][key] = sequential_cell(
                    sd.operating_characteristic(r), sd.operating_characteristic(d)
                )
                results["sequential-regression"][key] = sequential_cell(
                    seq.operating_characteristic(r, r), seq.operating_characteristic(r, d)
                )
                results["paper-alg-2-plugin-sprt"][key] = sequential_cell(
                    plugin_sprt(n, r, delta, r), plugin_sprt(n, r, delta, d)
                )
            print(f"  delta={delta} n={n}: {time.time() - t0:.1f}s", flush=True)
    return results


def monte_carlo_checks(reps: int, rng: np.random.Generator) -> list[dict]:
    """Exact SPRT / sequential characteristics against simulation, at the design points."""
    rows = []
    for theta, delta, beta, max_trials in (
        (0.9, 0.1, 0.10, None),
        (0.9, 0.1, 0.05, 100),
        (0.7, 0.1, 0.05, None),
        (0.95, 0.1, 0.05, 50),
    ):
        d = SPRTDesign(theta, delta, ALPHA, beta, max_trials)
        for p in (theta, theta - delta):
            oc = d.operating_characteristic(p)
            limit = max_trials or 3000
            x = rng.random((reps, limit)) < p
            passes = np.cumsum(x, axis=1)
            k = np.arange(1, limit + 1)
            llr = d.llr(passes, k - passes)
            decided = (llr <= d.lower + 1e-12) | (llr >= d.upper - 1e-12)
            stop = np.where(decided.any(axis=1), decided.argmax(axis=1), limit - 1)
            final = llr[np.arange(reps), stop]
            fail = (final >= d.upper - 1e-12).astype(float)
            trials = stop + 1.0
            rows.append(
                _mc_row(
                    f"SPRT theta={theta} delta={delta} beta={beta} max={max_trials}",
                    p,
                    oc.fail_probability,
                    fail,
                    oc.expected_trials,
                    trials,
                    d.wald_asn(p) if max_trials is None else None,
                )
            )
    seq = SequentialDesign(45, 30, ALPHA, 0.1, 0.25, looks=LOOKS)
    for pb, pc in ((0.8, 0.8), (0.8, 0.7), (0.9, 0.65)):
        oc = seq.operating_characteristic(pb, pc)
        fails, trials = np.empty(reps), np.empty(reps)
        xbs = rng.binomial(45, pb, reps)
        outcomes = rng.random((reps, 30)) < pc
        for i in range(reps):
            xc = 0
            v = None
            for k in range(1, 31):
                xc += outcomes[i, k - 1]
                v = seq.decide(int(xbs[i]), xc, k)
                if v is not None:
                    break
            fails[i], trials[i] = (v is not None and v.value == "fail"), k
        rows.append(
            _mc_row(
                "sequential-regression n_b=45 n_max=30 looks=10 delta=0.1",
                (pb, pc),
                oc.fail_probability,
                fails,
                oc.expected_trials,
                trials,
                None,
            )
        )
    return rows


def _mc_row(
    name: str, p, exact_fail: float, fail: np.ndarray, exact_n: float, trials: np.ndarray, wald: float | None
) -> dict:
    se_f = math.sqrt(max(exact_fail * (1 - exact_fail), 1e-12) / len(fail))
    se_n = trials.std(ddof=1) / math.sqrt(len(trials))
    return {
        "design": name,
        "p": p,
        "fail_exact": exact_fail,
        "fail_mc": float(fail.mean()),
        "fail_z": float((fail.mean() - exact_fail) / se_f),
        "trials_exact": exact_n,
        "trials_mc": float(trials.mean()),
        "trials_z": float((trials.mean() - exact_n) / se_n) if se_n > 0 else 0.0,
        "trials_wald": wald,
        "exact_vs_wald": None if wald is None else (exact_n - wald) / wald,
        "reps": len(fail),
    }


def fwer_checks(reps: int, rng: np.random.Generator) -> list[dict]:
    """Suite-level FAIL rate when no scenario changed, with and without correction."""
    rows = []
    for m, n, r in ((5, 50, 0.9), (10, 100, 0.8), (20, 50, 0.7)):
        codes = regression_codes(
            n, n, alpha=ALPHA, beta=0.1, delta=0.1, test="fisher", rule="non-inferiority"
        )
        pv = fisher_pvalues(n, n)
        xb, xc = rng.binomial(n, r, (reps, m)), rng.binomial(n, r, (reps, m))
        p = pv[xb, xc]
        ni = codes[xb, xc] == CODE_PASS
        row = {"scenarios": m, "n": n, "rate": r, "reps": reps}
        for method in ("none", "holm", "bh"):
            adj = np.apply_along_axis(lambda v, how=method: adjust_pvalues(v, method=how), 1, p)
            suite_fail = ((adj <= ALPHA) & ~ni).any(axis=1).mean()
            row[method] = float(suite_fail)
        row["se"] = math.sqrt(ALPHA * (1 - ALPHA) / reps)
        rows.append(row)
    return rows


def check(results: dict) -> dict[str, dict]:
    """Worst error rates per procedure and whether they meet the 1.1 * alpha bound."""
    out = {}
    for name, cells in results.items():
        worst_fa = max(cells.items(), key=lambda kv: kv[1]["false_alarm"])
        worst_pd = max(cells.items(), key=lambda kv: kv[1]["pass_at_drop"])
        bad = [k for k, c in cells.items() if max(c["false_alarm"], c["pass_at_drop"]) > 1.1 * ALPHA]
        out[name] = {
            "max_false_alarm": worst_fa[1]["false_alarm"],
            "max_false_alarm_cell": worst_fa[0],
            "max_pass_at_drop": worst_pd[1]["pass_at_drop"],
            "max_pass_at_drop_cell": worst_pd[0],
            "cells_over_bound": bad,
            "reference": (TWO_SAMPLE | ONE_SAMPLE | SEQUENTIAL)[name][1],
        }
    return out


def _rates(p: float | list[float] | tuple[float, ...]) -> str:
    """A true rate, or a pair shown as the tuple it was measured as (a list once read back from JSON)."""
    return str(tuple(p)) if isinstance(p, list | tuple) else str(p)


def render(results: dict, summary: dict, mc: list[dict], fwer: list[dict], meta: dict) -> str:
    desc = {k: v[0] for k, v in (TWO_SAMPLE | ONE_SAMPLE | SEQUENTIAL).items()}
    L = [
        "# Calibration of the statistics core",
        "",
        f"Generated by `python benchmarks/calibration.py` on {meta['date']} ({meta['seconds']:.0f} s, "
        f"Python {meta['python']}, seed {SEED}). Do not edit by hand; rerun the benchmark.",
        "",
        "alpha = 0.05. Every rate below is **exact** (binomial sums over verdict tables, or dynamic",
        "programming over the sequential walk); only the cross-checks in the last sections are simulated.",
        "Bound for every error rate: <= 1.1 alpha = 0.055. *Reference* rows are the paper's rules, kept for comparison.",
        "",
        "## Summary: worst error rates over the grid",
        "",
        "| procedure | what it is | max FAIL when unchanged | max PASS at a drop of delta | cells over bound |",
        "|---|---|---|---|---|",
    ]
    for name, s in summary.items():
        tag = " *(reference)*" if s["reference"] else ""
        over = len(s["cells_over_bound"])
        L.append(
            f"| `{name}`{tag} | {desc[name]} | {s['max_false_alarm']:.4f} ({s['max_false_alarm_cell']}) | "
            f"{s['max_pass_at_drop']:.4f} ({s['max_pass_at_drop_cell']}) | {over} of {len(results[name])} |"
        )
    bad = {k: v for k, v in summary.items() if v["cells_over_bound"]}
    if bad:
        L += ["", "Cells over the bound:", ""]
        for k, v in bad.items():
            L.append(f"- `{k}`: {', '.join(v['cells_over_bound'])}")
    L += ["", "## PASS rate of an unchanged agent at rate 0.9, delta = 0.10", ""]
    L += [
        "| procedure | " + " | ".join(f"n={n}" for n in meta["ns"]) + " |",
        "|---|" + "---|" * len(meta["ns"]),
    ]
    if 0.9 in meta["rates"] and 0.1 in meta["deltas"]:
        for name in results:
            vals = [results[name].get(f"r=0.9|delta=0.1|n={n}", {}).get("pass_unchanged") for n in meta["ns"]]
            L.append(f"| `{name}` | " + " | ".join("" if v is None else f"{v:.3f}" for v in vals) + " |")
    L += [
        "",
        "## Every cell",
        "",
        "Each entry: false alarm / power / PASS when unchanged / PASS at a drop of delta;",
        "for sequential procedures also mean and 95th-percentile candidate trials (unchanged; drop).",
        "",
    ]
    for name in results:
        L += [
            f"### `{name}`",
            "",
            desc[name],
            "",
            "| rate | delta | " + " | ".join(f"n={n}" for n in meta["ns"]) + " |",
            "|---|---|" + "---|" * len(meta["ns"]),
        ]
        for r in meta["rates"]:
            for d in meta["deltas"]:
                entries = []
                for n in meta["ns"]:
                    c = results[name][f"r={r}|delta={d}|n={n}"]
                    e = f"{c['false_alarm']:.3f} / {c['power']:.3f} / {c['pass_unchanged']:.3f} / {c['pass_at_drop']:.3f}"
                    if "mean_trials_unchanged" in c:
                        e += (
                            f"<br>N {c['mean_trials_unchanged']:.0f} ({c['p95_trials_unchanged']}); "
                            f"{c['mean_trials_drop']:.0f} ({c['p95_trials_drop']})"
                        )
                    entries.append(e)
                L.append(f"| {r} | {d} | " + " | ".join(entries) + " |")
        L.append("")
    L += [
        "## Exact characteristics against Monte Carlo",
        "",
        "| design | true rate(s) | P(FAIL) exact | P(FAIL) simulated | z | E[N] exact | E[N] simulated | z | E[N] Wald | exact vs Wald |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in mc:
        wald = "" if m["trials_wald"] is None else f"{m['trials_wald']:.1f}"
        rel = "" if m["exact_vs_wald"] is None else f"{m['exact_vs_wald']:+.1%}"
        L.append(
            f"| {m['design']} | {_rates(m['p'])} | {m['fail_exact']:.4f} | {m['fail_mc']:.4f} | {m['fail_z']:+.2f} | "
            f"{m['trials_exact']:.2f} | {m['trials_mc']:.2f} | {m['trials_z']:+.2f} | {wald} | {rel} |"
        )
    zs = [m["fail_z"] for m in mc] + [m["trials_z"] for m in mc]
    chi2 = float(sum(z * z for z in zs))
    L += [
        "",
        f"({mc[0]['reps'] if mc else 0} simulated runs per row; z = (simulated - exact) / s.e.)",
        f"Joint check: sum of z^2 = {chi2:.1f} on {len(zs)} degrees of freedom (p = {stats.chi2.sf(chi2, len(zs)):.2f}); "
        f"{sum(abs(z) > 2 for z in zs)} of {len(zs)} comparisons have |z| > 2, where exactness predicts "
        f"{len(zs) * 2 * stats.norm.sf(2):.1f} by chance.",
        "",
        "## Suite FAIL rate when no scenario changed (family-wise error)",
        "",
        "| scenarios | n | rate | uncorrected | Holm | Benjamini-Hochberg | 2 s.e. |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in fwer:
        L.append(
            f"| {f['scenarios']} | {f['n']} | {f['rate']} | {f['none']:.4f} | {f['holm']:.4f} | {f['bh']:.4f} | {2 * f['se']:.4f} |"
        )
    L += [
        "",
        f"({fwer[0]['reps'] if fwer else 0} simulated suites per row.) Holm controls the family-wise error;",
        "Benjamini-Hochberg controls the false-discovery rate, which equals the family-wise error when nothing changed.",
        "",
    ]
    return "\n".join(L)


def render_data(data: dict) -> str:
    """The page from the JSON's sections."""
    return render(data["cells"], data["summary"], data["monte_carlo"], data["fwer"], data["meta"])


def main(argv: list[str] | None = None) -> int:
    ap = parser(__doc__, quick_help="small grid (CI smoke run)")
    ap.add_argument("--reps", type=int, default=10_000, help="Monte-Carlo repetitions per cross-check")
    args = ap.parse_args(argv)
    if args.render:
        write_report(args, "calibration", load_result(args, "calibration"), render_data)
        return 0
    rates, deltas, ns = ((0.5, 0.9), (0.1,), (10, 20)) if args.quick else (RATES, DELTAS, NS)
    reps = min(args.reps, 2000) if args.quick else args.reps
    rng = np.random.default_rng(SEED)
    timer = Timer()
    results = run_grid(rates, deltas, ns)
    mc = monte_carlo_checks(reps, rng)
    fwer = fwer_checks(reps, rng)
    summary = check(results)
    meta = {
        "date": today(),
        "seconds": timer.seconds,
        "python": platform.python_version(),
        "rates": rates,
        "deltas": deltas,
        "ns": ns,
        "alpha": ALPHA,
        "seed": SEED,
        "reps": reps,
    }
    data = {"meta": meta, "summary": summary, "cells": results, "monte_carlo": mc, "fwer": fwer}
    write_report(args, "calibration", data, render_data, indent=1, trailing_newline=False, seconds=timer.seconds)
    failing = [k for k, v in summary.items() if v["cells_over_bound"] and not v["reference"]]
    for k, v in summary.items():
        tag = "reference" if v["reference"] else ("OVER BOUND" if v["cells_over_bound"] else "ok")
        print(
            f"  {k:28s} max FA {v['max_false_alarm']:.4f}  max PASS@drop {v['max_pass_at_drop']:.4f}  [{tag}]"
        )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
