"""Agno through the OpenTelemetry capture adapter (issue 24): the airline team offline (Agno's own OpenAIChat
against the offline server), concurrent trials, a v1 -> v2 regression, and the profile's detection, tools and
span fix-ups (delegations as handoffs or as delegations that return). Runs in .venv-fw-agno
(`bash .ci/frameworks.sh agno`); skipped where Agno is not installed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agno")

from agno.agent import Agent
from agno.models.openai import OpenAIChat
from agno.tools import tool

from agentassay._integrations.adapters import AgentRunError, adapter_for
from agentassay._integrations.adapters._otel import PROFILES, detect, load_profile
from agentassay._integrations.adapters._otel._agno import DELEGATE, agents_of
from agentassay._integrations.cli import main
from agentassay._integrations.importers import import_spans
from agentassay._traces import Action, Trace
from examples.customer_service.airline import (
    FAQ_AGENT,
    SEAT_AGENT,
    TRIAGE_AGENT,
    TRIAGE_INSTRUCTIONS_V1,
    faq_lookup_tool,
)
from examples.frameworks.agno._workflow import build_team
from tests._support.frameworks import (
    BAD_SEAT_Q,
    SEAT_Q,
    check_failing_tool,
    check_faq_and_direct_answer,
    check_seat_steps,
    concurrent_seat_trials,
    offline_adapter,
    offline_trial,
    run_then_check_blocks,
    run_with_spans,
)

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "examples" / "frameworks" / "agno" / "agentassay.yml"
V1 = "examples.frameworks.agno.v1:team"
V2 = "examples.frameworks.agno.v2:team"
COORDINATE = "tests.frameworks.agno._coordinate:team"


def check_seat_trace(trace: Trace, seat: str) -> None:
    check_seat_steps(trace, seat, TRIAGE_AGENT, SEAT_AGENT)
    assert trace.metadata.model == "gpt-4.1-mini"


# -- the profile ------------------------------------------------------------------------------------------
def test_teams_and_agents_are_detected_and_traced_by_the_agno_profile() -> None:
    team = build_team(TRIAGE_INSTRUCTIONS_V1)
    assert "agno" in PROFILES
    assert detect(team) == "agno" and detect(team.members[0]) == "agno"
    assert detect(faq_lookup_tool) is None
    adapter = adapter_for(team, entry="x:team")
    assert adapter.name == "otel:agno"
    config = adapter.config()
    assert config["framework"] == "agno" and config["agents"] == [TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT]
    assert [a.name for a in agents_of(team)] == [TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT]


def test_tools_are_every_members_tools_without_the_delegation_tool() -> None:
    tools = load_profile("agno").tools(build_team(TRIAGE_INSTRUCTIONS_V1))
    assert {(t.name, t.agent) for t in tools} == {("faq_lookup_tool", FAQ_AGENT), ("update_seat", SEAT_AGENT)}
    seat = next(t for t in tools if t.name == "update_seat")
    assert seat.parameters["properties"]["new_seat"]["type"] == "string"
    assert "seat" in seat.description.lower()
    single = Agent(name="faq", tools=[tool(faq_lookup_tool)])
    assert [(t.name, t.agent) for t in load_profile("agno").tools(single)] == [("faq_lookup_tool", "faq")]


def test_fix_spans_turns_a_delegation_that_answers_the_customer_into_a_handoff() -> None:
    trace, spans = run_with_spans(offline_adapter(V1), SEAT_Q.format(seat="14C"), seed=2)
    check_seat_trace(trace, "14C")
    [raw] = import_spans(spans)
    # Agno's own spans: the delegation is a call of delegate_task_to_member, the member's run beside it.
    [delegate] = [s for s in raw.trace.steps if s.action is Action.CALL_TOOL and s.tool == DELEGATE]
    assert delegate.arguments["member_id"] == "seat-booking-agent"
    before = json.dumps(spans)
    fixed = load_profile("agno").fix_spans(spans)
    assert json.dumps(spans) == before  # the capture's spans are not modified
    [built] = import_spans(fixed)
    check_seat_trace(built.trace, "14C")


def test_a_delegation_that_comes_back_to_the_leader_is_a_delegation() -> None:
    """Agno's default coordinate mode: the member's answer is the tool's result, the leader answers."""
    trace, spans = run_with_spans(offline_adapter(COORDINATE), SEAT_Q.format(seat="14C"), seed=2)
    # Agno records the member's run beside the delegation's tool span; the fix-up moves it inside.
    by_name = {s["name"]: s for s in spans}
    assert by_name["Seat_Booking_Agent.arun"]["parentSpanId"] == by_name["Triage_Agent.arun"]["spanId"]
    assert [(s.action, s.agent, s.depth) for s in trace.steps] == [
        (Action.HANDOFF, TRIAGE_AGENT, 0),
        (Action.CALL_TOOL, SEAT_AGENT, 1),
        (Action.RESPOND, SEAT_AGENT, 1),
        (Action.RESPOND, TRIAGE_AGENT, 0),
    ], trace.steps
    handoff, call, answer, final = trace.steps
    assert (handoff.tool, handoff.target) == (DELEGATE, SEAT_AGENT)
    assert handoff.arguments["member_id"] == "seat-booking-agent"
    assert call.arguments == {"confirmation_number": "ABC123", "new_seat": "14C"}
    assert "14C" in answer.output and trace.output.startswith("Thanks for waiting.")
    assert final.output == trace.output
    assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0


def _span(span_id: str, parent: str, kind: str, start: int, end: int, **attributes: str) -> dict[str, Any]:
    kvs = [{"key": k.replace("_", "."), "value": {"stringValue": v}} for k, v in attributes.items()]
    kvs.append({"key": "openinference.span.kind", "value": {"stringValue": kind}})
    return {"traceId": "1" * 32, "spanId": span_id, "parentSpanId": parent, "name": span_id,
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(end), "attributes": kvs}  # fmt: skip


def test_fix_spans_on_a_broadcast_and_on_an_unknown_member() -> None:
    """``delegate_task_to_members`` runs every member inside it; a delegation to an id no member has ran none."""
    spans = [
        _span("lead", "", "AGENT", 0, 100, agent_name="Lead"),
        _span("all", "lead", "TOOL", 10, 50, tool_name="delegate_task_to_members", input_value='{"task": "t"}'),
        _span("a", "lead", "AGENT", 12, 20, agent_name="A"),
        _span("b", "lead", "AGENT", 22, 40, agent_name="B"),
        _span("nobody", "lead", "TOOL", 55, 56, tool_name=DELEGATE, input_value='{"member_id": "z", "task": "t"}'),
        _span("llm", "lead", "LLM", 60, 70),
    ]
    fixed = {s["spanId"]: s for s in load_profile("agno").fix_spans(spans)}
    assert (fixed["a"]["parentSpanId"], fixed["b"]["parentSpanId"]) == ("all", "all")
    assert fixed["nobody"] == spans[4] and fixed["lead"] == spans[0]
    [built] = import_spans(list(fixed.values()))
    assert [(s.action, s.agent, s.target, s.depth) for s in built.trace.steps] == [
        (Action.HANDOFF, "Lead", "A", 0),  # the broadcast: to each member, one level deeper
        (Action.HANDOFF, "Lead", "B", 1),
        (Action.RESPOND, "B", None, 1),
        (Action.CALL_TOOL, "Lead", None, 0),  # the unknown member: a plain call, Agno's error text its result
        (Action.RESPOND, "Lead", None, 0),
    ], built.trace.steps
    assert (built.trace.steps[3].tool, built.trace.steps[3].arguments) == (DELEGATE, {"member_id": "z", "task": "t"})


def test_faq_and_a_direct_answer_offline() -> None:
    check_faq_and_direct_answer(offline_trial(V1), TRIAGE_AGENT, FAQ_AGENT, seed=3)


def test_a_failing_tool_is_the_calls_error() -> None:
    check_failing_tool(offline_trial(V1)(BAD_SEAT_Q, 2), SEAT_AGENT)


def test_a_run_agno_reports_as_failed_is_the_trials_error() -> None:
    """Agno returns a failed run (here: its model's server refuses the connection) instead of raising."""
    unreachable = OpenAIChat(id="gpt-4.1-mini", base_url="http://127.0.0.1:9/v1", api_key="x", max_retries=0)
    adapter = adapter_for(Agent(name="Lonely Agent", model=unreachable), entry="x:agent")
    with pytest.raises(AgentRunError, match="the Agno run failed") as failed:
        asyncio.run(adapter.run("hello", seed=1))
    trace = failed.value.trace
    assert trace is not None and trace.error and trace.steps[-1].action is Action.ERROR


# -- concurrency ------------------------------------------------------------------------------------------
def test_eight_concurrent_trials_keep_their_traces_apart() -> None:
    adapter = offline_adapter(V1)
    concurrent_seat_trials(adapter, check_seat_trace, seed=100)


# -- the example through the CLI --------------------------------------------------------------------------
def test_the_example_offline_records_full_traces_and_v2_is_blocked(tmp_path: Path) -> None:
    agents = (TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT)
    delegations = {(TRIAGE_AGENT, FAQ_AGENT), (TRIAGE_AGENT, SEAT_AGENT)}  # only the leader delegates
    run_then_check_blocks(SUITE, V2, tmp_path, "otel:agno", agents, check_seat_trace, handoffs=delegations)


def test_the_manifest_is_read_from_the_team_and_the_example_covers_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["manifest", V1]) == 0
    out = capsys.readouterr()
    for text in (
        "entry_agent: triage_agent", "name: Triage Agent", "name: FAQ Agent", "name: Seat Booking Agent",
        "[faq_agent, faq_lookup_tool]", "[seat_booking_agent, update_seat]",
        "{from: triage_agent, to: faq_agent, trigger: delegate, via: handoff, tool: delegate_task_to_member}",
        "{from: triage_agent, to: seat_booking_agent, trigger: delegate, via: handoff, tool: delegate_task_to_member}",
    ):
        assert text in out.out, text
    assert "3 reachable agents, 2 tools, 2 allowed edges" in out.err
    # A run of the whole suite: every agent reached, every allowed tool called, every delegation taken.
    assert main(["run", str(SUITE), "--trials", "40", "-o", str(tmp_path / "base.json"), "--no-store", "-q"]) == 0
    structural = json.loads((tmp_path / "base.json").read_text(encoding="utf-8"))["coverage"]["structural"]
    assert {c: structural["criteria"][c]["value"] for c in ("C1", "C2", "C4")} == {"C1": 1.0, "C2": 1.0, "C4": 1.0}
