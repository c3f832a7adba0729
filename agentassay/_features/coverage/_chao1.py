"""Chao1 richness estimate of the number of feasible decision paths (paper Def. 4.4, Eq. 16).

The paper writes Ŝ = d + f1²/(2 f2). That form divides by f2, the number of paths seen exactly
twice, so it is undefined whenever no path has been seen twice, which is the usual state of a
small suite (every route seen once, or one route seen over and over plus a few singletons). We use
the bias-corrected form of Chao (1987) as given by Chao (2005), without its (n − 1)/n factor::

    Ŝ = d + f1 (f1 − 1) / (2 (f2 + 1))

It is defined for every sample, is never below d, and approaches the classic form when f2 is
large; docs/coverage-behavioural.md measures both on path distributions with a known size.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Chao1Estimate:
    """Abundance counts of the observed classes and the two Chao1 estimates of their total.

    ``observed`` is d (distinct classes), ``f1``/``f2`` the classes seen exactly once/twice,
    ``n`` the sample size (sum of counts). ``estimate`` is the bias-corrected Chao1 (always
    defined, ≥ d, 0 for an empty sample); ``classic`` is the paper's d + f1²/(2 f2): ``None`` when
    f2 = 0 and f1 > 0 (division by zero), d when f1 = 0 (no singletons, nothing to add).
    """

    observed: int
    f1: int
    f2: int
    n: int
    estimate: float
    classic: float | None

    @property
    def coverage(self) -> float:
        """d / Ŝ (paper Eq. 15) with the bias-corrected Ŝ; 0.0 for an empty sample."""
        return self.observed / self.estimate if self.estimate > 0 else 0.0


def chao1_from_frequencies(observed: int, f1: int, f2: int, n: int | None = None) -> Chao1Estimate:
    """Chao1 from the summary counts d, f1, f2 (``n`` only recorded; defaults to unknown = -1)."""
    for name, value in (("observed", observed), ("f1", f1), ("f2", f2)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    if f1 + f2 > observed:
        raise ValueError(f"f1 + f2 = {f1 + f2} exceeds the {observed} observed classes")
    observed, f1, f2 = int(observed), int(f1), int(f2)
    estimate = observed + f1 * (f1 - 1) / (2 * (f2 + 1))
    if f1 == 0:
        classic: float | None = float(observed)
    elif f2 == 0:
        classic = None
    else:
        classic = observed + f1 * f1 / (2 * f2)
    return Chao1Estimate(observed, f1, f2, -1 if n is None else int(n), float(estimate), classic)


def chao1(counts: Iterable[int] | Mapping[Any, int]) -> Chao1Estimate:
    """Chao1 from per-class abundances: an iterable of counts, or a mapping class -> count.

    >>> chao1([1, 1, 1]).estimate          # f1 = 3, f2 = 0: 3 + 3·2/2
    6.0
    >>> chao1([1, 1, 1, 1, 2, 2]).estimate  # f1 = 4, f2 = 2: 6 + 4·3/6
    8.0
    """
    values = counts.values() if isinstance(counts, Mapping) else counts
    observed = f1 = f2 = n = 0
    for c in values:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 0:
            raise ValueError(f"class counts must be non-negative integers; got {c!r}")
        if c == 0:
            continue
        observed += 1
        n += int(c)
        if c == 1:
            f1 += 1
        elif c == 2:
            f2 += 1
    return chao1_from_frequencies(observed, f1, f2, n)
