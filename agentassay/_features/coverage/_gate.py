"""The coverage gate (paper Eq. 26): thin coverage turns a deploy into manual review, never into a block."""

from __future__ import annotations

from dataclasses import replace

from ..._gate import SuiteDecision
from ..._stats import Decision


def coverage_gate(
    decision: SuiteDecision, overall: float | None, minimum: float | None
) -> tuple[SuiteDecision, str | None]:
    """Paper Eq. 26: a deploy whose overall coverage is below ``minimum`` becomes manual review.

    Coverage never turns a block into anything else, and never blocks: too little coverage means
    the evidence is thin, not that the agent got worse.
    """
    if minimum is None or overall is None or decision.decision is not Decision.DEPLOY or overall >= minimum:
        return decision, None
    note = (
        f"coverage gate (config.coverage.min = {minimum:g}): overall coverage {overall:.3f} is below the minimum, "
        "so a PASS needs manual review (paper Eq. 26)"
    )
    return replace(decision, decision=Decision.MANUAL), note
