"""Signals that arrive while no trial runs — loading the agent, planning, deciding — are latched, not raised.

The engine stops cleanly on SIGINT / SIGTERM while trials run (its own loop handlers). Before the first
trial there is nothing to keep, but a KeyboardInterrupt raised from inside an import or a plugin would end
the process with no results file and no word of what happened. The latch records the signal instead; the
next phase of trials then starts none, and the run ends with a results file marked interrupted (zero
trials, if it came before the first one). A second Ctrl-C while latched raises KeyboardInterrupt, so a
start-up that hangs can still be left.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SignalLatch:
    """Context manager: while active (main thread only), SIGINT / SIGTERM set ``name`` instead of raising."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.name: str | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.name is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # pressed twice: the user means it
        self.name = self.name or signal.Signals(signum).name

    def __enter__(self) -> SignalLatch:
        if self.enabled and threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                with contextlib.suppress(ValueError, OSError):  # not settable here
                    self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._previous.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()
