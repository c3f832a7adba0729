"""Effect sizes for a change in pass rate (paper Def. 3.8)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class EffectSizes:
    """Baseline minus candidate: positive numbers mean the candidate got worse."""

    difference: float
    cohens_h: float
    odds_ratio: float

    @property
    def magnitude(self) -> str:
        """Cohen's conventional label for |h|: negligible, small, medium or large."""
        h = abs(self.cohens_h)
        return "negligible" if h < 0.2 else "small" if h < 0.5 else "medium" if h < 0.8 else "large"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"magnitude": self.magnitude}


def cohens_h(p_base: float, p_cand: float) -> float:
    return 2 * math.asin(math.sqrt(p_base)) - 2 * math.asin(math.sqrt(p_cand))


def effect_sizes(base_passes: int, base_trials: int, cand_passes: int, cand_trials: int) -> EffectSizes:
    """Delta, Cohen's h and the odds ratio of baseline to candidate.

    The odds ratio adds 0.5 to every cell when any cell is zero (Haldane-Anscombe), so it
    stays finite for the all-pass agents that are common in practice.
    """
    pb, pc = base_passes / base_trials, cand_passes / cand_trials
    cells = [base_passes, base_trials - base_passes, cand_passes, cand_trials - cand_passes]
    a, b, c, d = (x + 0.5 for x in cells) if min(cells) == 0 else cells
    return EffectSizes(pb - pc, cohens_h(pb, pc), (a * d) / (b * c))
