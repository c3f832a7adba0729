"""Sample size and power for the one-sample and two-sample designs (paper Eq. 1 and Eq. 6).

ERRATA: Eq. 1 as printed (two-sided z, 2p(1-p)) gives 190 trials for theta=0.9, delta=0.1,
alpha=0.05, beta=0.10; the one-sample normal approximation gives 102 and the exact
one-sample binomial test 109. All three are available; "exact" is the default because it
is what the exact tests we ship actually need.
"""

from __future__ import annotations

import math
from functools import lru_cache

from scipy import stats

from ._onesample import exact_one_sided_critical
from ._regression import TESTS, regression_codes, verdict_probability
from ._validation import check_choice, check_closed_unit, check_count, check_margin, check_open_unit
from ._verdict import CODE_FAIL, CODE_PASS

ONE_SAMPLE_METHODS = ("exact", "normal", "paper")
TWO_SAMPLE_METHODS = ("exact", "normal")


def _check_rates(p: float, delta: float) -> None:
    check_open_unit("p", p)
    check_margin("delta", delta)
    if p - delta <= 0:
        raise ValueError(f"p - delta must be > 0; got p={p}, delta={delta}")


def power_one_sample(trials: int, p: float, delta: float, *, alpha: float = 0.05) -> float:
    """Exact power of the one-sided binomial test of ``rate >= p`` when the true rate is ``p - delta``."""
    n = check_count("trials", trials, minimum=1)
    _check_rates(p, delta)
    check_open_unit("alpha", alpha)
    c = exact_one_sided_critical(n, p, alpha)
    return float(stats.binom.cdf(c, n, p - delta)) if c >= 0 else 0.0


@lru_cache(maxsize=256)  # pure, and a suite asks it the same question once per scenario
def sample_size_one_sample(
    p: float, delta: float, *, alpha: float = 0.05, beta: float = 0.10, method: str = "exact"
) -> int:
    """Trials needed to detect a drop from ``p`` to ``p - delta`` with power ``1 - beta``.

    ``exact``: the smallest n at which the exact one-sided binomial test reaches power
    ``>= 1 - beta`` (109 for the paper's Example 3.2). Its power saw-tooths in n: a few
    larger n fall short again (0.869 at n=111 there); ``power_one_sample`` shows any n. ``normal``: the one-sample normal approximation with one-sided alpha.
    ``paper``: Eq. 1 as printed (two-sided z and 2p(1-p)), kept for comparison.
    """
    _check_rates(p, delta)
    a, b = check_open_unit("alpha", alpha), check_open_unit("beta", beta)
    m = check_choice("method", method, ONE_SAMPLE_METHODS)
    za, zb = stats.norm.isf(a), stats.norm.isf(b)
    if m == "paper":
        return math.ceil((stats.norm.isf(a / 2) + zb) ** 2 * 2 * p * (1 - p) / delta**2)
    q = p - delta
    normal = math.ceil(((za * math.sqrt(p * (1 - p)) + zb * math.sqrt(q * (1 - q))) / delta) ** 2)
    if m == "normal":
        return normal
    n = 1
    while power_one_sample(n, p, delta, alpha=a) < 1 - b:
        n += 1
    return n


def power_two_sample(
    base_trials: int,
    cand_trials: int,
    p_base: float,
    delta: float,
    *,
    alpha: float = 0.05,
    test: str = "fisher",
) -> float:
    """Exact probability that ``regression_verdict`` says FAIL when the true drop is ``delta``."""
    nb = check_count("base_trials", base_trials, minimum=1)
    nc = check_count("cand_trials", cand_trials, minimum=1)
    _check_rates(p_base, delta)
    a = check_open_unit("alpha", alpha)
    t = check_choice("test", test, TESTS)
    codes = regression_codes(nb, nc, alpha=a, beta=0.1, delta=delta, test=t, rule="non-inferiority")
    return verdict_probability(codes, CODE_FAIL, p_base, p_base - delta)


def pass_probability(
    base_trials: int,
    cand_trials: int,
    p_base: float,
    p_cand: float,
    *,
    alpha: float = 0.05,
    delta: float = 0.10,
) -> float:
    """Exact probability that ``regression_verdict`` says PASS at true rates (p_base, p_cand)."""
    nb = check_count("base_trials", base_trials, minimum=1)
    nc = check_count("cand_trials", cand_trials, minimum=1)
    pb, pc = check_closed_unit("p_base", p_base), check_closed_unit("p_cand", p_cand)
    a, d = check_open_unit("alpha", alpha), check_margin("delta", delta)
    codes = regression_codes(nb, nc, alpha=a, beta=0.1, delta=d, test="fisher", rule="non-inferiority")
    return verdict_probability(codes, CODE_PASS, pb, pc)


@lru_cache(maxsize=256)
def sample_size_two_sample(
    p_base: float,
    delta: float,
    *,
    alpha: float = 0.05,
    beta: float = 0.10,
    method: str = "normal",
    test: str = "fisher",
) -> int:
    """Trials per arm to detect a drop of ``delta`` from ``p_base`` (paper Eq. 6).

    ``normal`` is Eq. 6 (one-sided alpha). ``exact`` searches for the smallest equal
    per-arm n at which ``regression_verdict`` itself FAILs with probability ``>= 1 - beta``.
    """
    _check_rates(p_base, delta)
    a, b = check_open_unit("alpha", alpha), check_open_unit("beta", beta)
    m = check_choice("method", method, TWO_SAMPLE_METHODS)
    q = p_base - delta
    normal = math.ceil(
        (stats.norm.isf(a) + stats.norm.isf(b)) ** 2 * (p_base * (1 - p_base) + q * (1 - q)) / delta**2
    )
    if m == "normal":
        return normal
    n = normal  # the exact verdict is never more powerful than the normal z test
    while power_two_sample(n, n, p_base, delta, alpha=a, test=test) < 1 - b:
        n += 1
        if n > 5 * normal + 100:
            raise ValueError(
                f"no sample size up to {n} reaches power {1 - b}; check p_base={p_base}, delta={delta}"
            )
    return n
