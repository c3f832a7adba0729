"""What every framework's tests share (tests/frameworks/<name>/): the seat-change input, eight concurrent trials
kept apart, and the example's suite cut to its seat_change scenario (the one v2 regresses)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from agentassay._traces import Trace

SEAT_Q = "I'd like to change my seat to {seat}. My confirmation number is ABC123."
SEATS = [f"{i + 2}{'ABCDEF'[i % 6]}" for i in range(8)]


def concurrent_seat_trials(adapter: Any, check_seat_trace: Callable[[Trace, str], None], seed: int = 0) -> list[Trace]:
    """Eight trials at once, one seat each: every trace is its own full seat change and holds no other seat."""

    async def run() -> list[Trace]:
        return await asyncio.gather(
            *(adapter.run(SEAT_Q.format(seat=s), seed=seed + i) for i, s in enumerate(SEATS))
        )

    traces = asyncio.run(run())
    for seat, trace in zip(SEATS, traces, strict=True):
        check_seat_trace(trace, seat)
        others = [s for s in SEATS if s != seat]
        assert not any(s in json.dumps(trace.to_dict()) for s in others)
    assert len({t.metadata.extra["trace_id"] for t in traces}) == 8 and adapter.escaped == 0
    return traces


def seat_suite(suite: Path, tmp_path: Path) -> Path:
    """The example's suite with its seat_change scenario only (the one v2 regresses), to keep the run short."""
    data = yaml.safe_load(suite.read_text(encoding="utf-8"))
    data["scenarios"] = [s for s in data["scenarios"] if s["name"] == "seat_change"]
    path = tmp_path / "agentassay.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
