"""A plain-callable agent whose behaviour depends on a module-level prompt string, for mutation tests:
`mutation: {prompts: ["tests._support.prompted_agent:SYSTEM_PROMPT"]}` mutates it while a mutant's trials run."""

from __future__ import annotations

import random

SYSTEM_PROMPT = "Always mention the refund policy.\nAnswer politely.\nKeep it short."


def agent(text: str, seed: int) -> str:
    mentions = "refund" in SYSTEM_PROMPT  # instruction dropout of line 1 removes it
    ok = random.Random(seed).random() < 0.97
    return "our refund policy applies" if mentions and ok else "ok"
