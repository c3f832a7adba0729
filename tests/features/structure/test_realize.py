"""DSPy scenario realization (paper Sec. III-C, Algorithm 1): scripted LM, real offline runtime."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("dspy")
pytest.importorskip("agents")

from agentassay._features.structure._model import (
    AgentNode,
    Bundle,
    Delegation,
    Manifest,
    Objective,
    ToolNode,
)
from agentassay._features.structure._realize import (
    FIRST_ATTEMPT,
    WITHHELD,
    RealizationReport,
    forbidden_identifiers,
    leaked_identifiers,
    realize,
    realizer_inputs,
    realizer_lm,
)
from agentassay._features.structure._scripted import ScriptedEngine, load_script, parse_fields
from agentassay._integrations.adapters._base import AgentRunError
from agentassay._integrations.adapters._openai_agents import OpenAIAgentsAdapter, install_trace_router
from agentassay._traces import Action, Step, Trace
from examples.customer_service import v1
from examples.customer_service._workflow import FAQ_AGENT, SEAT_AGENT, TRIAGE_AGENT

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "examples" / "customer_service" / "realizer_script.yml"


@pytest.fixture(autouse=True, scope="module")
def _no_export() -> None:
    """Runs with tracing on must not reach the SDK's default exporter (it would call OpenAI)."""
    install_trace_router()


# -- the customer-service workflow, by hand --------------------------------------------------------
MANIFEST = Manifest(
    system="customer_service",
    entry_agent="triage_agent",
    agents=(
        AgentNode(
            "triage_agent",
            TRIAGE_AGENT,
            description="A triage agent that can delegate a customer's request to the appropriate agent.",
        ),
        AgentNode(
            "faq_agent", FAQ_AGENT, description="A helpful agent that can answer questions about the airline."
        ),
        AgentNode(
            "seat_booking_agent",
            SEAT_AGENT,
            description="A helpful agent that can update a seat on a flight.",
        ),
    ),
    tools=(
        ToolNode(
            "faq_lookup_tool",
            "faq_lookup_tool",
            description="Look up frequently asked questions about baggage, wifi, seats and food on board.",
            schema={
                "type": "object",
                "properties": {"question": {"type": "string"}},
                "required": ["question"],
            },
        ),
        ToolNode(
            "update_seat",
            "update_seat",
            description="Move the passenger with this booking to a new seat.",
            schema={
                "type": "object",
                "properties": {"confirmation_number": {"type": "string"}, "new_seat": {"type": "string"}},
                "required": ["confirmation_number", "new_seat"],
            },
        ),
    ),
    allow=(("faq_agent", "faq_lookup_tool"), ("seat_booking_agent", "update_seat")),
    restrict=(
        ("triage_agent", "faq_lookup_tool"),
        ("triage_agent", "update_seat"),
        ("faq_agent", "update_seat"),
        ("seat_booking_agent", "faq_lookup_tool"),
    ),
    delegations=(
        Delegation("triage_agent", "faq_agent", "handoff", tool="transfer_to_faq_agent"),
        Delegation("triage_agent", "seat_booking_agent", "handoff", tool="transfer_to_seat_booking_agent"),
        Delegation("faq_agent", "triage_agent", "handoff", tool="transfer_to_triage_agent"),
        Delegation("seat_booking_agent", "triage_agent", "handoff", tool="transfer_to_triage_agent"),
    ),
)


def q(kind: str, *subject: str) -> Objective:
    return Objective(kind, subject)  # type: ignore[arg-type]


REACH = [q("reach", a) for a in ("triage_agent", "faq_agent", "seat_booking_agent")]
USE = [q("use_tool", "faq_agent", "faq_lookup_tool"), q("use_tool", "seat_booking_agent", "update_seat")]
RESTRICT = [q("restrict_tool", *e) for e in MANIFEST.restrict]
DELEGATE = [q("delegate", *d.edge) for d in MANIFEST.delegations]
FAQ_HANDBACK = q("delegate", "faq_agent", "triage_agent")
SEAT_HANDBACK = q("delegate", "seat_booking_agent", "triage_agent")


def bundles() -> tuple[Bundle, ...]:
    """Bundles of the 13 objectives: merge_bundles when it exists, else the same merge by hand."""
    try:
        from agentassay._features.structure._graph import merge_bundles
    except ImportError:
        return (
            Bundle(USE[0], (REACH[1],)),
            Bundle(USE[1], (REACH[2],)),
            *(Bundle(r) for r in RESTRICT),
            Bundle(DELEGATE[0]),
            Bundle(DELEGATE[1]),
            Bundle(FAQ_HANDBACK, (REACH[0],)),
            Bundle(SEAT_HANDBACK),
        )
    return merge_bundles([*REACH, *USE, *RESTRICT, *DELEGATE])


# -- the runtime ------------------------------------------------------------------------------------
SEAT_HANDBACK_TEXT = (
    "Please change my seat to 12D, confirmation QRS321. After that I have something else to ask."
)


def _behaviour() -> dict[str, Any]:
    """The example's offline behaviour; plus, until the example has one, a seat-agent hand-back rule.

    The shipped v1 behaviour lets the seat-booking agent hand back to triage only by chance (≈2 %
    per run), so Delegate(seat_booking_agent, triage_agent) is out of reach offline. The FAQ agent
    has a "something else" hand-back rule; this adds the same rule to the seat-booking agent when
    the example lacks one (a stand-in for adding it to ``examples/customer_service/_workflow.py``).
    """
    behaviour = copy.deepcopy(v1.OFFLINE_BEHAVIOUR)
    rules = behaviour[SEAT_AGENT]["rules"]
    has_rule = any(
        r.get("after") == "tool"
        and r.get("input")
        and re.search(r["input"], SEAT_HANDBACK_TEXT)
        and f"handoff:{TRIAGE_AGENT}" in (r.get("choose") or {})
        for r in rules
    )
    if not has_rule:
        rules.insert(
            len(rules) - 1,
            {
                "after": "tool",
                "input": r"(?i)\bsomething else\b",
                "choose": {f"handoff:{TRIAGE_AGENT}": 0.95, "respond": 0.05},
                "respond": "{tool_output}",
            },
        )
    return behaviour


FAQ_RULE = any(
    r.get("input") and re.search(r["input"], "Is there wifi? After that I have something else to ask.")
    for r in v1.OFFLINE_BEHAVIOUR[FAQ_AGENT]["rules"]
)
needs_faq_rule = pytest.mark.skipif(
    not FAQ_RULE,
    reason="examples/customer_service/_workflow.py has no FAQ-agent 'something else' hand-back rule yet",
)


class Executor:
    """``execute(text, seed)`` over the offline adapter, recording every call."""

    def __init__(self) -> None:
        self.adapter = OpenAIAgentsAdapter(v1.triage_agent, behaviour=_behaviour())
        self.calls: list[tuple[str, int]] = []

    def __call__(self, text: str, seed: int) -> Trace:
        self.calls.append((text, seed))
        try:
            return asyncio.run(self.adapter.run(text, seed=seed))
        except AgentRunError as exc:
            if exc.trace is None:
                raise
            return exc.trace


def scripted(script: Any = SCRIPT) -> Any:
    return realizer_lm(script=script)


@pytest.fixture(scope="module")
def full() -> tuple[RealizationReport, ScriptedEngine, Executor]:
    """The whole customer-service example realized once (N = 5, seed 0)."""
    lm = scripted()
    execute = Executor()
    report = realize(MANIFEST, bundles(), execute, lm=lm, attempts=5, seed=0)
    return report, lm.engine, execute


# -- acceptance ---------------------------------------------------------------------------------
@needs_faq_rule
def test_every_exhibitable_obligation_gets_a_witness(full) -> None:
    report, engine, _ = full
    exhibitable = {o.id for o in (*REACH, *USE, *DELEGATE)}
    assert len(exhibitable) == 3 + 2 + 4
    assert exhibitable <= set(report.realized_objectives), report.unrealized_objectives
    for r in report.results:
        if r.realized:
            accepted = r.accepted
            assert accepted is not None and accepted.text == r.scenario and accepted.reward == 1.0
            assert set(accepted.witnessed) == set(r.objectives) and not accepted.missing
            assert not r.errors
    # LM calls: one realizer call per attempt, one OfferFeedback call between attempts.
    attempts = sum(len(r.attempts) for r in report.results)
    advice = sum(max(len(r.attempts) - 1, 0) for r in report.results)
    assert report.lm_calls == engine.calls == attempts + advice
    assert len(engine.realize_calls) == attempts and len(engine.advice_calls) == advice


def test_restricted_tools_are_reported_unrealized_with_all_attempts(full) -> None:
    report, _, _ = full
    assert set(report.unrealized_objectives) >= {o.id for o in RESTRICT}
    for objective in RESTRICT:
        r = report.result(objective.id)
        assert not r.realized and r.scenario is None
        assert [a.number for a in r.attempts] == [1, 2, 3, 4, 5]
        for a in r.attempts:
            assert a.executed and a.reward == 0.0 and a.missing == (objective.id,)
            assert "restricted attempts none" in a.observed
        assert r.to_dict()["attempts"][4]["missing"] == [objective.id]
    assert {o.id for o in RESTRICT} & set(report.realized_objectives) == set()


@needs_faq_rule
def test_faq_handback_is_realized_on_a_later_attempt_because_of_feedback(full) -> None:
    report, engine, _ = full
    r = report.result(FAQ_HANDBACK.id)
    assert r.realized and len(r.attempts) == 2
    first, second = r.attempts
    assert first.text == "Is there wifi on the plane?" and first.reward == 0.0
    assert first.feedback == FIRST_ATTEMPT and first.hint is None
    assert first.missing == (FAQ_HANDBACK.id,)
    assert "delegations triage_agent→faq_agent" in first.observed
    assert second.reward == 1.0 and "something else" in second.text
    assert FAQ_HANDBACK.id in second.feedback and "attempt 1" in second.feedback
    assert "faq_agent→triage_agent" in second.observed
    # The engine picked the conditional candidate, and saw the feedback and the hint.
    calls = [c for c in engine.realize_calls if c.objective == FAQ_HANDBACK.id]
    assert [c.candidate for c in calls] == [0, 1]
    assert calls[1].feedback == second.feedback and calls[1].hint == second.hint
    assert FAQ_HANDBACK.id in (calls[1].hint or "")


@needs_faq_rule
def test_without_feedback_the_faq_handback_is_not_realized() -> None:
    lm = scripted()
    execute = Executor()
    report = realize(
        MANIFEST, [Bundle(FAQ_HANDBACK, (REACH[0],))], execute, lm=lm, attempts=5, seed=0, feedback=False
    )
    (r,) = report.results
    assert not r.realized and len(r.attempts) == 5
    assert {a.text for a in r.attempts} == {"Is there wifi on the plane?"}
    assert all(a.feedback == WITHHELD and a.missing == (FAQ_HANDBACK.id,) for a in r.attempts)
    # Refine still asks for advice, but with no runtime verdict to go on it has nothing to say.
    assert [a.hint for a in r.attempts[1:]] == ["N/A"] * 4
    assert all(FAQ_HANDBACK.id not in (c.hint or "") + (c.feedback or "") for c in lm.engine.realize_calls)
    assert [c.candidate for c in lm.engine.realize_calls] == [0, None, None, None, None]
    assert [seed for _, seed in execute.calls] == [0, 1, 2, 3, 4]
    assert report.unrealized_objectives == (FAQ_HANDBACK.id, REACH[0].id)


@needs_faq_rule
def test_refine_hint_alone_carries_the_runtime_verdict() -> None:
    """A candidate keyed on the advice's own wording: only the hint_ channel can unlock it."""
    script = {
        FAQ_HANDBACK.id: [
            "Is there wifi on the plane?",
            {
                "when_feedback": f"Revise the request so that the workflow exhibits {FAQ_HANDBACK.id}",
                "text": "Is there wifi on the plane? After that I have something else to ask.",
            },
        ]
    }
    lm = scripted(script)
    report = realize(MANIFEST, [Bundle(FAQ_HANDBACK)], Executor(), lm=lm, attempts=3)
    (r,) = report.results
    assert r.realized and len(r.attempts) == 2
    assert "Revise the request" not in r.attempts[1].feedback  # not the feedback field's doing
    assert "Revise the request" in (r.attempts[1].hint or "")


def test_refine_advice_requests_are_answered_and_injected_as_hint(full) -> None:
    report, engine, _ = full
    assert engine.advice_calls, "Refine never asked for advice"
    advice = engine.advice_calls[0]
    fields = parse_fields(advice.prompt)
    assert json.loads(fields["module_names"]) == ["realize"]
    outputs = json.loads(fields["program_outputs"])
    assert outputs["runtime"]["reward"] == 0.0  # the reward's annotation reached OfferFeedback
    # Every attempt after the first carried Refine's hint_, and the recorded hint is what was sent.
    for r in report.results:
        calls = [c for c in engine.realize_calls if c.objective == r.bundle.driver.id]
        assert len(calls) == len(r.attempts)
        assert calls[0].hint is None and "[[ ## hint_ ## ]]" not in calls[0].prompt
        for call, attempt in zip(calls[1:], r.attempts[1:], strict=True):
            assert "[[ ## hint_ ## ]]" in call.prompt
            assert call.hint == attempt.hint and attempt.hint not in (None, "", "N/A")


def test_leaking_candidate_is_rejected_without_being_run(full) -> None:
    report, _, execute = full
    r = report.result(USE[1].id)
    first, second = r.attempts
    assert first.text == "Please run update_seat for me: seat 21A, confirmation XYZ789."
    assert first.leaked == ("update_seat",) and first.reward == 0.0
    assert not first.executed and first.seed is None and first.observation is None
    assert all(text != first.text for text, _ in execute.calls)
    assert "was rejected without being run: it names the tool update_seat" in second.feedback
    assert "names update_seat" in (second.hint or "")
    assert r.realized and second.text == "Could you move my seat to 21A? My confirmation number is XYZ789."
    assert second.seed == 1  # seed + attempt number - 1, whether or not earlier attempts ran
    assert report.executions == len(execute.calls)


def test_scenarios_are_valid_suite_scenarios(full) -> None:
    from agentassay._spec import parse_suite

    report, _, _ = full
    scenarios = report.scenarios()
    assert len(scenarios) == sum(r.realized for r in report.results)
    names = [s["name"] for s in scenarios]
    assert len(set(names)) == len(names)
    by_name = {s["name"]: s for s in scenarios}
    use = by_name["use_tool_faq_agent_faq_lookup_tool"]
    assert use["input"] == "How much baggage can I bring on the plane?"
    assert use["witness"] == ["UseTool(faq_agent, faq_lookup_tool)", "Reach(faq_agent)"]
    assert use["properties"] == [{"must_reach": FAQ_AGENT}, {"must_call": "faq_lookup_tool"}]
    delegate = by_name["delegate_triage_agent_seat_booking_agent"]
    assert delegate["properties"] == [{"must_reach": TRIAGE_AGENT}, {"must_reach": SEAT_AGENT}]
    if FAQ_RULE:
        assert by_name["delegate_faq_agent_triage_agent"]["witness"] == [FAQ_HANDBACK.id, REACH[0].id]

    doc = {
        "name": "cs-structural",
        "agent": "examples.customer_service.v1:triage_agent",
        "scenarios": scenarios,
    }
    suite = parse_suite(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), path=ROOT / "x.yml")
    assert [s.name for s in suite.scenarios] == names
    loaded = {s.name: s for s in suite.scenarios}
    kinds = [(c.kind, c.value) for c in loaded["use_tool_faq_agent_faq_lookup_tool"].checks]
    assert sorted(kinds) == [("must_call", "faq_lookup_tool"), ("must_reach", FAQ_AGENT)]
    if hasattr(loaded[names[0]], "witness"):
        assert list(loaded[names[0]].witness) == scenarios[0]["witness"]
    # The report round-trips through JSON.
    assert json.loads(json.dumps(report.to_dict()))["realized_objectives"] == list(report.realized_objectives)


def test_realized_scenarios_pass_their_own_properties(full) -> None:
    """The emitted properties hold on the very trace that realized each scenario."""
    from agentassay._evaluators import build_evaluator
    from agentassay._spec import parse_suite

    report, _, _ = full
    doc = {"agent": "examples.customer_service.v1:triage_agent", "scenarios": report.scenarios()}
    suite = parse_suite(yaml.safe_dump(doc, sort_keys=False))
    execute = Executor()
    for scenario, r in zip(suite.scenarios, [r for r in report.results if r.realized], strict=True):
        trace = execute(scenario.input, r.accepted.seed)
        assert build_evaluator(scenario)(scenario.input, trace).passed, scenario.name


# -- the reward and the loop, unit by unit -------------------------------------------------------
def test_forbidden_identifiers_and_leaks() -> None:
    forbidden = forbidden_identifiers(MANIFEST)
    assert set(forbidden) == {
        "triage_agent", "Triage Agent", "faq_agent", "FAQ Agent", "seat_booking_agent",
        "Seat Booking Agent", "faq_lookup_tool", "update_seat", "transfer_to_faq_agent",
        "transfer_to_seat_booking_agent", "transfer_to_triage_agent",
    }  # fmt: skip
    assert leaked_identifiers("please run UPDATE_SEAT for me", forbidden) == ("update_seat",)
    assert leaked_identifiers("Ask the seat  booking\nagent, then triage_agent.", forbidden) == (
        "triage_agent",
        "Seat Booking Agent",
    )
    assert leaked_identifiers("update_seats, faq agentive, seat booking, triage", forbidden) == ()
    assert leaked_identifiers("Can the faq agent help?", forbidden) == ("FAQ Agent",)


def test_signature_inputs_come_from_the_manifest() -> None:
    from agentassay._features.structure import _realize

    use = realizer_inputs(MANIFEST, USE[1])
    assert use["objective"] == "UseTool(seat_booking_agent, update_seat)"
    assert use["tool"].startswith("Move the passenger") and "new_seat" in use["tool_parameters"]
    assert "update_seat" in use["forbidden"] and "Seat Booking Agent" in use["forbidden"]
    delegate = realizer_inputs(MANIFEST, FAQ_HANDBACK)
    assert delegate["parent"].startswith("A helpful agent that can answer")
    assert delegate["child"].startswith("A triage agent")
    restrict = realizer_inputs(MANIFEST, RESTRICT[2])  # faq_agent may not use update_seat
    assert "may use: Look up frequently asked questions" in restrict["agent_capabilities"]
    reach = realizer_inputs(MANIFEST, REACH[2])
    assert "1. A triage agent" in reach["route"] and "2. A helpful agent that can update" in reach["route"]
    # One signature per criterion, with exactly those inputs plus feedback, and `scenario` out.
    for objective in (REACH[0], USE[0], RESTRICT[0], DELEGATE[0]):
        sig = getattr(_realize, _realize.SIGNATURE_NAMES[objective.kind])
        assert set(sig.input_fields) == {*realizer_inputs(MANIFEST, objective), "feedback"}
        assert list(sig.output_fields) == ["scenario"]
        assert "never" in sig.__doc__.lower()


def test_run_errors_are_recorded_not_hidden() -> None:
    partial = Trace(
        steps=(
            Step(Action.HANDOFF, agent=TRIAGE_AGENT, target=FAQ_AGENT),
            Step(Action.ERROR, agent=FAQ_AGENT, error="MaxTurnsExceeded"),
        ),
        error="MaxTurnsExceeded",
    )
    calls: list[str] = []

    def execute(text: str, seed: int) -> Trace:
        calls.append(text)
        if len(calls) == 1:
            raise RuntimeError("simulator exploded")
        raise AgentRunError("MaxTurnsExceeded", partial)

    script = {DELEGATE[0].id: ["Do you serve meals?", "Any snacks on board?"]}
    lm = scripted(script)
    report = realize(MANIFEST, [Bundle(DELEGATE[0], (REACH[1],))], execute, lm=lm, attempts=3, seed=7)
    (r,) = report.results
    first, second = r.attempts
    assert first.error == "RuntimeError: simulator exploded" and first.observed == "no trace"
    assert first.executed and first.seed == 7 and first.reward == 0.0
    # The partial trace of an AgentRunError is evidence: the handoff happened before the crash.
    assert second.error == "AgentRunError: MaxTurnsExceeded" and second.reward == 1.0
    assert "simulator exploded" in second.feedback
    assert r.realized and r.scenario == "Any snacks on board?"


def test_realizer_failures_are_recorded() -> None:
    class Broken(ScriptedEngine):
        def complete(self, request: Any) -> Any:
            raise RuntimeError("provider down")

    import dspy

    lm = dspy.LM("scripted/realizer", engine=Broken({}), cache=False, num_retries=0)
    executed: list[str] = []
    report = realize(MANIFEST, [Bundle(REACH[0])], lambda t, s: executed.append(t), lm=lm, attempts=2)
    (r,) = report.results
    assert not r.realized and not executed
    assert [a.number for a in r.attempts] == [1, 2]
    for a in r.attempts:
        assert a.text is None and not a.executed and a.missing == (REACH[0].id,)
        assert "realizer failed" in (a.error or "")
    assert "attempt 1 produced no message" in r.attempts[1].feedback
    assert any("provider down" in e for e in (*r.errors, *(a.error or "" for a in r.attempts)))


def test_chain_of_thought_realizer() -> None:
    lm = scripted()
    report = realize(MANIFEST, [Bundle(DELEGATE[0])], Executor(), lm=lm, chain_of_thought=True)
    (r,) = report.results
    assert r.realized and r.scenario == "Do you serve meals on the flight?"
    assert "`[[ ## reasoning ## ]]`" in lm.engine.realize_calls[0].prompt  # asked for reasoning first
    assert lm.engine.calls == 1


# -- the scripted engine ------------------------------------------------------------------------
def test_script_format_is_validated() -> None:
    assert load_script(SCRIPT)[FAQ_HANDBACK.id][1].when == (FAQ_HANDBACK.id,)
    with pytest.raises(ValueError, match="expected a list of candidates"):
        load_script({"Reach(a)": "just text"})
    with pytest.raises(ValueError, match="unknown key"):
        load_script({"Reach(a)": [{"text": "x", "when": "y"}]})
    with pytest.raises(ValueError, match="when_feedback"):
        load_script({"Reach(a)": [{"text": "x", "when_feedback": 3}]})


def test_scripted_engine_candidates_and_default() -> None:
    import dspy

    engine = ScriptedEngine(
        {
            "Reach(a)": [
                {"when_feedback": ["alpha", "beta"], "text": "needs both"},
                "plain one",
                "plain two",
            ],
            "*": ["wildcard"],
        }
    )

    class Sig(dspy.Signature):
        """Write."""

        objective: str = dspy.InputField()
        feedback: str = dspy.InputField()
        scenario: str = dspy.OutputField()

    lm = dspy.LM("scripted/realizer", engine=engine, cache=False)
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        ask = dspy.Predict(Sig)
        texts = [
            ask(objective="Reach(a)", feedback="alpha only").scenario,
            ask(objective="Reach(a)", feedback="ALPHA and Beta").scenario,
            ask(objective="Reach(a)", feedback="x").scenario,
            ask(objective="Reach(a)", feedback="x").scenario,
            ask(objective="Reach(zzz)", feedback="x").scenario,
        ]
    assert texts == ["plain one", "needs both", "plain two", "plain one", "wildcard"]
    assert engine.calls == 5 and [c.candidate for c in engine.requests] == [1, 0, 2, None, 0]
    engine.reset()
    assert engine.calls == 0


# -- the LM configuration ------------------------------------------------------------------------
def test_real_lm_config_needs_its_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="environment variable OPENAI_API_KEY is not set"):
        realizer_lm({"model": "openai/gpt-4.1-mini"})
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(ValueError, match="MY_KEY"):
        realizer_lm({"model": "openai/gpt-4.1-mini", "api_key_env": "MY_KEY"})
    monkeypatch.setenv("MY_KEY", "sk-test")
    lm = realizer_lm(
        {
            "model": "openai/gpt-4.1-mini",
            "api_key_env": "MY_KEY",
            "api_base": "http://localhost:1",
            "temperature": 0.7,
        }
    )
    assert lm.model == "openai/gpt-4.1-mini" and lm.kwargs["temperature"] == 0.7
    local = realizer_lm({"model": "openai/local", "api_key_env": None, "api_base": "http://localhost:1"})
    assert local.model == "openai/local"
    with pytest.raises(ValueError, match="unknown key"):
        realizer_lm({"modle": "x"})
    with pytest.raises(ValueError, match="needs a script"):
        realizer_lm({"model": "scripted"})
    assert isinstance(
        realizer_lm({"model": "scripted", "script": SCRIPT.name}, root=SCRIPT.parent).engine, ScriptedEngine
    )


def test_importing_realize_does_not_import_dspy() -> None:
    code = (
        "import sys, agentassay._features.structure._realize as r, agentassay._features.structure._scripted;"
        "assert 'dspy' not in sys.modules, 'dspy imported eagerly';"
        "r.RealizeReach; assert 'dspy' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
