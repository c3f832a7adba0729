"""Is the gate decisive at its shipped defaults? An unchanged agent should DEPLOY, a regressed one BLOCK.

    python benchmarks/decisiveness.py           # -> benchmarks/results/decisiveness.json, docs/decisiveness.md
    python benchmarks/decisiveness.py --quick --out /tmp/d --docs /tmp/d   # 300 suites a cell, smoke checks

Every suite goes through the real gate: ``monitor_for`` gives each scenario the test and the levels a
default ``check`` gives it (FAIL at alpha x (1 - fingerprint share) / m, PASS at alpha; the shipped
sequential designs), the monitors are fed Bernoulli outcomes one at a time until they stop, and
``decide`` turns the scenario verdicts into DEPLOY / BLOCK / MANUAL, with the fingerprint test as a
second kind of evidence whose p-values are uniform (a perfectly calibrated test under "nothing
changed": its own calibration is measured in benchmarks/fingerprints.py). The baseline is recorded the
default way: ``Settings().record_cap`` trials per scenario at the same true rate p.

Cells: m in {1, 4, 10} scenarios, true pass rate p in {0.7, 0.9, 0.97}, methods sprt and fixed.
Figures per cell, each from ``reps`` simulated suites:

* P(DEPLOY | unchanged), P(BLOCK | unchanged) (the suite's false-alarm rate);
* P(a scenario PASSes | its true drop = delta) (the false-PASS rate; the other scenarios unchanged);
* mean and p95 candidate trials per scenario, unchanged and at a drop of delta;
* exact figures for the sequential design itself (rate tests only, no fingerprint test): its
  operating characteristic summed over the baseline's binomial distribution;
* an oracle: the baseline's rate known exactly, a fixed-n exact binomial test of "p_cand > p - delta"
  at alpha on ``trial_cap`` candidate trials (no sound test that must also estimate the baseline does
  better at that n);
* the defaults before issue 21 (cap 100, a 100-trial baseline, PASS at the FAIL level, a look every
  trial), exact, rate tests only.
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.fingerprints._gate import SHARE  # noqa: E402
from agentassay._gate import (  # noqa: E402
    BaselineCounts,
    ScenarioTest,
    decide,
    monitor_for,
    scenario_alpha,
    sequential_design,
)
from agentassay._spec import Scenario, Settings  # noqa: E402
from agentassay._stats import Decision, Verdict  # noqa: E402
from agentassay._stats._regression import regression_codes, verdict_probability  # noqa: E402
from agentassay._stats._verdict import CODE_PASS  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

SEED = 20261126
MS = (1, 4, 10)
PS = (0.7, 0.9, 0.97)
METHODS = ("sprt", "fixed")
# Acceptance (issue 21): (m, p) -> (least P(DEPLOY | unchanged), most mean candidate trials or None).
TARGETS = {(4, 0.9): (0.75, 130.0), (4, 0.97): (0.95, 80.0), (10, 0.97): (0.95, None)}


def _se(x: float, n: int) -> float:
    return math.sqrt(max(x * (1 - x), 1e-12) / n)


def _scenarios(m: int) -> list[Scenario]:
    return [Scenario(name=f"s{i}", input="x") for i in range(m)]


class _FixedVerdicts:
    """A fixed-n monitor's verdict depends on the counts alone: compute each (xb, xc) once."""

    def __init__(self) -> None:
        self.memo: dict[tuple[Any, ...], Any] = {}

    def __call__(self, sc: Scenario, settings: Settings, m: int, xb: int, xc: int) -> Any:
        key = (m, sc.name == "s0", xb, xc)
        v = self.memo.get(key)
        if v is None:
            mon = monitor_for(sc, settings, scenarios=m, baseline=BaselineCounts(xb, settings.record_cap),
                              regression=True, share=SHARE)
            mon.trials, mon.passes = settings.trial_cap, xc  # what feeding trial_cap outcomes leaves
            v = self.memo[key] = mon.finish()
        return v


def simulate(method: str, m: int, p: float, drop: float, reps: int, rng: np.random.Generator,
             fixed: _FixedVerdicts) -> dict[str, Any]:
    """``reps`` suites: every scenario at rate p, scenario s0 at p - drop; through the real gate."""
    settings = replace(Settings(), method=method)
    nb, cap = settings.record_cap, settings.trial_cap
    scs = _scenarios(m)
    rates = np.full(m, p)
    rates[0] -= drop
    deploy = block = s0_pass = 0
    trials: list[int] = []
    s0_trials: list[int] = []
    for _ in range(reps):
        xb = rng.binomial(nb, p, m)
        outcomes = rng.random((m, cap)) < rates[:, None]
        verdicts = {}
        for i, sc in enumerate(scs):
            if method == "fixed":
                v = fixed(sc, settings, m, int(xb[i]), int(outcomes[i].sum()))
            else:
                mon = monitor_for(sc, settings, scenarios=m, baseline=BaselineCounts(int(xb[i]), nb),
                                  regression=True, share=SHARE)
                for o in outcomes[i]:
                    if mon.update(bool(o)):
                        break
                v = mon.finish()
            verdicts[sc.name] = v
            (s0_trials if i == 0 else trials).append(v.trials_used)
        fp = rng.uniform(size=m)
        evidence = [ScenarioTest("fingerprints", SHARE, {sc.name: float(q) for sc, q in zip(scs, fp, strict=True)})]
        final, decision = decide(verdicts, settings, evidence=evidence)
        deploy += decision.decision is Decision.DEPLOY
        block += decision.decision is Decision.BLOCK
        s0_pass += final["s0"].verdict is Verdict.PASS
    every = np.array(trials + s0_trials)
    s0 = np.array(s0_trials)
    return {
        "deploy": deploy / reps, "block": block / reps, "s0_pass": s0_pass / reps,
        "mean_trials": float(every.mean()), "p95_trials": float(np.percentile(every, 95)),
        "s0_mean_trials": float(s0.mean()), "s0_p95_trials": float(np.percentile(s0, 95)),
    }


def exact_sequential(
    m: int, p: float, *, nb: int, cap: int, fail: float, pass_: float, looks: int, shape: float = 0.25
) -> dict[str, Any]:
    """The sequential design's own operating characteristic (rate tests only), exact."""
    d = sequential_design(nb, cap, fail, 0.1, shape, pass_alpha=pass_, looks=looks)  # calibrated once, cached
    same, dropped = d.operating_characteristic(p, p), d.operating_characteristic(p, p - 0.1)
    dist = np.cumsum(same.trials_distribution)
    return {
        "pass": same.pass_probability, "fail": same.fail_probability,
        "deploy": same.pass_probability ** m, "block": 1 - (1 - same.fail_probability) ** m,
        "mean_trials": same.expected_trials, "p95_trials": int(np.searchsorted(dist, 0.95) + 1),
        "false_pass": dropped.pass_probability, "mean_trials_drop": dropped.expected_trials,
    }


def exact_fixed(m: int, p: float, settings: Settings, fail: float) -> dict[str, Any]:
    codes = regression_codes(settings.record_cap, settings.trial_cap, alpha=fail, beta=settings.beta,
                             delta=settings.margin, test="fisher", rule="non-inferiority", pass_alpha=settings.alpha)
    ok = verdict_probability(codes, CODE_PASS, p, p)
    return {"pass": ok, "deploy": ok ** m, "false_pass": verdict_probability(codes, CODE_PASS, p, p - settings.margin)}


def oracle(m: int, p: float, n: int, alpha: float, delta: float) -> float:
    """P(DEPLOY) when the baseline rate is known: exact binomial test of p_cand > p - delta at alpha."""
    p0 = p - delta
    k = int(stats.binom.isf(alpha, n, p0)) + 1  # smallest k with P(X >= k | p0) <= alpha
    while k > 0 and stats.binom.sf(k - 2, n, p0) <= alpha:
        k -= 1
    return float(stats.binom.sf(k - 1, n, p)) ** m


def run(reps: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    settings = Settings()
    fixed = _FixedVerdicts()
    rows = []
    for method in METHODS:
        for m in MS:
            for p in PS:
                timer = Timer()
                s = replace(settings, method=method)
                fail = scenario_alpha(s, m, holm_later=method == "fixed", share=SHARE)
                null = simulate(method, m, p, 0.0, reps, rng, fixed)
                alt = simulate(method, m, p, s.margin, reps, rng, fixed)
                row: dict[str, Any] = {
                    "method": method, "m": m, "p": p, "reps": reps, "fail_level": fail, "pass_level": s.alpha,
                    "deploy": null["deploy"], "deploy_se": _se(null["deploy"], reps),
                    "block": null["block"], "block_se": _se(null["block"], reps),
                    "false_pass": alt["s0_pass"], "false_pass_se": _se(alt["s0_pass"], reps),
                    "mean_trials": null["mean_trials"], "p95_trials": null["p95_trials"],
                    "mean_trials_drop": alt["s0_mean_trials"], "p95_trials_drop": alt["s0_p95_trials"],
                    "oracle_deploy": oracle(m, p, s.trial_cap, s.alpha, s.margin),
                }
                if method == "sprt":
                    row["exact"] = exact_sequential(m, p, nb=s.record_cap, cap=s.trial_cap, fail=fail, pass_=s.alpha,
                                                    looks=10)
                    before = scenario_alpha(s, m, holm_later=False, share=SHARE)
                    row["before"] = exact_sequential(m, p, nb=100, cap=100, fail=before, pass_=before, looks=1)
                else:
                    row["exact"] = exact_fixed(m, p, s, fail)
                row["seconds"] = timer.seconds
                rows.append(row)
                print(f"{method} m={m} p={p}: DEPLOY {row['deploy']:.3f} (exact rate-only {row['exact']['deploy']:.3f}) "
                      f"BLOCK {row['block']:.4f} false PASS {row['false_pass']:.4f} mean {row['mean_trials']:.1f} "
                      f"p95 {row['p95_trials']:.0f} oracle {row['oracle_deploy']:.3f} ({row['seconds']:.0f} s)", flush=True)
    return rows


# Designs the defaults were chosen among: (baseline trials, cap, look every, Wang-Tsiatis shape).
ALTERNATIVES = ((100, 100, 1, 0.25), (200, 200, 1, 0.25), (200, 200, 10, 0.25), (200, 200, 10, 0.5),
                (300, 200, 1, 0.25), (300, 200, 10, 0.25), (300, 200, 20, 0.25))


def alternatives() -> list[dict[str, Any]]:
    """Exact P(DEPLOY) (rate tests only) and mean trials of each candidate design, at m = 4 and 10 with the
    levels a default check gives (FAIL alpha / 2 / m with fingerprints, PASS alpha)."""
    s = Settings()
    out = []
    for nb, cap, looks, shape in ALTERNATIVES:
        row: dict[str, Any] = {"baseline": nb, "cap": cap, "looks": looks, "shape": shape}
        for m in (4, 10):
            fail = scenario_alpha(s, m, holm_later=False, share=SHARE)
            for p in PS:
                ex = exact_sequential(m, p, nb=nb, cap=cap, fail=fail, pass_=s.alpha, looks=looks, shape=shape)
                row[f"m{m} p{p}"] = {"deploy": ex["deploy"], "mean_trials": ex["mean_trials"], "false_pass": ex["false_pass"]}
        out.append(row)
        print(f"alternative {nb}/{cap} every {looks} shape {shape}: "
              + ", ".join(f"{k} {v['deploy']:.3f} ({v['mean_trials']:.0f})" for k, v in row.items() if k[0] == "m"),
              flush=True)
    return out


def fingerprint_quiet(m: int, alpha: float) -> float:
    """P(no fingerprint test FAILs) for m independent uniform p-values under Holm at alpha x SHARE: Holm
    rejects something exactly when its first step does, min p <= alpha x SHARE / m."""
    return (1 - alpha * SHARE / m) ** m


def checks(rows: list[dict[str, Any]], alpha: float) -> list[tuple[str, bool]]:
    out = []
    for (m, p), (least, most) in TARGETS.items():
        r = next(r for r in rows if r["method"] == "sprt" and r["m"] == m and r["p"] == p)
        ok = r["deploy"] >= least and (most is None or r["mean_trials"] <= most)
        what = f"sprt, m = {m}, p = {p}: DEPLOY {r['deploy']:.3f} ± {r['deploy_se']:.3f} >= {least}"
        if most is not None:
            what += f", mean candidate trials {r['mean_trials']:.1f} <= {most:g}"
        out.append((what, ok))
    fa = [r for r in rows if r["block"] > alpha + 2 * r["block_se"]]
    fp = [r for r in rows if r["false_pass"] > alpha + 2 * r["false_pass_se"]]
    out.append((f"false alarm <= alpha + 2 s.e. in every cell (largest {max(r['block'] for r in rows):.4f})", not fa))
    out.append((f"false PASS <= alpha + 2 s.e. in every cell (largest {max(r['false_pass'] for r in rows):.4f})", not fp))
    return out


def markdown(result: dict[str, Any]) -> str:
    rows, alpha = result["rows"], result["alpha"]
    lines = [
        "# Decisiveness: does an unchanged agent DEPLOY and a regressed one BLOCK?",
        "",
        f"Measured by `python benchmarks/decisiveness.py` on {result['platform']} (Python {result['python']}), "
        f"{result['date']}, {rows[0]['reps']:,} simulated suites a cell (and as many with one scenario dropped by "
        f"delta), seed {result['seed']}, {result['seconds']:.0f} s.",
        "",
        f"Shipped defaults: a check runs at most **{result['cap']} candidate trials** per scenario against a "
        f"baseline of **{result['baseline']} trials** (what `run --full` and the Action's record mode record), "
        f"alpha = {alpha}, delta = {result['delta']}, method `sprt` looking after every {result['looks']} trials "
        "(Wang-Tsiatis shape 0.25). Each scenario FAILs at alpha x (1 - 0.5) / m (the fingerprint test holds the "
        "other half) and PASSes at alpha (intersection-union: no correction). Every suite is decided by the real "
        "gate (`monitor_for`, the monitors, `decide`), the fingerprint test included with uniform p-values.",
        "",
        "## Unchanged agent (baseline and candidate at the same true pass rate p)",
        "",
        "| method | m | p | P(DEPLOY) | exact | exact, rate tests only | oracle | before (exact) | P(BLOCK) | mean / p95 trials | exact mean / p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ex, before = r["exact"], r.get("before")
        with_fp = ex["deploy"] * fingerprint_quiet(r["m"], alpha)
        exact_trials = f"{ex['mean_trials']:.1f} / {ex['p95_trials']}" if "mean_trials" in ex else "200 / 200"
        lines.append(
            f"| {r['method']} | {r['m']} | {r['p']} | {r['deploy']:.3f} ± {r['deploy_se']:.3f} | {with_fp:.3f} | "
            f"{ex['deploy']:.3f} | {r['oracle_deploy']:.3f} | {before['deploy']:.3f} ({before['mean_trials']:.0f} trials) | "
            f"{r['block']:.4f} ± {r['block_se']:.4f} | {r['mean_trials']:.1f} / {r['p95_trials']:.0f} | {exact_trials} |"
            if before else
            f"| {r['method']} | {r['m']} | {r['p']} | {r['deploy']:.3f} ± {r['deploy_se']:.3f} | {with_fp:.3f} | "
            f"{ex['deploy']:.3f} | {r['oracle_deploy']:.3f} | – | {r['block']:.4f} ± {r['block_se']:.4f} | "
            f"{r['mean_trials']:.1f} / {r['p95_trials']:.0f} | {exact_trials} |"
        )
    lines += [
        "",
        "*Exact, rate tests only*: the design's (or the fixed-n verdict table's) own P(PASS)^m, summed exactly over "
        "the baseline's binomial distribution. *Exact*: that times the probability that the fingerprint tests "
        "(uniform p-values, Holm at alpha / 2) flag nothing, (1 - alpha / (2m))^m; the simulated P(DEPLOY) "
        "estimates the same figure. *Oracle*: the baseline rate known, an exact binomial test at alpha on "
        f"{result['cap']} candidate trials. *Before*: the defaults before issue 21 (cap 100, a 100-trial baseline, "
        "PASS at the FAIL level, a look after every trial), exact, rate tests only.",
        "",
        "## Regressed scenario (its true pass rate dropped by exactly delta; the others unchanged)",
        "",
        "| method | m | p | P(it PASSes) (false PASS) | exact | mean / p95 trials |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r['m']} | {r['p']} → {r['p'] - result['delta']:.2f} | {r['false_pass']:.4f} ± "
            f"{r['false_pass_se']:.4f} | {r['exact']['false_pass']:.4f} | {r['mean_trials_drop']:.1f} / "
            f"{r['p95_trials_drop']:.0f} |"
        )
    lines += ["", "## Acceptance (issue 21)", ""]
    lines += [f"- {'met' if ok else '**missed**'}: {what}" for what, ok in result["checks"]]
    lines += [
        "",
        "## How the defaults were chosen",
        "",
        "Exact P(DEPLOY) of the rate tests alone (the design's P(PASS)^m, no fingerprint test) and the mean "
        "candidate trials per scenario, for the designs considered, at the levels a default check gives "
        "(FAIL alpha / 2 / m, PASS alpha). The shipped one is in bold. A bigger baseline is the cheapest lever "
        "(it is paid once per merge, not per PR); looking every 10 trials instead of every trial lowers both "
        "boundaries; every 20 trials costs trials at p = 0.97; O'Brien-Fleming's shape 0.5 stops later.",
        "",
        "| baseline / cap | look every | shape | m = 4, p = 0.9 | m = 4, p = 0.97 | m = 10, p = 0.9 | m = 10, p = 0.97 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for a in result["alternatives"]:
        shipped = (a["baseline"], a["cap"], a["looks"], a["shape"]) == (result["baseline"], result["cap"], result["looks"], 0.25)
        cells = " | ".join(
            f"{a[k]['deploy']:.3f} ({a[k]['mean_trials']:.0f})" for k in ("m4 p0.9", "m4 p0.97", "m10 p0.9", "m10 p0.97")
        )
        name = f"{a['baseline']} / {a['cap']}"
        lines.append(f"| {'**' + name + '**' if shipped else name} | {a['looks']} | {a['shape']} | {cells} |")
    lines += [
        "",
        "In brackets: mean candidate trials per scenario.",
        "",
        "± is one standard error of the simulated rate.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = parser(__doc__)
    ap.add_argument("--reps", type=int, default=None, help="suites a cell (default 2,000; --quick 300)")
    args = ap.parse_args(argv)
    if args.render:
        result = load_result(args, "decisiveness")
        write_report(args, "decisiveness", result, markdown)
        return result
    reps = args.reps or (300 if args.quick else 2000)
    timer = Timer()
    rows = run(reps)
    alts = alternatives()
    s = Settings()
    result = run_info(
        args.quick, date=today(), seed=SEED, alpha=s.alpha, delta=s.margin, cap=s.trial_cap, baseline=s.record_cap,
        looks=10, rows=rows, alternatives=alts, seconds=timer.seconds,
    )
    result["checks"] = checks(rows, s.alpha)
    write_report(args, "decisiveness", result, markdown, seconds=result["seconds"])
    return result


if __name__ == "__main__":
    main()
