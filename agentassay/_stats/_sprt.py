"""Wald's sequential probability ratio test for a pass rate (paper Def. 3.9).

H0: p >= threshold (the agent is fine) against H1: p <= threshold - delta. The
log-likelihood ratio after ``s`` passes and ``f`` failures is ``s*lp + f*lf``, so the
whole test is a walk on the integer lattice; computing the ratio from the counts (never
by accumulating floats) keeps the live object and the exact dynamic programme of
``SPRTDesign.operating_characteristic`` (in ``_sprt_design``) in perfect agreement.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._sprt_design import SPRTCharacteristic, SPRTDesign, TrialCountDistribution
from ._verdict import Verdict
from ._warm import WarmStart

# The design classes live in _sprt_design (shared with _warm); they stay importable from here.
__all__ = ["SPRT", "SPRTCharacteristic", "SPRTDesign", "SPRTResult", "TrialCountDistribution", "sprt"]


@dataclass(frozen=True)
class SPRTResult:
    """Outcome of an SPRT run: the verdict, the evidence, and the trials it took."""

    verdict: Verdict
    passes: int
    trials: int
    log_likelihood_ratio: float
    lower_boundary: float
    upper_boundary: float
    threshold: float
    delta: float
    alpha: float
    beta: float
    max_trials: int | None
    warm_rate: float | None = None
    warm_bound: float | None = None

    def explain(self) -> str:
        rate = f"{self.passes}/{self.trials} passed"
        h0, h1 = f"{self.threshold:.2f}", f"{self.threshold - self.delta:.2f}"
        if self.verdict is Verdict.PASS and self.warm_rate is not None:
            return (
                f"PASS: {rate}; with the warm start (recorded trials put the pass rate near {self.warm_rate:.2f}) "
                f"the evidence favours at least {h0} over {h1} (SPRT stopped after {self.trials} trials)."
            )
        if self.verdict is Verdict.PASS:
            return f"PASS: {rate}; the evidence favours a pass rate of at least {h0} over {h1} (SPRT stopped after {self.trials} trials)."
        if self.verdict is Verdict.FAIL:
            return f"FAIL: {rate}; the evidence favours a pass rate of {h1} or less over {h0} (SPRT stopped after {self.trials} trials)."
        if self.max_trials is not None and self.trials >= self.max_trials:
            return f"INCONCLUSIVE: {rate}; the SPRT reached its cap of {self.max_trials} trials without deciding between {h0} and {h1}."
        return f"INCONCLUSIVE: {rate}; the SPRT has not yet decided between {h0} and {h1}."

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self) | {"verdict": self.verdict.value}


class SPRT:
    """Wald's SPRT fed one trial at a time: ``update(passed)`` returns the verdict once decided.

    Once decided, further outcomes are refused: a sequential test's guarantees hold for the
    decision at the first boundary crossing, not for outcomes added afterwards.
    """

    def __init__(
        self,
        *,
        threshold: float,
        delta: float = 0.10,
        alpha: float = 0.05,
        beta: float = 0.10,
        max_trials: int | None = None,
        warm: WarmStart | None = None,
    ) -> None:
        if warm is not None and warm.used:
            self.design = SPRTDesign(threshold, delta, alpha, beta, max_trials, warm.rate, warm.bound)
        else:
            self.design = SPRTDesign(threshold, delta, alpha, beta, max_trials)
        self.warm = warm
        self.passes = 0
        self.fails = 0
        self.verdict: Verdict | None = None

    @property
    def trials(self) -> int:
        return self.passes + self.fails

    def update(self, passed: bool) -> Verdict | None:
        if self.verdict is not None:
            raise RuntimeError(f"the SPRT already decided {self.verdict.value.upper()}; start a new one")
        if passed:
            self.passes += 1
        else:
            self.fails += 1
        self.verdict = self.design.decide(self.passes, self.fails)
        return self.verdict

    def result(self) -> SPRTResult:
        d = self.design
        return SPRTResult(
            self.verdict or Verdict.INCONCLUSIVE,
            self.passes,
            self.trials,
            float(d.llr(self.passes, self.fails)),
            d.lower,
            d.upper,
            d.threshold,
            d.delta,
            d.alpha,
            d.beta,
            d.max_trials,
            d.warm_rate if d.warm else None,
            d.warm_bound if d.warm else None,
        )


def sprt(
    outcomes: Iterable[bool],
    *,
    threshold: float,
    delta: float = 0.10,
    alpha: float = 0.05,
    beta: float = 0.10,
    max_trials: int | None = None,
) -> SPRTResult:
    """Run the SPRT over a whole sequence, stopping at the first boundary crossing.

    Outcomes after the decision are ignored. A sequence that ends undecided, or reaches
    ``max_trials``, is INCONCLUSIVE.
    """
    test = SPRT(threshold=threshold, delta=delta, alpha=alpha, beta=beta, max_trials=max_trials)
    for outcome in outcomes:
        if test.update(bool(outcome)) is not None:
            break
    return test.result()
