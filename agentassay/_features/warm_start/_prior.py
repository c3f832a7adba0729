"""The prior a warm start hands the gate (``monitor_for(prior=...)``): recorded trials of a scenario.

The gate fixes the threshold SPRT's level; this decides from ``config.warm_start`` whether the
recorded trials recalibrate its PASS rule, and by how much the miss rate may grow (_stats/_warm.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..._spec import Settings
from ..._stats import SPRT, WarmStart, warm_start

KIND = "warm_start"  # the key of its evidence in a verdict (a merge rebuilds the prior from it)


@dataclass(frozen=True)
class WarmSPRT:
    """A threshold SPRT warmed by recorded trials, and what the verdict records of it."""

    warm: WarmStart
    threshold: float
    delta: float
    alpha: float
    beta: float
    max_trials: int
    kind: str = KIND

    def sprt(self) -> SPRT:
        return SPRT(
            threshold=self.threshold, delta=self.delta, alpha=self.alpha, beta=self.beta, max_trials=self.max_trials,
            warm=self.warm,
        )

    def to_dict(self) -> dict[str, Any]:
        return self.warm.to_dict()

    def explain(self) -> str:
        return self.warm.explain()


@dataclass(frozen=True)
class WarmPrior:
    """``passes`` of ``trials`` recorded trials of one scenario (from any version)."""

    passes: int
    trials: int

    def start(self, settings: Settings, *, threshold: float, alpha: float) -> WarmSPRT | None:
        """The warmed SPRT at the gate's level, or None when warm starts are off or nothing was recorded."""
        part = settings.part(KIND)
        if not part.enabled or self.trials <= 0:
            return None
        warm = warm_start(
            self.passes, self.trials, threshold=threshold, delta=settings.delta, alpha=alpha,
            beta=settings.beta, max_trials=settings.trial_cap, inflation=part.inflation,
        )
        return WarmSPRT(warm, threshold, settings.delta, alpha, settings.beta, settings.trial_cap)

    @classmethod
    def from_evidence(cls, evidence: dict[str, Any]) -> WarmPrior | None:
        """The prior a verdict's evidence records (``merge`` replays the warmed test from it)."""
        warm = evidence.get(KIND)
        return cls(int(warm["prior_passes"]), int(warm["prior_trials"])) if isinstance(warm, dict) else None
