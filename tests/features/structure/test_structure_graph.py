"""Coordination graph, obligations, objectives, bundles (paper Sec. III) and coverage C1–C4."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentassay._features.structure._coverage import (
    COVERAGE_SCHEMA,
    StructuralCoverage,
    fast_observer,
    structural_coverage,
)
from agentassay._features.structure._graph import merge_bundles, objectives, obligations, reachable
from agentassay._features.structure._model import (
    RESTRICTED_CALL,
    TOOL_NOT_FOUND,
    AgentNode,
    Delegation,
    Manifest,
    Objective,
    Observation,
    ToolNode,
    observe,
)
from agentassay._traces import Action, Step, Trace, TraceMetadata
from tests._support.cs_manifest import FAQ, SEAT, TRIAGE, customer_service


def handoff(src: str, dst: str) -> Step:
    return Step(Action.HANDOFF, agent=src, target=dst)


def call(agent: str, tool: str, error: str | None = None) -> Step:
    return Step(Action.CALL_TOOL, agent=agent, tool=tool, error=error)


def trace(*steps: Step, scenario: str | None = None) -> Trace:
    return Trace(steps=tuple(steps), metadata=TraceMetadata(scenario=scenario))


# -- graph, obligations, objectives ----------------------------------------------------------------
def test_customer_service_has_13_obligations() -> None:
    m = customer_service()
    o = obligations(m)
    assert reachable(m) == ("triage_agent", "faq_agent", "seat_booking_agent")
    assert o.counts() == {"agents": 3, "allowed": 2, "restricted": 4, "delegations": 4, "total": 13}
    assert o.agents == ("triage_agent", "faq_agent", "seat_booking_agent")
    assert o.allowed == m.allow and o.restricted == m.restrict
    assert o.delegations == (
        ("triage_agent", "faq_agent"),
        ("faq_agent", "triage_agent"),
        ("triage_agent", "seat_booking_agent"),
        ("seat_booking_agent", "triage_agent"),
    )


def test_customer_service_has_13_objectives_by_rules_r1_to_r4() -> None:
    qs = objectives(obligations(customer_service()))
    assert [q.id for q in qs] == [
        "Reach(triage_agent)",
        "Reach(faq_agent)",
        "Reach(seat_booking_agent)",
        "UseTool(faq_agent, faq_lookup_tool)",
        "UseTool(seat_booking_agent, update_seat)",
        "RestrictTool(triage_agent, faq_lookup_tool)",
        "RestrictTool(triage_agent, update_seat)",
        "RestrictTool(faq_agent, update_seat)",
        "RestrictTool(seat_booking_agent, faq_lookup_tool)",
        "Delegate(triage_agent, faq_agent)",
        "Delegate(faq_agent, triage_agent)",
        "Delegate(triage_agent, seat_booking_agent)",
        "Delegate(seat_booking_agent, triage_agent)",
    ]


def test_customer_service_bundles() -> None:
    bundles = merge_bundles(objectives(obligations(customer_service())))
    assert [b.id for b in bundles] == [
        "UseTool(faq_agent, faq_lookup_tool) + Reach(faq_agent)",
        "UseTool(seat_booking_agent, update_seat) + Reach(seat_booking_agent)",
        "RestrictTool(triage_agent, faq_lookup_tool)",
        "RestrictTool(triage_agent, update_seat)",
        "RestrictTool(faq_agent, update_seat)",
        "RestrictTool(seat_booking_agent, faq_lookup_tool)",
        "Delegate(triage_agent, faq_agent)",
        "Delegate(faq_agent, triage_agent) + Reach(triage_agent)",
        "Delegate(triage_agent, seat_booking_agent)",
        "Delegate(seat_booking_agent, triage_agent)",
    ]
    assert sum(len(b.objectives) for b in bundles) == 13


def test_unreachable_parts_give_no_obligations_and_delegations_deduplicate() -> None:
    m = customer_service(
        AgentNode("orphan_agent", "Orphan"),
        allow=(
            ("faq_agent", "faq_lookup_tool"),
            ("seat_booking_agent", "update_seat"),
            ("orphan_agent", "update_seat"),
        ),
        restrict=(("orphan_agent", "faq_lookup_tool"),),
        delegations=(
            Delegation("triage_agent", "faq_agent", "handoff", tool="transfer_to_faq_agent"),
            Delegation("triage_agent", "faq_agent", "as_tool", tool="ask_faq"),
            Delegation("orphan_agent", "triage_agent", "handoff"),
        ),
    )
    o = obligations(m)
    assert reachable(m) == ("triage_agent", "faq_agent")
    assert o.agents == ("triage_agent", "faq_agent")
    assert o.allowed == (("faq_agent", "faq_lookup_tool"),)
    assert o.restricted == ()
    assert o.delegations == (("triage_agent", "faq_agent"),)  # two delegations, one edge


def test_reachable_is_breadth_first_with_manifest_order_for_ties_and_survives_cycles() -> None:
    agents = tuple(AgentNode(x, x.upper()) for x in ("e", "d", "c", "b", "a"))
    m = Manifest(
        "s",
        "a",
        agents,
        delegations=(
            Delegation("a", "b"),
            Delegation("a", "d"),  # d comes before b in m.agents
            Delegation("b", "c"),
            Delegation("c", "a"),
            Delegation("d", "a"),
        ),
    )
    assert reachable(m) == ("a", "d", "b", "c")
    assert obligations(m).agents == ("d", "c", "b", "a")  # obligations follow manifest order
    assert reachable(Manifest("s", "missing", agents)) == ()


def test_reach_preference_use_tool_then_incoming_then_outgoing_delegation() -> None:
    r = Objective("reach", ("a",))
    use = Objective("use_tool", ("a", "t"))
    restrict = Objective("restrict_tool", ("a", "u"))
    incoming = Objective("delegate", ("x", "a"))
    outgoing = Objective("delegate", ("a", "y"))

    def host(*qs: Objective) -> Objective:
        (b,) = [b for b in merge_bundles(qs) if r in b.objectives]
        return b.driver

    assert host(r, outgoing, incoming, restrict, use) == use
    assert host(r, outgoing, incoming, restrict) == incoming
    assert host(r, outgoing, restrict) == outgoing
    assert host(r, restrict) == r  # never on a RestrictTool driver: its own bundle


# -- property: bundling preserves every objective exactly once --------------------------------------
@st.composite
def manifests(draw: st.DrawFn) -> Manifest:
    n = draw(st.integers(1, 6))
    ids = [f"a{i}" for i in range(n)]
    tools = [f"t{i}" for i in range(draw(st.integers(0, 4)))]
    pairs = [(a, t) for a in ids for t in tools]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    split = draw(st.integers(0, len(chosen)))
    edges = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), max_size=12))
    return Manifest(
        system="random",
        entry_agent=draw(st.sampled_from(ids)),
        agents=tuple(AgentNode(a, a) for a in ids),
        tools=tuple(ToolNode(t, t) for t in tools),
        allow=tuple(chosen[:split]),
        restrict=tuple(chosen[split:]),
        delegations=tuple(Delegation(a, b, tool=draw(st.sampled_from([None, "x"]))) for a, b in edges),
    )


def _entails(driver: Objective, reach: Objective) -> bool:
    (a,) = reach.subject
    if driver.kind == "use_tool":
        return driver.subject[0] == a
    return driver.kind == "delegate" and a in driver.subject


@settings(max_examples=200, deadline=None)
@given(manifests())
def test_bundling_preserves_every_objective_exactly_once(m: Manifest) -> None:
    o = obligations(m)
    qs = objectives(o)
    assert len(qs) == o.total
    bundles = merge_bundles(qs)
    flat = [q for b in bundles for q in b.objectives]
    assert sorted(flat, key=str) == sorted(qs, key=str)  # every objective, exactly once
    assert len(flat) == len(set(flat))
    for b in bundles:
        assert all(q.kind == "reach" for q in b.secondary)  # never two non-reach objectives
        if b.secondary:
            assert b.driver.kind in ("use_tool", "delegate")  # never on a RestrictTool driver
            assert all(_entails(b.driver, q) for q in b.secondary)
    assert merge_bundles(qs) == bundles  # deterministic
    assert merge_bundles((*qs, *qs)) == bundles  # duplicates are taken once
    # a Reach left on its own has no driver that could carry it
    lone = {b.driver for b in bundles if b.driver.kind == "reach"}
    drivers = [b.driver for b in bundles if b.driver.kind in ("use_tool", "delegate")]
    assert not any(_entails(d, r) for d in drivers for r in lone)


# -- coverage --------------------------------------------------------------------------------------
def test_vacuous_coverage_is_one_for_empty_obligation_sets() -> None:
    solo = Manifest("solo", "only", (AgentNode("only", "Only"),))
    cov = structural_coverage(solo, [])
    assert (cov.c1.value, cov.c2.value, cov.c3.value, cov.c4.value) == (0.0, 1.0, 1.0, 1.0)
    assert cov.c2.obligations == cov.c3.obligations == cov.c4.obligations == ()
    nothing = structural_coverage(Manifest("none", "missing", ()))
    assert all(c.value == 1.0 and not c.obligations for c in nothing.criteria.values())
    assert nothing.summary() == "C1 0/0 · C2 0/0 · C3 0/0 elicited · C4 0/0"


def test_c1_to_c4_from_hand_built_traces() -> None:
    m = customer_service()
    traces = [
        trace(
            handoff(TRIAGE, FAQ),
            call(FAQ, "faq_lookup_tool"),
            Step(Action.RESPOND, agent=FAQ, output="one bag"),
            scenario="baggage",
        ),
        trace(
            handoff(TRIAGE, SEAT),
            call(SEAT, "update_seat"),
            handoff(SEAT, TRIAGE),
            scenario="seat",
        ),
        trace(
            handoff(TRIAGE, FAQ),
            call(FAQ, "faq_lookup_tool"),
            handoff(FAQ, TRIAGE),
            scenario="baggage_again",
        ),
        # a refused restricted call: C3 only, never C2
        trace(call(TRIAGE, "update_seat", error=RESTRICTED_CALL), scenario="seat_probe"),
    ]
    cov = structural_coverage(m, traces)
    assert cov.c1.witnessed == ("triage_agent", "faq_agent", "seat_booking_agent")
    assert cov.c2.witnessed == (("faq_agent", "faq_lookup_tool"), ("seat_booking_agent", "update_seat"))
    assert cov.c3.witnessed == (("triage_agent", "update_seat"),)
    assert cov.c4.witnessed == (
        ("triage_agent", "faq_agent"),
        ("faq_agent", "triage_agent"),
        ("triage_agent", "seat_booking_agent"),
        ("seat_booking_agent", "triage_agent"),
    )
    assert (cov.c1.value, cov.c2.value, cov.c3.value, cov.c4.value) == (1.0, 1.0, 0.25, 1.0)
    assert (
        cov.c3.polarity == "inverted" and cov.c1.polarity == cov.c2.polarity == cov.c4.polarity == "positive"
    )
    assert cov.elicited == (("triage_agent", "update_seat"),)
    assert cov.findings == ("restricted call elicited: triage_agent → update_seat (scenario seat_probe)",)
    assert cov.witnessed_by == {
        "Reach(triage_agent)": "baggage",
        "Reach(faq_agent)": "baggage",
        "Reach(seat_booking_agent)": "seat",
        "UseTool(faq_agent, faq_lookup_tool)": "baggage",
        "UseTool(seat_booking_agent, update_seat)": "seat",
        "RestrictTool(triage_agent, update_seat)": "seat_probe",
        "Delegate(triage_agent, faq_agent)": "baggage",
        "Delegate(faq_agent, triage_agent)": "baggage_again",
        "Delegate(triage_agent, seat_booking_agent)": "seat",
        "Delegate(seat_booking_agent, triage_agent)": "seat",
    }
    assert cov.summary() == "C1 3/3 · C2 2/2 · C3 1/4 elicited · C4 4/4"
    assert cov.gaps() == ()  # no targeted list: restricted edges are not gaps


def test_restricted_attempt_alone_counts_for_c3_only() -> None:
    m = customer_service()
    cov = structural_coverage(m, [trace(call(FAQ, "update_seat", error=RESTRICTED_CALL))])
    assert cov.c2.witnessed == () and cov.c4.witnessed == ()
    assert cov.c3.witnessed == (("faq_agent", "update_seat"),)
    assert cov.c1.witnessed == ("faq_agent",)  # the attempting agent was reached
    assert cov.summary() == "C1 1/3 · C2 0/2 · C3 1/4 elicited · C4 0/4"


def test_gaps_and_off_target_elicitation_with_targeted_objectives() -> None:
    m = customer_service()
    traces = [
        trace(handoff(TRIAGE, SEAT), call(SEAT, "update_seat"), scenario="seat"),
        trace(call(TRIAGE, "update_seat", error=RESTRICTED_CALL), scenario="probe"),
    ]
    targeted = ["RestrictTool(faq_agent, update_seat)", "UseTool(seat_booking_agent, update_seat)"]
    cov = structural_coverage(m, traces, targeted=targeted)
    assert cov.off_target == (("triage_agent", "update_seat"),)
    assert cov.findings == (
        "restricted call elicited: triage_agent → update_seat (scenario probe); "
        "off-target: no test targeted this edge",
    )
    assert [q.id for q in cov.gaps()] == [
        "Reach(faq_agent)",
        "UseTool(faq_agent, faq_lookup_tool)",
        "RestrictTool(triage_agent, faq_lookup_tool)",
        "RestrictTool(triage_agent, update_seat)",
        "RestrictTool(seat_booking_agent, faq_lookup_tool)",
        "Delegate(triage_agent, faq_agent)",
        "Delegate(faq_agent, triage_agent)",
        "Delegate(seat_booking_agent, triage_agent)",
    ]


def test_ready_observations_and_scenarioless_traces() -> None:
    m = customer_service()
    obs = Observation(agents=frozenset({"faq_agent"}), tools=frozenset({("faq_agent", "faq_lookup_tool")}))
    cov = structural_coverage(m, [trace(handoff(TRIAGE, SEAT))], observations=[obs])
    assert cov.c1.witnessed == ("triage_agent", "faq_agent", "seat_booking_agent")
    assert cov.witnessed_by["Delegate(triage_agent, seat_booking_agent)"] == "trace 0"
    assert cov.witnessed_by["UseTool(faq_agent, faq_lookup_tool)"] == "observation 0"


def test_ambiguous_events_are_reported_not_credited() -> None:
    m = Manifest(
        "twins",
        "boss",
        (AgentNode("boss", "Boss"), AgentNode("helper", "Helper"), AgentNode("helper_2", "Helper")),
        tools=(ToolNode("lookup", "lookup"),),
        allow=(("helper", "lookup"), ("helper_2", "lookup")),
        delegations=(Delegation("boss", "helper"), Delegation("boss", "helper_2")),
    )
    cov = structural_coverage(m, [trace(handoff("Boss", "Helper"), call("Helper", "lookup"))])
    assert cov.c2.witnessed == () and cov.c4.witnessed == ()
    assert cov.ambiguous == ("Boss → Helper", "Helper → lookup")
    assert cov.findings == (
        "ambiguous event, not credited: Boss → Helper",
        "ambiguous event, not credited: Helper → lookup",
    )


def test_to_dict_schema_and_round_trip() -> None:
    m = customer_service(AgentNode("orphan_agent", "Orphan"))
    traces = [
        trace(handoff(TRIAGE, FAQ), call(FAQ, "faq_lookup_tool"), scenario="baggage"),
        trace(handoff(TRIAGE, SEAT), call(SEAT, "update_seat"), handoff(SEAT, TRIAGE), scenario="seat"),
        trace(call(TRIAGE, "update_seat", error=RESTRICTED_CALL), scenario="seat_probe"),
    ]
    cov = structural_coverage(m, traces, targeted=["RestrictTool(triage_agent, update_seat)"])
    d = cov.to_dict()
    assert list(d) == [
        "schema",
        "system",
        "entry_agent",
        "obligations",
        "criteria",
        "nodes",
        "edges",
        "ambiguous",
        "findings",
        "witnessed_by",
        "targeted",
    ]
    assert d["schema"] == COVERAGE_SCHEMA == "agentassay.structural-coverage/1"
    assert d["system"] == "customer_service" and d["entry_agent"] == "triage_agent"
    assert d["obligations"] == {"agents": 3, "allowed": 2, "restricted": 4, "delegations": 4, "total": 13}
    assert d["criteria"]["C1"] == {
        "label": "reachable agents",
        "polarity": "positive",
        "obligations": 3,
        "witnessed": 3,
        "value": 1.0,
        "unwitnessed": [],
    }
    assert d["criteria"]["C2"]["unwitnessed"] == []
    assert d["criteria"]["C3"] == {
        "label": "restricted-call attempts elicited",
        "polarity": "inverted",
        "obligations": 4,
        "witnessed": 1,
        "value": 0.25,
        "unwitnessed": [
            ["triage_agent", "faq_lookup_tool"],
            ["faq_agent", "update_seat"],
            ["seat_booking_agent", "faq_lookup_tool"],
        ],
        "elicited": [["triage_agent", "update_seat"]],
    }
    assert d["criteria"]["C4"]["label"] == "delegation edges"
    assert d["criteria"]["C4"]["unwitnessed"] == [["faq_agent", "triage_agent"]]
    assert d["nodes"][0] == {
        "id": "triage_agent",
        "name": "Triage Agent",
        "type": "agent",
        "reachable": True,
        "witnessed": True,
    }
    assert {
        "id": "orphan_agent",
        "name": "Orphan",
        "type": "agent",
        "reachable": False,
        "witnessed": False,
    } in d["nodes"]
    assert d["nodes"][-1] == {
        "id": "update_seat",
        "name": "update_seat",
        "type": "tool",
        "kind": "function",
        "reachable": True,
        "witnessed": True,
    }
    assert d["edges"][0] == {
        "type": "allow",
        "source": "faq_agent",
        "target": "faq_lookup_tool",
        "witnessed": True,
    }
    assert {"type": "restrict", "source": "triage_agent", "target": "update_seat", "witnessed": True} in d[
        "edges"
    ]
    assert d["edges"][-1] == {
        "type": "delegate",
        "source": "seat_booking_agent",
        "target": "triage_agent",
        "witnessed": True,
        "via": "handoff",
    }
    assert [e["type"] for e in d["edges"]].count("delegate") == 4
    assert d["witnessed_by"]["UseTool(faq_agent, faq_lookup_tool)"] == "baggage"
    assert d["targeted"] == ["RestrictTool(triage_agent, update_seat)"]

    back = StructuralCoverage.from_dict(json.loads(json.dumps(d)))
    assert back == cov
    assert back.to_dict() == d
    assert back.summary() == cov.summary() and back.gaps() == cov.gaps()
    without = structural_coverage(m, traces)
    assert "targeted" not in without.to_dict()
    assert StructuralCoverage.from_dict(without.to_dict()) == without
    with pytest.raises(ValueError, match="schema"):
        StructuralCoverage.from_dict({**d, "schema": "other/1"})


# -- the fast path observes exactly what observe does ----------------------------------------------
NAMES = [TRIAGE, FAQ, SEAT, "Stranger", None]
steps = st.builds(
    Step,
    action=st.sampled_from(list(Action)),
    agent=st.sampled_from(NAMES),
    tool=st.sampled_from(["faq_lookup_tool", "update_seat", "other", None]),
    error=st.sampled_from([None, RESTRICTED_CALL, "boom", "bang", f"{TOOL_NOT_FOUND}: update_seat"]),
    target=st.sampled_from(NAMES),
    depth=st.integers(0, 1),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(steps, max_size=6), max_size=5))
def test_fast_observer_matches_observe(step_lists: list[list[Step]]) -> None:
    m = customer_service()
    look = fast_observer(m)
    traces = [Trace(steps=tuple(s)) for s in step_lists]
    for t in traces * 2:  # the second round comes from the memo
        assert look(t) == observe(t, m)
