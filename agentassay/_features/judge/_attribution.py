"""Whose noise is it: the agent's or the judge's? (docs/judge.md, "Noise attribution")

Each graded trace i gets k binary pass grades G_i1..G_ik (the judge's repeats). By the law of total
variance, Var(G) = E[Var(G | trace)] + Var(E[G | trace]): the first term is the judge's noise (how
much repeats on the same trace disagree), the second the agent's (how much traces differ in how
likely they are to pass). With p_i the share of trace i's repeats that pass:

    judge  W = mean_i  k/(k-1) · p_i (1 - p_i)            unbiased for E[Var(G | trace)]
    agent  B = sample variance of p_i (n - 1) - W / k     unbiased for Var(E[G | trace])

(the one-way random-effects ANOVA estimators). The judge share W / (W + B) is a ratio, biased by
O(1/n); it is jackknife-corrected over traces, and the jackknife also gives its standard error.
``benchmarks/judge.py`` measures all of it against a judge of known noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Attribution:
    """The noise split of one scenario's graded traces (None where it is not defined)."""

    traces: int
    repeats: int
    disagreement: float | None = None  # share of traces whose raw grades are not all equal
    pass_disagreement: float | None = (
        None  # … whose pass grades are not all equal (= disagreement on pass_fail)
    )
    judge_variance: float | None = None  # E[Var(G | trace)]
    agent_variance: float | None = None  # Var(E[G | trace])
    total_variance: float | None = None  # Var(G), their sum
    judge_share: float | None = None  # E[Var(G | trace)] / Var(G); None when Var(G) is 0
    judge_share_se: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in asdict(self).items()}


def _components(s1: float, s2: float, w: float, n: int, k: int) -> tuple[float, float]:
    """(W, B) from the sums of p_i and p_i^2 and the sum of the within terms, over n traces."""
    wbar = w / n
    var_p = (s2 - s1 * s1 / n) / (n - 1)
    return wbar, var_p - wbar / k


def _share(s1: float, s2: float, w: float, n: int, k: int) -> float | None:
    wv, bv = _components(s1, s2, w, n, k)
    total = wv + bv
    return wv / total if total > 1e-12 else None


def attribution(grades: Sequence[Sequence[Any]], passes: Sequence[Sequence[bool]]) -> Attribution:
    """The split over traces that all have the same number of repeats (``grades`` raw, ``passes`` binary).

    With one repeat only the total variance is defined: the judge's share of it cannot be told
    from the agent's without grading a trace twice.
    """
    n = len(passes)
    k = len(passes[0]) if n else 0
    if n == 0 or k == 0:
        return Attribution(n, k)
    if any(len(p) != k for p in passes):
        raise ValueError("every trace needs the same number of repeats")
    p = [sum(map(bool, row)) / k for row in passes]
    if k == 1:
        mean = sum(p) / n
        total = mean * (1 - mean) * n / (n - 1) if n > 1 else None
        return Attribution(n, k, total_variance=total)
    disagreement = sum(len(set(row)) > 1 for row in grades) / n
    pass_disagreement = sum(0 < x < 1 for x in p) / n
    if n < 2:
        return Attribution(n, k, disagreement, pass_disagreement)
    within = [k / (k - 1) * x * (1 - x) for x in p]
    s1, s2, w = math.fsum(p), math.fsum(x * x for x in p), math.fsum(within)
    wv, bv = _components(s1, s2, w, n, k)
    share = _share(s1, s2, w, n, k)
    se = None
    if share is not None and n >= 3:
        loo = [_share(s1 - x, s2 - x * x, w - wi, n - 1, k) for x, wi in zip(p, within, strict=True)]
        if all(v is not None for v in loo):
            vals = [float(v) for v in loo if v is not None]
            mean = math.fsum(vals) / n
            share = n * share - (n - 1) * mean  # jackknife bias correction
            se = math.sqrt((n - 1) / n * math.fsum((v - mean) ** 2 for v in vals))
        share = min(1.0, max(0.0, share))
    return Attribution(n, k, disagreement, pass_disagreement, wv, bv, wv + bv, share, se)
