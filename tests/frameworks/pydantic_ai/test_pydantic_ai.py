"""PydanticAI through the OpenTelemetry capture adapter (issue 24), in PydanticAI's own environment.

The airline example (examples/frameworks/pydantic_ai) runs offline: PydanticAI's own OpenAI client reaches the
simulator's Chat Completions endpoint on 127.0.0.1, and each trial's trace comes from PydanticAI's built-in spans.
A user's callable with its own seeded fake model (``_own_model``) gets the same traces with no ``model:``.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentassay._integrations.adapters import adapter_for
from agentassay._integrations.adapters._otel import detect, load_profile
from agentassay._integrations.adapters._otel._capture import TrialScope, install
from agentassay._integrations.cli import main
from agentassay._integrations.importers import import_spans
from agentassay._traces import Action, Trace, TraceStore
from examples.customer_service.airline import (
    FAQ_AGENT,
    SEAT_AGENT,
    TRIAGE_AGENT,
    TRIAGE_INSTRUCTIONS_V1,
    faq_lookup_tool,
)
from examples.frameworks.pydantic_ai import v1
from examples.frameworks.pydantic_ai._workflow import build_triage_agent

from . import _own_model

EXAMPLE = Path(v1.__file__).parent
SUITE = EXAMPLE / "agentassay.yml"
SEAT_INPUT = "I'd like to change my seat to 14C. My confirmation number is ABC123."
BAGGAGE_INPUT = "How much baggage can I bring?"


def _stored(store: Path, scenarios: list[str] | None = None) -> list[Any]:
    db = TraceStore(store)
    try:
        [version] = db.versions()
        return db.query(version, scenarios)
    finally:
        db.close()


def _check_seat_trace(trace: Trace, seat: str = "14C", request: str = SEAT_INPUT) -> None:
    """A seat change as it should be: triage delegates, the seat agent calls update_seat, triage relays."""
    assert all(step.agent for step in trace.steps), trace.steps
    handoff = next(s for s in trace.steps if s.action is Action.HANDOFF)
    assert (handoff.agent, handoff.target, handoff.tool) == (TRIAGE_AGENT, SEAT_AGENT, "transfer_to_seat_booking_agent")
    assert handoff.arguments == {"request": request}
    [call] = [s for s in trace.steps if s.action is Action.CALL_TOOL]
    assert (call.agent, call.tool, call.depth) == (SEAT_AGENT, "update_seat", 1)
    assert call.arguments == {"confirmation_number": "ABC123", "new_seat": seat}
    assert call.output == f"Updated seat to {seat} for confirmation number ABC123."
    last = trace.steps[-1]
    assert last.action is Action.RESPOND and last.agent == TRIAGE_AGENT and seat in (trace.output or "")
    assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0
    assert trace.metadata.adapter == "otel:pydantic_ai"


# -- the example, offline ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    """v1's baseline (``run --full``), its traces in a store: (results, store, exit code)."""
    where = tmp_path_factory.mktemp("pydantic_ai_baseline")
    results, store = where / "v1.json", where / "traces.db"
    code = main(["run", str(SUITE), "--full", "--trials", "20", "-o", str(results), "--store", str(store), "-q"])
    return results, store, code


def test_offline_run_records_full_traces(baseline: tuple[Path, Path, int]) -> None:
    results, store, code = baseline
    assert code in (0, 2), "v1 passes or needs more trials; it never fails"
    scenarios = {s["name"]: s for s in json.loads(results.read_text(encoding="utf-8"))["scenarios"]}
    assert scenarios["seat_change"]["passes"] >= 27 and not scenarios["seat_change"]["errors"]
    seat = [row for row in _stored(store, ["seat_change"]) if row.passed]
    assert len(seat) >= 27
    for row in seat:
        _check_seat_trace(row.trace)
        assert row.trace.metadata.model == "gpt-4.1-mini"
    baggage = [row.trace for row in _stored(store, ["baggage"]) if row.passed]
    assert baggage
    for trace in baggage:
        handoff = next(s for s in trace.steps if s.action is Action.HANDOFF)
        assert (handoff.agent, handoff.target) == (TRIAGE_AGENT, FAQ_AGENT)
        [call] = [s for s in trace.steps if s.action is Action.CALL_TOOL]
        assert (call.agent, call.tool, call.arguments) == (FAQ_AGENT, "faq_lookup_tool", {"question": BAGGAGE_INPUT})
        assert call.output == faq_lookup_tool(BAGGAGE_INPUT) and "bag" in trace.output


def test_a_regressed_version_blocks(baseline: tuple[Path, Path, int], tmp_path: Path) -> None:
    results, _, _ = baseline
    code = main([
        "check", str(SUITE), "--baseline", str(results), "--agent", "examples.frameworks.pydantic_ai.v2:triage_agent",
        "--trials", "20", "-o", str(tmp_path / "v2.json"), "--store", str(tmp_path / "v2.db"), "-q",
    ])  # fmt: skip
    assert code == 1
    scenarios = {s["name"]: s for s in json.loads((tmp_path / "v2.json").read_text(encoding="utf-8"))["scenarios"]}
    assert scenarios["seat_change"]["verdict"]["verdict"] == "fail"


def test_eight_concurrent_trials_keep_their_traces_apart(tmp_path: Path) -> None:
    seats = [f"{row}{letter}" for row, letter in zip(range(11, 19), "ABCDEFAB", strict=True)]
    scenarios = "\n".join(
        f"  - name: seat_{seat}\n    input: \"Please change my seat to {seat}. My confirmation number is ABC123.\"\n"
        f"    evaluator: [{{contains: '{seat}'}}]"
        for seat in seats
    )
    (tmp_path / "agentassay.yml").write_text(
        "name: pydantic-ai-apart\nagent: examples.frameworks.pydantic_ai.v1:triage_agent\nmodel: {provider: offline}\n"
        "config: {trials: 2, method: fixed, threshold: 0.1, concurrency: 8, seed: 11}\n"
        f"scenarios:\n{scenarios}\n",
        encoding="utf-8",
    )
    store = tmp_path / "traces.db"
    code = main(["run", str(tmp_path / "agentassay.yml"), "-o", str(tmp_path / "r.json"), "--store", str(store), "-q"])
    assert code in (0, 1, 2)
    rows = _stored(store)
    assert len(rows) == 16
    assert len({row.trace.metadata.extra["trace_id"] for row in rows}) == 16
    changed = 0
    for row in rows:
        seat = row.scenario.removeprefix("seat_")
        mentioned = set(re.findall(r"\b\d{1,2}[A-F]\b", json.dumps([s.to_dict() for s in row.trace.steps])))
        assert mentioned <= {seat}, f"{row.scenario}'s trace mentions {mentioned}"
        if any(s.tool == "update_seat" for s in row.trace.steps):
            _check_seat_trace(row.trace, seat, f"Please change my seat to {seat}. My confirmation number is ABC123.")
            changed += 1
    assert changed >= 12


# -- a user's callable with its own seeded fake model ----------------------------------------------------------
def test_a_users_callable_with_its_own_fake_model_gets_full_traces(tmp_path: Path) -> None:
    (tmp_path / "agentassay.yml").write_text(
        "name: own-model\n"
        "agent: {entry: 'tests.frameworks.pydantic_ai._own_model:answer', framework: pydantic_ai}\n"
        "config: {trials: 3, method: fixed, threshold: 0.5, concurrency: 8, seed: 5}\n"
        "scenarios:\n"
        f"  - name: seat_change\n    input: \"{SEAT_INPUT}\"\n    evaluator: [{{contains: '14C'}}]\n"
        f"  - name: baggage\n    input: \"{BAGGAGE_INPUT}\"\n    evaluator: [{{contains: 'bag'}}]\n",
        encoding="utf-8",
    )
    store = tmp_path / "traces.db"
    code = main(["run", str(tmp_path / "agentassay.yml"), "-o", str(tmp_path / "r.json"), "--store", str(store), "-q"])
    assert code in (0, 2)  # pass, or too few trials to tell
    seat = _stored(store, ["seat_change"])
    assert all(row.passed for row in seat)
    assert len(seat) == 3
    for row in seat:
        _check_seat_trace(row.trace)
        assert row.trace.metadata.model == _own_model.MODEL_NAME
    for row in _stored(store, ["baggage"]):
        [call] = [s for s in row.trace.steps if s.action is Action.CALL_TOOL]
        assert (call.agent, call.tool, call.output) == (FAQ_AGENT, "faq_lookup_tool", faq_lookup_tool(BAGGAGE_INPUT))


def test_eight_concurrent_trials_of_the_callable_stay_apart() -> None:
    adapter = adapter_for(_own_model.answer, entry="own:answer", framework="pydantic_ai")
    seats = [f"{n}C" for n in range(21, 29)]

    async def trials() -> list[Trace]:
        return await asyncio.gather(*(
            adapter.run(f"Please change my seat to {seat}. My confirmation number is ABC123.", seed=i)
            for i, seat in enumerate(seats)
        ))  # fmt: skip

    for seat, trace in zip(seats, asyncio.run(trials()), strict=True):
        _check_seat_trace(trace, seat, f"Please change my seat to {seat}. My confirmation number is ABC123.")
        assert len([s for s in trace.steps if s.action is Action.CALL_TOOL]) == 1


# -- the profile --------------------------------------------------------------------------------------------------
def test_detection_and_the_agent_graphs_tools() -> None:
    assert detect(v1.triage_agent) == "pydantic_ai"
    assert detect(_own_model.answer) is None
    tools = {(t.name, t.agent) for t in load_profile("pydantic_ai").tools(v1.triage_agent)}
    assert tools == {
        ("transfer_to_faq_agent", TRIAGE_AGENT), ("transfer_to_seat_booking_agent", TRIAGE_AGENT),
        ("faq_lookup_tool", FAQ_AGENT), ("transfer_to_triage_agent", FAQ_AGENT),
        ("update_seat", SEAT_AGENT), ("transfer_to_triage_agent", SEAT_AGENT),
    }  # fmt: skip
    [update] = [t for t in load_profile("pydantic_ai").tools(v1.triage_agent) if t.name == "update_seat"]
    assert set(update.parameters["properties"]) == {"confirmation_number", "new_seat"}
    assert "Move the passenger" in update.description


def _hands_back(messages: list[Any], info: AgentInfo) -> ModelResponse:
    """Triage delegates to the seat agent, which hands straight back; triage relays what it got."""
    tools = {t.name for t in info.function_tools} | {t.name for t in info.output_tools}
    last = messages[-1]
    if isinstance(last, ModelRequest) and any(p.part_kind == "tool-return" for p in last.parts):
        return ModelResponse(parts=[TextPart("back with triage")])
    if "transfer_to_seat_booking_agent" in tools:
        return ModelResponse(parts=[ToolCallPart("transfer_to_seat_booking_agent", {"request": "a hotel"})])
    return ModelResponse(parts=[ToolCallPart("transfer_to_triage_agent", {"reason": "a hotel"})])


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {kv["key"]: next(iter(kv["value"].values())) for kv in span["attributes"]}


def test_fix_spans_names_delegations_and_hand_backs() -> None:
    agent = build_triage_agent(TRIAGE_INSTRUCTIONS_V1, model=FunctionModel(_hands_back, model_name="fake"))
    profile = load_profile("pydantic_ai")
    adapter_for(agent, entry="t:agent")  # installs the capture and PydanticAI's instrumentation
    capture, provider = install()
    scope = TrialScope(capture, provider)

    async def run() -> None:
        with scope.running():
            await agent.run("Can you book me a hotel?")

    asyncio.run(run())
    spans = profile.fix_spans(list(scope.collect().spans))
    by_name = {s["name"]: _attrs(s) for s in spans}
    delegation = by_name["execute_tool transfer_to_seat_booking_agent"]
    assert delegation["gen_ai.transfer.target.name"] == SEAT_AGENT
    assert delegation["gen_ai.transfer.mode"] == "return_to_caller"
    back = by_name["execute_tool transfer_to_triage_agent"]
    assert (back["gen_ai.operation.name"], back["gen_ai.handoff.from_agent"], back["gen_ai.handoff.to_agent"]) == (
        "handoff", SEAT_AGENT, TRIAGE_AGENT,
    )  # fmt: skip
    [imported] = import_spans(spans)
    steps = [(s.action, s.agent, s.target) for s in imported.trace.steps]
    assert steps == [
        (Action.HANDOFF, TRIAGE_AGENT, SEAT_AGENT),
        (Action.HANDOFF, SEAT_AGENT, TRIAGE_AGENT),
        (Action.RESPOND, SEAT_AGENT, None),
        (Action.RESPOND, TRIAGE_AGENT, None),
    ]
    assert imported.trace.output == "back with triage"


def test_manifest_of_the_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifest", "examples.frameworks.pydantic_ai.v1:triage_agent"]) == 0
    printed = capsys.readouterr()
    out = printed.out + printed.err
    for line in (
        "entry_agent: triage_agent",
        "- [faq_agent, faq_lookup_tool]",
        "- [seat_booking_agent, update_seat]",
        "{from: triage_agent, to: seat_booking_agent, trigger: delegate, via: as_tool, tool: "
        "transfer_to_seat_booking_agent}",
        "{from: seat_booking_agent, to: triage_agent, trigger: delegate, via: handoff, tool: transfer_to_triage_agent}",
    ):
        assert line in out
    assert "3 reachable agents, 2 tools, 2 allowed edges" in out
