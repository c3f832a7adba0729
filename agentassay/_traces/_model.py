"""The execution trace (paper Def. 3.2), extended with handoffs, errors, tokens and metadata.

A trace is what one trial of an agent leaves behind. Everything downstream (evaluators,
behaviour features, the features' analyses, reports) reads traces, never the agent, so the JSON form is versioned
and stable: ``Trace.from_dict(trace.to_dict()) == trace``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

TRACE_SCHEMA = "agentassay.trace/1"

#: ``Step.error`` of a call to a restricted tool that a recording stub refused (structural probe).
RESTRICTED_CALL = "agentassay: restricted call refused"
#: ``Step.error`` prefix of a call to a tool the agent does not have at all.
TOOL_NOT_FOUND = "agentassay: tool not found"


class Action(str, Enum):
    """What a step did. ``handoff`` covers SDK handoffs and ``Agent.as_tool`` delegations."""

    REASON = "reason"
    CALL_TOOL = "call_tool"
    HANDOFF = "handoff"
    RESPOND = "respond"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Step:
    """One step of a trace.

    ``agent`` is the agent active when the step happened; ``target`` the agent a handoff or
    delegation went to; ``depth`` is 0 for the top-level run and grows inside ``as_tool``
    sub-runs, so nesting survives flattening into one ordered list.
    """

    action: Action
    agent: str | None = None
    tool: str | None = None
    arguments: Any = None
    output: Any = None
    error: str | None = None
    target: str | None = None
    depth: int = 0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"action": self.action.value}
        for key in ("agent", "tool", "arguments", "output", "error", "target"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        if self.depth:
            d["depth"] = self.depth
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Step:
        return cls(
            action=Action(d["action"]),
            agent=d.get("agent"),
            tool=d.get("tool"),
            arguments=d.get("arguments"),
            output=d.get("output"),
            error=d.get("error"),
            target=d.get("target"),
            depth=int(d.get("depth", 0)),
        )


@dataclass(frozen=True)
class Cost:
    """Tokens, wall time and (when a price table is configured) US dollars of one trial."""

    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "latency_s": round(self.latency_s, 6),
            "usd": self.usd,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cost:
        return cls(
            int(d.get("input_tokens", 0)),
            int(d.get("output_tokens", 0)),
            float(d.get("latency_s", 0.0)),
            None if d.get("usd") is None else float(d["usd"]),
        )


@dataclass(frozen=True)
class TraceMetadata:
    """Where a trace came from: which scenario and trial, which seed, version and model."""

    scenario: str | None = None
    trial: int | None = None
    seed: int | None = None
    agent_version: str | None = None
    model: str | None = None
    adapter: str | None = None
    timestamp: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {
            k: getattr(self, k)
            for k in ("scenario", "trial", "seed", "agent_version", "model", "adapter", "timestamp")
        }
        if self.extra:
            d["extra"] = dict(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TraceMetadata:
        return cls(
            scenario=d.get("scenario"),
            trial=d.get("trial"),
            seed=d.get("seed"),
            agent_version=d.get("agent_version"),
            model=d.get("model"),
            adapter=d.get("adapter"),
            timestamp=d.get("timestamp"),
            extra=dict(d.get("extra") or {}),
        )


@dataclass(frozen=True)
class Trace:
    """One trial: ordered steps, the final output, its cost and its provenance.

    ``error`` is set when the trial itself failed to complete (the agent raised, timed out, or
    returned something unusable); such a trace still records every step seen before the error.
    """

    steps: tuple[Step, ...] = ()
    output: Any = None
    cost: Cost = field(default_factory=Cost)
    metadata: TraceMetadata = field(default_factory=TraceMetadata)
    error: str | None = None

    # -- views used by evaluators and reports -------------------------------------------------
    @property
    def tools_called(self) -> list[str]:
        return [s.tool for s in self.steps if s.action is Action.CALL_TOOL and s.tool]

    @property
    def agents_reached(self) -> list[str]:
        """Distinct agents that were active or received a handoff, in first-seen order."""
        seen: dict[str, None] = {}
        for s in self.steps:
            for name in (s.agent, s.target if s.action is Action.HANDOFF else None):
                if name:
                    seen.setdefault(name, None)
        return list(seen)

    @property
    def handoffs(self) -> list[tuple[str | None, str | None]]:
        return [(s.agent, s.target) for s in self.steps if s.action is Action.HANDOFF]

    def with_metadata(self, **changes: Any) -> Trace:
        return replace(self, metadata=replace(self.metadata, **changes))

    # -- serialisation ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": TRACE_SCHEMA,
            "steps": [s.to_dict() for s in self.steps],
            "output": self.output,
            "cost": self.cost.to_dict(),
            "metadata": self.metadata.to_dict(),
            "error": self.error,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str, separators=(",", ":"))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        schema = d.get("schema")
        if schema != TRACE_SCHEMA:
            raise ValueError(f"unsupported trace schema {schema!r}; this version reads {TRACE_SCHEMA!r}")
        return cls(
            steps=tuple(Step.from_dict(s) for s in d.get("steps", [])),
            output=d.get("output"),
            cost=Cost.from_dict(d.get("cost") or {}),
            metadata=TraceMetadata.from_dict(d.get("metadata") or {}),
            error=d.get("error"),
        )

    @classmethod
    def from_json(cls, text: str) -> Trace:
        return cls.from_dict(json.loads(text))
