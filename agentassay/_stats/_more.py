"""How many candidate trials would decide an INCONCLUSIVE regression verdict (issue 21).

Definition. The baseline's recorded counts ``(x_b, n_b)`` are held fixed: a new check compares a
new candidate sample with the same baseline. At the candidate's observed rate ``p_c = x_c / n_c``
a fresh sample of ``N`` trials has ``Y ~ Binomial(N, p_c)`` passes, and the fixed-n
:func:`regression_verdict` of ``(x_b, n_b, Y, N)`` at the scenario's FAIL level ``alpha``, PASS
level ``pass_alpha`` and margin ``delta`` decides it (PASS or FAIL) with probability

    P(decided | N) = P(Y >= t_pass(N)) + P(Y <= t_fail(N)),

where PASS is ``Y >= t_pass`` and FAIL is ``Y <= t_fail`` because both statistics are monotone in
``Y`` for a fixed baseline (the non-inferiority statistic rises with ``Y``, the Fisher p-value
too). The two thresholds are found by a galloping search over ``Y`` from a guess (a handful of
p-value evaluations, not ``N + 1`` verdicts) and the probability is summed exactly from the
binomial distribution. :func:`trials_to_decide` returns the smallest ``N`` up to ``limit`` with
``P(decided | N) >= power``, found by doubling from ``n_c`` (halving when ``n_c`` already
suffices), then bisection: to one trial below 200 trials, to within 0.5 % above. ``P(decided | N)``
is not monotone in ``N``: like every exact binomial power it moves in saw-teeth as the thresholds
step (by several points at a candidate rate near 1 and small N, e.g. 0.82 at N = 90, 0.73 at 104,
0.86 at 106 for a 30/30 baseline and 29/30 candidate), so the bisection returns an ``N`` where the
probability crosses ``power`` from below, with ``P >= power`` there exactly, which is not always the
very first such ``N``; one more reason the reports say "about".

What the figure is not. It plugs in the observed rate, a point estimate, so it is a planning
figure, not a guarantee; reports say "about". For ``method: sprt`` it is computed for a
fixed-n check of ``N`` trials: a sequential design capped at ``N`` decides a little less often at
its cap (its final boundary sits above the fixed-n critical value, the price of its early looks),
so its cap should be somewhat larger. With a fixed baseline the candidate's precision alone cannot
decide every case: when the observed drop sits near the margin (or the baseline is too small to
resolve it), no ``N`` up to ``limit`` reaches ``power`` and the result is ``capped``.

Exactness. PASS is "the exact NI p-value <= pass_alpha" and FAIL "the one-sided p-value <= alpha
and not PASS", the p-values ``regression_verdict`` computes; that function also consults its full
verdict table when the NI p-value is within 0.1 % of the level, which this estimate skips (a table
at N = 5,000 costs seconds; it moves a threshold by one count at most, in rare cases).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from scipy import stats

from . import _exact
from ._ni import exact_statistic
from ._regression import TESTS, fisher_pvalue, regression_verdict
from ._validation import check_choice, check_count, check_margin, check_open_unit, check_passes
from ._verdict import Verdict

POWER = 0.8  # the probability a planned check decides with
LIMIT = 5000  # candidate trials searched at most
_EXACT_BELOW = 200  # N is searched to one trial below this, to 0.5 % above


@dataclass(frozen=True)
class MoreTrials:
    """Candidate trials a fresh check would need to decide a regression scenario (see the module docstring).

    ``total``: trials of the fresh check (``limit`` when ``capped``); ``additional``: beyond the
    ``spent`` ones, never negative; ``probability``: P(PASS or FAIL) at ``total`` (split into
    ``pass_probability`` and ``fail_probability``), at least ``power`` unless ``capped``.
    """

    total: int
    additional: int
    probability: float
    capped: bool
    pass_probability: float
    fail_probability: float
    spent: int
    power: float = POWER
    limit: int = LIMIT

    def explain(
        self,
        *,
        usd_per_trial: float | None = None,
        setting: str = "config.trials",
        cap: int | None = None,
        sequential: bool = False,
    ) -> str:
        """One sentence for a reviewer: "about 140 more trials (~$0.42) would decide this with 80 % probability
        at the observed rates; raise config.trials to 340". ``usd_per_trial``: the scenario's observed mean
        cost (None: no prices); ``setting`` and ``cap``: the key that caps a scenario's trials and its value
        (a run stopped early, by a budget or a signal, may already allow ``total``); ``sequential``: the
        check runs ``method: sprt``, whose cap needs a little more than this fixed-n figure."""
        pct = f"{self.power:.0%}".replace("%", " %")
        if self.capped:
            chance = (
                "less than 1 %"
                if self.probability < 0.01
                else f"only {self.probability:.0%}".replace("%", " %")
            )
            return (
                f"even {self.limit:,} trials would decide this with {chance} probability at the observed rates: "
                "against this baseline the observed drop cannot be told from the margin, so more candidate trials "
                "alone will not settle it (a larger baseline may)"
            )
        design = " (a sequential check needs a little more at its cap)" if sequential else ""
        if self.additional == 0:
            return (
                f"a check of about {self.total:,} trials would decide this with {pct} probability at the observed "
                f"rates, and this one ran {self.spent:,}{design}: running it again will likely decide it"
            )
        cost = "" if usd_per_trial is None else f" (~${self.additional * usd_per_trial:,.2f})"
        advice = (
            f"{setting} ({cap:,}) already allows that many: this run stopped early"
            if cap is not None and self.total <= cap
            else f"raise {setting} to {self.total:,}{design}"
        )
        return (
            f"about {self.additional:,} more trials{cost} would decide this with {pct} probability at the "
            f"observed rates; {advice}"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MoreTrials:
        return cls(
            total=int(d["total"]),
            additional=int(d["additional"]),
            probability=float(d["probability"]),
            capped=bool(d["capped"]),
            pass_probability=float(d.get("pass_probability", 0.0)),
            fail_probability=float(d.get("fail_probability", 0.0)),
            spent=int(d.get("spent", 0)),
            power=float(d.get("power", POWER)),
            limit=int(d.get("limit", LIMIT)),
        )


class _Regions:
    """The PASS and FAIL regions ``Y >= t_pass(N)``, ``Y <= t_fail(N)`` for a fixed baseline."""

    def __init__(
        self,
        kb: int,
        nb: int,
        alpha: float,
        pass_alpha: float,
        delta: float,
        test: str,
        beta: float,
    ) -> None:
        self.kb, self.nb, self.alpha, self.pass_alpha, self.delta = kb, nb, alpha, pass_alpha, delta
        self.test, self.beta = test, beta
        self.fast = test in ("fisher", "z")  # p-values of one cell; Boschloo's needs whole tables: verdicts
        self.z = float(stats.norm.isf(pass_alpha))
        self.crit = self.z  # the NI statistic's critical value for the exact test, refined as we go
        self.fail_rate: float | None = None  # t_fail / N last seen: the next N's guess

    # -- the verdict's two predicates, each monotone in y -------------------------------------------
    def _passes(self, y: int, n: int) -> bool:
        if self.fast:
            return _exact.ni_pvalue(self.nb, n, self.kb, y, self.delta) <= self.pass_alpha
        return self._verdict(y, n) is Verdict.PASS

    def _rejects(self, y: int, n: int) -> bool:
        """The regression test rejects "no regression" (FAIL where not PASS): true on a lower set of y."""
        if self.test == "fisher":
            return fisher_pvalue(self.nb, n, self.kb, y) <= self.alpha
        if self.fast:
            return float(_exact.regression_pvalues(self.nb, n, self.test)[self.kb, y]) <= self.alpha
        return self._verdict(y, n) is Verdict.FAIL

    def _verdict(self, y: int, n: int) -> Verdict:
        return regression_verdict(
            self.kb,
            self.nb,
            y,
            n,
            alpha=self.alpha,
            beta=self.beta,
            delta=self.delta,
            test=self.test,
            pass_alpha=self.pass_alpha,
        ).verdict

    def _pass_guess(self, n: int) -> int:
        """Smallest y whose NI statistic reaches the running critical value (cheap: no p-value)."""
        lo, hi = -1, n + 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if exact_statistic(self.nb, n, self.kb, mid, self.delta) >= self.crit:
                hi = mid
            else:
                lo = mid
        return hi

    def _aim(self, n: int, guess: int) -> int:
        """Re-aim the guess with a few exact p-values: the secant of their normal scores against the statistic
        (slope 1 from a single point) gives the critical value where the score reaches ``isf(pass_alpha)``."""
        points: list[tuple[float, float]] = []
        for _ in range(3):
            if not 0 <= guess <= n:
                break
            pv = _exact.ni_pvalue(self.nb, n, self.kb, guess, self.delta)
            if not 1e-300 < pv < 1:
                break
            points.append(
                (exact_statistic(self.nb, n, self.kb, guess, self.delta), float(stats.norm.isf(pv)))
            )
            (t0, z0), slope = points[-1], 1.0
            if len(points) > 1 and points[-1][0] != points[-2][0]:
                slope = (points[-1][1] - points[-2][1]) / (points[-1][0] - points[-2][0])
                slope = slope if 0.2 < slope < 5 else 1.0
            self.crit = t0 + (self.z - z0) / slope
            again = self._pass_guess(n)
            if again in (guess, guess + 1) or (len(points) > 1 and abs(again - guess) <= 1):
                return again
            guess = again
        return guess

    def thresholds(self, n: int, p: float, *, exact: bool = True) -> tuple[int, int]:
        """(t_pass, t_fail) at N = n: PASS iff y >= t_pass (n + 1: never), FAIL iff y <= t_fail (-1: never).

        ``exact=False`` takes t_pass from the NI statistic and the running critical value (no p-value):
        within a count or two, what the search for N uses until it is near its answer. With ``exact``,
        a t_pass more than ten standard deviations of ``Binomial(n, p)`` from its mean is only
        certified to lie there (one p-value): ``P(Y >= t_pass)`` is then ~0 or ~1 to 1e-20 either way.
        """
        guess = self._pass_guess(n)
        t_pass = guess
        if exact:
            sd = math.sqrt(n * p * (1 - p))
            far_up, far_down = math.ceil(n * p + 10 * sd) + 1, math.floor(n * p - 10 * sd) - 1
            if self.fast and far_up + 2 < guess <= n and not self._passes(far_up, n):
                pass  # t_pass > far_up: P(PASS) < 1e-20 whatever the exact count
            elif self.fast and 0 <= guess < far_down - 2 and self._passes(far_down, n):
                pass  # t_pass <= far_down: P(PASS) > 1 - 1e-20
            else:
                if self.fast:
                    guess = self._aim(n, guess)
                t_pass = _first(lambda y: self._passes(y, n), n, guess)
                # the exact critical value lies between the two cells' statistics
                if 0 < t_pass <= n and self.fast:
                    at = exact_statistic(self.nb, n, self.kb, t_pass, self.delta)
                    below = exact_statistic(self.nb, n, self.kb, t_pass - 1, self.delta)
                    self.crit = (at + below) / 2
        fail_guess = n // 2 if self.fail_rate is None else round(self.fail_rate * n)
        t_fail = _first(lambda y: not self._rejects(y, n), n, fail_guess) - 1
        self.fail_rate = max(t_fail, 0) / n
        return t_pass, min(t_fail, t_pass - 1)


def _first(pred: Any, n: int, guess: int) -> int:
    """Smallest y in 0..n with ``pred(y)`` (n + 1 if none) for a predicate false then true, searched from ``guess``."""
    g = min(max(int(guess), 0), n)
    step = 1
    if pred(g):
        hi, lo = g, -1
        while True:
            y = hi - step
            if y < 0:
                break
            if pred(y):
                hi, step = y, 2 * step
            else:
                lo = y
                break
    else:
        lo, hi = g, n + 1
        while True:
            y = lo + step
            if y > n:
                break
            if pred(y):
                hi = y
                break
            lo, step = y, 2 * step
    while hi - lo > 1:  # pred(lo) is False (or lo == -1), pred(hi) True (or hi == n + 1)
        mid = (lo + hi) // 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi


def decide_probability(
    base_passes: int,
    base_trials: int,
    cand_rate: float,
    trials: int,
    *,
    alpha: float,
    pass_alpha: float | None = None,
    delta: float = 0.10,
    test: str = "fisher",
    beta: float = 0.10,
) -> tuple[float, float]:
    """(P(PASS), P(FAIL)) of a fixed-n check of ``trials`` candidate trials at the true candidate rate
    ``cand_rate``, against the fixed baseline ``(base_passes, base_trials)``: exact binomial sums."""
    regions = _regions(base_passes, base_trials, alpha, pass_alpha, delta, test, beta)
    n = check_count("trials", trials, minimum=1)
    return _probabilities(regions, n, float(cand_rate))


def _regions(
    base_passes: int,
    base_trials: int,
    alpha: float,
    pass_alpha: float | None,
    delta: float,
    test: str,
    beta: float,
) -> _Regions:
    nb = check_count("base_trials", base_trials, minimum=1)
    kb = check_passes("base_passes", base_passes, "base_trials", nb)
    a = check_open_unit("alpha", alpha)
    pa = a if pass_alpha is None else check_open_unit("pass_alpha", pass_alpha)
    return _Regions(
        kb,
        nb,
        a,
        pa,
        check_margin("delta", delta),
        check_choice("test", test, TESTS),
        check_open_unit("beta", beta),
    )


def _probabilities(regions: _Regions, n: int, p: float, *, exact: bool = True) -> tuple[float, float]:
    t_pass, t_fail = regions.thresholds(n, p, exact=exact)
    passed = float(stats.binom.sf(t_pass - 1, n, p)) if t_pass <= n else 0.0
    failed = float(stats.binom.cdf(t_fail, n, p)) if t_fail >= 0 else 0.0
    return passed, failed


def _tolerance(n: int) -> int:
    return 1 if n < _EXACT_BELOW else n // 200


def trials_to_decide(
    base_passes: int,
    base_trials: int,
    cand_passes: int,
    cand_trials: int,
    *,
    alpha: float,
    pass_alpha: float | None = None,
    delta: float = 0.10,
    power: float = POWER,
    limit: int = LIMIT,
    test: str = "fisher",
    beta: float = 0.10,
) -> MoreTrials | None:
    """Smallest number of candidate trials ``N`` a fresh fixed-n check needs to decide (PASS or FAIL)
    with probability ``>= power`` at the observed candidate rate, the baseline's counts held fixed.

    ``alpha`` is the FAIL level, ``pass_alpha`` the PASS level (default ``alpha``), ``test`` the
    FAIL test, as in :func:`regression_verdict` with its non-inferiority rule (the paper's rule has no
    monotone PASS region; ``test="boschloo"`` works, but by a whole verdict per probe). The decision probability at ``N`` sums the binomial pmf of
    ``Y ~ Binomial(N, cand_passes / cand_trials)`` over the PASS region (``Y`` at or above a
    threshold) and the FAIL region (at or below one); ``N`` is searched by doubling from
    ``cand_trials`` (halving when that already suffices), then bisection: exact below 200 trials,
    within 0.5 % above. ``capped`` when even ``limit`` trials fall short (``total`` is then
    ``limit``). None when ``cand_trials`` is 0: no rate to plan with. A planning figure at the
    observed rate: see the module docstring for what it assumes (and why a sequential design needs
    a little more at its cap).

    Cost: the PASS threshold needs the exact NI p-value (up to ~50 ms a count at N = 5,000), so the
    search runs on thresholds from the NI statistic at a critical value calibrated by exact ones,
    and only the bracket around its answer is settled with exact thresholds (a few p-values).
    """
    nc = check_count("cand_trials", cand_trials)
    if nc == 0:
        return None
    kc = check_passes("cand_passes", cand_passes, "cand_trials", nc)
    check_open_unit("power", power)
    limit = check_count("limit", limit, minimum=1)
    regions = _regions(base_passes, base_trials, alpha, pass_alpha, delta, test, beta)
    p = kc / nc
    seen: dict[tuple[int, bool], tuple[float, float]] = {}

    def prob(n: int, exact: bool) -> tuple[float, float]:
        if (n, True) in seen:
            return seen[(n, True)]
        if (n, exact) not in seen:
            seen[(n, exact)] = _probabilities(regions, n, p, exact=exact)
        return seen[(n, exact)]

    def enough(n: int, exact: bool) -> bool:
        return n > 0 and sum(prob(n, exact)) >= power

    # 1. doubling (or halving) from the trials spent, then bisection, on approximate thresholds
    start = min(nc, limit)
    enough(start, True)  # exact where it is cheap: calibrates the NI critical value for the rest
    n1 = _search(lambda n: enough(n, False), start, limit, _tolerance)
    for _ in range(3):  # an exact evaluation at the answer re-calibrates the critical value: search again
        probe = limit if n1 is None else n1
        if not enough(probe, True) and probe == limit:  # even `limit` falls short, exactly
            return _result(limit, nc, prob(limit, True), power, limit, capped=True)
        seen = {k: v for k, v in seen.items() if k[1]}  # approximate figures of the old critical value go
        again = _search(lambda n: enough(n, False), probe, limit, _tolerance)
        if again is not None and n1 is not None and abs(again - n1) <= _tolerance(n1):
            break
        n1 = again
    if n1 is None:  # `limit` suffices (checked above) where the approximation still says it does not
        n1 = limit
    # 2. the bracket around n1 with exact thresholds: lo falls short, hi suffices
    if enough(n1, True):
        hi, w = n1, _tolerance(n1)
        while True:
            lo = max(hi - w, 0)
            if not enough(lo, True):
                break
            hi, w = lo, 2 * w
    else:
        lo, w = n1, _tolerance(n1)
        while True:
            hi = min(lo + w, limit)
            if hi == lo:
                return _result(limit, nc, prob(limit, True), power, limit, capped=True)
            if enough(hi, True):
                break
            lo, w = hi, 2 * w
    while hi - lo > _tolerance(hi):
        mid = (lo + hi) // 2
        if enough(mid, True):
            hi = mid
        else:
            lo = mid
    return _result(hi, nc, prob(hi, True), power, limit, capped=False)


def _search(enough: Any, start: int, limit: int, tolerance: Any) -> int | None:
    """Smallest n in 1..limit with ``enough(n)`` (to ``tolerance(n)``), by doubling or halving from
    ``start`` then bisection; None when ``enough(limit)`` is False."""
    if enough(start):
        lo, hi = 0, start  # enough(hi); not enough(lo) (0 trials decide nothing)
        while hi > 1:
            m = hi // 2
            if not enough(m):
                lo = m
                break
            hi = m
    else:
        lo = start
        while True:
            n = min(2 * lo, limit)
            if n == lo:
                return None
            if enough(n):
                hi = n
                break
            lo = n
    while hi - lo > tolerance(hi):
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _result(
    n: int, spent: int, probs: tuple[float, float], power: float, limit: int, *, capped: bool
) -> MoreTrials:
    passed, failed = probs
    return MoreTrials(
        total=n,
        additional=max(0, n - spent),
        probability=min(1.0, passed + failed),
        capped=capped,
        pass_probability=passed,
        fail_probability=failed,
        spent=spent,
        power=power,
        limit=limit,
    )


__all__ = ["LIMIT", "POWER", "MoreTrials", "decide_probability", "trials_to_decide"]
