"""CrewAI through the OpenTelemetry capture adapter (issue 24): the airline crew of examples/frameworks/crewai,
driven offline by the simulator behind CrewAI's own OpenAI client (``model: {provider: offline}``).

Runs only in the CrewAI environment (``bash .ci/frameworks.sh crewai``): CrewAI pins openai<3, so the
OpenAI Agents SDK is not installed there, and nothing here imports it.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

crewai = pytest.importorskip("crewai")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # CrewAI's own, by the thousand

from agentassay._integrations.adapters import load_adapter  # noqa: E402
from agentassay._integrations.adapters._otel import detect, load_profile  # noqa: E402
from agentassay._integrations.adapters._otel._offline import endpoint  # noqa: E402
from agentassay._integrations.cli import main  # noqa: E402
from agentassay._integrations.importers import import_spans  # noqa: E402
from agentassay._spec._model import ModelConfig  # noqa: E402
from agentassay._traces import Action, Trace, TraceStore  # noqa: E402
from examples.customer_service.airline import FAQ_AGENT, SEAT_AGENT, TRIAGE_AGENT  # noqa: E402
from examples.frameworks.crewai._workflow import ASK, DELEGATE, MODEL, build_crew  # noqa: E402

SUITE = Path(__file__).resolve().parents[3] / "examples" / "frameworks" / "crewai" / "agentassay.yml"
V1 = "examples.frameworks.crewai.v1:crew"
V2 = "examples.frameworks.crewai.v2:crew"
AGENTS = {TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT}
TRIALS = "20"  # per scenario (a baseline records 1.5x): enough for v2's misrouting to show, seconds to run


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One recorded baseline of v1 (results file, trace store), shared by the tests that read it."""
    where = tmp_path_factory.mktemp("crewai-baseline")
    results, store = where / "v1.json", where / "traces.db"
    code = main(
        ["run", str(SUITE), "--full", "--trials", TRIALS, "-o", str(results), "--store", str(store), "-q"]
    )
    assert code in (0, 2), f"v1 must not fail its own suite (exit {code}; 2: too few trials to decide)"
    return results, store


def _traces(store: Path) -> dict[str, list[Trace]]:
    db = TraceStore(store)
    try:
        [version] = db.versions()
        rows = db.query(version)
    finally:
        db.close()
    found: dict[str, list[Trace]] = {}
    for row in rows:
        found.setdefault(row.scenario, []).append(row.trace)
    return found


def _delegation(trace: Trace, tool: str, target: str) -> bool:
    return any(
        s.action is Action.HANDOFF and s.agent == TRIAGE_AGENT and s.tool == tool and s.target == target
        and isinstance(s.arguments, dict) and s.arguments.get("coworker") == target
        for s in trace.steps
    )  # fmt: skip


# -- (a) a run of the example records full traces -------------------------------------------------------
def test_a_run_records_agents_tool_calls_delegations_and_tokens(baseline: tuple[Path, Path]) -> None:
    traces = _traces(baseline[1])
    assert {k: len(v) for k, v in traces.items()} == {
        s: 30 for s in ("seat_change", "baggage", "wifi", "out_of_scope")
    }
    for trials in traces.values():
        for trace in trials:
            assert trace.metadata.adapter == "otel:crewai" and trace.metadata.model == MODEL
            assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0
            assert trace.error is None and isinstance(trace.output, str) and trace.output
            assert all(s.agent in AGENTS for s in trace.steps), [s.to_dict() for s in trace.steps]
            assert trace.steps[-1].action is Action.RESPOND and trace.steps[-1].agent == TRIAGE_AGENT
            assert trace.steps[-1].output == trace.output

    seat = [t for t in traces["seat_change"] if "update_seat" in t.tools_called]
    assert len(seat) >= 25
    for trace in seat:
        assert _delegation(trace, DELEGATE, SEAT_AGENT)
        [call] = [s for s in trace.steps if s.action is Action.CALL_TOOL]
        assert call.agent == SEAT_AGENT and call.depth == 1
        assert call.arguments == {"confirmation_number": "ABC123", "new_seat": "14C"}
        assert call.output == "Updated seat to 14C for confirmation number ABC123."
        assert "14C" in trace.output
        # The coworker's answer goes back to triage: its reply at depth 1, then triage's final answer.
        replies = [s for s in trace.steps if s.action is Action.RESPOND]
        assert [(r.agent, r.depth) for r in replies] == [(SEAT_AGENT, 1), (TRIAGE_AGENT, 0)]

    for scenario, fact in (("baggage", "one bag"), ("wifi", "free wifi")):
        looked_up = [t for t in traces[scenario] if "faq_lookup_tool" in t.tools_called]
        assert len(looked_up) >= 25
        for trace in looked_up:
            assert _delegation(trace, ASK, FAQ_AGENT)
            [call] = [s for s in trace.steps if s.action is Action.CALL_TOOL]
            assert call.agent == FAQ_AGENT and call.tool == "faq_lookup_tool"
            assert isinstance(call.arguments, dict) and call.arguments["question"]
            assert fact in call.output and fact in trace.output

    direct = [t for t in traces["out_of_scope"] if not t.handoffs]
    assert len(direct) >= 25
    assert all(t.tools_called == [] and "flight" in t.output for t in direct)


# -- (b) concurrent trials keep their traces apart -------------------------------------------------------
def test_eight_concurrent_trials_keep_their_traces_apart() -> None:
    adapter = load_adapter(V1, model=ModelConfig(provider="offline"))
    assert endpoint().traceparent, "httpx must be instrumented, so each request names its trial"
    seats = [f"{row}{letter}" for row, letter in zip(range(11, 19), "ABCDEFAB", strict=True)]

    async def all_at_once() -> list[Trace]:
        return await asyncio.gather(*(
            adapter.run(f"I'd like to change my seat to {seat}. My confirmation number is XYZ{i:03d}.", seed=i)
            for i, seat in enumerate(seats)
        ))  # fmt: skip

    traces = asyncio.run(all_at_once())
    assert adapter.escaped == 0
    assert len({t.metadata.extra["trace_id"] for t in traces}) == 8
    assert [t.metadata.seed for t in traces] == list(range(8))
    changed = 0
    for i, (seat, trace) in enumerate(zip(seats, traces, strict=True)):
        text = json.dumps(trace.to_dict())
        others = [s for s in seats if s != seat]
        assert not any(s in text for s in others), f"trial {i} holds another trial's seat"
        calls = [s for s in trace.steps if s.action is Action.CALL_TOOL and s.tool == "update_seat"]
        for call in calls:
            assert call.arguments == {"confirmation_number": f"XYZ{i:03d}", "new_seat": seat}
            changed += 1
    assert changed >= 6


# -- (c) check of the regressed version blocks -----------------------------------------------------------
def test_check_of_v2_against_a_v1_baseline_blocks(baseline: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "v2.json"
    code = main([
        "check", str(SUITE), "--agent", V2, "--baseline", str(baseline[0]), "--trials", TRIALS,
        "-o", str(out), "--no-store", "-q",
    ])  # fmt: skip
    assert code == 1
    results = json.loads(out.read_text(encoding="utf-8"))
    verdicts = {s["name"]: s["verdict"]["verdict"] for s in results["scenarios"]}
    assert verdicts["seat_change"] == "fail", verdicts


# -- (d) the profile ----------------------------------------------------------------------------------
@pytest.fixture
def crew(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A crew built with a placeholder endpoint (these tests never call the model)."""
    monkeypatch.setenv("OPENAI_API_KEY", "offline")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    return build_crew("You triage.")


def test_a_crew_is_detected_and_its_tools_listed_with_their_agents(crew: Any) -> None:
    assert detect(crew) == "crewai"
    assert detect(object()) is None
    profile = load_profile("crewai")
    tools = {(t.name, t.agent): t for t in profile.tools(crew)}
    assert set(tools) == {
        ("faq_lookup_tool", FAQ_AGENT),
        ("update_seat", SEAT_AGENT),
        (DELEGATE, TRIAGE_AGENT),  # CrewAI adds its delegation tools at run time; listed all the same
        (ASK, TRIAGE_AGENT),
    }
    seat = tools[("update_seat", SEAT_AGENT)]
    assert "seat" in seat.description
    assert seat.parameters is not None
    assert set(seat.parameters["required"]) == {"confirmation_number", "new_seat"}
    delegate = tools[(DELEGATE, TRIAGE_AGENT)]
    assert delegate.parameters is not None and "coworker" in delegate.parameters["properties"]
    assert FAQ_AGENT in delegate.description and SEAT_AGENT in delegate.description
    assert profile.env["CREWAI_DISABLE_TELEMETRY"] == "true" and "OTEL_SDK_DISABLED" not in profile.env
    described = profile.describe(crew)
    assert described["agents"] == [TRIAGE_AGENT, FAQ_AGENT, SEAT_AGENT] and described["crewai"]


def test_only_a_crew_is_run(crew: Any) -> None:
    with pytest.raises(TypeError, match=r"runs a crewai\.Crew"):
        load_profile("crewai").invoke(crew.agents[0], "hello")


def test_output_is_the_crews_raw_answer() -> None:
    profile = load_profile("crewai")
    assert profile.output(crewai.CrewOutput(raw="Done.", tasks_output=[])) == "Done."


def test_fix_spans_names_each_agent_by_its_role(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a trial's captured spans: OpenInference names agent spans "<role>.<task>.execute" and keeps the role
    in ``graph.node.id``; after fix_spans every step carries the role."""
    adapter = load_adapter(V1, model=ModelConfig(provider="offline"))
    captured: list[list[dict[str, Any]]] = []
    fix = adapter.profile.fix_spans

    def spy(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
        captured.append(copy.deepcopy(spans))
        return fix(spans)

    monkeypatch.setattr(adapter.profile, "fix_spans", spy)
    trace = asyncio.run(adapter.run("Is there wifi on the plane?", seed=3))
    [raw] = captured

    def attrs(span: dict[str, Any]) -> dict[str, Any]:
        return {kv["key"]: next(iter(kv["value"].values())) for kv in span["attributes"]}

    agent_spans = [attrs(s) for s in raw if attrs(s).get("openinference.span.kind") == "AGENT"]
    assert {a["graph.node.id"] for a in agent_spans} == {TRIAGE_AGENT, FAQ_AGENT}
    assert not any("agent.name" in a for a in agent_spans)
    [before] = import_spans(copy.deepcopy(raw))
    assert (
        not {s.agent for s in before.trace.steps} <= AGENTS
    )  # named after the span: "<role>.<task>.execute"
    [after] = import_spans(load_profile("crewai").fix_spans(copy.deepcopy(raw)))
    assert {s.agent for s in after.trace.steps} == {TRIAGE_AGENT, FAQ_AGENT}
    assert [s.to_dict() for s in after.trace.steps] == [s.to_dict() for s in trace.steps]
