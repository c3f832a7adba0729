"""Bounded work for what a suite supplies: regular expressions with a timeout, and the check deadline.

Suite files are input, not trusted code: a pattern such as ``(a|aa)+$`` against ``"a" * 40 + "!"``
backtracks for longer than any run (issue 22, defect 8: 881 s until SIGKILL, with SIGTERM ignored,
because :mod:`re` holds the GIL and cannot be interrupted). Every suite-supplied pattern (evaluator
``regex`` checks, the features' pattern functions and rules, the offline simulator's behaviour tables) is therefore compiled with the ``regex`` package (``regex.V0``:
the syntax and semantics of :mod:`re`) and matched with its ``timeout=``: a match that runs out of
time raises :class:`PatternTimeout`, which the caller turns into that check's failure on that trial,
naming the check and the pattern.

The timeout is what is left of the trial's time limit (``config.timeout``): the engine runs a trial's
checks under a :class:`Deadline`, which every bounded operation on that thread reads with
:func:`remaining`. Outside a deadline (analysing traces, a library call) ``DEFAULT_TIMEOUT`` applies.
``regex`` counts its timeout in the matching thread's CPU time, so on a loaded machine a match may run
past the deadline in wall time: the engine's own wall-clock limit is the backstop, and its message names
the check that was still running (:func:`doing`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from ._errors import AgentAssayError

DEFAULT_TIMEOUT = 120.0  # seconds for one match when no trial deadline applies (config.timeout's default)

#: Rows a suite may take from dataset files (``scenarios: - dataset: cases.csv``), all its datasets together:
#: each row is a scenario that runs up to ``config.trials`` trials, so 10,000 rows is already more than a CI
#: check can pay for; past it the load stops with an error naming the file and the row (docs/suite.md).
MAX_DATASET_ROWS = 10_000
#: Bytes one dataset file may have, checked before it is read: 10,000 rows of a few KiB each fit.
MAX_DATASET_BYTES = 64 * 1024 * 1024
_local = threading.local()


class PatternTimeout(AgentAssayError):
    """A suite-supplied regular expression did not finish matching within the time left."""

    def __init__(self, pattern: str, seconds: float) -> None:
        super().__init__(
            f"matching the regular expression {pattern!r} took longer than the {seconds:.3g} s left of the "
            "trial's time limit (config.timeout); simplify the pattern (nested quantifiers such as (a+)+ or "
            "(a|aa)+ backtrack exponentially)"
        )
        self.pattern = pattern
        self.seconds = seconds


class Deadline:
    """A trial's checks' time limit; ``doing`` says which check is running, so that the engine can name the one
    it abandons at the limit (it reads this object from the event loop's thread)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.doing: str | None = None

    @contextlib.contextmanager
    def active(self) -> Iterator[Deadline]:
        """Bounded operations on this thread must finish by ``end``."""
        previous = getattr(_local, "deadline", None)
        self.end = time.monotonic() + self.seconds
        _local.deadline = self
        try:
            yield self
        finally:
            _local.deadline = previous


def deadline(seconds: float) -> contextlib.AbstractContextManager[Deadline]:
    """``with deadline(s):`` bounded operations on this thread must finish within ``s`` seconds from now."""
    return Deadline(seconds).active()


def doing(what: str) -> None:
    """Say which check runs now on this thread (named if the engine abandons the checks at the limit)."""
    current = getattr(_local, "deadline", None)
    if current is not None:
        current.doing = what


def remaining() -> float | None:
    """Seconds left before this thread's deadline (may be <= 0), or None without one."""
    current = getattr(_local, "deadline", None)
    return None if current is None else current.end - time.monotonic()


def expired() -> bool:
    """Whether this thread's deadline has passed (cheap enough to ask at every step of an interpreter)."""
    current = getattr(_local, "deadline", None)
    return current is not None and time.monotonic() >= current.end


def compile_pattern(pattern: str, flags: int = 0) -> UserPattern:
    """``pattern`` compiled as :mod:`re` would read it; raises one of :func:`regex_error` (both have ``msg`` and
    ``pos``) when it is invalid. ``flags`` are :mod:`re` flags (``re.IGNORECASE``)."""
    return UserPattern(pattern, flags)


class UserPattern:
    """A suite-supplied pattern whose matches are bounded in time (:class:`PatternTimeout`)."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        import regex  # lazy: ~35 ms, and only suites with patterns pay for it

        self.pattern = pattern
        try:
            self._compiled = regex.compile(pattern, flags=_flags(flags) | regex.V0)
        except regex.error:
            import re

            re.compile(pattern, flags)  # re's message, when it refuses it too, is the one users know
            raise

    def _timeout(self) -> float:
        left = remaining()
        return DEFAULT_TIMEOUT if left is None else max(left, 0.0)

    def _run(self, method: str, text: str) -> Any:
        timeout = self._timeout()
        try:
            # concurrent: the GIL is released while matching (str is immutable), so signals and the event
            # loop keep running while a check matches in its thread.
            return getattr(self._compiled, method)(text, timeout=timeout, concurrent=True)
        except TimeoutError:
            raise PatternTimeout(self.pattern, timeout) from None

    def search(self, text: str) -> Any:
        return self._run("search", text)

    def fullmatch(self, text: str) -> Any:
        return self._run("fullmatch", text)

    def __repr__(self) -> str:
        return f"UserPattern({self.pattern!r})"


def _flags(flags: int) -> int:
    """:mod:`re` flags as ``regex`` flags (the values agree for the common ones; mapped by name to be sure)."""
    import re

    import regex

    out = 0
    for name in ("IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII", "UNICODE"):
        if flags & getattr(re, name):
            out |= getattr(regex, name)
    return out


def regex_error() -> tuple[type[Exception], ...]:
    """The exceptions an invalid pattern raises (``re.error``, ``regex.error``), for ``except`` clauses."""
    import re

    import regex

    return (re.error, regex.error)
