"""Structural mutation analysis: mutants of the graph, mutated SDK agent graphs, kill/survive verdicts."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunContextWrapper, function_tool, handoff

from agentassay._features.mutation._analysis import MUTATION_SCHEMA, mutation_analysis
from agentassay._features.mutation._structural import (
    StructuralMutant,
    _agent_map,
    apply_to_agents,
    apply_to_manifest,
    structural_mutants,
)
from agentassay._features.structure._graph import obligations
from agentassay._features.structure._model import (
    RESTRICTED_CALL,
    AgentNode,
    Delegation,
    Manifest,
    ToolNode,
    parse_objective,
)
from agentassay._integrations.adapters._openai_agents import (
    OpenAIAgentsAdapter,
    _agent_tool_target,
    _handoff_target,
    _reachable,
)
from agentassay._traces import Action, Step, Trace
from tests._support.cs_manifest import customer_service

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `examples` sits at the repository root, outside the package

from examples.customer_service import v1  # noqa: E402

MUTANT_IDS = [
    "delete_allowed_edge(faq_agent, faq_lookup_tool)",
    "delete_allowed_edge(seat_booking_agent, update_seat)",
    "remove_restriction(triage_agent, faq_lookup_tool)",
    "remove_restriction(triage_agent, update_seat)",
    "remove_restriction(faq_agent, update_seat)",
    "remove_restriction(seat_booking_agent, faq_lookup_tool)",
    "retarget_delegation(triage_agent, faq_agent, seat_booking_agent)",
    "retarget_delegation(faq_agent, triage_agent, seat_booking_agent)",
    "retarget_delegation(triage_agent, seat_booking_agent, faq_agent)",
    "retarget_delegation(seat_booking_agent, triage_agent, faq_agent)",
    "disconnect_agent(faq_agent)",
    "disconnect_agent(seat_booking_agent)",
]


def mutant(mutant_id: str, m: Manifest | None = None) -> StructuralMutant:
    return next(x for x in structural_mutants(m or customer_service()) if x.id == mutant_id)


# -- the manifest side -----------------------------------------------------------------------------
def test_mutants_of_customer_service() -> None:
    mutants = structural_mutants(customer_service())
    assert [x.id for x in mutants] == MUTANT_IDS
    assert mutants[6].target == ("triage_agent", "faq_agent", "seat_booking_agent")
    assert mutants[6].description == "triage_agent delegates to seat_booking_agent instead of faq_agent"
    # no other reachable agent to retarget to: no retarget mutant
    pair = Manifest(
        "pair", "a", (AgentNode("a", "A"), AgentNode("b", "B")), delegations=(Delegation("a", "b"),)
    )
    assert [x.id for x in structural_mutants(pair)] == ["disconnect_agent(b)"]


def test_apply_to_manifest() -> None:
    m = customer_service()

    def counts(mutant_id: str) -> dict[str, int]:
        return obligations(apply_to_manifest(m, mutant(mutant_id))).counts()

    assert counts("delete_allowed_edge(faq_agent, faq_lookup_tool)")["allowed"] == 1
    removed = apply_to_manifest(m, mutant("remove_restriction(triage_agent, update_seat)"))
    assert ("triage_agent", "update_seat") in removed.allow
    assert ("triage_agent", "update_seat") not in removed.restrict
    retargeted = apply_to_manifest(
        m, mutant("retarget_delegation(triage_agent, faq_agent, seat_booking_agent)")
    )
    assert [d.edge for d in retargeted.delegations] == [
        ("triage_agent", "seat_booking_agent"),
        ("faq_agent", "triage_agent"),
        ("triage_agent", "seat_booking_agent"),
        ("seat_booking_agent", "triage_agent"),
    ]
    # faq_agent is no longer reachable: its obligations go too
    assert obligations(retargeted).counts() == {
        "agents": 2,
        "allowed": 1,
        "restricted": 3,
        "delegations": 2,
        "total": 8,
    }
    assert counts("disconnect_agent(seat_booking_agent)") == {
        "agents": 2,
        "allowed": 1,
        "restricted": 3,
        "delegations": 2,
        "total": 8,
    }
    assert retargeted.notes[-1].startswith("structural mutant retarget_delegation(")
    assert m == customer_service()  # the original is untouched (frozen anyway)
    with pytest.raises(ValueError, match="not an allowed edge"):
        apply_to_manifest(m, StructuralMutant("delete_allowed_edge", ("triage_agent", "update_seat"), ""))


def test_parse_objective() -> None:
    q = parse_objective("Delegate(triage_agent, faq_agent)")
    assert q.kind == "delegate" and q.subject == ("triage_agent", "faq_agent")
    assert parse_objective(q.id) == q
    assert parse_objective("Reach(x)").subject == ("x",)
    for bad in ("Reach(a, b)", "UseTool(a)", "Go(a)", "Reach()"):
        with pytest.raises(ValueError):
            parse_objective(bad)


# -- the SDK side ----------------------------------------------------------------------------------
def snapshot(entry: Agent[Any]) -> list[tuple[Any, ...]]:
    """Everything a mutation could touch on the original graph, by identity."""
    out = []
    for a in _reachable(entry):
        out.append(
            (
                a,
                a.name,
                id(a.tools),
                [(t, getattr(t, "name", None), _agent_tool_target(t)) for t in a.tools],
                id(a.handoffs),
                [(h, _handoff_target(h)) for h in a.handoffs],
            )
        )
    return out


def by_name(entry: Agent[Any]) -> dict[str, Agent[Any]]:
    return {a.name: a for a in _reachable(entry)}


@pytest.mark.parametrize("mutant_id", MUTANT_IDS)
def test_apply_to_agents_leaves_the_original_untouched(mutant_id: str) -> None:
    before = snapshot(v1.triage_agent)
    mutated = apply_to_agents(v1.triage_agent, customer_service(), mutant(mutant_id))
    assert snapshot(v1.triage_agent) == before
    originals = {id(a) for a in _reachable(v1.triage_agent)}
    assert not originals & {id(a) for a in _reachable(mutated)}  # the mutant graph is all clones


def tool_names(agent: Agent[Any]) -> list[str]:
    return [t.name for t in agent.tools]


def handoff_targets(agent: Agent[Any]) -> list[str]:
    return [_handoff_target(h).name for h in agent.handoffs]


def test_apply_to_agents_mutations() -> None:
    m = customer_service()
    original = by_name(v1.triage_agent)

    g = by_name(
        apply_to_agents(v1.triage_agent, m, mutant("delete_allowed_edge(faq_agent, faq_lookup_tool)"))
    )
    assert tool_names(g["FAQ Agent"]) == [] and tool_names(original["FAQ Agent"]) == ["faq_lookup_tool"]
    assert tool_names(g["Seat Booking Agent"]) == ["update_seat"]

    g = by_name(apply_to_agents(v1.triage_agent, m, mutant("remove_restriction(triage_agent, update_seat)")))
    assert tool_names(g["Triage Agent"]) == ["update_seat"] and tool_names(original["Triage Agent"]) == []
    assert g["Triage Agent"].tools[0] is original["Seat Booking Agent"].tools[0]  # the real tool

    entry = apply_to_agents(
        v1.triage_agent, m, mutant("retarget_delegation(faq_agent, triage_agent, seat_booking_agent)")
    )
    g = by_name(entry)
    assert handoff_targets(g["FAQ Agent"]) == ["Seat Booking Agent"]
    assert _handoff_target(g["FAQ Agent"].handoffs[0]) is g["Seat Booking Agent"]
    assert g["Triage Agent"] is entry and handoff_targets(entry) == ["FAQ Agent", "Seat Booking Agent"]

    # triage already hands off to the seat agent: the retargeted duplicate is dropped
    g = by_name(
        apply_to_agents(
            v1.triage_agent, m, mutant("retarget_delegation(triage_agent, faq_agent, seat_booking_agent)")
        )
    )
    assert handoff_targets(g["Triage Agent"]) == ["Seat Booking Agent"]
    assert "FAQ Agent" not in g  # no longer reachable in the SDK graph either

    g = by_name(apply_to_agents(v1.triage_agent, m, mutant("disconnect_agent(seat_booking_agent)")))
    assert set(g) == {"Triage Agent", "FAQ Agent"}
    assert handoff_targets(g["Triage Agent"]) == ["FAQ Agent"]


def test_handoff_objects_keep_their_callbacks_and_follow_a_retarget() -> None:
    calls: list[str] = []
    b = Agent(name="B")
    c = Agent(name="C")
    a = Agent(
        name="A",
        handoffs=[
            handoff(b, on_handoff=lambda ctx: calls.append("b")),
            handoff(c, tool_name_override="to_c"),
        ],
    )
    m = Manifest(
        "abc",
        "a",
        (AgentNode("a", "A"), AgentNode("b", "B"), AgentNode("c", "C")),
        delegations=(Delegation("a", "b", "handoff"), Delegation("a", "c", "handoff", tool="to_c")),
    )
    ctx = RunContextWrapper(context=None)
    relinked = apply_to_agents(a, m, mutant("disconnect_agent(c)", m))
    (h,) = relinked.handoffs
    target = asyncio.run(h.on_invoke_handoff(ctx, ""))
    assert target is _handoff_target(h) and target is not b and target.name == "B"
    assert calls == ["b"]  # on_handoff survived the relinking

    moved = apply_to_agents(a, m, mutant("retarget_delegation(a, b, c)", m))
    (h, h_c) = moved.handoffs
    target = asyncio.run(h.on_invoke_handoff(ctx, ""))
    assert target.name == "C" and target is _handoff_target(h) is _handoff_target(h_c)
    assert (h.agent_name, h.tool_name) == ("C", "transfer_to_c")  # the default name follows the target
    assert h_c.tool_name == "to_c"
    assert calls == ["b", "b"]
    assert a.handoffs[0].agent_name == "B" and _handoff_target(a.handoffs[0]) is b


@function_tool
def lookup(topic: str) -> str:
    """Look a topic up.

    Args:
        topic: What to look up.
    """
    return f"facts about {topic}"


researcher = Agent(name="Researcher", instructions="research", tools=[lookup])
manager = Agent(
    name="Manager",
    instructions="delegate",
    tools=[researcher.as_tool("ask_researcher", "Ask the researcher", max_turns=3)],
)
MANAGER_BEHAVIOUR = {
    "Manager": {
        "rules": [
            {"choose": "tool:ask_researcher"},
            {"after": "tool", "choose": "respond", "respond": "{tool_output}"},
        ],
        "arguments": {"ask_researcher": {"input": "tell me about owls"}},
    },
    "Researcher": {"rules": [{"choose": "tool:lookup"}], "arguments": {"lookup": {"topic": "owls"}}},
}
MANAGER_MANIFEST = Manifest(
    "manager",
    "manager",
    (AgentNode("manager", "Manager"), AgentNode("researcher", "Researcher")),
    tools=(ToolNode("lookup", "lookup"),),
    allow=(("researcher", "lookup"),),
    restrict=(("manager", "lookup"),),
    delegations=(Delegation("manager", "researcher", "as_tool", tool="ask_researcher"),),
)


def run_manager(entry: Agent[Any], text: str, seed: int) -> Trace:
    return asyncio.run(OpenAIAgentsAdapter(entry, behaviour=MANAGER_BEHAVIOUR).run(text, seed=seed))


def test_as_tool_delegations_run_the_mutated_clone() -> None:
    before = snapshot(manager)
    mutated = apply_to_agents(
        manager, MANAGER_MANIFEST, mutant("delete_allowed_edge(researcher, lookup)", MANAGER_MANIFEST)
    )
    assert snapshot(manager) == before
    (tool,) = mutated.tools
    assert tool.name == "ask_researcher" and _agent_tool_target(tool) is not researcher
    assert _agent_tool_target(tool).tools == []
    # relinked by rebinding the SDK's own closure, so as_tool options (max_turns=3) are kept
    impl = tool.on_invoke_tool._invoke_tool_impl
    cells = dict(zip(impl.__code__.co_freevars, (c.cell_contents for c in impl.__closure__), strict=True))
    assert cells["max_turns"] == 3 and cells["self"] is _agent_tool_target(tool)

    original = run_manager(manager, "owls?", 0)
    assert "lookup" in original.tools_called
    # the sub-run is the clone without the tool (the original researcher still has it)
    broken = run_manager(mutated, "owls?", 0)
    assert "lookup" not in broken.tools_called
    assert [s.tool for s in broken.steps if s.action is Action.HANDOFF] == ["ask_researcher"]


def test_agents_sharing_a_name_map_in_breadth_first_order() -> None:
    deep = Agent(name="Helper", instructions="deep")
    middle = Agent(name="Middle", handoffs=[deep])
    shallow = Agent(name="Helper", instructions="shallow")
    boss = Agent(name="Boss", handoffs=[middle, shallow])
    m = Manifest(
        "twins",
        "boss",
        (
            AgentNode("boss", "Boss"),
            AgentNode("helper_2", "Helper"),
            AgentNode("middle", "Middle"),
            AgentNode("helper", "Helper"),
        ),
    )
    assert _agent_map(boss, m) == {"boss": boss, "middle": middle, "helper": shallow, "helper_2": deep}


# -- mutation analysis -----------------------------------------------------------------------------
SEAT_OBJECTIVES = [
    "Reach(seat_booking_agent)",
    "Delegate(triage_agent, seat_booking_agent)",
    "UseTool(seat_booking_agent, update_seat)",
]
FAQ_OBJECTIVES = [
    "Reach(faq_agent)",
    "Delegate(triage_agent, faq_agent)",
    "UseTool(faq_agent, faq_lookup_tool)",
]
TESTS = [
    ("seat_change", "I'd like to change my seat to 14C. My confirmation number is ABC123.", SEAT_OBJECTIVES),
    ("baggage", "How much baggage can I bring?", FAQ_OBJECTIVES),
    ("wifi", "Is there wifi on the plane?", FAQ_OBJECTIVES),
]


def run_offline(entry: Agent[Any], text: str, seed: int) -> Trace:
    return asyncio.run(OpenAIAgentsAdapter(entry, module="examples.customer_service.v1").run(text, seed=seed))


def test_mutation_analysis_on_the_offline_customer_service_example() -> None:
    m = customer_service()
    before = snapshot(v1.triage_agent)
    report = mutation_analysis(m, TESTS, run_offline, agent=v1.triage_agent)
    assert snapshot(v1.triage_agent) == before

    assert [(t.name, t.seed) for t in report.tests] == [("seat_change", 0), ("baggage", 1), ("wifi", 2)]
    assert all(t.witnessed == t.objectives and t.error is None for t in report.tests)

    status = {r.mutant.id: r.status for r in report.results}
    assert list(status) == MUTANT_IDS
    killed = {
        "delete_allowed_edge(faq_agent, faq_lookup_tool)",
        "delete_allowed_edge(seat_booking_agent, update_seat)",
        "retarget_delegation(triage_agent, faq_agent, seat_booking_agent)",
        "retarget_delegation(triage_agent, seat_booking_agent, faq_agent)",
        "disconnect_agent(faq_agent)",
        "disconnect_agent(seat_booking_agent)",
    }
    assert {k for k, v in status.items() if v == "killed"} == killed
    # the offline simulator never tempts an agent towards a tool it was not meant to have, and no
    # test targets the hand-back delegations: these survive
    assert {k for k, v in status.items() if v == "survived"} == set(MUTANT_IDS) - killed
    assert report.score == 0.5

    first = report.result("delete_allowed_edge(faq_agent, faq_lookup_tool)")
    assert first.killed_by == "baggage"
    assert first.reason.startswith("no longer witnesses Reach(faq_agent), Delegate(triage_agent, faq_agent)")
    assert "the run failed: ValueError: offline behaviour for agent 'FAQ Agent'" in first.reason
    assert report.result("disconnect_agent(seat_booking_agent)").killed_by == "seat_change"

    d = json.loads(json.dumps(report.to_dict()))
    assert d["schema"] == MUTATION_SCHEMA
    assert (d["total"], d["killed"], d["survived"], d["invalid"], d["score"]) == (12, 6, 6, 0, 0.5)
    assert d["mutants"][0]["id"] == MUTANT_IDS[0] and d["mutants"][0]["status"] == "killed"
    assert report.summary().startswith("mutation score 6/12 (0.50); survived: remove_restriction(")


def test_a_real_call_on_a_restricted_edge_kills_and_manifest_runs_work() -> None:
    """A manifest-level runtime: triage uses update_seat itself whenever the manifest allows it."""

    def run(mm: Manifest, text: str, seed: int) -> Trace:
        if ("triage_agent", "update_seat") in mm.allow:
            return Trace(steps=(Step(Action.CALL_TOOL, agent="Triage Agent", tool="update_seat"),))
        steps = [Step(Action.HANDOFF, agent="Triage Agent", target="Seat Booking Agent")]
        steps.append(Step(Action.CALL_TOOL, agent="Seat Booking Agent", tool="update_seat"))
        # refused attempts are not real calls
        steps.append(
            Step(Action.CALL_TOOL, agent="Seat Booking Agent", tool="faq_lookup_tool", error=RESTRICTED_CALL)
        )
        return Trace(steps=tuple(steps))

    m = customer_service()
    report = mutation_analysis(
        m,
        [("seat", "change my seat", ["Delegate(triage_agent, seat_booking_agent)"])],
        run,
        mutants=[
            mutant("remove_restriction(triage_agent, update_seat)"),
            mutant("remove_restriction(faq_agent, update_seat)"),
            StructuralMutant("delete_allowed_edge", ("triage_agent", "update_seat"), "not an edge"),
        ],
        seed=7,
    )
    assert report.tests[0].seed == 7 and report.tests[0].broken == ()
    hit, miss, invalid = report.results
    assert hit.status == "killed" and hit.reason == (
        "no longer witnesses Delegate(triage_agent, seat_booking_agent); "
        "real call on restricted edge triage_agent → update_seat"
    )
    assert miss.status == "survived"
    assert invalid.status == "invalid" and "not an allowed edge" in invalid.error
    assert report.score == 0.5  # invalid mutants are left out


def test_mutations_that_cannot_apply_to_the_sdk_graph_raise() -> None:
    m = Manifest(
        "extra",
        "triage_agent",
        (*customer_service().agents, AgentNode("ghost", "Ghost")),
        delegations=(*customer_service().delegations, Delegation("triage_agent", "ghost")),
    )
    with pytest.raises(ValueError, match="no SDK agent for manifest agent 'ghost'"):
        apply_to_agents(v1.triage_agent, m, mutant("disconnect_agent(ghost)", m))
    with pytest.raises(ValueError, match="'nope' is not a tool of the manifest"):
        apply_to_agents(
            v1.triage_agent,
            customer_service(),
            StructuralMutant("remove_restriction", ("faq_agent", "nope"), ""),
        )
    with_nope = Manifest(
        **{**customer_service().__dict__, "tools": (*customer_service().tools, ToolNode("nope", "nope"))}
    )
    with pytest.raises(ValueError, match="no agent of the graph has a tool named 'nope'"):
        apply_to_agents(
            v1.triage_agent, with_nope, StructuralMutant("remove_restriction", ("faq_agent", "nope"), "")
        )


def test_a_harness_failure_on_a_mutant_is_a_failed_trial_but_on_the_original_it_raises() -> None:
    def run(mm: Manifest, text: str, seed: int) -> Trace:
        if "faq_agent" not in obligations(mm).agents:
            raise ValueError("probe: no reachable agent named FAQ Agent")
        return Trace(steps=(Step(Action.HANDOFF, agent="Triage Agent", target="FAQ Agent"),))

    m = customer_service()
    report = mutation_analysis(
        m,
        [("faq", "q", ["Delegate(triage_agent, faq_agent)"])],
        run,
        mutants=[mutant("disconnect_agent(faq_agent)")],
    )
    (result,) = report.results
    assert result.reason == (
        "no longer witnesses Delegate(triage_agent, faq_agent); "
        "the run failed: ValueError: probe: no reachable agent named FAQ Agent"
    )
    with pytest.raises(ValueError, match="probe"):
        mutation_analysis(
            apply_to_manifest(m, mutant("disconnect_agent(faq_agent)")), [("faq", "q", [])], run
        )


def test_the_generated_suite_detects_every_mutant_the_offline_model_can_show() -> None:
    """The committed `agentassay generate` output for the example kills all graph mutants except the
    four `remove_restriction` ones: the offline behaviour never reaches for a tool it is not meant to
    have, so giving it one changes nothing observable (a real model may differ)."""
    import yaml

    from agentassay._features.structure import extract_manifest
    from agentassay._integrations.adapters import AgentRunError

    m = extract_manifest(v1.triage_agent, system="customer_service")
    doc = yaml.safe_load((ROOT / "examples" / "customer_service" / "agentassay.structural.yml").read_text())
    tests = [(s["name"], s["input"], tuple(s["witness"])) for s in doc["scenarios"]]

    def run(agent: Agent[Any], text: str, seed: int) -> Trace:
        adapter = OpenAIAgentsAdapter(agent, module="examples.customer_service.v1")
        try:
            return asyncio.run(adapter.run(text, seed=seed))
        except AgentRunError as exc:
            assert exc.trace is not None
            return exc.trace

    report = mutation_analysis(m, tests, run, agent=v1.triage_agent)
    status = {r["id"]: r["status"] for r in report.to_dict()["mutants"]}
    assert {k for k, v in status.items() if v == "survived"} == {
        k for k in status if k.startswith("remove_restriction")
    }
    assert report.score == 8 / 12
