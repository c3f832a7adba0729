"""Source transformations φ of metamorphic relations (paper Def. 6.1): the follow-up input x' = φ(x).

Each transformation is a pure function of the input, the suite seed and the relation's name, so
the follow-up input is fixed when the suite is read (one per relation, shown in the results) and a
baseline and a candidate recorded with the same suite see the same x'. Where a transformation draws
(which template, which words, which order) it draws from a ``random.Random`` seeded by a hash of
those three, never from shared state.

The built-ins are deliberately small and meaning-preserving; anything domain-specific is a
``python: module:function`` transformation of your own.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..._errors import AgentAssayError

TRANSFORMS = ("paraphrase", "typos", "case", "noise", "permute", "constraint", "python")
CASES = ("upper", "lower", "title")
PERMUTE = ("sentences", "lines")

# Paraphrase templates in three slots; ``paraphrase: N`` fills N of the slots (seeded), so N = 1..3.
# No template carries a word that could change what the request is about.
PARAPHRASES: tuple[tuple[str, ...], ...] = (
    ("Question: {input}", "Quick question. {input}", "Could you help me with this? {input}"),
    ("Hi, {input}", "Hello! {input}", "Good day. {input}"),
    ("{input} Thanks!", "{input} Thank you in advance.", "{input} Much appreciated."),
)

# Irrelevant sentences for ``noise: N``: no domain words (travel, orders, accounts, money, food, devices),
# no digits and no capitalised codes, so they cannot be mistaken for part of the request.
NOISE: tuple[str, ...] = (
    "The weather has been lovely this week.",
    "My neighbour's cat likes to sit by the window.",
    "I have been reading a good novel lately.",
    "Our garden is full of tomatoes this year.",
    "I listened to some jazz this morning.",
    "My sister is learning to play the piano.",
    "The sunset yesterday was beautiful.",
    "I went for a long walk in the park.",
)

_WORD = re.compile(r"\b[A-Za-z]{4,}\b")  # letters only: 14C, ABC123 and e-mail-like tokens never match
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class TransformError(AgentAssayError, ValueError):
    """A transformation that cannot apply to this input (e.g. more typos than words): a suite error."""


def rng_for(seed: int, relation: str, kind: str) -> random.Random:
    """The draws of one relation's transformation: reproducible, independent of every other relation."""
    digest = hashlib.blake2b(f"{seed}|{relation}|{kind}".encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def paraphrase(text: str, n: int, rng: random.Random) -> str:
    """Fill ``n`` template slots (framing, greeting, closing), one seeded template each."""
    slots = sorted(rng.sample(range(len(PARAPHRASES)), n))
    for slot in slots:
        text = rng.choice(PARAPHRASES[slot]).format(input=text)
    return text


def typos(text: str, n: int, rng: random.Random) -> str:
    """``n`` adjacent-letter swaps, one per word, inside words of 4+ letters (first and last letters kept).

    Tokens with digits or several capitals (14C, ABC123, IDs) are never touched: a typo there would
    change what the request *means*, not how it is written.
    """
    candidates: list[tuple[int, list[int]]] = []
    for m in _WORD.finditer(text):
        word = m.group()
        if any(c.isupper() for c in word[1:]):
            continue
        spots = [j for j in range(1, len(word) - 2) if word[j] != word[j + 1]]
        if spots:
            candidates.append((m.start(), spots))
    if len(candidates) < n:
        raise TransformError(
            f"typos: {n} needs {n} words of 4+ letters to misspell, and the input has {len(candidates)}; "
            f"use `typos: {max(len(candidates), 1)}` or another transformation"
        )
    chars = list(text)
    for start, spots in rng.sample(candidates, n):
        j = start + rng.choice(spots)
        chars[j], chars[j + 1] = chars[j + 1], chars[j]
    return "".join(chars)


def case(text: str, how: str) -> str:
    if how == "upper":
        return text.upper()
    if how == "lower":
        return text.lower()
    # title: capitalise each word's first letter only (str.title would turn "I'd" into "I'D").
    return re.sub(r"(^|\s)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def noise(text: str, n: int, rng: random.Random) -> str:
    """``n`` distinct irrelevant sentences appended."""
    return " ".join([text.rstrip(), *rng.sample(NOISE, n)])


def permute(text: str, unit: str, rng: random.Random) -> str:
    """The input's sentences (or lines) in another order; seeded, never the original order."""
    if unit == "lines":
        parts, sep = text.splitlines(), "\n"
    else:
        parts, sep = [p for p in _SENTENCE_END.split(text.strip()) if p], " "
    if len(set(parts)) < 2:
        raise TransformError(
            f"permute: {unit} needs at least two different {unit} in the input, and it has {len(parts)}; "
            "a permutation would leave it unchanged"
        )
    order = list(range(len(parts)))
    rng.shuffle(order)
    if [parts[i] for i in order] == parts:  # the identity (or equal to it): rotate by one
        order = order[1:] + order[:1]
    return sep.join(parts[i] for i in order)


def constraint(text: str, words: str) -> str:
    return f"{text.rstrip()} {words.strip()}"


@dataclass(frozen=True)
class Transform:
    """One transformation: its kind (``noise``), its value (``1``) and, for ``python``, the function."""

    kind: str
    value: Any
    function: Callable[[str], Any] | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """``noise: 1``: how it was written, for reports."""
        return f"{self.kind}: {self.value}"

    def to_dict(self) -> dict[str, Any]:
        return {self.kind: self.value}

    def apply(self, text: str, *, seed: int, relation: str) -> str:
        """x' = φ(x). Raises :class:`TransformError` when it cannot apply to ``text``."""
        rng = rng_for(seed, relation, self.kind)
        k, v = self.kind, self.value
        if k == "paraphrase":
            return paraphrase(text, int(v), rng)
        if k == "typos":
            return typos(text, int(v), rng)
        if k == "case":
            return case(text, str(v))
        if k == "noise":
            return noise(text, int(v), rng)
        if k == "permute":
            return permute(text, str(v), rng)
        if k == "constraint":
            return constraint(text, str(v))
        if k == "python":
            assert self.function is not None
            try:
                out = self.function(text)
            except Exception as exc:
                raise TransformError(f"{v} raised {type(exc).__name__}: {exc}") from None
            if not isinstance(out, str):
                raise TransformError(
                    f"{v} returned a {type(out).__name__}; a transformation returns the new input (str)"
                )
            return out
        raise TransformError(f"unknown transformation {k!r}")
