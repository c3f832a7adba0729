"""The adapter protocol (paper Sec. 8.3): run an input and return a trace; list tools; describe config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..._errors import AgentAssayError, ExitCode
from ..._traces import Trace


@dataclass(frozen=True)
class ToolInfo:
    """A tool the agent can call. ``agent`` names the agent it belongs to (None for callables)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None
    agent: str | None = None


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` (just ``Type`` when the message is empty), for error trials and logs."""
    if isinstance(exc, UserExit):  # what the user's code raised, not our wrapper
        exc = exc.original
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class UserExit(AgentAssayError):
    """User code (an agent, a factory, a check) raised a ``BaseException`` that is not an ``Exception``:
    ``SystemExit`` (``sys.exit()`` in a script without a ``__main__`` guard), ``KeyboardInterrupt``,
    ``GeneratorExit`` or a custom one. It must never end the process (``sys.exit(0)`` would read as a
    pass): at the boundary it becomes this, which is that trial's error (or exit 4 at import)."""

    exit_code = ExitCode.AGENT

    def __init__(self, original: BaseException) -> None:
        super().__init__(describe_exception(original))
        self.original = original


def user_exception(exc: BaseException) -> Exception:
    """``exc`` if it is an ``Exception``, else a :class:`UserExit` carrying it (asyncio's cancellation aside,
    which is ours: callers re-raise ``asyncio.CancelledError`` before asking)."""
    return exc if isinstance(exc, Exception) else UserExit(exc)


class AgentRunError(AgentAssayError):
    """The agent failed mid-run. Carries the partial trace so no step already seen is lost."""

    exit_code = ExitCode.AGENT

    def __init__(self, message: str, trace: Trace | None = None) -> None:
        super().__init__(message)
        self.trace = trace


@runtime_checkable
class AgentAdapter(Protocol):
    """What the runner needs from any agent framework.

    ``run`` is a coroutine so the runner can hold many trials in flight; adapters for
    blocking code run it off the event loop. ``seed`` makes simulated agents reproducible and
    is recorded in the trace; real models may ignore it.
    """

    name: str

    async def run(self, input: str, *, seed: int) -> Trace: ...

    def tools(self) -> list[ToolInfo]: ...

    def config(self) -> dict[str, Any]: ...
