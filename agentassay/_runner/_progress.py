"""Progress: one rewritten line on a terminal, plain milestone lines in CI logs."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

from .._visible import visible


def announce(text: str, stream: TextIO | None = None) -> None:
    """One line before the progress lines start (``Run.say``), in their format."""
    out = stream or sys.stderr
    out.write(f"[agentassay] {visible(text)}\n")  # built from names a suite or a results file chose
    out.flush()


class Progress:
    """Reports trials finished and scenarios decided.

    On a TTY (and not in CI) a single line is redrawn at most 10 times a second; otherwise a
    line is printed when a scenario is decided and, at most every 5 seconds, a count of
    finished trials, so CI logs stay short and readable.
    """

    def __init__(
        self,
        planned: int,
        scenarios: int,
        *,
        stream: TextIO | None = None,
        enabled: bool = True,
        phase: str | None = None,
    ) -> None:
        self.stream = stream or sys.stderr
        # A phase without a verdict of its own (a second model's planned trials): lines say so.
        self.phase = phase
        self.enabled = enabled
        self.planned = max(planned, 1)
        self.scenarios = scenarios
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) and not os.environ.get("CI")
        self.done = 0
        self.decided = 0
        self.start = time.monotonic()
        self._last_draw = 0.0
        self._last_line = self.start

    def trial(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self.tty:
            now = time.monotonic()
            if now - self._last_draw >= 0.1:
                self._last_draw = now
                self._draw()
        elif time.monotonic() - self._last_line >= 5.0:
            self._line(f"{self.done} trials finished (at most {self.planned} planned)")

    def scenario_decided(self, name: str, verdict: str, trials: int) -> None:
        self.decided += 1
        if self.enabled and self.phase:
            self._line(f"{self.phase}: {name}: {trials} trials done ({self.decided}/{self.scenarios})")
        elif self.enabled:
            self._line(f"{name}: {verdict.upper()} after {trials} trials ({self.decided}/{self.scenarios} decided)")

    def _draw(self) -> None:
        width = 24
        filled = min(width, width * self.done // self.planned)
        bar = "#" * filled + "." * (width - filled)
        elapsed = time.monotonic() - self.start
        self.stream.write(
            f"\r[{bar}] {self.done} trials · {self.decided}/{self.scenarios} decided · {elapsed:.1f} s"
        )
        self.stream.flush()

    def _line(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
        now = time.monotonic()
        self._last_line = now
        self.stream.write(f"[agentassay {now - self.start:6.1f}s] {visible(text)}\n")  # names are untrusted
        self.stream.flush()

    def close(self) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()
        if self.phase:
            self._line(f"{self.phase}: {self.done} trials finished")
        else:
            self._line(f"{self.done} trials finished, {self.decided}/{self.scenarios} scenarios decided")
