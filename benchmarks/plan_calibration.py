"""How well `agentassay plan` predicts the candidate trials a check's test uses (issue 25).

For each cell (true pass rate p, the candidate's rate p_c) and each seed: a baseline of ``record_cap``
trials is drawn at rate p, `plan`'s estimate is computed from it (the gate's own test, exact, averaged over
the Jeffreys posterior of the baseline's rate), and a candidate is run through the same test (the gate's
monitor fed seeded Bernoulli(p_c) outcomes). Reported per cell: how often the trials used were at most plan's
95th percentile (the calibration; >= 0.95 is the goal for an unchanged candidate, p_c = p) and the mean used
against the mean expected. Regressed candidates (p_c < p) are shown too: plan assumes an unchanged agent.

    python benchmarks/plan_calibration.py            # -> benchmarks/results/plan-calibration.json
    python benchmarks/plan_calibration.py --quick    # a smoke run
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.plan._estimate import scenario_plan  # noqa: E402
from agentassay._gate import BaselineCounts, monitor_for, replay  # noqa: E402
from agentassay._spec import Scenario, Settings  # noqa: E402
from benchmarks._harness import Timer, parser, run_info, write_report  # noqa: E402

SEED = 20261127
RATES = (0.75, 0.85, 0.95, 1.0)
DROPS = (0.0, 0.05, 0.15)


def cell(settings: Settings, p: float, drop: float, seeds: int, rng: np.random.Generator) -> dict[str, float]:
    sc = Scenario("s", "x")
    nb, cap = settings.record_cap, settings.trial_cap
    covered, used, expected = 0, [], []
    for _ in range(seeds):
        base = BaselineCounts(int(rng.binomial(nb, p)), nb)
        est = scenario_plan(sc, settings, scenarios=1, baseline=base)
        monitor = monitor_for(sc, settings, scenarios=1, baseline=base, regression=True)
        n = replay(monitor, list(rng.random(cap) < max(p - drop, 0.0))).trials_used
        covered += n <= est.p95
        used.append(n)
        expected.append(est.expected)
    return {
        "p": p,
        "p_candidate": round(max(p - drop, 0.0), 4),
        "seeds": seeds,
        "within_p95": round(covered / seeds, 4),
        "mean_used": round(float(np.mean(used)), 2),
        "mean_expected": round(float(np.mean(expected)), 2),
    }


def main(argv: list[str] | None = None) -> None:
    args = parser(__doc__, render=False).parse_args(argv)
    timer = Timer()
    settings = Settings(trials=50 if args.quick else 200, concurrency=1)  # designs shipped in designs.json
    seeds = 20 if args.quick else 300
    rng = np.random.default_rng(SEED)
    cells = [cell(settings, p, d, seeds, rng) for d in DROPS for p in RATES if p - d > 0]
    unchanged = [c for c in cells if c["p_candidate"] == c["p"]]
    result = {
        **run_info(args.quick, seed=SEED),
        "cap": settings.trial_cap,
        "baseline_trials": settings.record_cap,
        "cells": cells,
        "unchanged_within_p95_min": min(c["within_p95"] for c in unchanged),
        "seconds": round(timer.seconds, 1),
    }
    write_report(args, "plan-calibration", result, seconds=timer.seconds)


if __name__ == "__main__":
    main()
