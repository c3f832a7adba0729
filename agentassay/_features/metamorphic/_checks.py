"""Relation checks R(A(x), A(x')): does one pair of a source trial and its follow-up keep the relation?

A check sees both sides of a pair — the trial outcome (the scenario's evaluator verdict) and the
trace — and returns the reason the pair violates the relation, or None. An error trial on either
side is a violation whatever the check: a follow-up the agent cannot answer is exactly what a
relation is there to catch, and dropping such pairs would hide it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._evaluators import outcome as _outcome
from ..._evaluators._checks import _text as text_of
from ..._limits import PatternTimeout, UserPattern

if TYPE_CHECKING:
    from ..._results import TrialOutcome
    from ..._traces import Trace

CHECKS = ("same_verdict", "same_tools", "same_output", "regex", "max_words", "python")
PLAIN = ("same_verdict", "same_tools", "same_output")  # written as a bare name
VALUED = ("regex", "max_words", "python")  # written as a one-key mapping
_CLIP = 80


@dataclass(frozen=True)
class Side:
    """One trial of a pair: its outcome (``passed``, ``error``, ``failures``) and its trace."""

    outcome: TrialOutcome
    trace: Trace


def _text(value: Any) -> str:

    return text_of(value)


def _clip(text: str, width: int = _CLIP) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def normalise(value: Any) -> str:
    """What ``same_output`` compares: the text form, NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", _text(value)).casefold().split())


@dataclass(frozen=True)
class RelationCheck:
    """One check: its kind (``same_verdict``), its value (a regex, a word limit, ``module:function``)."""

    kind: str
    value: Any = None
    pattern: UserPattern | None = field(default=None, compare=False, repr=False)
    function: Callable[..., Any] | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.kind if self.value is None else f"{self.kind}: {self.value}"

    def to_json(self) -> Any:
        """As written in the suite: a name, or a one-key mapping."""
        return self.kind if self.value is None else {self.kind: self.value}

    def __call__(self, source: Side, followup: Side) -> str | None:
        """The reason the pair violates the relation, or None when it holds."""
        for what, side in (("source", source), ("follow-up", followup)):
            if side.outcome.error:
                return f"the {what} trial errored: {_clip(side.outcome.error, 160)}"
        return getattr(self, f"_{self.kind}")(source, followup)

    def _same_verdict(self, s: Side, f: Side) -> str | None:
        a, b = bool(s.outcome.passed), bool(f.outcome.passed)
        if a == b:
            return None

        def said(side: Side, passed: bool) -> str:
            why = side.outcome.failures[0] if not passed and side.outcome.failures else ""
            return ("passed", "failed")[not passed] + (f" ({_clip(why, 120)})" if why else "")

        return f"verdict changed: the source {said(s, a)}, the follow-up {said(f, b)}"

    def _same_tools(self, s: Side, f: Side) -> str | None:
        a, b = set(s.trace.tools_called), set(f.trace.tools_called)
        if a == b:
            return None
        return f"tools differ: the source called {{{', '.join(sorted(a))}}}, the follow-up {{{', '.join(sorted(b))}}}"

    def _same_output(self, s: Side, f: Side) -> str | None:
        if normalise(s.trace.output) == normalise(f.trace.output):
            return None
        return f"outputs differ: {_clip(_text(s.trace.output), 50)!r} vs {_clip(_text(f.trace.output), 50)!r}"

    def _regex(self, s: Side, f: Side) -> str | None:
        assert self.pattern is not None
        out = _text(f.trace.output)
        try:
            if self.pattern.search(out):
                return None
        except PatternTimeout as exc:
            return f"the regex check /{self.value}/ gave up on the follow-up output: {exc}"
        return f"the follow-up output does not match /{self.value}/ (output: {_clip(out)!r})"

    def _max_words(self, s: Side, f: Side) -> str | None:
        n = len(_text(f.trace.output).split())
        return None if n <= int(self.value) else f"the follow-up output has {n} words, more than {self.value}"

    def _python(self, s: Side, f: Side) -> str | None:

        assert self.function is not None
        who = f"check {self.value}"
        try:
            result = self.function(s.trace, f.trace)
        except Exception as exc:
            return f"{who} raised {type(exc).__name__}: {_clip(str(exc), 160)}"
        return _outcome(result, who)
