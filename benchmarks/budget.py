"""Adaptive budget (agentassay._features.fingerprints.plan_budget): is the planned power the achieved power?

    python benchmarks/budget.py           # full run -> benchmarks/results/budget.json, docs/budget.md
    python benchmarks/budget.py --quick   # small run, for CI smoke checks

For three baseline feature families (independent Gaussian, d = 8; correlated, d = 14 with constant
and sum-to-one columns; integer counts, d = 6) and shifts of 0.75, 1.0 and 1.5 baseline SDs in one
feature, a plan is made from k = 30 calibration rows, then the permutation fingerprint test (1,000
permutations) is run on fresh baseline and candidate samples of the planned size: achieved vs planned
power, the A/A false-alarm rate at the planned n, and, for comparison, the n of the paper's Eq. 39
and of its Alg. 4 (Eq. 39 raised to k + 5 and multiplied by 1 + √(2/k)) with their achieved power.
Every number in the written report comes from this run.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.fingerprints import BudgetPlan, fingerprint_test, plan_budget, planned_power  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, write_report  # noqa: E402

ALPHA, BETA = 0.05, 0.10
SEED = 20261123
K = 30  # calibration rows: the baseline artifact's trials
SHIFTS = (0.75, 1.0, 1.5)
PERMUTATIONS = 1000
Generator = Callable[[np.random.Generator, int, float], np.ndarray]


# -- feature families: (rng, rows, shift in SDs of the shifted feature) -> matrix ----------------------
def fam_independent(rng: np.random.Generator, n: int, shift: float) -> np.ndarray:
    x = rng.normal(size=(n, 8))
    x[:, 0] += shift
    return x


def fam_correlated(rng: np.random.Generator, n: int, shift: float) -> np.ndarray:
    """Two factors carry 8 Gaussian columns (loading 0.8, unit SD); 4 tool shares summing to one
    follow the same factors; 2 columns are constant. The shift moves Gaussian column 0 alone."""
    f = rng.normal(size=(n, 2))
    gauss = 0.8 * np.repeat(f, 4, axis=1) + 0.6 * rng.normal(size=(n, 8))
    logits = np.column_stack([0.7 * f[:, 0], 0.7 * f[:, 1], 0.5 * rng.normal(size=n), np.zeros(n)])
    shares = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    gauss[:, 0] += shift
    return np.hstack([gauss, shares, np.full((n, 1), 3.0), np.ones((n, 1))])


LAMBDAS = np.array([0.5, 1.0, 2.0, 3.0, 5.0, 8.0])


def fam_counts(rng: np.random.Generator, n: int, shift: float) -> np.ndarray:
    """Poisson counts; the shift raises the mean of the λ = 3 column by ``shift``·√3 (its SD)."""
    lam = LAMBDAS.copy()
    lam[3] += shift * math.sqrt(lam[3])
    return rng.poisson(lam, size=(n, lam.size)).astype(float)


def welch_shift(family: str, shift: float) -> float:
    """The shift the Welch statistic sees, in SDs averaged over both arms' variances.

    Equal to ``shift`` when the shift leaves the variance alone (the Gaussian families); a Poisson
    mean shift also raises the variance, from λ to λ + shift·√λ, which the plan cannot know.
    """
    if family != "counts":
        return shift
    lam = LAMBDAS[3]
    return shift * math.sqrt(2 * lam / (2 * lam + shift * math.sqrt(lam)))


FAMILIES: dict[str, tuple[str, Generator]] = {
    "independent": ("independent Gaussian, d = 8", fam_independent),
    "correlated": (
        "correlated: 8 two-factor Gaussian + 4 sum-to-one shares + 2 constant, d = 14",
        fam_correlated,
    ),
    "counts": ("integer counts: Poisson λ = 0.5…8, d = 6", fam_counts),
}


def paper_n(plan: BudgetPlan, shift: float, k: int) -> tuple[int, int]:
    """Eq. 39 with Δ_M = shift and σ²_fp on [0, 1]-scaled features, and Alg. 4's final n."""
    z = stats.norm.isf(ALPHA) + stats.norm.isf(BETA)
    eq39 = math.ceil(z**2 * plan.total_variance / shift**2 + (plan.d_eff + 1) / 2)
    alg4 = math.ceil(max(eq39, k + 5) * (1 + math.sqrt(2 / k)))
    return max(eq39, 2), alg4


def rejection_rate(gen: Generator, n: int, shift: float, reps: int, rng: np.random.Generator) -> float:
    hits = 0
    for _ in range(reps):
        base, cand = gen(rng, n, 0.0), gen(rng, n, shift)
        hits += fingerprint_test(base, cand, alpha=ALPHA, permutations=PERMUTATIONS, seed=rng).shifted
    return hits / reps


def max_t_tests(family: str, rng: np.random.Generator, rows: int = 100_000, draws: int = 200_000) -> float:
    """How many independent tests the max-|t| over the family's features is worth (large n).

    The 1 − alpha quantile c of max |Z| for Z ~ N(0, R), R the population correlation of the varying
    columns, expressed as alpha / P(|Z₁| > c): the Bonferroni count that would give the same critical
    value. This is what d_eff approximates in the plan.
    """
    x = FAMILIES[family][1](rng, rows, 0.0)
    x = x[:, x.std(axis=0) > 0]
    corr = np.corrcoef(x, rowvar=False)
    eig, vec = np.linalg.eigh(corr)
    root = vec * np.sqrt(np.clip(eig, 0.0, None))
    crit = float(np.quantile(np.abs(rng.normal(size=(draws, len(eig))) @ root.T).max(axis=1), 1 - ALPHA))
    return float(ALPHA / (2 * stats.norm.sf(crit)))


def calibration_spread(family: str, draws: int, seed: np.random.SeedSequence) -> dict[str, Any]:
    """How much d_eff and n move between calibration samples of k rows (shift 1.0)."""
    gen, rng = FAMILIES[family][1], np.random.default_rng(seed)
    plans = [plan_budget(gen(rng, K, 0.0), alpha=ALPHA, beta=BETA, shift=1.0) for _ in range(draws)]
    d_eff = np.array([p.d_eff for p in plans])
    trials = np.array([p.trials for p in plans])
    classes = {c: sum(p.variance_class == c for p in plans) for c in ("stable", "moderate", "volatile")}
    return {
        "max_t_tests": max_t_tests(family, rng),
        "draws": draws,
        "d_eff_min": int(d_eff.min()),
        "d_eff_median": float(np.median(d_eff)),
        "d_eff_max": int(d_eff.max()),
        "trials_min": int(trials.min()),
        "trials_median": float(np.median(trials)),
        "trials_max": int(trials.max()),
        "variance_classes": classes,
    }


def cell(family: str, shift: float, calibration: np.ndarray, reps: int, seed: np.random.SeedSequence) -> dict:
    """One family x shift: plan from the calibration rows, then measure it and the paper's n."""
    t0 = time.perf_counter()
    gen, rng = FAMILIES[family][1], np.random.default_rng(seed)
    plan = plan_budget(calibration, alpha=ALPHA, beta=BETA, shift=shift)
    eq39, alg4 = paper_n(plan, shift, K)
    eff = welch_shift(family, shift)
    row = {
        "family": family,
        "shift": shift,
        "plan": plan.to_dict(),
        "explain": plan.explain(),
        "n": plan.trials,
        "planned_power": plan.planned_power,
        "achieved_power": rejection_rate(gen, plan.trials, shift, reps, rng),
        "welch_shift": eff,
        "model_power_welch_shift": planned_power(plan.trials, d_eff=plan.d_eff, shift=eff, alpha=ALPHA),
        "false_alarm": rejection_rate(gen, plan.trials, 0.0, reps, rng),
        "n_eq39": eq39,
        "model_power_eq39": planned_power(eq39, d_eff=plan.d_eff, shift=eff, alpha=ALPHA),
        "achieved_power_eq39": rejection_rate(gen, eq39, shift, reps, rng),
        "n_alg4": alg4,
        "achieved_power_alg4": rejection_rate(gen, alg4, shift, reps, rng),
    }
    row["seconds"] = time.perf_counter() - t0
    return row


def run(reps: int, draws: int, jobs: int) -> tuple[list[dict], dict[str, dict]]:
    """Every cell gets its own child seed, so the result does not depend on ``jobs``."""
    root = np.random.SeedSequence(SEED)
    cal_seed, spread_seed, cell_seed = root.spawn(3)
    cal_rng = np.random.default_rng(cal_seed)
    calibration = {key: gen(cal_rng, K, 0.0) for key, (_, gen) in FAMILIES.items()}
    cells = [(key, shift) for key in FAMILIES for shift in SHIFTS]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        spread_f = {
            key: pool.submit(calibration_spread, key, draws, s)
            for key, s in zip(FAMILIES, spread_seed.spawn(len(FAMILIES)), strict=True)
        }
        cell_f = [
            pool.submit(cell, key, shift, calibration[key], reps, s)
            for (key, shift), s in zip(cells, cell_seed.spawn(len(cells)), strict=True)
        ]
        rows = []
        for f in cell_f:
            row = f.result()
            rows.append(row)
            print(
                f"{row['family']:12s} shift {row['shift']:4.2f}: n {row['n']:3d} planned "
                f"{row['planned_power']:.3f} achieved {row['achieved_power']:.3f} A/A {row['false_alarm']:.3f} "
                f"| Eq.39 n {row['n_eq39']} achieved {row['achieved_power_eq39']:.3f} | Alg.4 n "
                f"{row['n_alg4']} achieved {row['achieved_power_alg4']:.3f}  ({row['seconds']:.1f} s)",
                flush=True,
            )
        spread = {key: f.result() for key, f in spread_f.items()}
    return rows, spread


def markdown(result: dict) -> str:
    reps = result["reps"]
    se_power = math.sqrt(0.9 * 0.1 / reps)
    se_alpha = math.sqrt(ALPHA * (1 - ALPHA) / reps)
    rows = result["rows"]
    worst = min(r["achieved_power"] - r["planned_power"] for r in rows)
    pooled_aa = sum(r["false_alarm"] for r in rows) / len(rows)
    se_pooled = math.sqrt(ALPHA * (1 - ALPHA) / (reps * len(rows)))
    flagged = sum(r["false_alarm"] > ALPHA + 2 * se_alpha for r in rows)
    eq39_lo = min(r["achieved_power_eq39"] for r in rows)
    eq39_hi = max(r["achieved_power_eq39"] for r in rows)
    lines = [
        "# Adaptive budget: planned vs achieved power",
        "",
        f"Generated by `python benchmarks/budget.py{' --quick' if result['quick'] else ''}` "
        f"({result['platform']}, Python {result['python']}, seed {SEED}); every number below is from that run.",
        "",
        "`plan_budget(baseline, alpha, beta, shift)` returns the trials per side at which the permutation "
        "fingerprint test detects a shift of `shift` baseline standard deviations in any one feature with "
        "power ≥ 1 − beta. It models that test directly: a two-sided Welch t test (noncentral t, df 2n − 2, "
        "noncentrality shift·√(n/2)) at the Bonferroni level alpha / d_eff, where d_eff is the number of "
        "principal components of the baseline's correlation matrix holding 95% of its variance.",
        "",
        "## Deviation from the paper (Eq. 39, Thm. 7.2, Alg. 4)",
        "",
        "Eq. 39, n* = (z₁₋α + z₁₋β)² σ²_fp / Δ²_M + (d_eff + 1)/2, divides the *total* variance of the "
        "fingerprint by a squared *Mahalanobis* distance, which is already measured in units of that "
        "variance; the result is not the sample size of any test. It also uses one-sided z quantiles for "
        "a multivariate test and adds (d_eff + 1)/2 trials for the dimension instead of a multiplicity "
        "correction. The table shows what that n delivers when Δ_M is the shift in SDs and σ²_fp is Eq. 37 "
        "on features min-max scaled to [0, 1] (the scale the paper's Thm. 7.2 proof assumes). Alg. 4 "
        "raises n to k + 5 and multiplies it by 1 + √(2/k); with k = 30 that alone forces n ≥ 45, which "
        "is why its power is high, and wasteful, whatever the shift. Because our plan works in SD units it "
        "needs no variance estimate, hence no safety margin; the calibration rows enter only through d_eff. "
        "The variance class of Def. 7.4 is reported (per-dimension thresholds 0.02 and 0.08 on "
        "[0, 1]-scaled features; the paper footnote's 0.357 exceeds the 1/4 maximum) but does not set n.",
        "",
        f"## Planned vs achieved (alpha = {ALPHA}, beta = {BETA}, k = {K} calibration rows, "
        f"{reps:,} reps per cell, {PERMUTATIONS:,} permutations)",
        "",
        "Each cell uses one seeded calibration sample for the plan and fresh baseline and candidate samples "
        "of the planned size for every rep. *A/A* is the false-alarm rate at the planned n (no shift); "
        "✗ marks a rate above alpha + 2 s.e.",
        "",
        "| family | shift (SD) | features / d_eff | class | n per side | planned power | model at Welch shift | "
        "achieved power | A/A | Eq. 39 n | its achieved power (model) | Alg. 4 n | its achieved power |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = r["plan"]
        lines.append(
            f"| {r['family']} | {r['shift']} | {p['features']} / {p['d_eff']} | {p['variance_class']} | "
            f"{r['n']} | {r['planned_power']:.3f} | {r['model_power_welch_shift']:.3f} | "
            f"{r['achieved_power']:.3f} | {r['false_alarm']:.3f}{' ✗' if r['false_alarm'] > ALPHA + 2 * se_alpha else ''} | "
            f"{r['n_eq39']} | {r['achieved_power_eq39']:.3f} ({r['model_power_eq39']:.3f}) | "
            f"{r['n_alg4']} | {r['achieved_power_alg4']:.3f} |"
        )
    vs_model = min(r["achieved_power"] - r["model_power_welch_shift"] for r in rows)
    shortfall = (
        f"Largest shortfall of achieved power below the plan: {-worst:.3f}; below the model evaluated at "
        f"the shift the test actually sees (column 7, differs only for `counts`, see below): "
        f"{max(0.0, -vs_model):.3f}"
    )
    lines += [
        "",
        f"One s.e. is {se_power:.4f} for a power near 0.90 and {se_alpha:.4f} for a false-alarm rate at "
        f"{ALPHA}. {shortfall}. A/A over all {len(rows)} cells pooled: {pooled_aa:.4f} (s.e. {se_pooled:.4f}), "
        f"{flagged} cell{'s' if flagged != 1 else ''} flagged"
        + (
            ""
            if not flagged
            else "; the pooled rate is within 2 s.e. of alpha and the permutation p-value is exact under "
            f"exchangeability, so {'the flagged cells point' if flagged > 1 else 'the flagged cell points'} "
            "to the draw, not the test"
            if pooled_aa <= ALPHA + 2 * se_pooled
            else "; the pooled rate exceeds alpha by more than 2 s.e"
        )
        + ". "
        + "Eq. 39's n reached an achieved power of "
        f"{eq39_lo:.2f}–{eq39_hi:.2f} where it promises 0.90; our power model evaluated at Eq. 39's n "
        "(bracketed) predicts that shortfall.",
        "",
        "Families: " + "; ".join(f"`{k}` = {label}" for k, (label, _) in FAMILIES.items()) + ". For `counts` "
        "the shift raises the mean of the λ = 3 column by shift·√3.",
        "",
        f"## How much the plan moves between calibration samples ({result['draws']} samples of k = {K}, "
        "shift 1.0)",
        "",
        "| family | d_eff min / median / max | max-T effective tests (population) | "
        "n per side min / median / max | variance classes |",
        "|---|---|---|---|---|",
    ]
    for key, s in result["calibration_spread"].items():
        classes = ", ".join(f"{c} {v}" for c, v in s["variance_classes"].items() if v)
        lines.append(
            f"| {key} | {s['d_eff_min']} / {s['d_eff_median']:g} / {s['d_eff_max']} | {s['max_t_tests']:.1f} | "
            f"{s['trials_min']} / {s['trials_median']:g} / {s['trials_max']} | {classes} |"
        )
    sp = result["calibration_spread"]
    by = {(r["family"], r["shift"]): r for r in rows}
    gap_corr = [
        by[("correlated", x)]["achieved_power"] - by[("correlated", x)]["planned_power"] for x in SHIFTS
    ]
    counts = [by[("counts", x)] for x in SHIFTS]
    lines += [
        "",
        "## Where the approximation errs",
        "",
        f"*Correlated features.* The 95%-variance d_eff (median {sp['correlated']['d_eff_median']:g} here) is "
        "not the number of independent tests the max-|t| statistic is worth: for this family the population "
        f"correlation gives {sp['correlated']['max_t_tests']:.1f} (independent family: "
        f"{sp['independent']['max_t_tests']:.1f} for 8 features, the Šidák count). Fewer assumed tests mean a "
        "lower critical value and an optimistic plan; achieved minus planned power for this family was "
        + ", ".join(f"{g:+.3f}" for g in gap_corr)
        + ". The max-|Z| quantile of the baseline's correlation matrix, used instead of d_eff, is the "
        "natural fix; we keep d_eff because it is the quantity Def. 7.4 / Alg. 4 define and the gap is small.",
        "",
        "*Shifts that also change the variance.* The plan assumes the candidate keeps the baseline's "
        "variance. A Poisson count whose mean rises by s·√λ also sees its variance rise from λ to "
        "λ + s·√λ, so the Welch statistic sees a smaller shift, s·√(2λ / (2λ + s√λ)) = "
        + ", ".join(f"{r['welch_shift']:.2f}" for r in counts)
        + f" for s = {', '.join(str(x) for x in SHIFTS)}. The planned power at that shift ("
        + ", ".join(f"{r['model_power_welch_shift']:.3f}" for r in counts)
        + ") is close to the achieved ("
        + ", ".join(f"{r['achieved_power']:.3f}" for r in counts)
        + "): what misled the plan is the stated shift, not the power model. Plan count features with the "
        "shift measured in the larger of the two SDs.",
    ]
    lines += [
        "",
        f"With k = {K} rows the correlation matrix has rank ≤ {K - 1}, so d_eff can never exceed {K - 1}; "
        "a calibration sample much smaller than the number of features under-counts independent features "
        "and makes the plan optimistic. The sampled d_eff above is the whole of the plan's sensitivity to "
        "the calibration sample.",
        "",
        f"Total benchmark time: {result['seconds']:.0f} s.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = parser(__doc__)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (results do not depend on it)")
    args = ap.parse_args(argv)
    if args.render:
        write_report(args, "budget", load_result(args, "budget"), markdown)
        return
    timer = Timer()
    reps, draws = (150, 50) if args.quick else (1500, 200)
    rows, spread = run(reps, draws, max(1, args.jobs))
    result = run_info(
        args.quick,
        seed=SEED,
        alpha=ALPHA,
        beta=BETA,
        calibration_rows=K,
        permutations=PERMUTATIONS,
        reps=reps,
        draws=draws,
        jobs=max(1, args.jobs),
        rows=rows,
        calibration_spread=spread,
        seconds=timer.seconds,
    )
    write_report(args, "budget", result, markdown, seconds=result["seconds"])


if __name__ == "__main__":
    main()
