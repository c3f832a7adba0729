"""The adapter protocol (paper Sec. 8.3): run an input and return a trace; list tools; describe config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..traces import Trace


@dataclass(frozen=True)
class ToolInfo:
    """A tool the agent can call. ``agent`` names the agent it belongs to (None for callables)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] | None = None
    agent: str | None = None


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` (just ``Type`` when the message is empty), for error trials and logs."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class AgentRunError(Exception):
    """The agent failed mid-run. Carries the partial trace so no step already seen is lost."""

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
