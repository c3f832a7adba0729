"""Recorded traces played back as an agent: how ``agentassay analyze`` reuses the whole run at zero token cost.

A ``ReplayAdapter`` answers ``run(input, seed)`` with the trace recorded for that input and trial
seed, so ``run_suite`` — checks, the sequential tests, contracts, coverage, the judge (cached),
fingerprints, every plugin — analyses recorded traces exactly as it analyses live ones (paper Sec. 7.3,
Thm 7.3: trace-first analysis). Nothing is ever called: an input and seed with no recorded trace is
refused (``NotRecorded``), and plugins that would need new trials (a metamorphic follow-up) ask
``has()`` first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..._errors import AgentAssayError
from ..._integrations.adapters._openai_agents import OpenAIAgentsAdapter
from ..._traces import Trace


class NotRecorded(AgentAssayError):
    """``analyze`` has no recorded trace for this input and trial: it never calls the agent to make one."""


class ReplayAdapter:
    """The recorded traces of each scenario, served in trial order to ``run_suite``."""

    name = "replay"
    replay = True  # plugins that would start new trials check this (and ``has``)

    def __init__(
        self,
        keys: set[tuple[str, int]],
        fetch: Callable[[str, int], Trace | None],
        *,
        agent: Any = None,
        sources: Sequence[str] = (),
    ) -> None:
        """``keys``: the (input, seed) of every recorded trial; ``fetch(input, seed)`` reads its trace (from
        the spool on disk, so a replay of any size holds one trace at a time); ``agent`` (an imported SDK
        agent, never run) lets coverage extract the workflow's manifest."""
        self.keys = keys
        self.fetch = fetch
        self.agent = agent
        self.sources = tuple(sources)
        self.served = 0

    def has(self, input: str, seed: int) -> bool:
        return (input, seed) in self.keys

    async def run(self, input: str, *, seed: int) -> Trace:
        trace = self.fetch(input, seed) if (input, seed) in self.keys else None
        if trace is None:
            raise NotRecorded(
                f"no recorded trace for this input and trial (seed {seed}); analyze never calls the agent"
            )
        self.served += 1
        return replace(
            trace, metadata=replace(trace.metadata, extra={**trace.metadata.extra, "replayed": True})
        )

    def tools(self) -> list[Any]:
        if self.agent is None:
            return []

        return OpenAIAgentsAdapter(self.agent).tools()  # describes the imported agent; it is never run

    def config(self) -> dict[str, Any]:
        return {"replay": list(self.sources), "traces": len(self.keys)}
