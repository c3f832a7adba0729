"""A stochastic ticket router: a plain Python callable standing in for an LLM classifier.

``route_ticket(text, seed)`` returns a department name. It is right most of the time and
wrong some of the time, at rates that depend on how clear the ticket is, the way a real
model is; the seed makes every trial reproducible. ``route_ticket_v2`` is a regressed
version whose keyword table lost "login", so authentication tickets fall back to guessing.
"""

from __future__ import annotations

import random

DEPARTMENTS = ("billing", "authentication", "shipping", "technical")

_KEYWORDS_V1 = {
    "billing": ("payment", "charge", "invoice", "refund", "card"),
    "authentication": ("login", "password", "log in", "2fa", "locked"),
    "shipping": ("delivery", "package", "shipping", "tracking"),
    "technical": ("error", "crash", "bug", "slow"),
}
_KEYWORDS_V2 = {**_KEYWORDS_V1, "authentication": ("password", "2fa", "locked")}


def _route(text: str, seed: int, keywords: dict[str, tuple[str, ...]], slip: float) -> str:
    rng = random.Random(f"{seed}|{text}")
    lowered = text.lower()
    matches = [d for d, words in keywords.items() if any(w in lowered for w in words)]
    if matches and rng.random() > slip:
        return matches[0]
    return rng.choice(DEPARTMENTS)


def route_ticket(text: str, seed: int = 0) -> str:
    """v1: a clear ticket is routed correctly about 97% of the time."""
    return _route(text, seed, _KEYWORDS_V1, slip=0.04)


def route_ticket_v2(text: str, seed: int = 0) -> str:
    """v2: 'login' dropped from the keywords, so 'Cannot login' tickets are guessed."""
    return _route(text, seed, _KEYWORDS_V2, slip=0.04)
