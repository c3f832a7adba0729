"""Fixed-sample regression verdict of a candidate against a baseline (paper Def. 3.7, corrected)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats

from . import _exact
from ._effects import EffectSizes, effect_sizes
from ._validation import check_arms, check_choice, check_margin, check_open_unit
from ._verdict import CODE_FAIL, CODE_INCONCLUSIVE, CODE_PASS, VERDICT_OF_CODE, Verdict

TESTS = ("fisher", "boschloo", "z")
RULES = ("non-inferiority", "paper")


def paper_observed_power(pb: Any, pc: Any, nb: int, nc: int, alpha: float) -> np.ndarray:
    """The post-hoc power of the reference implementation of Def. 3.7 (kept for comparison).

    One-sided z power at the *observed* Cohen's h with the harmonic-mean sample size; this
    is the quantity the ERRATA shows cannot serve as evidence of no regression.
    """
    h = 2 * np.arcsin(np.sqrt(pb)) - 2 * np.arcsin(np.sqrt(pc))
    n_h = 2 * nb * nc / (nb + nc)
    return stats.norm.sf(stats.norm.isf(alpha) - np.abs(h) * math.sqrt(n_h))


@lru_cache(maxsize=128)
def regression_codes(
    nb: int,
    nc: int,
    *,
    alpha: float,
    beta: float,
    delta: float,
    test: str,
    rule: str,
    pass_alpha: float | None = None,
) -> np.ndarray:
    """Verdict code for every outcome (x_base, x_cand): the single source of the verdict.

    FAIL at ``alpha``, PASS (non-inferiority) at ``pass_alpha`` (default ``alpha``).
    """
    reject = _exact.regression_reject(nb, nc, test, alpha)
    codes = np.full((nb + 1, nc + 1), CODE_INCONCLUSIVE, dtype=np.int8)
    if rule == "non-inferiority":
        ni = _exact.ni_reject(nb, nc, delta, alpha if pass_alpha is None else pass_alpha)
        codes[reject & ~ni] = CODE_FAIL
        codes[ni] = CODE_PASS
    else:
        pb, pc = _exact.rates(nb, nc)
        power = paper_observed_power(pb, pc, nb, nc, alpha)
        same = np.isclose(pb, pc)
        codes[reject & (np.abs(pb - pc) >= delta - 1e-12)] = CODE_FAIL
        codes[~reject & ((power >= 1 - beta) | same)] = CODE_PASS
    codes.setflags(write=False)
    return codes


def verdict_probability(codes: np.ndarray, code: int, p_base: float, p_cand: float) -> float:
    """Exact probability of one verdict code of a table at true rates (p_base, p_cand)."""
    nb, nc = codes.shape[0] - 1, codes.shape[1] - 1
    mb, mc = _exact.pmf_grid(nb, np.array([p_base]))[0], _exact.pmf_grid(nc, np.array([p_cand]))[0]
    return float(mb @ (codes == code) @ mc)


def fisher_pvalue(nb: int, nc: int, kb: int, kc: int) -> float:
    """``_exact.fisher_pvalues(nb, nc)[kb, kc]`` without the table (the same scipy call on one cell)."""
    return float(np.clip(stats.hypergeom.sf(kb - 1, nb + nc, kb + kc, nb), 0.0, 1.0))


# A NI p-value this close to alpha (relative) is decided by the verdict table, as it always was: the
# table decides by a critical value, which matches "p <= alpha" wherever the p-value falls as the
# observed statistic grows (everywhere we looked, tests/stats/test_regression_fast.py); this margin keeps
# even a refinement step that breaks that by a hair from changing a verdict.
_NEAR = 1e-3


def _code(
    kb: int,
    nb: int,
    kc: int,
    nc: int,
    a: float,
    b: float,
    d: float,
    t: str,
    r: str,
    pvalue: float,
    ni_pvalue: float,
    pa: float | None = None,
) -> int:
    """``regression_codes(...)[kb, kc]``, without building the table when the cell's p-values decide it."""
    level = a if pa is None else pa
    if r == "non-inferiority" and t in ("fisher", "z") and round(d, 12) == d and abs(ni_pvalue - level) > _NEAR * level:
        if ni_pvalue <= level:
            return CODE_PASS
        return CODE_FAIL if pvalue <= a else CODE_INCONCLUSIVE
    return int(regression_codes(nb, nc, alpha=a, beta=b, delta=d, test=t, rule=r, pass_alpha=pa)[kb, kc])


@dataclass(frozen=True)
class RegressionResult:
    """Regression verdict of a candidate against a baseline, with its evidence."""

    verdict: Verdict
    base_passes: int
    base_trials: int
    cand_passes: int
    cand_trials: int
    pvalue: float
    """One-sided p-value of H0 "no regression" (p_cand >= p_base)."""
    noninferiority_pvalue: float
    """Exact unconditional p-value of H0 "p_base - p_cand >= delta"; PASS needs it <= pass_alpha."""
    drop_upper_bound: float
    """One-sided upper (1 - pass_alpha) confidence bound of p_base - p_cand."""
    effects: EffectSizes
    alpha: float
    beta: float
    delta: float
    test: str
    rule: str
    observed_power: float | None = None
    pass_alpha: float | None = None
    """The PASS (non-inferiority) level; None: ``alpha``, as before FAIL and PASS had levels of their own."""

    @property
    def pass_level(self) -> float:
        return self.alpha if self.pass_alpha is None else self.pass_alpha

    @property
    def base_rate(self) -> float:
        return self.base_passes / self.base_trials

    @property
    def cand_rate(self) -> float:
        return self.cand_passes / self.cand_trials

    def explain(self) -> str:
        rates = f"pass rate {self.base_rate:.1%} -> {self.cand_rate:.1%} (baseline {self.base_passes}/{self.base_trials} -> candidate {self.cand_passes}/{self.cand_trials})"
        bound = f"the drop is at most {self.drop_upper_bound:+.3f} with {1 - self.pass_level:.0%} confidence"
        if self.rule == "paper":
            return (
                f"{self.verdict.value.upper()} (paper Def. 3.7 rule): {rates}; p = {self.pvalue:.3g}, "
                f"observed power {self.observed_power:.2f}."
            )
        if self.verdict is Verdict.PASS:
            return f"PASS: {rates}; {bound}, below the tolerated {self.delta:.2f}."
        if self.verdict is Verdict.FAIL:
            return f"FAIL: {rates}; the drop is significant (p = {self.pvalue:.3g}, {self.test}) and {bound}."
        return (
            f"INCONCLUSIVE: {rates}; no significant drop (p = {self.pvalue:.3g}), but {bound}, "
            f"not below the tolerated {self.delta:.2f}: more trials are needed."
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["verdict"] = self.verdict.value
        d["effects"] = self.effects.to_dict()
        return d


def regression_verdict(
    base_passes: int,
    base_trials: int,
    cand_passes: int,
    cand_trials: int,
    *,
    alpha: float = 0.05,
    beta: float = 0.10,
    delta: float = 0.10,
    test: str = "fisher",
    rule: str = "non-inferiority",
    pass_alpha: float | None = None,
) -> RegressionResult:
    """Did the candidate's pass rate regress from the baseline's?

    PASS when non-inferiority is shown: the one-sided upper ``1 - alpha`` confidence bound
    of ``p_base - p_cand`` is below ``delta`` (an exact unconditional test, so that a true
    drop of ``delta`` gets PASS at most ``alpha`` of the time at any n). FAIL when the
    one-sided ``test`` ("fisher", "boschloo" or "z") rejects "no regression" at ``alpha``
    and non-inferiority is not shown. INCONCLUSIVE otherwise. ``pass_alpha`` (default ``alpha``) is
    the PASS level: a gate tests FAIL at a multiplicity-corrected ``alpha`` and PASS, an
    intersection-union claim, at the suite's alpha (docs/statistics.md, "Two claims, two levels"). ``beta`` is used only by
    ``rule="paper"``, the paper's Def. 3.7 kept for comparison (see docs/statistics.md).
    """
    kb, nb, kc, nc = check_arms(base_passes, base_trials, cand_passes, cand_trials)
    a = check_open_unit("alpha", alpha)
    pa = None if pass_alpha is None else check_open_unit("pass_alpha", pass_alpha)
    b = check_open_unit("beta", beta)
    d = check_margin("delta", delta)
    t = check_choice("test", test, TESTS)
    r = check_choice("rule", rule, RULES)
    if t == "boschloo":
        pvalue = _exact.boschloo_pvalue(nb, nc, kb, kc)
    elif t == "fisher":
        pvalue = fisher_pvalue(nb, nc, kb, kc)
    else:
        pvalue = float(_exact.regression_pvalues(nb, nc, t)[kb, kc])
    ni_pvalue = _exact.ni_pvalue(nb, nc, kb, kc, d)
    code = _code(kb, nb, kc, nc, a, b, d, t, r, pvalue, ni_pvalue, pa)
    power = float(paper_observed_power(kb / nb, kc / nc, nb, nc, a)) if r == "paper" else None
    return RegressionResult(
        verdict=VERDICT_OF_CODE[int(code)],
        base_passes=kb,
        base_trials=nb,
        cand_passes=kc,
        cand_trials=nc,
        pvalue=pvalue,
        noninferiority_pvalue=ni_pvalue,
        drop_upper_bound=_exact.drop_upper_bound(nb, nc, kb, kc, a if pa is None else pa),
        effects=effect_sizes(kb, nb, kc, nc),
        alpha=a,
        beta=b,
        delta=d,
        test=t,
        rule=r,
        observed_power=power,
        pass_alpha=pa,
    )
