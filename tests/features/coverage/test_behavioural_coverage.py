"""Behavioural coverage (paper Sec. 4): each dimension, Chao1, boundaries, weights, store fast path."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentassay._features.coverage import (
    COVERAGE_SCHEMA,
    DIMENSIONS,
    BehaviouralCoverage,
    behavioural_coverage,
    chao1,
    coverage_from_store,
    decision_path,
    default_state_abstraction,
    normalise_weights,
    tool_boundaries,
    weighted_geometric_mean,
)
from agentassay._features.coverage._chao1 import chao1_from_frequencies
from agentassay._integrations.adapters._base import ToolInfo
from agentassay._traces import Action, Step, StoreError, Trace, TraceMetadata, TraceStore

TRIAGE, FAQ, SEAT = "Triage Agent", "FAQ Agent", "Seat Booking Agent"
FAQ_TOOL = ToolInfo(
    "faq_lookup_tool", "", {"type": "object", "properties": {"question": {"type": "string"}}}, FAQ
)
SEAT_TOOL = ToolInfo(
    "update_seat",
    "",
    {
        "type": "object",
        "properties": {"confirmation_number": {"type": "string"}, "new_seat": {"type": "string"}},
    },
    SEAT,
)
CS_TOOLS = [FAQ_TOOL, SEAT_TOOL]


def handoff(target: str, agent: str = TRIAGE, **kw: object) -> Step:
    return Step(Action.HANDOFF, agent=agent, target=target, **kw)  # type: ignore[arg-type]


def call(tool: str, agent: str, args: object = None, **kw: object) -> Step:
    return Step(Action.CALL_TOOL, agent=agent, tool=tool, arguments=args, **kw)  # type: ignore[arg-type]


def respond(agent: str, **kw: object) -> Step:
    return Step(Action.RESPOND, agent=agent, output="ok", **kw)  # type: ignore[arg-type]


def trace(*steps: Step, model: str | None = "m1", **meta: object) -> Trace:
    return Trace(steps=steps, output="ok", metadata=TraceMetadata(model=model, **meta))  # type: ignore[arg-type]


def seat_trace(seat: str = "14C", model: str | None = "m1") -> Trace:
    return trace(
        handoff(SEAT),
        call("update_seat", SEAT, {"confirmation_number": "ABC123", "new_seat": seat}),
        respond(SEAT),
        model=model,
    )


def faq_trace(question: str = "bags?", model: str | None = "m1") -> Trace:
    return trace(handoff(FAQ), call("faq_lookup_tool", FAQ, {"question": question}), respond(FAQ), model=model)


# -- Chao1 ------------------------------------------------------------------------------------------
def test_chao1_known_values() -> None:
    e = chao1([1, 1, 1])  # f1 = 3, f2 = 0: the paper's form divides by zero
    assert (e.observed, e.f1, e.f2, e.n) == (3, 3, 0, 3)
    assert e.estimate == 6.0 and e.classic is None and e.coverage == 0.5
    e = chao1([1, 1, 1, 1, 2, 2])  # f1 = 4, f2 = 2
    assert e.estimate == 6 + 4 * 3 / (2 * 3) == 8.0
    assert e.classic == 6 + 16 / 4 == 10.0
    e = chao1({"a": 5, "b": 3})  # no singletons: nothing unseen
    assert e.estimate == 2.0 and e.classic == 2.0 and e.coverage == 1.0
    e = chao1([])
    assert e.estimate == 0.0 and e.coverage == 0.0 and e.n == 0
    assert chao1([1]).estimate == 1.0  # one class seen once: no extrapolation possible
    assert chao1([0, 1, 2]).observed == 2  # zero counts are not observed classes


def test_chao1_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match="non-negative integers"):
        chao1([1, -1])
    with pytest.raises(ValueError, match="non-negative integers"):
        chao1([1.5])
    with pytest.raises(ValueError, match="exceeds"):
        chao1_from_frequencies(2, 2, 1)


# -- decision paths and states ----------------------------------------------------------------------
def test_decision_path_drops_reason_and_marks_delegations() -> None:
    t = trace(
        Step(Action.REASON, agent=TRIAGE),
        handoff("Policy Agent", tool="policy_agent", arguments={"input": "?"}),
        respond("Policy Agent", depth=1),
        handoff(SEAT),
        call("update_seat", SEAT, {}),
        Step(Action.ERROR, agent=SEAT, error="boom"),
    )
    assert decision_path(t) == (
        (TRIAGE, "delegate:Policy Agent"),
        ("Policy Agent", "respond"),
        (TRIAGE, "handoff:Seat Booking Agent"),
        (SEAT, "tool:update_seat"),
        (SEAT, "error"),
    )


def test_default_state_abstraction_buckets() -> None:
    steps = [Step(Action.REASON, agent=TRIAGE)] * 9 + [call("x", SEAT, {}, error="bad", depth=3)]
    assert default_state_abstraction(steps, 0) == (TRIAGE, "reason", None, "0", "0", False)
    assert [default_state_abstraction(steps, i)[4] for i in range(10)] == [
        "0", "1", "2", "3-4", "3-4", "5-8", "5-8", "5-8", "5-8", "9+",
    ]
    assert default_state_abstraction(steps, 9) == (SEAT, "call_tool", "x", "2+", "9+", True)
    assert default_state_abstraction([handoff(FAQ, depth=1)], 0) == (TRIAGE, "handoff", FAQ, "1", "0", False)


def test_state_coverage_counts_abstract_states() -> None:
    traces = [seat_trace(), seat_trace("1A"), faq_trace()]
    cov = behavioural_coverage(traces, tools=CS_TOOLS)
    # seat: handoff@0, call@1, respond@2; faq: the same three with other names -> 6 states
    assert cov.details.states_observed == 6
    assert cov.state == pytest.approx(1 - math.exp(-6 / 20))
    cov = behavioural_coverage(traces, tools=CS_TOOLS, state_lambda=3.0)
    assert cov.state == pytest.approx(1 - math.exp(-2)) and cov.details.state_lambda == 3.0
    explicit = behavioural_coverage(traces, tools=CS_TOOLS, state_abstraction=default_state_abstraction)
    assert explicit.details.states_observed == 6
    by_agent = behavioural_coverage(traces, tools=CS_TOOLS, state_abstraction=lambda steps, i: steps[i].agent)
    assert by_agent.details.states_observed == 3
    with pytest.raises(ValueError, match="state_lambda"):
        behavioural_coverage(traces, tools=CS_TOOLS, state_lambda=0)


# -- tools ------------------------------------------------------------------------------------------
def test_tool_coverage_ignores_delegations_and_unknown_tools() -> None:
    tools = [*CS_TOOLS, ToolInfo("policy_agent", agent=TRIAGE), ToolInfo("escalate", agent=TRIAGE)]
    traces = [
        seat_trace(),
        faq_trace(),
        trace(handoff("Policy Agent", tool="policy_agent"), respond("Policy Agent", depth=1), respond(TRIAGE)),
        trace(call("web_search", TRIAGE, {}), respond(TRIAGE)),
    ]
    cov = behavioural_coverage(traces, tools=tools)
    assert cov.tool == 0.5
    assert cov.details.tools_used == ("faq_lookup_tool", "update_seat")
    assert cov.details.tools_unused == ("policy_agent", "escalate")
    assert cov.details.tools_unknown == ("web_search",)
    assert any("web_search" in n for n in cov.details.notes)


def test_no_tools_is_vacuous() -> None:
    cov = behavioural_coverage([trace(respond(TRIAGE))], tools=[])
    assert cov.tool == 1.0 and cov.boundary == 1.0
    assert any("no tools given" in n for n in cov.details.notes)
    assert any("no boundaries" in n for n in cov.details.notes)


# -- paths ------------------------------------------------------------------------------------------
def test_path_coverage_uses_bias_corrected_chao1() -> None:
    traces = [seat_trace()] * 3 + [seat_trace("2B")] + [faq_trace()] * 2 + [trace(respond(TRIAGE))]
    cov = behavioural_coverage(traces, tools=CS_TOOLS)
    d = cov.details  # paths: seat x4 (arguments are not part of the path), faq x2, respond x1
    assert (d.paths_observed, d.f1, d.f2) == (3, 1, 1)
    assert d.paths_estimated == 3.0 and cov.path == 1.0 and d.paths_classic == 3.5
    traces = [seat_trace(), faq_trace(), trace(respond(TRIAGE))]
    cov = behavioural_coverage(traces, tools=CS_TOOLS)
    assert cov.details.paths_estimated == 6.0 and cov.path == 0.5 and cov.details.paths_classic is None
    assert any("f2 = 0" in n for n in cov.details.notes)


def test_empty_and_single_trace() -> None:
    cov = behavioural_coverage([], tools=CS_TOOLS, target_models=["m1"])
    assert cov.traces == 0 and cov.overall == 0.0
    assert (cov.tool, cov.path, cov.state, cov.boundary, cov.model) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert cov.details.paths_estimated == 0.0
    assert cov.suggestion.startswith("no traces recorded")
    assert behavioural_coverage([], tools=CS_TOOLS).model == 0.0
    one = behavioural_coverage([seat_trace()], tools=CS_TOOLS)
    assert one.path == 1.0 and any("single path" in n for n in one.details.notes)


# -- boundaries -------------------------------------------------------------------------------------
SCHEMA = {
    "type": "object",
    "$defs": {
        "Line": {
            "type": "object",
            "properties": {
                "qty": {"type": "integer", "exclusiveMinimum": 0, "maximum": 10},
                "sku": {"type": "string", "minLength": 2, "maxLength": 4},
            },
        },
        "Mode": {"enum": ["fast", "safe", 3]},
    },
    "properties": {
        "amount": {"type": "number", "minimum": -5, "exclusiveMaximum": 100},
        "mode": {"$ref": "#/$defs/Mode"},
        "note": {"type": ["string", "null"]},
        "dry_run": {"type": "boolean"},
        "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        "old": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
        "payload": {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/Line"}, "maxItems": 3},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1},
            },
        },
    },
}
TOOL = ToolInfo("order", "", SCHEMA, "Shop Agent")


def test_boundaries_extracted_from_schema() -> None:
    ids = [b.id for b in tool_boundaries([TOOL])]
    assert ids == [
        "order.amount:minimum",
        "order.amount:exclusiveMaximum",
        "order.mode:enum=fast",
        "order.mode:enum=safe",
        "order.mode:enum=3",
        "order.note:empty",
        "order.dry_run:enum=false",
        "order.dry_run:enum=true",
        "order.limit:minimum",
        "order.old:exclusiveMinimum",
        "order.payload.items:empty",
        "order.payload.items:maxItems",
        "order.payload.items[].qty:maximum",
        "order.payload.items[].qty:exclusiveMinimum",
        "order.payload.items[].sku:minLength",
        "order.payload.items[].sku:maxLength",
        "order.payload.tags:minItems",
        "order.payload.tags[]:enum=a",
        "order.payload.tags[]:enum=b",
    ]
    by_id = {b.id: b for b in tool_boundaries([TOOL])}
    assert by_id["order.amount:minimum"].value == -5
    assert by_id["order.note:empty"].describe() == 'note = ""'
    assert by_id["order.payload.items:empty"].describe() == "payload.items = []"
    assert by_id["order.payload.items:maxItems"].describe() == "payload.items with 3 items (maxItems)"
    assert by_id["order.old:exclusiveMinimum"].value == 0


def test_recursive_and_unresolvable_refs_terminate() -> None:
    schema = {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 1},
                                                             "child": {"$ref": "#/$defs/Node"}}}},
        "properties": {"root": {"$ref": "#/$defs/Node"}, "ext": {"$ref": "https://x/y.json"},
                       "bad": {"$ref": "#/$defs/Missing"}},
    }
    tool = ToolInfo("tree", "", schema)
    assert [b.id for b in tool_boundaries([tool])] == ["tree.root.n:maximum"]
    cov = behavioural_coverage([], tools=[tool])
    assert any("not a local reference" in n for n in cov.details.notes)
    assert any("does not resolve" in n for n in cov.details.notes)


def test_boundary_matching() -> None:
    def tested(args: dict) -> set[str]:
        cov = behavioural_coverage([trace(call("order", "Shop Agent", args))], tools=[TOOL])
        return set(cov.details.boundaries_tested)

    assert tested({"amount": -5}) == {"order.amount:minimum"}
    assert tested({"amount": -5 + 1e-12}) == {"order.amount:minimum"}  # within ε = 1e-9·max(1, |b|)
    assert tested({"amount": -4.9}) == set()
    assert tested({"amount": 100 - 1e-8}) == {"order.amount:exclusiveMaximum"}  # inside, within 1e-9·100
    assert tested({"amount": 100}) == set()  # the excluded value itself is outside the domain
    assert tested({"old": 1e-10}) == {"order.old:exclusiveMinimum"}
    assert tested({"mode": 3, "dry_run": False}) == {"order.mode:enum=3", "order.dry_run:enum=false"}
    assert tested({"dry_run": 0, "mode": True}) == set()  # JSON types: 0 is not false, true is not 3
    assert tested({"note": "", "limit": 1}) == {"order.note:empty", "order.limit:minimum"}
    assert tested({"payload": {"items": []}}) == {"order.payload.items:empty"}
    lines = [{"qty": 1, "sku": "ab"}, {"qty": 10, "sku": "abcd"}, {"qty": 5}]
    assert tested({"payload": {"items": lines, "tags": ["b"]}}) == {
        "order.payload.items:maxItems",
        "order.payload.items[].qty:exclusiveMinimum",  # integer: 1 is the adjacent valid value
        "order.payload.items[].qty:maximum",
        "order.payload.items[].sku:minLength",
        "order.payload.items[].sku:maxLength",
        "order.payload.tags:minItems",
        "order.payload.tags[]:enum=b",
    }
    assert tested("not json") == set()  # type: ignore[arg-type]
    # a handoff that carries arguments (as_tool) is not a call of the tool
    cov = behavioural_coverage([trace(handoff("Shop Agent", tool="order", arguments={"amount": -5}))], tools=[TOOL])
    assert cov.details.boundaries_tested == ()


def test_boundary_epsilon_is_configurable() -> None:
    t = trace(call("order", "Shop Agent", {"amount": -4.99}))
    assert behavioural_coverage([t], tools=[TOOL]).details.boundaries_tested == ()
    loose = behavioural_coverage([t], tools=[TOOL], epsilon=0.01)
    assert loose.details.boundaries_tested == ("order.amount:minimum",)
    with pytest.raises(ValueError, match="epsilon"):
        behavioural_coverage([t], tools=[TOOL], epsilon=-1)


def test_boundary_coverage_fraction() -> None:
    cov = behavioural_coverage([seat_trace(""), faq_trace()], tools=CS_TOOLS)
    assert cov.boundary == pytest.approx(1 / 3)
    assert cov.details.boundaries_tested == ("update_seat.new_seat:empty",)
    assert cov.details.boundaries_untested == ("faq_lookup_tool.question:empty", "update_seat.confirmation_number:empty")


# -- models -----------------------------------------------------------------------------------------
def test_model_coverage() -> None:
    traces = [seat_trace(model="m1"), faq_trace(model="m3"), faq_trace(model=None)]
    cov = behavioural_coverage(traces, tools=CS_TOOLS, target_models=["m1", "m2"])
    assert cov.model == 0.5
    assert cov.details.models_tested == ("m1",) and cov.details.models_untested == ("m2",)
    assert cov.details.target_models_configured
    assert any("m3" in n for n in cov.details.notes)
    assert any("1 of 3 traces record no model" in n for n in cov.details.notes)
    free = behavioural_coverage(traces, tools=CS_TOOLS)
    assert free.model == 1.0 and free.details.models_tested == ("m1", "m3")
    assert not free.details.target_models_configured
    assert any("not configured" in n for n in free.details.notes)
    with pytest.raises(ValueError, match="target_models is empty"):
        behavioural_coverage(traces, tools=CS_TOOLS, target_models=[])
    with pytest.raises(TypeError, match="not one string"):
        behavioural_coverage(traces, tools=CS_TOOLS, target_models="m1")


# -- overall, weights, weakest ----------------------------------------------------------------------
def test_weights_validation() -> None:
    assert normalise_weights(None) == dict.fromkeys(DIMENSIONS, 0.2)
    w = normalise_weights({"tool": 2, "path": 1, "state": 1, "boundary": 0, "model": 0})
    assert w == {"tool": 0.5, "path": 0.25, "state": 0.25, "boundary": 0.0, "model": 0.0}
    with pytest.raises(ValueError, match=r"unknown coverage dimension.*'tools'"):
        normalise_weights({"tools": 1})
    assert normalise_weights({"tool": 3, "path": 1}) == {
        "tool": 0.75, "path": 0.25, "state": 0.0, "boundary": 0.0, "model": 0.0,
    }  # a dimension not named weighs 0
    full = dict.fromkeys(DIMENSIONS, 1.0)
    for bad in (-1, math.nan, math.inf, True, "1"):
        with pytest.raises(ValueError, match="weight of model"):
            normalise_weights({**full, "model": bad})
    with pytest.raises(ValueError, match="sum to 0"):
        normalise_weights(dict.fromkeys(DIMENSIONS, 0))
    with pytest.raises(ValueError, match="not named in weights weigh 0"):
        normalise_weights({"model": 0})
    with pytest.raises(ValueError, match=r"target of path must be in \(0, 1\]"):
        behavioural_coverage([], tools=[], targets={"path": 0})
    with pytest.raises(ValueError, match="unknown coverage dimension"):
        behavioural_coverage([], tools=[], targets={"paths": 0.5})


def test_weighted_geometric_mean() -> None:
    values = {"tool": 1.0, "path": 0.8, "state": 0.4, "boundary": 0.3, "model": 1.0}
    assert weighted_geometric_mean(values, normalise_weights(None)) == pytest.approx((0.8 * 0.4 * 0.3) ** 0.2)
    w = {"tool": 0.0, "path": 0.5, "state": 0.5, "boundary": 0.0, "model": 0.0}
    assert weighted_geometric_mean(values, w) == pytest.approx(math.sqrt(0.32))
    assert weighted_geometric_mean({**values, "boundary": 0.0}, normalise_weights(None)) == 0.0
    assert weighted_geometric_mean({**values, "boundary": 0.0}, w) == pytest.approx(math.sqrt(0.32))


def test_overall_and_zero_dimension() -> None:
    traces = [seat_trace(), faq_trace()]
    cov = behavioural_coverage(traces, tools=CS_TOOLS)
    assert cov.boundary == 0.0 and cov.overall == 0.0
    assert any("overall is 0 because boundary" in n for n in cov.details.notes)
    w = {"tool": 1, "path": 1, "state": 1, "boundary": 0, "model": 1}
    cov = behavioural_coverage(traces, tools=CS_TOOLS, weights=w)
    expect = (cov.tool * cov.path * cov.state * cov.model) ** 0.25
    assert cov.overall == pytest.approx(expect) and cov.weights["boundary"] == 0.0
    assert cov.weakest != "boundary"  # a dimension weighted 0 is never the one to work on
    assert any("weight 0 (not in the overall score, never the weakest): boundary" in n for n in cov.details.notes)


def test_weakest_dimension_and_suggestions() -> None:
    # tool: faq_lookup_tool never called -> C_tool = 0.5 is the lowest
    both_empty = trace(handoff(SEAT), call("update_seat", SEAT, {"confirmation_number": "", "new_seat": ""}))
    cov = behavioural_coverage([both_empty] * 3, tools=CS_TOOLS, state_lambda=1.0)
    assert (cov.tool, cov.boundary) == (0.5, 2 / 3)
    assert cov.weakest == "tool"
    assert cov.suggestion == "add a scenario that makes the agent call `faq_lookup_tool` (FAQ Agent; unused)"
    # boundary: prefer a boundary of a tool that is already called
    traces = [seat_trace(), faq_trace(), faq_trace("wifi?")]
    cov = behavioural_coverage(traces, tools=CS_TOOLS, state_lambda=1.0, weights={**dict.fromkeys(DIMENSIONS, 1)})
    assert cov.weakest == "boundary"
    assert cov.suggestion == (
        "exercise the boundary faq_lookup_tool.question:empty (call `faq_lookup_tool` with question = \"\"); 2 more untested"
    )
    unused_first = ToolInfo("zz", "", {"type": "object", "properties": {"q": {"type": "string"}}})
    no_tool_weight = {"tool": 0, "path": 1, "state": 1, "boundary": 1, "model": 1}
    cov = behavioural_coverage(traces, tools=[unused_first, *CS_TOOLS], state_lambda=1.0, weights=no_tool_weight)
    assert cov.weakest == "boundary" and cov.suggestion.startswith("exercise the boundary faq_lookup_tool.question:empty")
    # model
    cov = behavioural_coverage(
        [seat_trace(""), faq_trace("")] * 2, tools=[FAQ_TOOL], target_models=["m1", "m2", "m3"], state_lambda=1.0
    )
    assert cov.weakest == "model"
    assert cov.suggestion == "run the suite on model `m2` listed in target models; also untested: `m3`"
    # path
    traces = [faq_trace(""), seat_trace(""), trace(respond(TRIAGE))]
    cov = behavioural_coverage(traces, tools=[], state_lambda=1.0)
    assert cov.weakest == "path"
    assert cov.suggestion == "add scenarios that take different routes (Chao1 estimates 6.0 paths, 3 seen, 3 of them only once)"
    # state: an agent that owns a tool was never active
    cov = behavioural_coverage([faq_trace("")] * 2, tools=[FAQ_TOOL, ToolInfo("x", agent="Lonely Agent")],
                               weights={"tool": 0, "path": 1, "state": 1, "boundary": 1, "model": 1})
    assert cov.weakest == "state"
    assert cov.suggestion.startswith("add a scenario that reaches `Lonely Agent` (never active; 3 distinct abstract states")
    # targets change the argmin of C_d / C*_d, and met targets leave nothing to add
    cov = behavioural_coverage([faq_trace("")] * 2, tools=[FAQ_TOOL], targets={"state": 0.1})
    assert cov.weakest is None and "nothing to add" in cov.suggestion


# -- monotonicity (Thm. 4.1 parts 1, 2) -------------------------------------------------------------
MONO_TOOLS = [
    ToolInfo("a", "", {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 3}}}),
    ToolInfo("b", "", {"type": "object", "properties": {"s": {"type": "string", "maxLength": 2},
                                                        "e": {"enum": ["p", "q"]}}}),
    ToolInfo("c"),
]
_steps = st.one_of(
    st.builds(lambda a, x: call("a", a, {"x": x}), st.sampled_from(["A", "B"]), st.integers(-1, 4)),
    st.builds(lambda s, e: call("b", "B", {"s": s, "e": e}), st.sampled_from(["", "z", "zz"]), st.sampled_from(["p", "q", "r"])),
    st.builds(lambda t, tool: handoff(t, tool=tool), st.sampled_from(["A", "B"]), st.sampled_from([None, "c"])),
    st.builds(lambda a: respond(a), st.sampled_from(["A", "B"])),
    st.just(Step(Action.REASON, agent="A")),
)
_traces = st.builds(
    lambda steps, model: trace(*steps, model=model),
    st.lists(_steps, max_size=6),
    st.sampled_from(["m1", "m2", None]),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_traces, max_size=8), _traces, st.booleans())
def test_adding_a_trace_never_lowers_tool_state_boundary_model(traces: list[Trace], extra: Trace, target: bool) -> None:
    kw = {"tools": MONO_TOOLS, "target_models": ["m1", "m2", "m3"] if target else None}
    before = behavioural_coverage(traces, **kw)
    after = behavioural_coverage([*traces, extra], **kw)
    for d in ("tool", "state", "boundary", "model"):
        assert getattr(after, d) >= getattr(before, d)
    assert set(before.details.boundaries_tested) <= set(after.details.boundaries_tested)
    assert after.details.states_observed >= before.details.states_observed


# -- serialisation ----------------------------------------------------------------------------------
def test_to_dict_from_dict_round_trip() -> None:
    cov = behavioural_coverage([seat_trace(""), faq_trace()], tools=CS_TOOLS, target_models=["m1", "m2"])
    d = cov.to_dict()
    assert d["schema"] == COVERAGE_SCHEMA
    for key in ("tool", "path", "state", "boundary", "model", "overall", "weights", "traces", "details",
                "weakest", "suggestion"):
        assert key in d
    for key in ("tools_used", "tools_unused", "paths_observed", "paths_estimated", "f1", "f2",
                "states_observed", "lambda", "boundaries_tested", "boundaries_untested", "models_tested",
                "models_untested", "notes"):
        assert key in d["details"]
    back = BehaviouralCoverage.from_dict(json.loads(json.dumps(d)))
    assert back == cov and back.to_dict() == d
    with pytest.raises(ValueError, match="unsupported coverage schema"):
        BehaviouralCoverage.from_dict({**d, "schema": "other/2"})
    assert cov.summary().startswith(f"behavioural coverage {cov.overall:.2f} (tool 1.00")


def test_accepts_stored_trials_and_dicts() -> None:
    traces = [seat_trace(), faq_trace("")]
    ref = behavioural_coverage(traces, tools=CS_TOOLS)
    assert behavioural_coverage([t.to_dict() for t in traces], tools=CS_TOOLS) == ref
    with pytest.raises(TypeError, match="expected Trace"):
        behavioural_coverage([42], tools=CS_TOOLS)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unsupported trace schema"):
        behavioural_coverage([{"schema": "x"}], tools=CS_TOOLS)


# -- the store fast path ----------------------------------------------------------------------------
def _fill(store: TraceStore) -> list[Trace]:
    traces = [
        seat_trace(), seat_trace(""), faq_trace(), faq_trace("", model="m2"), faq_trace(),
        trace(Step(Action.REASON, agent=TRIAGE), handoff("P", tool="policy"), respond("P", depth=1), respond(TRIAGE)),
        trace(call("update_seat", SEAT, '{"broken'), Step(Action.ERROR, agent=SEAT, error="x"), model=None),
    ]
    for i, t in enumerate(traces):
        store.add(t, run_id="r1", suite="s", scenario=f"sc{i % 2}", agent_version="v1", trial=i)
    store.add(seat_trace("9Z", model="m9"), run_id="r0", suite="s", scenario="sc0", agent_version="v0", trial=0)
    return traces


def test_coverage_from_store_equals_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "traces.db"
    with TraceStore(path) as store:
        traces = _fill(store)
    kw = {"tools": CS_TOOLS, "target_models": ["m1", "m2", "m3"]}
    ref = behavioural_coverage(traces, **kw)
    assert coverage_from_store(path, agent_version="v1", **kw) == ref
    assert coverage_from_store(str(path), agent_version="v1", run_id="r1", suite="s", **kw) == ref
    with TraceStore(path) as store:  # an open store: its connection is used, and left open
        assert coverage_from_store(store, agent_version="v1", **kw) == ref
        assert store.count() == 8
        sc0 = [s.trace for s in store.query("v1", ["sc0"])]
        assert coverage_from_store(store, agent_version="v1", scenarios=["sc0"], **kw) == behavioural_coverage(sc0, **kw)
    custom = {"state_abstraction": lambda steps, i: (steps[i].agent, steps[i].depth)}
    assert coverage_from_store(path, agent_version="v1", **kw, **custom) == behavioural_coverage(traces, **kw, **custom)
    pooled = coverage_from_store(path, **kw)
    assert pooled.traces == 8 and any("2 agent versions pooled" in n for n in pooled.details.notes)
    assert coverage_from_store(path, agent_version="v1", scenarios=[], **kw).traces == 0


def test_coverage_from_store_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no trace store"):
        coverage_from_store(tmp_path / "missing.db", tools=[])
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable"):
        coverage_from_store(junk, tools=[])
    with pytest.raises(TypeError, match="TraceStore or the path"):
        coverage_from_store(42, tools=[])
    with pytest.raises(ValueError, match="unknown coverage dimension"):  # options are checked before reading
        coverage_from_store(tmp_path / "missing.db", tools=[], weights={"x": 1})
