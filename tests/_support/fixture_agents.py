"""Plain-callable agents with known behaviour, for runner and CLI tests."""

from __future__ import annotations

import asyncio
import random
import threading
import time

from agentassay._runner import TransientError


def always_ok(text: str) -> str:
    return "ok"


def coin(text: str, seed: int) -> str:
    """Passes ('ok') with probability 0.9, reproducibly per seed."""
    return "ok" if random.Random(seed).random() < 0.9 else "no"


def coin_low(text: str, seed: int) -> str:
    return "ok" if random.Random(seed).random() < 0.5 else "no"


async def jittery(text: str, seed: int) -> str:
    """Random latency so trials finish out of order; passes with probability 0.8."""
    rng = random.Random(seed)
    await asyncio.sleep(rng.uniform(0, 0.02))
    return "ok" if rng.random() < 0.8 else "no"


def raises(text: str) -> str:
    raise ValueError("the agent is broken")


def raises_on_refund(text: str) -> str:
    if "refund" in text:
        raise RuntimeError("refund service down")
    return "ok"


def hangs(text: str) -> str:
    threading.Event().wait()  # blocks until the runner's timeout abandons the trial
    return "ok"


def returns_none(text: str) -> None:
    return None


def slow_ok(text: str) -> str:
    time.sleep(0.05)
    return "ok"


class Flaky:
    """Raises a transient error on the first ``failures`` calls per input, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, text: str, seed: int) -> str:
        with self.lock:
            self.calls[seed] = self.calls.get(seed, 0) + 1
            n = self.calls[seed]
        if n <= self.failures:
            raise TransientError("429 rate limited", retry_after=0.0)
        return "ok"


class Gauge:
    """Async agent that records how many calls are in flight at once."""

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay
        self.now = 0
        self.peak = 0

    async def __call__(self, text: str) -> str:
        self.now += 1
        self.peak = max(self.peak, self.now)
        await asyncio.sleep(self.delay)
        self.now -= 1
        return "ok"
