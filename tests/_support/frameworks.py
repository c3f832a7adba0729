"""What every framework's tests share (tests/frameworks/<name>/): the seat-change input, the example's adapter on
the offline server, one trial with the spans its profile got, the seat-change trace's checks, eight concurrent
trials kept apart, and the example's suite cut to its seat_change scenario (the one v2 regresses) run through the
CLI, v2 blocked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import yaml

from agentassay._integrations.adapters import load_adapter
from agentassay._integrations.cli import main
from agentassay._spec._model import ModelConfig
from agentassay._traces import Action, Step, Trace, TraceStore
from examples.customer_service.airline import OUT_OF_SCOPE

ROOT = Path(__file__).resolve().parents[2]
SEAT_Q = "I'd like to change my seat to {seat}. My confirmation number is ABC123."
SEATS = [f"{i + 2}{'ABCDEF'[i % 6]}" for i in range(8)]
_ADAPTERS: dict[str, Any] = {}


def offline_adapter(entry: str) -> Any:
    """The example's adapter on the offline server (one per process and entry, as a run makes it)."""
    if entry not in _ADAPTERS:
        _ADAPTERS[entry] = load_adapter(entry, model=ModelConfig(provider="offline"), search=[ROOT])
    return _ADAPTERS[entry]


def run_with_spans(
    adapter: Any, question: str, seed: int, keep: Callable[[list[dict[str, Any]]], Any] = lambda spans: spans
) -> tuple[Trace, Any]:
    """One offline trial, and what ``keep`` takes from the spans the capture handed to the profile (before its
    fix-ups; by default the spans themselves)."""
    seen: list[Any] = []
    profile = adapter.profile
    fix = type(profile).fix_spans
    profile.fix_spans = lambda spans: seen.append(keep(spans)) or fix(profile, spans)  # type: ignore[method-assign]
    try:
        trace = asyncio.run(adapter.run(question, seed=seed))
    finally:
        del profile.fix_spans
    [kept] = seen
    return trace, kept


def check_seat_steps(trace: Trace, seat: str, triage: str, seat_agent: str) -> None:
    """A full seat change: triage hands off, the seat agent calls ``update_seat`` with ``seat`` and answers."""
    assert [s.action for s in trace.steps] == [Action.HANDOFF, Action.CALL_TOOL, Action.RESPOND], trace.steps
    handoff, call, respond = trace.steps
    assert (handoff.agent, handoff.target) == (triage, seat_agent)
    assert (call.agent, call.tool) == (seat_agent, "update_seat")
    assert call.arguments == {"confirmation_number": "ABC123", "new_seat": seat}
    assert call.output == f"Updated seat to {seat} for confirmation number ABC123."
    assert respond.agent == seat_agent and seat in trace.output
    assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0


Trial = Callable[[str, int], Trace]  # (question, seed) -> one offline trial's trace


def offline_trial(entry: str) -> Trial:
    """One offline trial of the example ``entry`` (``run_with_spans`` without the spans)."""
    return lambda question, seed: run_with_spans(offline_adapter(entry), question, seed)[0]


def check_faq_and_direct_answer(trial: Trial, triage: str, faq_agent: str, seed: int) -> None:
    """A baggage question goes to the FAQ agent's tool with the question as argument; a hotel booking is
    answered by triage alone, with the out-of-scope answer."""
    faq = trial("How much baggage can I bring?", seed)
    assert [(s.action, s.agent) for s in faq.steps] == [
        (Action.HANDOFF, triage), (Action.CALL_TOOL, faq_agent), (Action.RESPOND, faq_agent),
    ]
    assert faq.steps[0].target == faq_agent
    assert faq.steps[1].arguments == {"question": "How much baggage can I bring?"} and "bag" in faq.output
    direct = trial("Can you book me a hotel in Paris for tonight?", seed)
    assert [(s.action, s.agent) for s in direct.steps] == [(Action.RESPOND, triage)]
    assert direct.output == OUT_OF_SCOPE


def check_hand_back(trial: Trial, triage: str, faq_agent: str, seed: int = 2) -> Trace:
    """The FAQ agent answers with its tool, then hands back to triage, which answers."""
    trace = trial("How much baggage can I bring? And something else.", seed)
    assert [(s.action, s.agent, s.target) for s in trace.steps] == [
        (Action.HANDOFF, triage, faq_agent),
        (Action.CALL_TOOL, faq_agent, None),
        (Action.HANDOFF, faq_agent, triage),
        (Action.RESPOND, triage, None),
    ]
    assert trace.output.startswith("Thanks for waiting.")
    return trace


BAD_SEAT_Q = "Please change my seat, confirmation ABC123."  # no seat: the seat agent's update_seat raises


def check_failing_tool(trace: Trace, seat_agent: str) -> Step:
    """The update_seat call that raised carries the tool's error, without a traceback."""
    call = next(s for s in trace.steps if s.action is Action.CALL_TOOL)
    assert (call.agent, call.tool) == (seat_agent, "update_seat")
    assert "invalid seat" in (call.error or "") and "Traceback" not in call.error
    return call


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


def run_then_check_blocks(
    suite: Path,
    v2: str,
    tmp_path: Path,
    adapter: str,
    agents: tuple[str, str, str],
    check_seat_trace: Callable[[Trace, str], None],
    handoffs: Collection[tuple[str, str]] | None = None,
) -> None:
    """The example's seat_change scenario through the CLI: ``run --full`` records 45 full traces (``adapter``'s,
    steps of ``agents`` = (triage, faq, seat), handoffs among ``handoffs``, by default between any two of them),
    and ``check`` of ``v2`` against that baseline blocks (v2's triage mis-routes seat changes)."""
    seat = agents[2]
    handoffs = handoffs or {(a, b) for a in agents for b in agents if a != b}
    suite, store, base = seat_suite(suite, tmp_path), str(tmp_path / "t.db"), str(tmp_path / "base.json")
    assert main(["run", str(suite), "--full", "--trials", "30", "-o", base, "--store", store, "-q"]) == 0
    with TraceStore(store) as s:
        [traces] = [[r.trace for r in s.query(v)] for v in s.versions()]
    assert len(traces) == 45
    kinds = set()
    for trace in traces:
        assert trace.metadata.adapter == adapter and trace.output
        assert trace.steps and all(s.agent in agents for s in trace.steps)
        assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0
        for step in trace.steps:
            kinds.add(step.action)
            if step.action is Action.CALL_TOOL:
                assert step.tool in ("faq_lookup_tool", "update_seat") and step.arguments and step.output
            if step.action is Action.HANDOFF:
                assert (step.agent, step.target) in handoffs, step
        if [(s.action, s.target) for s in trace.steps[:1]] == [(Action.HANDOFF, seat)] and len(trace.steps) == 3:
            check_seat_trace(trace, "14C")
    assert kinds == {Action.HANDOFF, Action.CALL_TOOL, Action.RESPOND}
    code = main(["check", str(suite), "--agent", v2, "--baseline", base, "--trials", "30",
                 "-o", str(tmp_path / "cand.json"), "--no-store", "-q"])  # fmt: skip
    assert code == 1, "v2's triage mis-routes seat changes: the check blocks"
