"""A contract as a (p, δ) probabilistic oracle: its verdict over n trials, and the p-values the gate tests.

A contract holds on one trace or not; over n trials its satisfaction count is binomial. With a
required rate ``p`` and a tolerance ``delta`` the bound is ``q = p - delta``:

* **satisfied** when the one-sided lower ``1 - alpha`` Clopper-Pearson bound of the rate is >= q
  (``alpha``: the suite's; a claim made with the suite's confidence);
* **violated** when the exact one-sided binomial test rejects "rate >= q" at ``level``, the share of
  alpha the gate gives the contract (the claim that can block a merge);
* **inconclusive** otherwise (more trials would decide it).

A wrong "satisfied" has probability at most alpha, a wrong "violated" at most ``level`` <= alpha < 1/2,
so the two can never both hold.
``check`` tests the satisfaction count for regression like a pass rate
(:func:`agentassay._stats.regression_verdict`). Pure functions of counts; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from scipy import special, stats

from ..._stats._exact import regression_pvalues
from ..._stats._regression import regression_codes
from ..._stats._validation import check_arms
from ..._stats._verdict import VERDICT_OF_CODE

SATISFIED, VIOLATED, INCONCLUSIVE, NO_TRIALS = "satisfied", "violated", "inconclusive", "no trials"


def binomial_pvalue(satisfied: int, trials: int, bound: float) -> float:
    """Exact one-sided p-value of "rate >= bound" against "rate < bound": P(X <= satisfied | trials, bound)."""
    if trials <= 0 or bound <= 0.0:
        return 1.0
    if bound >= 1.0:
        return 1.0 if satisfied >= trials else 0.0
    return float(min(1.0, stats.binom.cdf(satisfied, trials, bound)))


def lower_bound(satisfied: int, trials: int, level: float) -> float:
    """One-sided lower ``1 - level`` Clopper-Pearson bound of the satisfaction rate (0 with no trials)."""
    if trials <= 0 or satisfied <= 0:
        return 0.0
    return float(special.betaincinv(satisfied, trials - satisfied + 1, level))


def oracle_verdict(satisfied: int, trials: int, bound: float, *, alpha: float, level: float) -> str:
    """``satisfied`` (at ``alpha``) / ``violated`` (at ``level``) / ``inconclusive`` (module docstring);
    ``no trials`` without any."""
    if trials <= 0:
        return NO_TRIALS
    if lower_bound(satisfied, trials, alpha) >= bound:
        return SATISFIED
    if binomial_pvalue(satisfied, trials, bound) <= level:
        return VIOLATED
    return INCONCLUSIVE


def bonferroni(pvalues: Iterable[float]) -> float:
    """One p-value for a scenario's contracts: ``min(1, c * min p)`` over its ``c`` contracts."""
    ps = [float(p) for p in pvalues]
    return min(1.0, len(ps) * min(ps)) if ps else 1.0


def regression(
    base_satisfied: int,
    base_trials: int,
    satisfied: int,
    trials: int,
    *,
    level: float,
    beta: float,
    delta: float,
) -> tuple[float, str]:
    """``check``: the one-sided p-value of "no drop in satisfaction" and the regression verdict, exactly as
    :func:`agentassay._stats.regression_verdict` gives them for a pass rate (``delta``: the suite's regression
    margin, which only the PASS side uses).

    Read from the two tables ``regression_verdict`` itself reads (the exact Fisher p-values and the cached
    verdict codes), without the effect sizes and the confidence bound it also computes: those cost about
    a second per call, and a scenario has a test per contract (tests/features/contracts/test_contracts.py checks they agree).
    """

    kb, nb, kc, nc = check_arms(base_satisfied, base_trials, satisfied, trials)
    code = regression_codes(
        nb, nc, alpha=level, beta=beta, delta=delta, test="fisher", rule="non-inferiority"
    )[kb, kc]
    return float(regression_pvalues(nb, nc, "fisher")[kb, kc]), VERDICT_OF_CODE[int(code)].value
