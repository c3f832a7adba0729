"""USD of a trial from its tokens and the suite's price table (no network look-ups)."""

from __future__ import annotations

from .._traces import Cost


def price_usd(cost: Cost, model: str | None, prices: dict[str, dict[str, float]]) -> float | None:
    """Tokens times the model's price per million; ``"*"`` prices any model not listed.

    None when no price applies: an unpriced trial is reported as unpriced, never as free.
    """
    table = prices.get(model or "") or prices.get("*")
    if table is None:
        return None
    return (cost.input_tokens * table.get("input", 0.0) + cost.output_tokens * table.get("output", 0.0)) / 1e6
