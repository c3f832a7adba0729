"""How long to wait before retrying a transient error (exponential backoff, full jitter)."""

from __future__ import annotations

import random

from .._integrations.adapters._transient import TransientError, is_transient, retry_after

__all__ = ["TransientError", "backoff", "is_transient", "retry_after"]


def backoff(attempt: int, exc: BaseException, *, base: float = 0.5, cap: float = 30.0, rng: random.Random | None = None) -> float:
    """Delay before retry number ``attempt`` (1-based): Retry-After when given, else full jitter."""
    asked = retry_after(exc)
    if asked is not None:
        return min(max(asked, 0.0), cap)
    r = rng or random
    return r.uniform(0, min(cap, base * 2 ** (attempt - 1)))
