"""Evaluators (Def. 3.3): every check kind passes and fails as documented, with readable reasons."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentassay._evaluators import EvalResult, Evaluator, build_evaluator
from agentassay._spec import Check, Scenario, SpecError, parse_suite
from agentassay._traces import Action, Step, Trace

CHECKS_MODULE = """
def polite(input, output, trace):
    return "please" in str(output).lower()

def explained(input, output, trace):
    return ("sorry" not in str(output).lower(), f"apologised to {input!r}")

def boom(input, output, trace):
    raise ValueError("cannot tell")

def nothing(input, output, trace):
    return None

async def later(input, output, trace):
    return True

NOT_CALLABLE = 3

calls = []

def judge(*, input, output, properties, **options):
    calls.append({"input": input, "output": output, "properties": properties, **options})
    ok = str(options.get("word", "")).lower() in str(output).lower()
    return ok, None if ok else f"judge wanted {options.get('word')!r}"
"""


@pytest.fixture(scope="module")
def checks_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("checks")
    (folder / "aa_test_checks.py").write_text(CHECKS_MODULE, encoding="utf-8")
    return folder


def trace(
    output: Any = None, *, tools: tuple[str, ...] = (), handoff: str | None = None, error: str | None = None
) -> Trace:
    steps = [Step(Action.CALL_TOOL, agent="Triage", tool=t) for t in tools]
    if handoff:
        steps.append(Step(Action.HANDOFF, agent="Triage", target=handoff))
    steps.append(Step(Action.RESPOND, agent=handoff or "Triage", output=output))
    return Trace(steps=tuple(steps), output=output, error=error)


def evaluator(
    *checks: Check, properties: dict[str, Any] | None = None, search: tuple[Path, ...] = ()
) -> Evaluator:
    scenario = Scenario("s", "Move me to 12A please", properties=properties or {}, checks=checks, line=3)
    return build_evaluator(scenario, file="suite.yml", search=search)


def fails(ev: Evaluator, t: Trace) -> tuple[str, ...]:
    result = ev("Move me to 12A please", t)
    assert result.passed is (not result.failures)
    return result.failures


def test_eval_result_to_dict() -> None:
    assert EvalResult(False, ("a", "b")).to_dict() == {"passed": False, "failures": ["a", "b"]}
    assert EvalResult(True).to_dict() == {"passed": True, "failures": []}


def test_trace_error_fails_with_the_error_alone() -> None:
    ev = evaluator(Check("contains", "x"), Check("max_steps", 1))
    assert fails(ev, trace(error="TimeoutError: trial exceeded 120 s")) == (
        "TimeoutError: trial exceeded 120 s",
    )


def test_all_failures_are_reported_in_order() -> None:
    ev = evaluator(Check("contains", "seat"), Check("must_call", "update_seat"), Check("max_steps", 1))
    assert fails(ev, trace("Done.", tools=("faq_lookup_tool",))) == (
        "output does not contain 'seat' (output: 'Done.')",
        "did not call tool 'update_seat' (called: faq_lookup_tool)",
        "took 2 steps (max 1)",
    )
    assert "contains" in repr(ev)


# -- output checks ---------------------------------------------------------------------------------


def test_exact_match() -> None:
    ev = evaluator(Check("exact_match", "billing"))
    assert fails(ev, trace("  billing\n")) == ()
    assert fails(ev, trace("Billing")) == ("expected output 'billing', got 'Billing'",)
    assert fails(ev, trace(None)) == ("expected output 'billing', got no output",)
    assert fails(evaluator(Check("exact_match", 5)), trace(5)) == ()


def test_exact_match_on_a_field() -> None:
    ev = evaluator(Check("exact_match", "billing", {"field": "department"}))
    assert fails(ev, trace({"department": "billing", "confidence": 0.9})) == ()
    assert fails(ev, trace('{"department": "billing"}')) == ()  # JSON text is read as an object
    assert fails(ev, trace("billing")) == ()  # a bare output is compared whole (paper style)
    assert fails(ev, trace({"department": "sales"})) == ("expected department 'billing', got 'sales'",)
    assert fails(ev, trace({"team": "billing"})) == ("output has no field 'department' (fields: team)",)


def test_contains_and_not_contains_ignore_case() -> None:
    ev = evaluator(Check("contains", "REFUND"))
    assert fails(ev, trace("Your refund is on its way")) == ()
    assert fails(ev, trace("No.")) == ("output does not contain 'REFUND' (output: 'No.')",)
    assert fails(ev, trace(None)) == ("output does not contain 'REFUND' (output: no output)",)
    assert fails(ev, trace({"text": "refund issued"})) == ()  # structured outputs are read as JSON
    ev = evaluator(Check("not_contains", "password"))
    assert fails(ev, trace("All good")) == ()
    assert fails(ev, trace("Your PASSWORD is hunter2")) == (
        "output contains 'password', which it must not (output: 'Your PASSWORD is hunter2')",
    )


def test_long_outputs_are_truncated_in_reasons() -> None:
    (reason,) = fails(evaluator(Check("contains", "zzz")), trace("a" * 500))
    assert len(reason) < 120 and reason.endswith("…')")


def test_regex() -> None:
    ev = evaluator(Check("regex", r"\b12[A-F]\b"))
    assert fails(ev, trace("Seat 12A confirmed")) == ()
    assert fails(ev, trace("Seat 14C")) == (
        "output does not match regex '\\b12[A-F]\\b' (output: 'Seat 14C')",
    )
    with pytest.raises(SpecError, match="invalid regular expression"):
        evaluator(Check("regex", "(", line=7, key="scenarios[0].evaluator.regex"))


def test_json_schema() -> None:
    schema = {"type": "object", "required": ["seat"], "properties": {"seat": {"type": "string"}}}
    ev = evaluator(Check("json_schema", schema))
    assert fails(ev, trace({"seat": "12A"})) == ()
    assert fails(ev, trace('{"seat": "12A"}')) == ()
    assert fails(ev, trace({"row": 12})) == (
        "output does not match the JSON schema: 'seat' is a required property",
    )
    assert fails(ev, trace({"seat": 12})) == (
        "output does not match the JSON schema at $.seat: 12 is not of type 'string'",
    )
    assert fails(ev, trace("Seat 12A")) == ("output is not valid JSON (Expecting value at line 1 column 1)",)


def test_invalid_json_schema_is_a_spec_error() -> None:
    with pytest.raises(SpecError) as info:
        evaluator(Check("json_schema", {"type": "objekt"}, line=9, key="scenarios[0].evaluator.json_schema"))
    assert str(info.value).startswith("suite.yml:9: scenarios[0].evaluator.json_schema: invalid JSON schema:")


# -- user code -------------------------------------------------------------------------------------


def test_python_check(checks_dir: Path) -> None:
    ev = evaluator(Check("python", "aa_test_checks:polite"), search=(checks_dir,))
    assert fails(ev, trace("Please hold")) == ()
    assert fails(ev, trace("Hold")) == ("check aa_test_checks:polite returned False",)
    ev = evaluator(Check("python", "aa_test_checks:explained"), search=(checks_dir,))
    assert fails(ev, trace("Sorry!")) == ("apologised to 'Move me to 12A please'",)
    ev = evaluator(Check("python", "aa_test_checks:boom"), search=(checks_dir,))
    assert fails(ev, trace("x")) == ("check aa_test_checks:boom raised ValueError: cannot tell",)
    ev = evaluator(Check("python", "aa_test_checks:nothing"), search=(checks_dir,))
    assert fails(ev, trace("x")) == (
        "check aa_test_checks:nothing returned None, expected True, False or (passed, reason)",
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "aa_no_such_module:fn",
            "cannot import module 'aa_no_such_module' for 'aa_no_such_module:fn': ModuleNotFoundError",
        ),
        ("aa_test_checks:missing", "module 'aa_test_checks' has no attribute 'missing'."),
        ("aa_test_checks:NOT_CALLABLE", "'aa_test_checks:NOT_CALLABLE' is not callable (it is a int)."),
        ("aa_test_checks:later", "is async; check functions must be plain (synchronous) functions."),
    ],
)
def test_python_entry_errors_name_the_key(checks_dir: Path, entry: str, message: str) -> None:
    check = Check("python", entry, line=12, key="scenarios[1].evaluator[0].python")
    with pytest.raises(SpecError) as info:
        evaluator(check, search=(checks_dir,))
    e = info.value
    assert (e.file, e.line, e.key) == ("suite.yml", 12, "scenarios[1].evaluator[0].python")
    assert message in str(e)


def test_entry_error_without_a_key_names_the_scenario() -> None:
    with pytest.raises(SpecError) as info:
        evaluator(Check("python", "aa_no_such_module:fn"))
    assert (info.value.key, info.value.line) == ("scenario 's'", 3)


def test_judge_hook(checks_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # On its own path, not by grace of an earlier test's lookup (xdist may run this one first).
    monkeypatch.syspath_prepend(str(checks_dir))
    import aa_test_checks  # type: ignore[import-not-found]

    ev = evaluator(
        Check("judge", "aa_test_checks:judge", {"word": "seat", "rubric": "mentions the seat"}),
        properties={"expected_seat": "12A"},
        search=(checks_dir,),
    )
    assert fails(ev, trace("Your seat is 12A")) == ()
    assert fails(ev, trace("Done")) == ("judge wanted 'seat'",)
    assert aa_test_checks.calls[0] == {
        "input": "Move me to 12A please",
        "output": "Your seat is 12A",
        "properties": {"expected_seat": "12A"},
        "word": "seat",
        "rubric": "mentions the seat",
    }


# -- trace checks ----------------------------------------------------------------------------------


def test_max_steps() -> None:
    ev = evaluator(Check("max_steps", 3))
    assert fails(ev, trace("ok", tools=("a", "b"))) == ()
    assert fails(ev, trace("ok", tools=("a", "b", "c"))) == ("took 4 steps (max 3)",)


def test_must_call() -> None:
    ev = evaluator(Check("must_call", "update_seat"))
    assert fails(ev, trace("ok", tools=("faq_lookup_tool", "update_seat"))) == ()
    assert fails(ev, trace("ok", tools=("faq_lookup_tool", "faq_lookup_tool"))) == (
        "did not call tool 'update_seat' (called: faq_lookup_tool)",
    )
    assert fails(ev, trace("ok")) == ("did not call tool 'update_seat' (called: no tools)",)


def test_must_not_call() -> None:
    ev = evaluator(Check("must_not_call", "cancel_booking"))
    assert fails(ev, trace("ok", tools=("update_seat",))) == ()
    assert fails(ev, trace("ok", tools=("cancel_booking",))) == (
        "called tool 'cancel_booking' (once), which it must not call",
    )
    assert fails(ev, trace("ok", tools=("cancel_booking", "cancel_booking"))) == (
        "called tool 'cancel_booking' (2 times), which it must not call",
    )


def test_must_reach() -> None:
    ev = evaluator(Check("must_reach", "Seat Agent"))
    assert fails(ev, trace("ok", handoff="Seat Agent")) == ()
    assert fails(ev, trace("ok", handoff="FAQ Agent")) == (
        "did not reach agent 'Seat Agent' (reached: Triage, FAQ Agent)",
    )
    assert fails(ev, Trace(output="ok")) == (
        "did not reach agent 'Seat Agent' (reached: no agents recorded)",
    )


def test_unknown_kind_in_a_hand_built_check() -> None:
    with pytest.raises(SpecError, match="unknown check 'contain'"):
        evaluator(Check("contain", "x"))


# -- from a suite file -----------------------------------------------------------------------------


def test_paper_suite_end_to_end() -> None:
    suite = parse_suite(
        textwrap.dedent("""\
        agent: tickets:route
        scenarios:
          - input: "My payment failed"
            properties:
              - expected_department: billing
              - max_steps: 2
            evaluator: exact_match
        """)
    )
    ev = build_evaluator(suite.scenarios[0])
    assert ev("My payment failed", trace({"department": "billing"})).passed
    assert ev("My payment failed", trace("billing", tools=("lookup", "lookup"))).failures == (
        "took 3 steps (max 2)",
    )
    assert ev("My payment failed", trace({"department": "auth"})).failures == (
        "expected department 'billing', got 'auth'",
    )
