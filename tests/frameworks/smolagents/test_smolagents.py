"""smolagents through the OpenTelemetry capture adapter (issue 24): the airline example on the offline
simulator (behind smolagents' own ``OpenAIServerModel``), concurrent trials, the v1 -> v2 regression, and
the profile's detection, tools, per-trial copies and span fix-ups. Runs in .venv-fw-smolagents
(`bash .ci/frameworks.sh smolagents`); skipped where smolagents is not installed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("smolagents")
pytest.importorskip("openinference.instrumentation.smolagents")

from smolagents import CodeAgent

from agentassay._integrations.adapters import adapter_for, load_adapter
from agentassay._integrations.adapters._offline_server import OfflineServer
from agentassay._integrations.adapters._otel import PROFILES, detect, load_profile
from agentassay._integrations.adapters._otel._capture import TrialScope, install
from agentassay._integrations.adapters._otel._smolagents import agents, fix_spans, trial_copy
from agentassay._integrations.adapters._simulator import Behaviour
from agentassay._integrations.cli import main
from agentassay._integrations.importers import import_spans
from agentassay._spec import load_suite
from agentassay._traces import Action, TraceStore
from examples.customer_service.airline import OUT_OF_SCOPE, ROUTING_V1, TRIAGE_INSTRUCTIONS_V1
from examples.frameworks.smolagents._behaviour import behaviour
from examples.frameworks.smolagents._workflow import FAQ, SEAT, TRIAGE, build_triage_agent

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "examples" / "frameworks" / "smolagents" / "agentassay.yml"
SEAT_Q = "I'd like to change my seat to {seat}. My confirmation number is ABC123."


@pytest.fixture(scope="module")
def server() -> Iterator[OfflineServer]:
    """An offline server of the test's own (the suite tests use the process's endpoint instead)."""
    with OfflineServer(Behaviour(behaviour(ROUTING_V1))) as srv:
        yield srv


@pytest.fixture
def triage(server: OfflineServer, monkeypatch: pytest.MonkeyPatch):
    """v1's agents, their client pointed at the test's server (OpenAIServerModel reads the environment)."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_BASE", server.base_url)  # over the process endpoint's, if a test entered it
    monkeypatch.setenv("OPENAI_API_KEY", "offline")
    return build_triage_agent(TRIAGE_INSTRUCTIONS_V1)


def _spans(server: OfflineServer, agent, question: str, seed: int = 1) -> list[dict]:
    """One run's spans as the capture hands them to the profile (OTLP span objects)."""
    capture, provider = install()
    load_profile("smolagents").instrument()
    scope = TrialScope(capture, provider)
    with scope.running():
        server.seed_for.register(scope.trace_id, seed)
        try:
            load_profile("smolagents").invoke(agent, question)
        finally:
            server.seed_for.unregister(scope.trace_id)
    return list(scope.collect().spans)


def _check_seat_trace(trace, seat: str) -> None:
    """Delegation triage -> seat agent (its steps one level deeper), the tool call, both answers, tokens."""
    assert [(s.action, s.agent, s.depth) for s in trace.steps] == [
        (Action.HANDOFF, TRIAGE, 0),
        (Action.CALL_TOOL, SEAT, 1),
        (Action.RESPOND, SEAT, 1),
        (Action.RESPOND, TRIAGE, 0),
    ], trace.steps
    handoff, call, answer, final = trace.steps
    assert (handoff.target, handoff.tool) == (SEAT, SEAT)
    assert handoff.arguments["task"] == SEAT_Q.format(seat=seat)
    assert call.tool == "update_seat"
    assert call.arguments == {"confirmation_number": "ABC123", "new_seat": seat}
    assert call.output == f"Updated seat to {seat} for confirmation number ABC123."
    assert answer.output == call.output and final.output == trace.output == call.output
    assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0
    assert trace.metadata.model == "gpt-4.1-mini"


# -- the profile ----------------------------------------------------------------------------------------
def test_an_agent_is_detected_and_traced_by_the_smolagents_profile(triage) -> None:
    assert list(PROFILES) == sorted(PROFILES)
    assert detect(triage) == "smolagents" and detect(_check_seat_trace) is None
    adapter = adapter_for(triage, entry="x:triage_agent")
    assert adapter.name == "otel:smolagents"
    config = adapter.config()
    assert config["framework"] == "smolagents" and config["name"] == TRIAGE and config["smolagents"]


def test_tools_are_every_agents_tools_without_final_answer_and_managed_agents(triage) -> None:
    tools = load_profile("smolagents").tools(triage)
    assert {(t.name, t.agent) for t in tools} == {("faq_lookup_tool", FAQ), ("update_seat", SEAT)}
    seat = next(t for t in tools if t.name == "update_seat")
    assert seat.parameters["required"] == ["confirmation_number", "new_seat"]
    assert seat.parameters["properties"]["new_seat"]["type"] == "string"
    assert "seat" in seat.description.lower()
    assert list(agents(triage)) == [TRIAGE, FAQ, SEAT]


def test_each_trial_runs_on_a_copy_with_its_own_memory(server, triage) -> None:
    clone = trial_copy(triage)
    assert clone is not triage and clone.memory is not triage.memory and clone.monitor is not triage.monitor
    assert clone.model is triage.model and clone.tools is not None
    for name in (FAQ, SEAT):
        assert clone.managed_agents[name] is not triage.managed_agents[name]
        assert clone.managed_agents[name].memory is not triage.managed_agents[name].memory
    capture, provider = install()
    scope = TrialScope(capture, provider)  # requests carry its trace id once httpx is instrumented
    with scope.running():
        server.seed_for.register(scope.trace_id, 1)  # and without traceparent, the one trial in flight is it
        try:
            assert clone.run("How much baggage can I bring?").startswith("You are allowed to bring one bag")
        finally:
            server.seed_for.unregister(scope.trace_id)
    scope.collect()
    assert clone.memory.steps and not triage.memory.steps  # the original keeps no run
    assert not triage.managed_agents[FAQ].memory.steps
    # The copy's step callback feeds the copy's monitor, not the original's.
    assert clone.monitor.total_input_token_count > 0 and triage.monitor.total_input_token_count == 0


def test_a_local_code_agent_copy_gets_its_own_python_executor(triage) -> None:
    coder = CodeAgent(tools=[], model=triage.model, name="coder", verbosity_level=0)
    clone = trial_copy(coder)
    assert clone.python_executor is not coder.python_executor and detect(coder) == "smolagents"


def test_fix_spans_unwraps_arguments_drops_final_answer_and_makes_delegations(server, triage) -> None:
    spans = _spans(server, triage, SEAT_Q.format(seat="14C"))
    [raw] = import_spans(spans)
    # What OpenInference gives: arguments wrapped as {"args", "kwargs", ...}, final_answer as a tool of every
    # agent, no agent names on the agent spans, and the managed agent as an agent span nested in triage's.
    calls = [s for s in raw.trace.steps if s.action is Action.CALL_TOOL]
    assert "kwargs" in next(s for s in calls if s.tool == "update_seat").arguments
    assert [s.tool for s in calls].count("final_answer") == 2
    before = json.dumps(spans)
    fixed = load_profile("smolagents").fix_spans(spans)
    assert json.dumps(spans) == before  # the capture's spans are not modified
    [built] = import_spans(fixed)
    _check_seat_trace(built.trace, "14C")
    names = {a["value"]["stringValue"] for s in fixed for a in s["attributes"] if a["key"] == "agent.name"}
    assert names == {TRIAGE, SEAT}
    # Tokens: the LLM spans' counts only (the agent spans' run totals are removed, never added twice).
    llm = [s for s in fixed if s["name"].endswith(".generate")]
    prompt = sum(
        int(a["value"]["intValue"])
        for s in llm
        for a in s["attributes"]
        if a["key"] == "llm.token_count.prompt"
    )
    assert built.trace.cost.input_tokens == prompt and len(llm) == 4


def test_fix_spans_faq_and_a_direct_answer(server, triage) -> None:
    [faq] = import_spans(fix_spans(_spans(server, triage, "How much baggage can I bring?")))
    steps = faq.trace.steps
    assert [(s.action, s.agent) for s in steps] == [
        (Action.HANDOFF, TRIAGE),
        (Action.CALL_TOOL, FAQ),
        (Action.RESPOND, FAQ),
        (Action.RESPOND, TRIAGE),
    ]
    assert steps[1].arguments == {"question": "How much baggage can I bring?"} and "bag" in steps[1].output
    [direct] = import_spans(
        fix_spans(_spans(server, triage, "Can you book me a hotel in Paris for tonight?"))
    )
    assert [(s.action, s.agent) for s in direct.trace.steps] == [(Action.RESPOND, TRIAGE)]
    assert direct.trace.output == OUT_OF_SCOPE


def test_positional_tool_arguments_are_named_after_the_parameters() -> None:
    span = {
        "spanId": "a" * 16,
        "name": "SimpleTool",
        "attributes": [
            {"key": "openinference.span.kind", "value": {"stringValue": "TOOL"}},
            {"key": "tool.name", "value": {"stringValue": "update_seat"}},
            {
                "key": "tool.parameters",
                "value": {"stringValue": json.dumps({"confirmation_number": {}, "new_seat": {}})},
            },
            {
                "key": "input.value",
                "value": {
                    "stringValue": json.dumps(
                        {"args": ["ABC123"], "sanitize_inputs_outputs": True, "kwargs": {"new_seat": "2A"}}
                    )
                },
            },
        ],
    }
    [fixed] = fix_spans([span])
    attrs = {a["key"]: a["value"]["stringValue"] for a in fixed["attributes"]}
    assert json.loads(attrs["input.value"]) == {"new_seat": "2A", "confirmation_number": "ABC123"}


# -- the example offline --------------------------------------------------------------------------------
def test_the_example_offline_records_full_traces(tmp_path: Path) -> None:
    store = str(tmp_path / "t.db")
    assert main(["run", str(SUITE), "-o", str(tmp_path / "base.json"), "--store", store, "-q"]) == 0
    with TraceStore(store) as s:
        rows = [r for v in s.versions() for r in s.query(v)]
    assert rows and all(r.trace.cost.input_tokens > 0 and r.trace.cost.output_tokens > 0 for r in rows)
    assert all(st.agent for r in rows for st in r.trace.steps), "every step names its agent"
    assert all(r.trace.metadata.adapter == "otel:smolagents" for r in rows)
    assert not any(st.tool == "final_answer" for r in rows for st in r.trace.steps)
    seat = [r.trace for r in rows if r.scenario == "seat_change" and r.passed]
    assert seat and all(
        any(st.action is Action.HANDOFF and (st.agent, st.target) == (TRIAGE, SEAT) for st in t.steps)
        and any(
            st.action is Action.CALL_TOOL
            and st.agent == SEAT
            and st.tool == "update_seat"
            and st.arguments == {"confirmation_number": "ABC123", "new_seat": "14C"}
            and "Updated seat to 14C" in str(st.output)
            for st in t.steps
        )
        and "14C" in t.output
        for t in seat
    )
    faq = [r.trace for r in rows if r.scenario == "baggage" and r.passed]
    assert faq and all(
        any(
            st.tool == "faq_lookup_tool"
            and st.agent == FAQ
            and st.arguments == {"question": "How much baggage can I bring?"}
            and "bag" in str(st.output)
            for st in t.steps
        )
        for t in faq
    )


def test_eight_concurrent_offline_trials_keep_their_traces_apart() -> None:
    suite = load_suite(SUITE)
    adapter = load_adapter(suite.agent.entry, model=suite.model, root=suite.root)
    seats = [f"{i + 2}{'ABCDEF'[i % 6]}" for i in range(8)]

    async def run() -> list:
        return await asyncio.gather(
            *(adapter.run(SEAT_Q.format(seat=s), seed=i) for i, s in enumerate(seats))
        )

    traces = asyncio.run(run())
    for seat, trace in zip(seats, traces, strict=True):
        calls = [st for st in trace.steps if st.action is Action.CALL_TOOL]
        assert calls, trace.steps
        assert all(st.arguments.get("new_seat") == seat for st in calls if st.tool == "update_seat")
        assert not any(other in str(trace.steps) for other in seats if other != seat)
        assert seat in str(trace.output)
    assert len({t.metadata.extra["trace_id"] for t in traces}) == 8 and adapter.escaped == 0


def test_check_of_v2_against_a_full_v1_baseline_blocks(tmp_path: Path) -> None:
    base, v2 = tmp_path / "base.json", tmp_path / "v2.json"
    assert main(["run", str(SUITE), "--full", "-o", str(base), "-q"]) == 0
    code = main(
        [
            "check",
            str(SUITE),
            "--agent",
            "examples.frameworks.smolagents.v2:agent",
            "--baseline",
            str(base),
            "-o",
            str(v2),
            "-q",
        ]
    )
    assert code == 1
    scenarios = json.loads(v2.read_text())["scenarios"]
    assert {s["name"]: s["verdict"]["verdict"] for s in scenarios}["seat_change"] == "fail"
    # Failed by its routing, not by errors.
    assert not [t["error"] for s in scenarios for t in s["trials"] if t.get("error")]
