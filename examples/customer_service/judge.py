"""Scripted judges for the customer-service example: an offline stand-in for an LLM judge (docs/judge.md).

A scripted judge is ``function(*, input, output, rubric, seed) -> grade``. These look for the seat
the customer asked for in the reply (and for a promised refund, which fails it) — the rubric of the
example suite — and then, with probability ``flip``, give the opposite grade: a judge whose noise is
known, so the run's noise attribution can be checked against it. The ``seed`` AgentAssay passes is
one per (graded content, repeat), so the noise is reproducible run after run.

    judge:
      rubric: "The reply tells the customer their new seat number and does not promise a refund."
      model: {provider: offline, behaviour: "examples.customer_service.judge:noisy_seat_judge"}
      repeats: 3
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

_SEAT = re.compile(r"\b(\d{1,2}[A-F])\b")


def make_seat_judge(flip: float = 0.0) -> Callable[..., tuple[bool, str]]:
    """A pass/fail judge of the seat-change rubric that flips its grade with probability ``flip``."""
    if not 0.0 <= flip <= 1.0:
        raise ValueError(f"flip must be a probability, got {flip!r}")

    def judge(*, input: str, output: Any, rubric: str, seed: int) -> tuple[bool, str]:
        text = "" if output is None else str(output)
        asked = _SEAT.search(input)
        if asked is None:
            ok, reason = False, "the customer named no seat, so the reply cannot confirm one"
        elif asked.group(1) not in text:
            ok, reason = False, f"the reply does not tell the customer their new seat {asked.group(1)}"
        elif "refund" in text.lower():
            ok, reason = False, "the reply mentions a refund, which it must not promise"
        else:
            ok, reason = True, f"the reply confirms seat {asked.group(1)} and promises no refund"
        if flip and random.Random(seed).random() < flip:
            return not ok, f"(grade flipped at random) {reason}"
        return ok, reason

    judge.__doc__ = f"The seat-change judge, grades flipped with probability {flip:g}."
    return judge


seat_judge = make_seat_judge(0.0)  # a judge without noise
noisy_seat_judge = make_seat_judge(0.15)  # wrong 15% of the time, at random
