"""Plain-callable agents, transformations and relation checks for tests/features/metamorphic/test_metamorphic.py."""

from __future__ import annotations

import random
import threading

CALLS: list[tuple[str, int]] = []  # (input, seed) of every call to ``recorder``
_LOCK = threading.Lock()


def recorder(text: str, seed: int) -> str:
    """Passes ('ok') with probability 0.8 per seed, whatever the input; records what it was given."""
    with _LOCK:
        CALLS.append((text, seed))
    return "ok" if random.Random(seed).random() < 0.8 else "no"


def fragile(text: str, seed: int) -> str:
    """Like ``recorder``, but fails every input written in capitals."""
    if text == text.upper():
        return "no"
    return "ok" if random.Random(seed).random() < 0.8 else "no"


def shout(text: str) -> str:
    return text.upper() + "!"


def not_a_string(text: str) -> int:
    return 3


def same_answer(source: object, followup: object) -> tuple[bool, str]:
    a, b = getattr(source, "output", None), getattr(followup, "output", None)
    return a == b, f"answers {a!r} and {b!r}"


NOT_CALLABLE = 42
