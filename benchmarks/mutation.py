"""Mutation testing's kill procedure on simulated agents with known effects (issue 15).

    python benchmarks/mutation.py           # full run -> benchmarks/results/mutation.json and the figures in docs/mutation.md
    python benchmarks/mutation.py --quick   # small run, for smoke checks

No LLM and no Agents SDK: every agent is a Bernoulli agent with a known pass rate. A repetition
builds the original's results file as ``agentassay mutate`` records it (``run --full``: every
scenario's 100 trials at rate p0) and a mutant's candidate file (Bernoulli outcomes at p1 in trial
order, up to the cap), and decides the mutant with the code the product uses: ``compare_results``
(which replays, trial by trial, the very test the mutant's ``check`` runs and stops where it stops)
and then ``agentassay._features.mutation.classify``. A live check runs no trial after its test has stopped, so
each scenario's trials are cut at the verdict's ``trials_used`` before classifying (that is also the
trial count reported). Trials carry no fingerprints, so the fingerprint test is not involved and
each scenario's pass-rate test holds all of its alpha. Suite settings are the customer-service
example's: alpha 0.05, beta 0.1, delta 0.1, 100 trials, method ``sprt`` (sequential regression, the
default) or ``fixed`` (the fixed-n regression test, no early stopping).

Cells: (1) identity mutants (p1 = p0), (2) a 0.15 drop, with the exact FAIL probability of the
design beside the kill rate, (3) mean trials per mutant, sequential vs fixed, for identity, 0.05 and
0.15 drops, (4) the reference implementation's one-run-per-mutant rule on the same simulated trials
(reported, never used), (5) coverage of the mutation score's exact interval for a population of 20
mutants drawn from a known mixture of effects, against the true score computed exactly. One cell
has 4 scenarios, one of which drops, for multiplicity across scenarios. The generated section of
docs/mutation.md is rewritten from this run.

Speed: ``SequentialDesign.statistics`` asks ``_exact.ni_statistic(nb, k, delta)`` for every look
k = 1..100, and that function's memo holds 64 entries, so a 100-trial design recomputes the
statistic (~4 ms) at every trial: this script widens that memo and ``pooled_z``'s (pure functions of
their arguments, read-only results: the same values), which takes a sequential mutant from ~0.25 s
to ~3 ms. The fixed-n verdict also computes two figures that are evidence only (the exact
non-inferiority p-value and the drop's upper confidence bound, ~0.5 s for each new outcome), which
no verdict, p-value, Holm step or status reads; the script skips them (NaN) after
``evidence_check`` has decided a sample of fixed-n mutants both ways and found the statuses and
verdicts identical. Nothing else of the product is touched.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import xlogy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._features.mutation import ALPHA_EQUIV, classify, score  # noqa: E402
from agentassay._gate import ScenarioVerdict, SuiteDecision, sequential_design  # noqa: E402
from agentassay._results import Results, ScenarioResult, TrialOutcome, compare_results  # noqa: E402
from agentassay._spec import Settings  # noqa: E402
from agentassay._stats import Decision, Verdict, _exact, proportion_ci  # noqa: E402
from agentassay._stats._regression import regression_codes  # noqa: E402
from agentassay._stats._verdict import CODE_FAIL, CODE_INCONCLUSIVE, CODE_PASS  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402

SEED = 20261125
ALPHA, BETA, DELTA, TRIALS = 0.05, 0.10, 0.10, 100  # examples/customer_service/agentassay.yml
SCENARIOS = 4  # the multi-scenario cell: one of them drops
DROP, SMALL = 0.15, 0.05
RATES = (0.8, 0.95)
Q, P_MIX = 20, 0.9  # the coverage cell: 20 mutants per repetition, original pass rate 0.9
MIXTURE = ((0.0, 0.30), (0.05, 0.25), (0.15, 0.25), (0.30, 0.20))  # (drop, share of the mutants)
POPULATIONS = (1, SCENARIOS)  # the coverage cell's suites: one scenario, and four (the mutant drops in one)
STATUSES = ("killed", "survived", "inconclusive", "not_activated")
BEGIN, END = (
    "<!-- BEGIN GENERATED: benchmarks/mutation.py -->",
    "<!-- END GENERATED: benchmarks/mutation.py -->",
)


def _nan(*args: Any) -> float:
    return math.nan


def _fast_exact(*, evidence: bool = False) -> None:
    """Speed (module docstring): widen the memos of two pure functions of ``agentassay._stats._exact`` (the same
    values); with ``evidence=True`` also skip the fixed-n verdict's two evidence-only figures, which no verdict,
    p-value or status reads (:func:`evidence_check` shows the statuses are identical)."""
    if not getattr(_exact, "_benchmark_memo", False):
        for name in ("ni_statistic", "pooled_z"):
            f = getattr(_exact, name)
            setattr(_exact, name, functools.lru_cache(maxsize=4096)(f.__wrapped__))
        _exact._benchmark_memo = True  # type: ignore[attr-defined]
    if evidence and not getattr(_exact, "_benchmark_evidence", False):
        _exact._benchmark_evidence = (_exact.ni_pvalue, _exact.drop_upper_bound)  # type: ignore[attr-defined]
        _exact.ni_pvalue = _exact.drop_upper_bound = _nan  # type: ignore[assignment]


def settings(method: str) -> Settings:
    return Settings(trials=TRIALS, threshold=0.8, alpha=ALPHA, beta=BETA, delta=DELTA, method=method, seed=7)


# compare_results re-derives every verdict from the outcomes; the files' own verdicts are never read.
_UNREAD = ScenarioVerdict(Verdict.INCONCLUSIVE, "none", "not read: compare_results re-derives it", {}, 0)


def results_file(kind: str, st: Settings, outcomes: np.ndarray) -> Results:
    """A results file of ``outcomes`` (scenarios x trials, in trial order), as ``run`` / ``check`` write it."""
    scenarios = tuple(
        ScenarioResult(
            f"s{i}", f"scenario {i}", tuple(TrialOutcome(j, bool(o), j) for j, o in enumerate(row)), _UNREAD
        )
        for i, row in enumerate(outcomes.tolist())
    )
    decision = SuiteDecision(Verdict.INCONCLUSIVE, Decision.MANUAL, {}, st.correction)
    return Results(
        kind, {"name": "simulated"}, {"entry": "simulated:agent"}, st, scenarios, decision, kind, "t0", "t1"
    )


def check_mutant(
    original: Results, outcomes: np.ndarray, st: Settings, plugins: Any
) -> tuple[str, int, tuple[Any, ...]]:
    """The mutant's status, the trials its check used and its verdicts: ``compare_results`` then ``classify``."""
    compared = compare_results(original, results_file("check", st, outcomes), plugins=plugins)
    ran = replace(
        compared,
        scenarios=tuple(replace(s, trials=s.trials[: s.verdict.trials_used]) for s in compared.scenarios),
    )
    verdicts = tuple(
        (s.verdict.verdict.value, s.verdict.pvalue, s.verdict.trials_used) for s in compared.scenarios
    )
    return classify(ran).status, sum(s.verdict.trials_used for s in compared.scenarios), verdicts


def evidence_check(n: int) -> dict[str, Any]:
    """``n`` fixed-n mutants (one and four scenarios, identity and drops) decided with the fixed-n verdict's
    evidence figures computed, as shipped, and skipped, as this benchmark does: statuses and verdicts agree."""
    from agentassay._plugins import default_plugins

    _fast_exact()
    assert not getattr(_exact, "_benchmark_evidence", False), (
        "run the check before the evidence figures are skipped"
    )
    rng = np.random.default_rng(SEED - 1)
    st, plugins = settings("fixed"), default_plugins()
    cases = []
    for i in range(n):
        m, p0, drop = (1, SCENARIOS)[i % 2], RATES[i // 2 % 2], (0.0, SMALL, DROP)[i % 3]
        rates = np.full((m, 1), p0)
        rates[0] -= drop
        cases.append((results_file("run", st, rng.random((m, TRIALS)) < p0), rng.random((m, TRIALS)) < rates))
    shipped = [check_mutant(o, c, st, plugins) for o, c in cases]
    _fast_exact(evidence=True)
    skipped = [check_mutant(o, c, st, plugins) for o, c in cases]
    return {
        "mutants": n,
        "scenarios": sum(len(v) for _, _, v in shipped),
        "identical": shipped == skipped,
        "statuses": sorted({s for s, _, _ in shipped}),
    }


def _se(k: float, n: int) -> float:
    p = k / n
    return math.sqrt(max(p * (1 - p), 1e-12) / n)


# -- cells 1-4: kill rates, trials, the reference rule ----------------------------------------------


@functools.cache
def _tables(alpha: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The sequential design's PASS and FAIL regions at every look k (index k), as its ``decide`` draws them."""
    design = sequential_design(TRIALS, TRIALS, alpha, DELTA)
    passes, fails = [np.zeros((1, 1), bool)], [np.zeros((1, 1), bool)]
    for k in range(1, TRIALS + 1):
        bf, bp = design.boundary(k)
        passed = _exact.ni_statistic(TRIALS, k, design.delta) >= bp
        passes.append(passed)
        fails.append(~passed & (_exact.pooled_z(TRIALS, k) >= bf))
    return passes, fails


def table_kill(method: str, orig: np.ndarray, mut: np.ndarray) -> bool | None:
    """Would the test's own decision table FAIL some scenario on these trials? (None: Holm, no single table.)

    Sequential: each scenario's walk through the PASS / FAIL regions of the design at alpha / m, PASS first.
    Fixed, one scenario: the FAIL region of ``regression_codes``. The benchmark counts the mutants on which
    this differs from what ``compare_results`` + ``classify`` decided: the kill probability is then the
    design's exactly, and a simulated rate can differ from it only by sampling noise.
    """
    m = len(orig)
    if method == "fixed":
        if m > 1:
            return None
        codes = regression_codes(
            TRIALS, TRIALS, alpha=ALPHA, beta=BETA, delta=DELTA, test="fisher", rule="non-inferiority"
        )
        return bool(codes[int(orig[0].sum()), int(mut[0].sum())] == CODE_FAIL)
    passes, fails = _tables(ALPHA / m)
    for kb, walk in zip(orig.sum(axis=1), np.cumsum(mut, axis=1), strict=True):
        for k in range(1, TRIALS + 1):
            if passes[k][kb, walk[k - 1]]:
                break
            if fails[k][kb, walk[k - 1]]:
                return True
    return False


def kill_cell(task: tuple[str, int, float, float, int, int]) -> dict[str, Any]:
    """One mutant per repetition: ``m`` scenarios at ``p0``, scenario 0 of the mutant at ``p0 - drop``."""
    from agentassay._plugins import default_plugins

    _fast_exact(evidence=True)
    method, m, p0, drop, reps, seed = task
    cpu = time.process_time()
    rng = np.random.default_rng(seed)
    st, plugins = settings(method), default_plugins()
    rates = np.full(m, p0)
    rates[0] = p0 - drop
    counts = dict.fromkeys(STATUSES, 0)
    trials = np.zeros(reps)
    reference = 0
    mismatches: int | None = 0
    for r in range(reps):
        orig = rng.random((m, TRIALS)) < p0
        mut = rng.random((m, TRIALS)) < rates[:, None]
        status, trials[r], _ = check_mutant(results_file("run", st, orig), mut, st, plugins)
        counts[status] += 1
        reference += bool((orig[:, 0] != mut[:, 0]).any())  # one trial each, any scenario differs
        table = table_kill(method, orig, mut)
        mismatches = None if table is None else int(mismatches or 0) + (table != (status == "killed"))
    killed = counts["killed"]
    return {
        "method": method,
        "scenarios": m,
        "p0": p0,
        "p1": round(p0 - drop, 10),
        "drop": drop,
        "reps": reps,
        "killed": killed / reps,
        "killed_se": _se(killed, reps),
        "statuses": {s: counts[s] / reps for s in STATUSES},
        "mean_trials": float(trials.mean()),
        "mean_trials_se": float(trials.std(ddof=1) / math.sqrt(reps)),
        "reference_rule": {"killed": reference / reps, "killed_se": _se(reference, reps)},
        "table_mismatches": mismatches,
        "cpu_seconds": time.process_time() - cpu,
    }


# -- cell 5: the score's interval -------------------------------------------------------------------


def coverage_chunk(task: tuple[int, int, int]) -> dict[str, Any]:
    """Per repetition: the original's pass counts (one per scenario), killed, activated, the interval (NaN: none).

    Each mutant's drop is drawn from ``MIXTURE`` and applies to scenario 0; the other scenarios are unchanged.
    """
    from agentassay._plugins import default_plugins

    _fast_exact(evidence=True)
    m, reps, seed = task
    cpu = time.process_time()
    rng = np.random.default_rng(seed)
    st, plugins = settings("sprt"), default_plugins()
    drops = np.array([d for d, _ in MIXTURE])
    weights = np.array([w for _, w in MIXTURE])
    rows = []
    for _ in range(reps):
        orig = rng.random((m, TRIALS)) < P_MIX
        original = results_file("run", st, orig)  # recorded once, every mutant checked against it
        statuses = []
        for e in rng.choice(len(MIXTURE), size=Q, p=weights):
            rates = np.full((m, 1), P_MIX)
            rates[0] -= drops[e]
            statuses.append(check_mutant(original, rng.random((m, TRIALS)) < rates, st, plugins)[0])
        s = score(statuses)
        lo, hi = s["interval"] or (math.nan, math.nan)
        rows.append([*orig.sum(axis=1).tolist(), s["killed"], s["activated"], lo, hi])
    return {"rows": rows, "cpu_seconds": time.process_time() - cpu}


# -- exact figures ----------------------------------------------------------------------------------


@functools.cache
def _activated(kb: int, nb: int, kc: int, nc: int) -> bool:
    """``classify``'s activation test of one scenario (two-sided exact test at alpha_equiv)."""
    from agentassay._features.mutation._run import _two_sided

    return _two_sided((kb, nb), (kc, nc)) <= ALPHA_EQUIV


def _pmf(n: int, p: float) -> np.ndarray:
    return _exact.pmf_grid(n, np.array([p]))[0]


def exact_sequential(alpha: float, p0: float, p1: float, tiny: float = 1e-13) -> dict[str, Any]:
    """Exact per-scenario outcome of the sequential check, by dynamic programming over (baseline, walk).

    Conditional on the original's pass count kb (rows): P(FAIL), P(PASS and activated), P(PASS, not
    activated), the same for INCONCLUSIVE, and the expected trials. Stopping rule: the design
    ``RegressionSequential`` builds (``sequential_design``), its statistics and boundaries, PASS
    checked first, as ``SequentialDesign.decide``. Activation is ``classify``'s test on the trials run.
    States of conditional probability below ``tiny`` skip the activation test (counted not activated;
    their total mass is reported as ``unresolved``). Cross-checked against ``operating_characteristic``.
    """
    design = sequential_design(TRIALS, TRIALS, alpha, DELTA)
    nb, n = design.base_trials, design.max_trials
    weight = _pmf(nb, p0)
    rows = np.flatnonzero(weight > 1e-14)
    state = np.zeros((nb + 1, n + 1))
    state[rows, 0] = 1.0
    out = {k: np.zeros(nb + 1) for k in ("fail", "pass_act", "pass_quiet", "inc_act", "inc_quiet", "trials")}
    unresolved = np.zeros(nb + 1)
    for k in range(1, n + 1):
        s = state[:, : k + 1]
        moved = s * (1 - p1)
        moved[:, 1:] += s[:, :-1] * p1
        state[:, : k + 1] = moved
        s = state[:, : k + 1]
        bf, bp = design.boundary(k)
        passed = _exact.ni_statistic(nb, k, design.delta) >= bp
        failed = ~passed & (_exact.pooled_z(nb, k) >= bf)
        stop = {"pass": passed, "fail": failed}
        if k == n:
            stop["inc"] = ~(passed | failed)
        for verdict, mask in stop.items():
            mass = s * mask
            out["trials"] += k * mass.sum(axis=1)
            if verdict == "fail":
                out["fail"] += mass.sum(axis=1)
            else:
                act = np.zeros_like(mass, dtype=bool)
                for kb, kc in zip(*np.nonzero(mass > tiny), strict=True):
                    act[kb, kc] = _activated(int(kb), nb, int(kc), k)
                unresolved += (mass * ((mass > 0) & (mass <= tiny))).sum(axis=1)
                out[f"{verdict}_act"] += (mass * act).sum(axis=1)
                out[f"{verdict}_quiet"] += (mass * ~act).sum(axis=1)
            s[mask] = 0.0
    oc = design.operating_characteristic(p0, p1)
    total = {k: float(weight @ v) for k, v in out.items()}
    check = max(
        abs(total["fail"] - oc.fail_probability),
        abs(total["pass_act"] + total["pass_quiet"] - oc.pass_probability),
        abs(total["trials"] - oc.expected_trials) / TRIALS,
    )
    return {
        "conditional": out,
        "weight": weight,
        "total": total,
        "unresolved": float(weight @ unresolved),
        "oc": oc,
        "oc_max_difference": check,
    }


def exact_fixed(p0: float, p1: float) -> dict[str, float]:
    """Exact statuses of a one-scenario fixed-n check: the verdict table ``RegressionFixed`` uses, summed
    over the two binomials, with ``classify``'s activation test on every outcome."""
    codes = regression_codes(
        TRIALS, TRIALS, alpha=ALPHA, beta=BETA, delta=DELTA, test="fisher", rule="non-inferiority"
    )
    joint = np.outer(_pmf(TRIALS, p0), _pmf(TRIALS, p1))
    act = np.zeros_like(joint, dtype=bool)
    for kb, kc in zip(*np.nonzero(joint > 1e-15), strict=True):
        act[kb, kc] = _activated(int(kb), TRIALS, int(kc), TRIALS)
    return {
        "killed": float(joint[codes == CODE_FAIL].sum()),
        "survived": float(joint[(codes == CODE_PASS) & act].sum()),
        "inconclusive": float(joint[(codes == CODE_INCONCLUSIVE) & act].sum()),
        "not_activated": float(joint[(codes != CODE_FAIL) & ~act].sum()),
        "expected_trials": float(TRIALS),
    }


def suite_statuses(per: list[dict[str, float]]) -> dict[str, float]:
    """Statuses of a check of independent scenarios (each a ``total`` of :func:`exact_sequential`)."""
    prod = functools.partial(functools.reduce, lambda a, b: a * b)
    killed = 1 - prod([1 - s["fail"] for s in per])
    survived = prod([s["pass_act"] + s["pass_quiet"] for s in per]) - prod([s["pass_quiet"] for s in per])
    quiet = prod([s["pass_quiet"] + s["inc_quiet"] for s in per])
    return {
        "killed": killed,
        "survived": survived,
        "inconclusive": 1 - killed - survived - quiet,
        "not_activated": quiet,
        "expected_trials": sum(s["trials"] for s in per),
    }


def exact_cell(method: str, m: int, p0: float, drop: float) -> dict[str, Any] | None:
    if method == "fixed":
        if m > 1:
            return (
                None  # Holm across the scenarios' p-values: no exact figure here, the simulation stands alone
            )
        return {**exact_fixed(p0, p0 - drop), "source": "regression_codes summed over both binomials (exact)"}
    alpha = ALPHA / m  # Bonferroni: scenario_alpha of a sequential test
    moved = exact_sequential(alpha, p0, p0 - drop)
    same = exact_sequential(alpha, p0, p0) if m > 1 else moved
    statuses = suite_statuses([moved["total"], *[same["total"]] * (m - 1)])
    oc_fail = 1 - (1 - moved["oc"].fail_probability) * (1 - same["oc"].fail_probability) ** (m - 1)
    return {
        **statuses,
        "design_fail": oc_fail,
        "design_trials": moved["oc"].expected_trials + (m - 1) * same["oc"].expected_trials,
        "oc_max_difference": max(moved["oc_max_difference"], same["oc_max_difference"]),
        "unresolved": moved["unresolved"] + (m - 1) * same["unresolved"],
        "source": f"SequentialDesign.operating_characteristic (alpha {alpha:g} per scenario) and an exact "
        "dynamic programme for the activation test",
    }


def reference_exact(m: int, p0: float, drop: float) -> float:
    """P(one trial of the mutant differs from one of the original on some scenario)."""
    p1 = p0 - drop
    differ = p0 * (1 - p1) + (1 - p0) * p1
    same = 2 * p0 * (1 - p0)
    return 1 - (1 - differ) * (1 - same) ** (m - 1)


class Population:
    """A population of mutants of an ``m``-scenario suite (scenario 0 drops by a draw from ``MIXTURE``), exactly.

    Given the original's recorded counts (one per scenario) the q mutants of a run are i.i.d., each killed,
    activated but not killed, or not activated; so the killed and activated counts are multinomial and the
    coverage of the exact interval given the recording is a finite sum (:meth:`given`).
    """

    def __init__(self, m: int) -> None:
        alpha = ALPHA / m
        self.m = m
        self.parts = [(d, w, exact_sequential(alpha, P_MIX, P_MIX - d)) for d, w in MIXTURE]
        same = next(e for d, _, e in self.parts if d == 0)
        self.same = same
        self.weight = same["weight"]
        totals = [(d, w, suite_statuses([e["total"], *[same["total"]] * (m - 1)])) for d, w, e in self.parts]
        self.per_effect = {
            f"{d:g}": {
                "share": w,
                "killed": s["killed"],
                "activated": 1 - s["not_activated"],
                "expected_trials": s["expected_trials"],
            }
            for d, w, s in totals
        }
        self.killed = sum(w * s["killed"] for _, w, s in totals)
        self.activated = sum(w * (1 - s["not_activated"]) for _, w, s in totals)
        self.true_score = self.killed / self.activated

    def given(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """P(killed) and P(activated) of one mutant given the recorded counts (rows of ``counts``, one per scenario)."""
        counts = np.atleast_2d(counts)
        c = self.same["conditional"]
        others_alive = np.prod((1 - c["fail"])[counts[:, 1:]], axis=1)  # unchanged scenarios: no FAIL
        others_quiet = np.prod((c["pass_quiet"] + c["inc_quiet"])[counts[:, 1:]], axis=1)  # nor activated
        kill = act = 0.0
        for _, w, e in self.parts:
            x = e["conditional"]
            kill = kill + w * (1 - (1 - x["fail"])[counts[:, 0]] * others_alive)
            act = act + w * (1 - (x["pass_quiet"] + x["inc_quiet"])[counts[:, 0]] * others_quiet)
        return np.minimum(kill, act), act  # equal up to rounding when every activated mutant is killed

    def coverage(self, counts: np.ndarray, weights: np.ndarray) -> dict[str, float]:
        """Exact coverage (of the true score, and of the score given the recording) and mean width, averaged
        over recordings ``counts`` with ``weights``."""
        kill, act = self.given(counts)
        k, a = np.meshgrid(np.arange(Q + 1), np.arange(Q + 1), indexing="ij")
        valid = (k <= a) & (a >= 1)
        lo, hi = proportion_ci(np.where(valid, k, 0), np.where(valid, a, 1), method="clopper-pearson")
        log_coef = (
            math.lgamma(Q + 1) - _lgamma(k + 1) - _lgamma(np.maximum(a - k, 0) + 1) - _lgamma(Q - a + 1)
        )
        pk, pa = kill[:, None, None], act[:, None, None]
        logp = log_coef + xlogy(k, pk) + xlogy(np.maximum(a - k, 0), pa - pk) + xlogy(Q - a, 1 - pa)
        prob = np.where(valid, np.exp(logp), 0.0)
        own = (kill / act)[:, None, None]
        true = self.true_score
        return {
            "coverage": float(weights @ (prob * ((lo <= true) & (true <= hi))).sum(axis=(1, 2))),
            "conditional_coverage": float(weights @ (prob * ((lo <= own) & (own <= hi))).sum(axis=(1, 2))),
            "mean_width": float(weights @ (prob * (hi - lo)).sum(axis=(1, 2))),
            "no_interval": float(weights @ (1 - act) ** Q),
        }

    def exact(self, rng: np.random.Generator, recordings: int) -> dict[str, Any]:
        """The coverage, exactly for one scenario (every recording); for more, averaged over ``recordings``
        simulated recordings (exact given each)."""
        if self.m == 1:
            counts = np.flatnonzero(self.weight > 1e-14)[:, None]
            out = self.coverage(counts, self.weight[counts[:, 0]])
            out["source"] = "exact (every recording of the original)"
        else:
            counts = rng.binomial(TRIALS, P_MIX, (recordings, self.m))
            out = self.coverage(counts, np.full(recordings, 1 / recordings))
            out["source"] = f"exact given the recording, averaged over {recordings:,} simulated recordings"
        kill, act = self.given(counts)
        w = self.weight[counts[:, 0]] if self.m == 1 else np.full(len(counts), 1 / len(counts))
        own = kill / act
        order = np.argsort(own)
        cdf = np.cumsum(w[order]) / w.sum()
        out["score_given_recording"] = [float(own[order][np.searchsorted(cdf, q)]) for q in (0.05, 0.5, 0.95)]
        return out


def _lgamma(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.lgamma)(x.astype(float))


# -- the run ----------------------------------------------------------------------------------------


def grid(quick: bool) -> list[tuple[str, int, float, float, int]]:
    """(method, scenarios, p0, drop, reps); the long-running cells first."""
    one = 400 if quick else 10_000
    many = 300 if quick else 5_000
    cells = [("fixed", SCENARIOS, p0, d, many) for p0 in RATES for d in (0.0, DROP)]
    cells += [("sprt", SCENARIOS, p0, d, many) for p0 in RATES for d in (0.0, DROP)]
    cells += [
        (method, 1, p0, d, one) for method in ("fixed", "sprt") for p0 in RATES for d in (0.0, SMALL, DROP)
    ]
    return cells


def run(quick: bool, workers: int) -> dict[str, Any]:
    checked = evidence_check(8 if quick else 24)
    print(f"fixed-n evidence figures skipped: {checked}", flush=True)
    _fast_exact(evidence=True)  # inherited by forked workers; spawned ones call it themselves
    for alpha in (ALPHA, ALPHA / SCENARIOS):  # calibrate (or read) the designs once, before the workers start
        sequential_design(TRIALS, TRIALS, alpha, DELTA)
    cells = grid(quick)
    cov_reps, chunks = (200, 2) if quick else (4_000, 8)
    cell_seeds, *pop_seeds = np.random.SeedSequence(SEED).spawn(1 + len(POPULATIONS))
    tasks = [
        (*c, int(s.generate_state(1)[0])) for c, s in zip(cells, cell_seeds.spawn(len(cells)), strict=True)
    ]
    cov_tasks = [
        (m, cov_reps // chunks, int(s.generate_state(1)[0]))
        for m, seeds in zip(POPULATIONS, pop_seeds, strict=True)
        for s in seeds.spawn(chunks)
    ]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        cov_futures = [pool.submit(coverage_chunk, t) for t in cov_tasks]
        rows = []
        for row in pool.map(kill_cell, tasks):
            rows.append(row)
            print(
                f"{row['method']:>5} m={row['scenarios']} p0={row['p0']} p1={row['p1']}: killed {row['killed']:.4f} "
                f"± {row['killed_se']:.4f}, {row['mean_trials']:.1f} trials, reference rule "
                f"{row['reference_rule']['killed']:.3f} ({row['cpu_seconds']:.0f} s CPU)",
                flush=True,
            )
        chunks_done = [f.result() for f in cov_futures]
    cov_rows = {
        m: [r for t, c in zip(cov_tasks, chunks_done, strict=True) if t[0] == m for r in c["rows"]]
        for m in POPULATIONS
    }
    cov_cpu = {
        m: sum(c["cpu_seconds"] for t, c in zip(cov_tasks, chunks_done, strict=True) if t[0] == m)
        for m in POPULATIONS
    }
    for row in rows:
        row["exact"] = exact_cell(row["method"], row["scenarios"], row["p0"], row["drop"])
        if row["exact"] is not None:
            row["z"] = (row["killed"] - row["exact"]["killed"]) / row["killed_se"]
        row["reference_rule"]["exact"] = reference_exact(row["scenarios"], row["p0"], row["drop"])
    rows.sort(key=lambda r: (r["scenarios"], r["method"] != "sprt", r["p0"], r["drop"]))
    coverage = [coverage_result(m, cov_rows[m], quick) | {"cpu_seconds": cov_cpu[m]} for m in POPULATIONS]
    cpu = sum(r["cpu_seconds"] for r in rows) + sum(cov_cpu.values())
    return {"evidence_check": checked, "rows": rows, "coverage": coverage, "cpu_seconds": cpu}


def coverage_result(m: int, rows: list[list[float]], quick: bool) -> dict[str, Any]:
    pop = Population(m)
    data = np.array(rows, dtype=float)
    counts = data[:, :m].astype(int)
    killed, activated, lo, hi = data[:, m:].T
    reps = len(data)
    has = ~np.isnan(lo)
    covered = has & (lo <= pop.true_score) & (pop.true_score <= hi)
    kill, act = pop.given(counts)
    own = kill / act
    covered_own = has & (lo <= own) & (own <= hi)
    exact = pop.exact(np.random.default_rng(SEED + m), 2_000 if quick else 20_000)
    return {
        "scenarios": m,
        "q": Q,
        "p0": P_MIX,
        "mixture": [{"drop": d, "share": w} for d, w in MIXTURE],
        "method": "sprt",
        "reps": reps,
        "true_score": pop.true_score,
        "killed": pop.killed,
        "activated": pop.activated,
        "per_effect": pop.per_effect,
        "coverage": float(covered.mean()),
        "coverage_se": _se(int(covered.sum()), reps),
        "conditional_coverage": float(covered_own.mean()),
        "conditional_coverage_se": _se(int(covered_own.sum()), reps),
        "mean_width": float(np.mean(hi[has] - lo[has])),
        "no_interval": int((~has).sum()),
        "mean_activated": float(activated.mean()),
        "mean_killed": float(killed.mean()),
        "mean_score": float(np.mean(killed[has] / activated[has])),
        "exact": exact,
    }


# -- the report -------------------------------------------------------------------------------------


def _pm(x: float, se: float, digits: int = 4) -> str:
    return f"{x:.{digits}f} ± {se:.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    rows, covs = result["rows"], result["coverage"]
    single = [r for r in rows if r["scenarios"] == 1]
    multi = [r for r in rows if r["scenarios"] > 1]

    def cell(method: str, p0: float, drop: float, m: int = 1) -> dict[str, Any]:
        return next(
            r for r in rows if (r["method"], r["p0"], r["drop"], r["scenarios"]) == (method, p0, drop, m)
        )

    reps_one = max(r["reps"] for r in single)
    reps_many = max(r["reps"] for r in multi)
    lines = [
        BEGIN,
        "",
        f"Measured by `python benchmarks/mutation.py{' --quick' if result['quick'] else ''}` on {result['platform']} "
        f"(Python {result['python']}), {result['date']}, seed {result['seed']}, {result['workers']} worker processes, "
        f"{result['seconds']:.0f} s ({result['cpu_seconds']:.0f} s of CPU in the workers): {reps_one:,} repetitions per one-scenario cell, {reps_many:,} per "
        f"{SCENARIOS}-scenario cell, {covs[0]['reps']:,} per suite for the interval. Every figure is in benchmarks/results/mutation.json.",
        "",
        "Simulated agents with known pass rates, no LLM: the original is recorded as `agentassay mutate` records it "
        f"(every scenario to its cap, {TRIALS} trials at p0), a mutant's trials are Bernoulli at p1 in trial order, "
        "and each mutant is decided by the product's own code: `compare_results(original, mutant)` replays the test "
        "the mutant's `check` runs and stops where it stops, then `agentassay._features.mutation.classify`. Suite settings of "
        f"the customer-service example: alpha {ALPHA}, beta {BETA}, delta {DELTA}, {TRIALS} trials. The simulated "
        "trials carry no fingerprints, so only the pass-rate test decides (with fingerprints it holds half of alpha "
        "and the fingerprint test the other half). ± is one standard error; *exact* is computed, not simulated.",
        "",
        "### Kill rates and statuses, one scenario",
        "",
        "| method | p0 → p1 | killed | exact | z | survived | inconclusive | not activated (exact) | "
        "reference rule (exact) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in single:
        e, st = r["exact"], r["statuses"]
        lines.append(
            f"| {r['method']} | {r['p0']:.2f} → {r['p1']:.2f} | {_pm(r['killed'], r['killed_se'])} | {e['killed']:.4f} | "
            f"{r['z']:+.2f} | {st['survived']:.4f} | {st['inconclusive']:.4f} | {st['not_activated']:.4f} "
            f"({e['not_activated']:.4f}) | {r['reference_rule']['killed']:.3f} ({r['reference_rule']['exact']:.3f}) |"
        )
    lines += ["", "z = (killed − exact) / s.e."]
    ident = [r for r in rows if r["drop"] == 0]
    drops = [r for r in rows if r["drop"] == DROP and r["exact"] is not None]
    worst = max(ident, key=lambda r: r["killed"] - ALPHA - 2 * r["killed_se"])
    exact_rows = [r for r in rows if r["exact"] is not None]
    beyond2 = sum(abs(r["z"]) > 2 for r in exact_rows)
    beyond3 = sum(abs(r["z"]) > 3 for r in exact_rows)
    tabled = [r for r in rows if r.get("table_mismatches") is not None]
    checked = sum(r["reps"] for r in tabled)
    mismatched = sum(r["table_mismatches"] for r in tabled)
    lines += [
        "",
        f"**Identity mutants** (p1 = p0, nothing changed) are killed at most alpha: the largest kill rate over every "
        f"identity cell is {max(r['killed'] for r in ident):.4f}, and the largest margin of kill − alpha − 2 s.e. is "
        f"{worst['killed'] - ALPHA - 2 * worst['killed_se']:+.4f} ({worst['method']}, {worst['scenarios']} scenario(s), "
        f"p0 {worst['p0']}). They are almost all *not activated*; the few that are activated by chance (the two-sided "
        f"test at alpha_equiv {ALPHA_EQUIV} on the trials the check ran) are what the score's denominator sees of noise.",
        "",
        f"**A {DROP} drop** is killed with the power the design promises. Every simulated mutant's kill was also "
        "compared with the test's own decision table on the same trials (the sequential design's PASS and FAIL "
        "regions at each look, or the fixed-n test's `regression_codes`): "
        f"{checked:,} mutants, {mismatched} disagreements. The kill probability is therefore exactly the design's "
        "FAIL probability, and the simulated rates differ from it by sampling noise only: for the drop cells z = "
        + ", ".join(f"{r['z']:+.2f} ({r['method']}, {r['scenarios']} sc., p0 {r['p0']})" for r in drops)
        + f". Over all {len(exact_rows)} cells with an exact figure, {beyond2} {'is' if beyond2 == 1 else 'are'} "
        f"beyond 2 s.e. (about {0.0455 * len(exact_rows):.1f} expected by chance) and {beyond3} beyond 3. For the "
        "sequential method the exact figure is `SequentialDesign.operating_characteristic` of the design the gate "
        "builds (`sequential_design(100, 100, alpha, delta)`, as `RegressionSequential` does); for the fixed method "
        "it is the FAIL region of `regression_codes` (the table `regression_verdict` decides by) summed over the two "
        "binomials. The other statuses' exact figures come from a dynamic programme over the same walk with "
        "`classify`'s activation test at each stopping point; it reproduces the operating characteristic's FAIL "
        f"and PASS probabilities and expected trials to {max(r['exact'].get('oc_max_difference', 0.0) for r in rows if r['exact']):.1e}.",
        "",
        "### Early stopping: mean trials per mutant",
        "",
        "| p0 → p1 | sequential (sprt) | exact | fixed | saved |",
        "|---|---:|---:|---:|---:|",
    ]
    for p0 in RATES:
        for d in (0.0, SMALL, DROP):
            s, f = cell("sprt", p0, d), cell("fixed", p0, d)
            lines.append(
                f"| {p0:.2f} → {p0 - d:.2f} | {s['mean_trials']:.1f} ± {s['mean_trials_se']:.1f} | "
                f"{s['exact']['expected_trials']:.1f} | {f['mean_trials']:.0f} | {1 - s['mean_trials'] / f['mean_trials']:.0%} |"
            )
    lines += [
        "",
        "A sequential FAIL stops the mutant at once (Def. 5.10's early kill); a sequential PASS stops it too, so "
        "harmless mutants are cheap as well. The fixed method always runs the cap. Power is about the same: for "
        f"the {DROP} drop the exact kill probabilities are "
        + ", ".join(
            f"{cell('sprt', p0, DROP)['exact']['killed']:.3f} (sequential) and "
            f"{cell('fixed', p0, DROP)['exact']['killed']:.3f} (fixed) at p0 = {p0}"
            for p0 in RATES
        )
        + ".",
        "",
        f"### {SCENARIOS} scenarios, one of which drops",
        "",
        "| method | p0 → p1 (scenario 1) | killed | exact | z | not activated | mean trials (exact) | reference rule (exact) |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in multi:
        e = r["exact"]
        ex = "— | —" if e is None else f"{e['killed']:.4f} | {r['z']:+.2f}"
        trials = f"{r['mean_trials']:.1f}" + ("" if e is None else f" ({e['expected_trials']:.1f})")
        lines.append(
            f"| {r['method']} | {r['p0']:.2f} → {r['p1']:.2f} | {_pm(r['killed'], r['killed_se'])} | {ex} | "
            f"{r['statuses']['not_activated']:.4f} | {trials} | {r['reference_rule']['killed']:.3f} "
            f"({r['reference_rule']['exact']:.3f}) |"
        )
    lines += [
        "",
        f"A check of {SCENARIOS} scenarios blocks when any of them FAILs, so the gate spends alpha across them: "
        f"each sequential test runs at alpha / {SCENARIOS} (Bonferroni), the fixed-n p-values are Holm-adjusted "
        "(no exact figure is computed for Holm; the simulation stands alone there). Identity mutants stay under "
        "alpha; the drop in one scenario is found with less power than alone. Trials are each scenario's test to "
        "its own stop, summed; a live `agentassay mutate` also stops the other scenarios once one FAILs (the kill "
        "switch), so its killed mutants cost fewer still.",
        "",
        "### The reference implementation's one-run rule (reported, never used)",
        "",
        "It kills a mutant when one trial of it gives a different pass/fail than one trial of the original on any "
        "scenario (here: the first simulated trial of each). With nothing changed it kills "
        f"{cell('sprt', 0.8, 0.0)['reference_rule']['killed']:.3f} of identity mutants at p0 = 0.8 (exactly "
        f"2·p0·(1 − p0) = {reference_exact(1, 0.8, 0.0):.2f}, the reference's ~0.32 from noise alone), and "
        f"{cell('sprt', 0.8, 0.0, SCENARIOS)['reference_rule']['killed']:.3f} with {SCENARIOS} scenarios; a real "
        f"{DROP} drop at p0 = 0.8 it kills {cell('sprt', 0.8, DROP)['reference_rule']['killed']:.3f} of the time, "
        "barely more than noise. Its score measures the agent's randomness, not the suite.",
        "",
        "### The score's interval",
        "",
        f"Each repetition records one original (p0 = {P_MIX} in every scenario) and checks {Q} mutants against it "
        "(sequential method), each mutant's drop drawn independently from the mixture "
        + ", ".join(f"{d:g} ({w:.0%})" for d, w in MIXTURE)
        + " and applied to the first scenario; the score is killed / activated with its 95% Clopper-Pearson interval "
        "from `agentassay._features.mutation.score`. The true score is P(killed) / P(activated) for a mutant drawn from the "
        "mixture, over the noise of both recordings, computed exactly (the dynamic programme above, scenarios "
        "independent).",
        "",
        "| scenarios | drop | share | P(killed) | P(activated) | killed among activated | mean trials |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in covs:
        for d, e in c["per_effect"].items():
            lines.append(
                f"| {c['scenarios']} | {d} | {e['share']:.0%} | {e['killed']:.4f} | {e['activated']:.4f} | "
                f"{e['killed'] / e['activated']:.3f} | {e['expected_trials']:.1f} |"
            )
    lines += [
        "",
        "| scenarios | true score | coverage of the true score | exact | mean width (exact) | activated of 20 | "
        "score given the recording (5%, 50%, 95%) | coverage of it (exact) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in covs:
        e = c["exact"]
        q5, q50, q95 = e["score_given_recording"]
        lines.append(
            f"| {c['scenarios']} | {c['true_score']:.4f} | **{_pm(c['coverage'], c['coverage_se'])}** | "
            f"{e['coverage']:.4f} | {c['mean_width']:.3f} ({e['mean_width']:.3f}) | {c['mean_activated']:.1f} | "
            f"{q5:.3f}, {q50:.3f}, {q95:.3f} | {_pm(c['conditional_coverage'], c['conditional_coverage_se'])} "
            f"({e['conditional_coverage']:.4f}) |"
        )
    one, many = covs[0], covs[-1]
    lines += [
        "",
        f"{one['reps']:,} repetitions per suite; {sum(c['no_interval'] for c in covs)} had no activated mutant "
        "(no interval; counted as not covered). The exact coverage is a finite sum: given the original's recording "
        "the mutants of a run are i.i.d., so (killed, activated) is multinomial; for one scenario it is summed over "
        f"every recording, for {many['scenarios']} averaged over {20_000 if not result['quick'] else 2_000:,} "
        "simulated recordings. All mutants of a run share one recording of the original, so what the interval "
        "estimates is, strictly, the kill probability *given that recording*; it covers that at least 95% of the "
        "time (exact binomial, conditionally), and the unconditional true score at the rate in the table.",
        "",
        f"With one scenario the score is {one['true_score']:.3f}: on the pass rate alone, a mutant the check does not "
        "kill almost never shows a two-sided difference either, so it is *not activated* rather than a survivor "
        f"(of the {MIXTURE[1][0]:g} drops, {1 - one['per_effect'][f'{MIXTURE[1][0]:g}']['activated']:.0%} are not "
        f"activated). With {many['scenarios']} scenarios each test runs at alpha / {many['scenarios']} while the "
        f"activation test stays at {ALPHA_EQUIV} per scenario, so drops the check cannot show are activated and "
        f"count against the score ({many['true_score']:.3f}). docs/mutation.md explains what this means for reading "
        "a score.",
        "",
        END,
    ]
    return "\n".join(lines)


def splice(block: str, text: str | None) -> str:
    """``text`` with its generated section replaced by ``block`` (appended, or a new doc, if none)."""
    if text is None:
        return "# Mutation testing\n\n" + block + "\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def page(result: dict[str, Any]) -> Callable[[str | None], str]:
    """The generated section of docs/mutation.md, spliced into the page."""
    return lambda text: splice(markdown(result), text)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = parser(__doc__)
    ap.add_argument(
        "--workers", type=int, default=min(2, os.cpu_count() or 1), help="worker processes (default 2)"
    )
    args = ap.parse_args(argv)
    if args.render:
        result = load_result(args, "mutation")
        write_report(args, "mutation", result, page)
        return result
    timer = Timer()
    measured = run(args.quick, args.workers)
    result = run_info(
        args.quick,
        date=today(),
        seed=SEED,
        workers=args.workers,
        settings={"alpha": ALPHA, "beta": BETA, "delta": DELTA, "trials": TRIALS},
        alpha_equiv=ALPHA_EQUIV,
        **measured,
        seconds=timer.seconds,
    )
    for c in result["coverage"]:
        print(
            f"interval, {c['scenarios']} scenario(s): true score {c['true_score']:.4f}, coverage {c['coverage']:.4f} "
            f"± {c['coverage_se']:.4f} (exact {c['exact']['coverage']:.4f}), mean width {c['mean_width']:.3f}"
        )
    write_report(args, "mutation", result, page, seconds=result["seconds"])
    return result


if __name__ == "__main__":
    main()
