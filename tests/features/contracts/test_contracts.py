"""Behavioural contracts (issue 16): the expression language, each kind on hand-made traces, the (p, δ) oracle,
errors that name the key, and the offline example end to end (run, check v2 / v1, compare, stored traces)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from agentassay._features.contracts import (
    EvalError,
    ExprError,
    binomial_pvalue,
    bonferroni,
    compile_expression,
    evaluate_contracts,
    input_fields,
    lower_bound,
    oracle_verdict,
    regression,
    suite_contracts,
)
from agentassay._features.contracts._model import TraceView
from agentassay._integrations.cli import main
from agentassay._spec import SpecError, load_suite, parse_suite
from agentassay._traces import Action, Cost, Step, Trace, TraceMetadata

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "customer_service" / "agentassay.contracts.yml"
V2 = "examples.customer_service.v2:triage_agent"
FAQ_QUOTE = "step 1: handoff Triage Agent → FAQ Agent"


def trace(
    *steps: Step,
    output: Any = "done",
    tokens: tuple[int, int] = (100, 20),
    usd: float | None = 0.001,
    latency: float = 1.0,
    trial: int | None = None,
    error: str | None = None,
) -> Trace:
    return Trace(
        steps=steps,
        output=output,
        cost=Cost(tokens[0], tokens[1], latency, usd),
        metadata=TraceMetadata(trial=trial),
        error=error,
    )


def handoff(src: str, dst: str) -> Step:
    return Step(Action.HANDOFF, agent=src, target=dst)


def call(tool: str, **args: Any) -> Step:
    return Step(Action.CALL_TOOL, agent="A", tool=tool, arguments=args, output="ok")


def respond(text: str = "done") -> Step:
    return Step(Action.RESPOND, agent="A", output=text)


SEAT_OK = trace(
    handoff("Triage Agent", "Seat Booking Agent"),
    call("update_seat", confirmation_number="ABC123", new_seat="14C"),
    respond(),
)
SEAT_FAQ = trace(
    handoff("Triage Agent", "FAQ Agent"), call("faq_lookup_tool", question="seat"), respond("120 seats")
)
SEAT_EARLY = trace(
    call("update_seat", confirmation_number="ABC123", new_seat="14C"),
    handoff("Triage Agent", "Seat Booking Agent"),
    respond(),
)
SEAT_BAD = trace(
    handoff("Triage Agent", "Seat Booking Agent"),
    call("update_seat", confirmation_number="ABC123", new_seat="99Z"),
    respond(),
)


def suite_text(
    contracts: str = "",
    scenario_contracts: str = "",
    *,
    config: str = "",
    input: str = "change my seat to 14C",
    model: str = "",
) -> str:
    return (
        "name: t\nagent: tests._support.fixture_agents:always_ok\n"
        + model
        + (f"config:\n{config}" if config else "")
        + (f"contracts:\n{contracts}" if contracts else "")
        + f"scenarios:\n  - name: s\n    input: {json.dumps(input)}\n    evaluator: {{contains: x}}\n"
        + (f"    contracts:\n{scenario_contracts}" if scenario_contracts else "")
    )


def contracts_of(text: str, tmp_path: Path | None = None, **kw: Any) -> Any:
    if tmp_path is not None:
        path = tmp_path / "agentassay.yml"
        path.write_text(text)
        suite = load_suite(path)
    else:
        suite = parse_suite(text)
    return suite_contracts(suite, **kw)["s"]


def one(item: str, **kw: Any) -> Any:
    (c,) = contracts_of(suite_text(f"  - {item}\n"), **kw)
    return c


# -- the expression language -------------------------------------------------------------------------


def env_of(input: str, t: Trace, args: dict[str, Any] | None = None) -> Any:
    return TraceView(input, t).env(args)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("steps == 3 and tokens == 120 and usd < 0.01 and latency_s == 1.0", True),
        ("tools == ['update_seat'] and handoffs == ['Seat Booking Agent']", True),
        ("count(tools, 'update_seat') == 1 and len(handoffs) == 1", True),
        ("1 < steps <= 3 < 4", True),
        ("'update_seat' in tools and 'refund' not in tools", True),
        ("(steps + 1) * 2 - 1 == 7 and steps % 2 == 1 and steps / 2 == 1.5", True),
        ("lower(output) == 'done' and upper(output) == 'DONE'", True),
        ("matches('(?i)CHANGE.*seat', input) and not matches('refund', input)", True),
        ("number('1,250.50') == 1250.5 and number('42') == 42 and abs(-3) == 3", True),
        (
            "min(tools) == 'update_seat' and max(1, 5, 2) == 5 and any([False, steps]) and all([1, True])",
            True,
        ),
        (
            "tools[0] == 'update_seat' and tools[-1] == 'update_seat' and handoffs[0] == 'Seat Booking Agent'",
            True,
        ),
        ("output == 'done' and input is not None and None is None", True),
    ],
)
def test_expressions_evaluate_on_a_trace(text: str, expected: Any) -> None:
    assert compile_expression(text).evaluate(env_of("please CHANGE my seat", SEAT_OK)) == expected


def test_input_and_output_fields() -> None:
    assert input_fields('{"order_total": 120, "id": "A"}') == {"order_total": 120, "id": "A"}
    assert input_fields("order_total: 120.50\nname: Ada Lovelace\nnot a field line") == {
        "order_total": 120.5,
        "name": "Ada Lovelace",
    }
    assert input_fields("I'd like to change my seat to 14C.") is None
    e = compile_expression("refund.amount <= input.order_total", tools=True)
    t = trace(call("refund", amount=80), output={"status": "ok", "items": [{"sku": "x"}]})
    assert e.evaluate(env_of("order_total: 100", t, {"refund": {"amount": 80}})) is True
    assert e.evaluate(env_of('{"order_total": 50}', t, {"refund": {"amount": 80}})) is False
    out = compile_expression(
        "output.status == 'ok' and output.items[0].sku == 'x' and input['order total'] == 3"
    )
    assert out.evaluate(env_of('{"order total": 3}', t)) is True


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("__import__('os')", "dunder names are not allowed: '__import__'"),
        ("lambda: 1", "a lambda is not allowed"),
        ("(lambda: 1)()", "a lambda is not allowed"),
        ("[t for t in tools]", "a comprehension is not allowed"),
        ("input.__class__", "dunder names are not allowed: '__class__'"),
        ("lower(input).strip", "'.strip' on a call's result is not allowed"),
        ("'abc'.upper()", "calling 'abc'.upper is not allowed"),
        ("tools.count > 1", "'tools' has no fields"),
        ("open('x')", "unknown function 'open'"),
        ("lenn(tools) > 1", "did you mean 'len'?"),
        ("inptu.order_total > 1", "unknown name 'inptu'; did you mean 'input'?"),
        ("stepz > 1", "unknown name 'stepz'; did you mean 'steps'?"),
        ("{'a': 1}", "a dict literal is not allowed"),
        ("1 if steps else 2", "a conditional expression"),
        ("2 ** 80", "the operator ** is not allowed"),
        ("tools[0:1]", "a literal number or string"),
        ("f'{input}'", "an f-string is not allowed"),
        ("len", "'len' is a function"),
        ("len(tools, steps)", "len() takes 1 argument, got 2"),
        ("matches('[a-', input)", "invalid regular expression '[a-'"),
        ("steps >", "not a valid expression"),
        ("b'x' == input", "the literal b'x' is not allowed"),
    ],
)
def test_what_the_language_refuses_at_load(text: str, words: str) -> None:
    with pytest.raises(ExprError) as info:
        compile_expression(text)
    assert words in info.value.message


def test_tool_arguments_only_where_allowed() -> None:
    with pytest.raises(ExprError, match="can be read only in `require`"):
        compile_expression("refund.amount > 1")
    with pytest.raises(ExprError, match="only the arguments of refund"):
        compile_expression("update_seat.new_seat == 'x'", tools={"refund"})
    with pytest.raises(ExprError, match="did you mean 'update_seat'"):
        compile_expression(
            "update_set.new_seat == 'x'", tools=True, known_tools=["update_seat", "faq_lookup_tool"]
        )
    assert compile_expression("refund.amount > 1", tools=True).tools == {"refund"}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("number(input) > 1", "cannot read"),
        ("input.order_total > 1", "input has no fields"),
        ("steps > 'x'", "TypeError"),
        ("steps / 0 > 1", "ZeroDivisionError"),
        ("tools[5] == 'x'", "out of range"),
        ("'x' * 1000000 == input", "too large"),
        ("lower(steps) == 'x'", "lower() needs text"),
    ],
)
def test_evaluation_errors_are_eval_errors_not_crashes(text: str, words: str) -> None:
    with pytest.raises(EvalError, match=re.escape(words)):
        compile_expression(text).evaluate(env_of("not a number", SEAT_OK))


# -- each kind on hand-made traces ---------------------------------------------------------------------


def test_before_quotes_the_step_that_came_too_early() -> None:
    c = one('before: [{handoff: "Seat Booking Agent"}, update_seat]')
    assert c.name == c.text == "handoff Seat Booking Agent before update_seat"
    assert c.evaluate("x", SEAT_OK) is None
    assert c.evaluate("x", SEAT_FAQ) is None  # update_seat never called: nothing to order
    v = c.evaluate("x", SEAT_EARLY)
    assert v is not None
    assert (
        v.text
        == 'step 1: update_seat(confirmation_number="ABC123", new_seat="14C") — no handoff Seat Booking Agent before it'
    )


def test_never_with_and_without_a_condition() -> None:
    c = one("""never: {handoff: "FAQ Agent", when: "matches('(?i)change.*seat', input)"}""")
    v = c.evaluate("Please change my seat", SEAT_FAQ)
    assert v is not None and v.text == FAQ_QUOTE
    assert c.evaluate("How much baggage?", SEAT_FAQ) is None
    assert c.evaluate("Please change my seat", SEAT_OK) is None
    refund = one('never: {tool: refund, when: "refund.amount > 100"}')
    assert refund.evaluate("x", trace(call("refund", amount=50))) is None
    v = refund.evaluate("x", trace(call("refund", amount=50), call("refund", amount=150)))
    assert v is not None and v.text == "step 2: refund(amount=150)"
    assert one("never: refund").evaluate("x", trace(call("refund", amount=1))) is not None


def test_argument_constraints() -> None:
    c = one(r"""arguments: {tool: update_seat, field: new_seat, matches: "^\\d{1,2}[A-F]$"}""")
    assert c.evaluate("x", SEAT_OK) is None
    v = c.evaluate("x", SEAT_BAD)
    assert v is not None
    assert (
        v.text
        == r'step 2: update_seat(confirmation_number="ABC123", new_seat="99Z") — new_seat does not match ^\d{1,2}[A-F]$'
    )
    missing = c.evaluate("x", trace(call("update_seat", confirmation_number="ABC123")))
    assert missing is not None and missing.reason == "new_seat is missing"
    amount = one("arguments: {tool: refund, field: amount, min: 0, max: 100}")
    assert amount.evaluate("x", trace(call("refund", amount=100))) is None
    assert amount.evaluate("x", trace(call("refund", amount=101))).reason == "amount is 101, above 100"  # type: ignore[union-attr]
    assert amount.evaluate("x", trace(call("refund", amount="5"))).reason == 'amount is "5", not a number'  # type: ignore[union-attr]
    kind = one("arguments: {tool: refund, field: reason.kind, one_of: [damaged, late]}")
    assert kind.evaluate("x", trace(call("refund", reason={"kind": "late"}))) is None
    assert "not one of" in kind.evaluate("x", trace(call("refund", reason={"kind": "whim"}))).reason  # type: ignore[union-attr]


def test_require_at_every_call_and_on_the_trace() -> None:
    c = one('require: "refund.amount <= input.order_total"')
    ok = trace(call("refund", amount=80), call("refund", amount=90))
    assert c.evaluate("order_total: 100", ok) is None
    v = c.evaluate("order_total: 100", trace(call("refund", amount=80), call("refund", amount=120)))
    assert (
        v is not None
        and v.text
        == "step 2: refund(amount=120) — refund.amount <= input.order_total is false (input.order_total = 100)"
    )
    broken = c.evaluate("no fields here", ok)
    assert (
        broken is not None
        and "could not be evaluated" in broken.reason
        and "input has no fields" in broken.reason
    )
    whole = one("require: \"count(tools, 'faq_lookup_tool') == 0\"")
    v = whole.evaluate("x", SEAT_FAQ)
    assert (
        v is not None
        and v.text == "trace: count(tools, 'faq_lookup_tool') == 0 is false — tools = [\"faq_lookup_tool\"]"
    )


def test_bounds() -> None:
    long = trace(*[call("t", i=i) for i in range(5)], respond())
    v = one("max_steps: 4").evaluate("x", long)
    assert v is not None and v.text == "step 5: t(i=4) — beyond max_steps 4 (6 steps)"
    v = one("max_tool_calls: 2").evaluate("x", long)
    assert v is not None and v.text == "step 3: t(i=2) — tool call 3, beyond max_tool_calls 2 (5 calls)"
    assert one("max_tokens: 120").evaluate("x", long) is None
    assert one("max_tokens: 119").evaluate("x", long).text == "trace: 120 tokens — above max_tokens 119"  # type: ignore[union-attr]
    assert one("max_latency_s: 0.5").evaluate("x", long).text == "trace: 1.000 s — above max_latency_s 0.5"  # type: ignore[union-attr]
    priced = suite_text("  - max_usd: 0.0005\n", config='  prices: {"*": {input: 1, output: 1}}\n')
    (usd,) = contracts_of(priced)
    assert usd.evaluate("x", long).reason == "above max_usd $0.0005"  # type: ignore[union-attr]
    assert usd.evaluate("x", trace(usd=None)).text.startswith("trace: no cost in USD")  # type: ignore[union-attr]
    with pytest.raises(SpecError, match=r"max_usd: the offline simulator's trials cost nothing"):
        one("max_usd: 1")


def test_max_usd_prices_a_named_hosted_model_from_the_table() -> None:
    """Issue 25: no config.prices for a model the maintained table knows; one it does not is named at load."""
    pytest.importorskip("genai_prices")
    hosted = suite_text("  - max_usd: 0.0005\n", model="model: {provider: openai, name: gpt-4.1-mini}\n")
    (usd,) = contracts_of(hosted)
    assert usd.evaluate("x", trace(usd=0.0001)) is None
    assert usd.evaluate("x", trace(usd=0.001)).reason == "above max_usd $0.0005"  # type: ignore[union-attr]
    unknown = suite_text("  - max_usd: 1\n", model="model: {provider: openai-compatible, name: my-model-7b, "
                         "base_url: 'http://127.0.0.1:9/v1', api_key_env: K}\n")
    with pytest.raises(SpecError, match=r"max_usd: model 'my-model-7b' has no price.*max_usd cannot be checked"):
        contracts_of(unknown)


def test_output_schema() -> None:
    c = one("output_schema: {type: object, required: [status], properties: {status: {enum: [ok]}}}")
    assert c.evaluate("x", trace(output='{"status": "ok"}')) is None
    assert c.evaluate("x", trace(output={"status": "ok"})) is None
    v = c.evaluate("x", trace(output='{"status": "no"}'))
    assert (
        v is not None
        and "does not match the JSON schema at $.status" in v.text
        and v.quote.startswith("final output")
    )
    assert "not JSON" in c.evaluate("x", trace(output="plain words")).reason  # type: ignore[union-attr]
    with pytest.raises(SpecError, match="invalid JSON schema"):
        one("output_schema: {type: 12}")


def test_python_contracts_import_from_the_suite_folder(tmp_path: Path) -> None:
    (tmp_path / "my_contracts.py").write_text(
        "def short(input, trace):\n    return len(trace.steps) <= 2, f'{len(trace.steps)} steps'\n"
        "def boom(input, trace):\n    raise RuntimeError('no')\n"
    )
    text = suite_text("  - python: my_contracts:short\n  - python: my_contracts:boom\n")
    short, boom = contracts_of(text, tmp_path)
    assert short.evaluate("x", trace(respond())) is None
    assert short.evaluate("x", SEAT_OK).text == "trace: python my_contracts:short — 3 steps"  # type: ignore[union-attr]
    assert boom.evaluate("x", SEAT_OK).reason == "raised RuntimeError: no"  # type: ignore[union-attr]


def test_names_options_and_scope(tmp_path: Path) -> None:
    text = suite_text(
        "  - max_steps: 8\n  - {max_steps: 8, p: 0.9, delta: 0.1}\n",
        "      - {name: mine, never: refund}\n",
    )
    a, b, mine = contracts_of(text, tmp_path)
    assert (a.name, b.name, mine.name) == ("max_steps 8", "max_steps 8 #2", "mine")
    assert (a.scope, mine.scope) == ("suite", "scenario")
    assert (a.p, a.delta, b.p, b.delta, b.bound) == (1.0, 0.05, 0.9, 0.1, pytest.approx(0.8))
    clash = suite_text("  - {name: x, max_steps: 8}\n", "      - {name: x, never: refund}\n")
    with pytest.raises(SpecError, match="also a suite-level contract's"):
        contracts_of(clash, tmp_path)


@pytest.mark.parametrize(
    ("item", "key", "words"),
    [
        ("befor: [a, b]", "contracts[1].befor", "did you mean 'before'?"),
        ("{max_steps: 3, never: x}", "contracts[1]", "one contract per item"),
        ("{name: x}", "contracts[1]", "no contract kind"),
        ("before: [a]", "contracts[1].before", "at least two steps"),
        ("before: [a, {handof: B}]", "contracts[1].before[1].handof", "did you mean 'handoff'?"),
        ("never: {tool: a, wen: steps > 1}", "contracts[1].never.wen", "did you mean 'when'?"),
        ('never: {tool: a, when: "foo > 1"}', "contracts[1].never.when", "unknown name 'foo'"),
        ("arguments: {tool: a, field: b}", "contracts[1].arguments", "at least one constraint"),
        (
            "arguments: {tool: a, field: b, matches: '[a-'}",
            "contracts[1].arguments.matches",
            "invalid regular expression",
        ),
        (
            "arguments: {tool: a, field: b, matchs: x}",
            "contracts[1].arguments.matchs",
            "did you mean 'matches'?",
        ),
        ('require: "a.x > 1 and b.y > 1"', "contracts[1].require", "split it into one contract per tool"),
        ("max_steps: -1", "contracts[1].max_steps", "a whole number >= 0"),
        ("{max_steps: 3, p: 1.5}", "contracts[1].p", "a number in (0, 1]"),
        ("{max_steps: 3, p: 0.5, delta: 0.5}", "contracts[1].delta", "p - delta must be above 0"),
        ("python: nope_module_xyz:fn", "contracts[1].python", "cannot import module 'nope_module_xyz'"),
        ("just text", "contracts[1]", "expected a mapping with one contract kind"),
    ],
)
def test_bad_contracts_name_file_line_and_key(tmp_path: Path, item: str, key: str, words: str) -> None:
    text = suite_text(f"  - max_steps: 8\n  - {item}\n")
    with pytest.raises(SpecError) as info:
        contracts_of(text, tmp_path)
    e = info.value
    assert e.key == key and words in e.message
    assert e.file is not None and e.file.endswith("agentassay.yml")
    assert e.line == 5  # the second item's line (name, agent, contracts:, first item, second item)


def test_a_nested_key_gets_its_own_line(tmp_path: Path) -> None:
    text = suite_text('  - never:\n      tool: refund\n      when: "amount > 1"\n')
    with pytest.raises(SpecError) as info:
        contracts_of(text, tmp_path)
    assert (info.value.key, info.value.line) == ("contracts[0].never.when", 6)


# -- the oracle --------------------------------------------------------------------------------------------


def test_oracle_statistics() -> None:
    assert binomial_pvalue(35, 40, 0.95) == pytest.approx(stats.binom.cdf(35, 40, 0.95))
    assert binomial_pvalue(40, 40, 1.0) == 1.0 and binomial_pvalue(39, 40, 1.0) == 0.0
    assert binomial_pvalue(0, 0, 0.95) == 1.0 and binomial_pvalue(3, 40, 0.0) == 1.0
    assert lower_bound(100, 100, 0.05) == pytest.approx(0.05 ** (1 / 100))
    assert lower_bound(0, 10, 0.05) == 0.0
    # the one-sided lower bound is where P(X >= k | bound) = level
    lb = lower_bound(37, 40, 0.05)
    assert stats.binom.sf(36, 40, lb) == pytest.approx(0.05)
    assert oracle_verdict(100, 100, 0.95, alpha=0.05, level=0.0075) == "satisfied"
    assert oracle_verdict(30, 40, 0.95, alpha=0.05, level=0.0075) == "violated"
    assert oracle_verdict(39, 40, 0.95, alpha=0.05, level=0.0075) == "inconclusive"
    assert oracle_verdict(0, 0, 0.95, alpha=0.05, level=0.0075) == "no trials"
    assert bonferroni([0.01, 0.2, 0.5]) == pytest.approx(0.03) and bonferroni([0.9, 0.8]) == 1.0


@pytest.mark.parametrize(("kb", "nb", "kc", "nc"), [(95, 100, 24, 39), (30, 30, 30, 30), (20, 40, 10, 30)])
def test_the_check_time_test_is_regression_verdicts(kb: int, nb: int, kc: int, nc: int) -> None:
    from agentassay._stats import regression_verdict

    r = regression_verdict(kb, nb, kc, nc, alpha=0.0075 / 4, beta=0.1, delta=0.1)
    assert regression(kb, nb, kc, nc, level=0.0075 / 4, beta=0.1, delta=0.1) == (r.pvalue, r.verdict.value)


# -- the offline example end to end --------------------------------------------------------------------


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """run --full (v1), check v2 and v1 against it, compare both: the files and the store."""
    pytest.importorskip("agents")
    tmp = tmp_path_factory.mktemp("contracts")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        suite = tmp / "agentassay.contracts.yml"  # the example with fewer trials: the test's budget
        suite.write_text(EXAMPLE.read_text().replace("trials: 100", "trials: 60"))
        s, store = str(suite), str(tmp / "s.db")
        paths = {k: tmp / f"{k}.json" for k in ("base", "v2", "v1", "cmp_v2", "cmp_v1")}
        codes = {
            "base": main(["run", s, "--full", "-o", str(paths["base"]), "--store", store, "-q"]),
            "v2": main(
                [
                    "check",
                    s,
                    "--agent",
                    V2,
                    "--baseline",
                    str(paths["base"]),
                    "-o",
                    str(paths["v2"]),
                    "--store",
                    store,
                    "-q",
                ]
            ),
            "v1": main(
                ["check", s, "--baseline", str(paths["base"]), "-o", str(paths["v1"]), "--store", store, "-q"]
            ),
        }
        for k in ("v2", "v1"):
            codes[f"cmp_{k}"] = main(
                ["compare", str(paths["base"]), str(paths[k]), "-o", str(paths[f"cmp_{k}"]), "-q"]
            )
    return {"suite": suite, "store": store, "paths": paths, "codes": codes}


def data(flow: dict[str, Any], key: str) -> dict[str, Any]:
    return json.loads(flow["paths"][key].read_text())


def scenario(d: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in d["scenarios"] if s["name"] == name)


def test_v1_records_every_contract_satisfied(flow: dict[str, Any]) -> None:
    assert flow["codes"]["base"] == 0
    base = data(flow, "base")
    section = base["contracts"]
    assert section["share"] == 0.15 and section["mode"] == "run"
    assert set(section["scenarios"]) == {"seat_change", "baggage", "wifi", "out_of_scope"}
    seat = {e["name"]: e for e in section["scenarios"]["seat_change"]["contracts"]}
    assert set(seat) == {"seat-desk-first", "valid-seat", "short-conversation", "no-faq-for-seat-changes"}
    assert all(
        e["trials"] == 90 and e["verdict"] == "satisfied" and e["test"] == "binomial" for e in seat.values()
    )
    for s in base["scenarios"]:  # run: the contracts' own test, at alpha x SHARE
        ev = s["verdict"]["evidence"]["contracts"]
        assert ev["verdict"] == "pass" and ev["alpha"] == pytest.approx(0.05 * 0.15)


def test_v2_fails_its_contract_with_the_step_quoted(flow: dict[str, Any]) -> None:
    from agentassay._reports import render_pr_comment, render_table
    from agentassay._results import load_results

    assert flow["codes"]["v2"] == 1
    v2 = data(flow, "v2")
    seat = scenario(v2, "seat_change")["verdict"]
    ev = seat["evidence"]["contracts"]
    assert seat["verdict"] == "fail" and ev["verdict"] == "fail"
    assert ev["contracts"]["no-faq-for-seat-changes"]["test"] == "regression"
    assert ev["adjusted_p"] <= ev["alpha"] == pytest.approx(0.05 * 0.15)
    assert seat["explanation"].startswith("FAIL")  # the pass-rate evidence first, then the contract
    assert "Contracts: contract 'no-faq-for-seat-changes' violated in " in seat["explanation"]
    assert f"; first: {FAQ_QUOTE}" in seat["explanation"]
    entry = next(
        e
        for e in v2["contracts"]["scenarios"]["seat_change"]["contracts"]
        if e["name"] == "no-faq-for-seat-changes"
    )
    assert entry["regression"] == "fail" and entry["baseline"]["trials"] == 90  # 1.5 x the cap of 60
    assert entry["violations"] and all(v["text"] == FAQ_QUOTE for v in entry["violations"])
    for other in ("baggage", "wifi", "out_of_scope"):
        assert scenario(v2, other)["verdict"]["evidence"]["contracts"]["verdict"] == "pass"

    results = load_results(flow["paths"]["v2"])
    table = render_table(results)
    assert "Contracts:" in table and "FAIL in seat_change" in table
    assert "seat_change · no-faq-for-seat-changes: " in table and f"e.g. {FAQ_QUOTE}" in table
    comment = render_pr_comment(results)
    assert "#### Contracts" in comment and f"e.g. {FAQ_QUOTE}" in comment and "regression FAIL" in comment


def test_v1_against_its_own_baseline_passes_its_contracts(flow: dict[str, Any]) -> None:
    assert flow["codes"]["v1"] in (0, 2)
    v1 = data(flow, "v1")
    for s in v1["scenarios"]:
        assert s["verdict"]["verdict"] != "fail"
        assert s["verdict"]["evidence"]["contracts"]["verdict"] == "pass"
    entries = [e for s in v1["contracts"]["scenarios"].values() for e in s["contracts"]]
    assert entries and all(e["test"] == "regression" and e["regression"] != "fail" for e in entries)


def test_compare_reproduces_the_contract_verdicts(flow: dict[str, Any]) -> None:
    for k in ("v2", "v1"):
        assert flow["codes"][f"cmp_{k}"] == flow["codes"][k]
        live, again = data(flow, k), data(flow, f"cmp_{k}")
        assert live["decision"] == again["decision"]
        for a, b in zip(live["scenarios"], again["scenarios"], strict=True):
            assert a["verdict"]["verdict"] == b["verdict"]["verdict"]
            assert a["verdict"]["evidence"]["contracts"] == b["verdict"]["evidence"]["contracts"]


def test_stored_traces_give_the_live_counts(flow: dict[str, Any]) -> None:
    """Acceptance 1: contracts evaluated on the run's stored traces, no agent call, give identical counts."""
    from agentassay._traces import TraceStore

    suite = load_suite(flow["suite"])
    for k in ("base", "v2"):
        d = data(flow, k)
        with TraceStore(flow["store"]) as store:
            rows = store.run(d["run_id"])
        assert rows
        for name, sec in d["contracts"]["scenarios"].items():
            mine = [r for r in rows if r.scenario == name]
            got = evaluate_contracts(suite, name, [r.trace for r in mine], [r.input or "" for r in mine])
            live = {
                e["name"]: {f: e[f] for f in ("trials", "satisfied", "violations")} for e in sec["contracts"]
            }
            assert {
                n: {f: e[f] for f in ("trials", "satisfied", "violations")} for n, e in got.items()
            } == live


def test_evaluate_contracts_inputs_and_excluded_errors(tmp_path: Path) -> None:
    text = suite_text(
        "",
        """      - never: {handoff: "FAQ Agent", when: "matches('seat', input)"}\n""",
        config="  errors: exclude\n",
    )
    path = tmp_path / "agentassay.yml"
    path.write_text(text)
    suite = load_suite(path)
    traces = [SEAT_FAQ, SEAT_OK, trace(handoff("T", "FAQ Agent"), error="boom"), SEAT_FAQ]
    got = evaluate_contracts(suite, "s", traces)  # the scenario's input mentions a seat
    (entry,) = got.values()
    assert (entry["trials"], entry["satisfied"]) == (3, 1)
    assert [v["trial"] for v in entry["violations"]] == [0, 3]
    per_trace = evaluate_contracts(suite, "s", traces, ["seat", "x", "x", "baggage"])
    assert next(iter(per_trace.values()))["satisfied"] == 2
    with pytest.raises(ValueError, match="one input per trace"):
        evaluate_contracts(suite, "s", traces, ["a"])
    with pytest.raises(KeyError):
        evaluate_contracts(suite, "nope", traces)


@pytest.mark.parametrize(
    ("old", "new", "key", "words"),
    [
        (
            "change.*seat', input)",
            "change.*seat', inptu)",
            "scenarios[0].contracts[0].never.when",
            "did you mean 'input'?",
        ),
        (
            """when: "matches('(?i)change.*seat', input)\"""",
            """when: "__import__('os')\"""",
            "scenarios[0].contracts[0].never.when",
            "dunder names are not allowed",
        ),
        (
            """when: "matches('(?i)change.*seat', input)\"""",
            """when: "(lambda: True)()\"""",
            "scenarios[0].contracts[0].never.when",
            "a lambda is not allowed",
        ),
        (
            """when: "matches('(?i)change.*seat', input)\"""",
            """when: "lower(input).strip\"""",
            "scenarios[0].contracts[0].never.when",
            "on a call's result is not allowed",
        ),
        ("    max_steps: 8", "    max_step: 8", "contracts[2].max_step", "did you mean 'max_steps'?"),
        ("[A-F]$", "[A-F$", "contracts[1].arguments.matches", "invalid regular expression"),
        (
            "    max_steps: 8",
            "    python: examples.customer_service.nope:check",
            "contracts[2].python",
            "cannot import module",
        ),
        ("update_seat]", "update_set]", "contracts[0].before", "Did you mean 'update_seat'?"),
    ],
)
def test_bad_input_is_exit_3_naming_the_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    key: str,
    words: str,
) -> None:
    pytest.importorskip("agents")
    monkeypatch.chdir(ROOT)
    text = EXAMPLE.read_text()
    assert old in text
    bad = tmp_path / "bad.yml"
    bad.write_text(text.replace(old, new, 1))
    assert main(["run", str(bad), "--no-store", "-q"]) == 3
    err = capsys.readouterr().err
    assert "bad.yml:" in err and f": {key}: " in err and words in err


def test_run_reserves_the_share_and_the_level_math() -> None:
    from agentassay._features.contracts._plugin import SHARE, level_of
    from agentassay._spec import Settings

    assert SHARE == 0.15 and 0.5 + 0.2 + SHARE < 1  # fingerprints, metamorphic relations, contracts
    assert level_of(Settings(alpha=0.05), 4) == pytest.approx(0.05 * 0.15 / 4)
    assert math.isclose(level_of(Settings(alpha=0.05), 0), 0.05 * 0.15)


# -- the benchmark ---------------------------------------------------------------------------------------


def test_the_committed_figures_hold_the_level() -> None:
    """benchmarks/results/contracts.json (benchmarks/contracts.py, full run): every false-alarm rate within level + 2 s.e."""
    figures = json.loads((ROOT / "benchmarks" / "results" / "contracts.json").read_text())
    nulls = [r for r in figures["rows"] if r["null"]]
    assert not figures["quick"] and figures["level"] == pytest.approx(0.05 * 0.15)
    assert {(r["test"], r["n"]) for r in nulls} == {(t, n) for t in ("run", "check") for n in (30, 50, 100)}
    assert all(r["reps"] >= 20_000 and r["ok"] and r["exact"] <= r["level"] for r in nulls)
    assert all(r["fail_rate"] > 0.05 for r in figures["rows"] if not r["null"] and r["n"] == 100)


def test_the_benchmark_runs_quick(tmp_path: Path) -> None:
    import sys

    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.contracts import BEGIN, END
        from benchmarks.contracts import main as bench
    finally:
        sys.path.remove(str(ROOT))
    result = bench(["--quick", "--out", str(tmp_path), "--docs", str(tmp_path)])
    assert result["quick"] and all(r["ok"] for r in result["rows"] if r["null"])
    text = (tmp_path / "contracts.md").read_text()
    assert BEGIN in text and END in text


def test_evidence_is_rederived_from_the_counts_alone() -> None:
    """compare against another baseline: the statistics a file holds are ignored, only its counts are read."""
    from types import SimpleNamespace

    from agentassay._features.contracts import Tally, record
    from agentassay._features.contracts import _plugin as plugin
    from agentassay._gate import Candidate, GatePlan
    from agentassay._spec import Settings

    (c,) = contracts_of(suite_text("  - max_steps: 8\n"))
    tally = Tally()
    for i in range(40):
        tally.add(i, None if i % 3 else c.evaluate("x", trace(*[respond()] * 9)))
    assert set(record(c, tally)) == set(plugin.RECORD)
    stale = {
        **record(c, tally),
        "baseline": {"trials": 10, "satisfied": 10},
        "regression": "fail",
        "pvalue": 0.0,
    }
    section = {"scenarios": {"s": {"contracts": [stale]}, "t": {"contracts": [stale]}}}
    base = SimpleNamespace(
        sections={"contracts": {"scenarios": {"s": {"contracts": [record(c, Tally(40, 40))]}}}}
    )
    plan = GatePlan(Settings(alpha=0.05), ("s", "t"), baseline=base)
    plugin.agentassay_plan(plan)
    assert plan.shares == {"s": {"contracts": 0.15}}  # t: the baseline has no contracts for it
    (test,) = plugin.agentassay_scenario_evidence(plan, Candidate({}, {"contracts": section}))
    assert set(test.pvalues) == {"s"} and test.share == 0.15
    assert test.details["s"]["contracts"]["max_steps 8"]["baseline"] == {"trials": 40, "satisfied": 40}
    assert test.describe["s"].startswith(
        "contract 'max_steps 8' violated in 14/40 trials (35%) against 0/40 in the baseline; first: step 9: "
    )
    plan_run = GatePlan(Settings(alpha=0.05), ("s", "t"))
    plan_run.share("s", "contracts", 0.15)
    (run_test,) = plugin.agentassay_scenario_evidence(plan_run, Candidate({}, {"contracts": section}))
    assert (
        "baseline" not in run_test.describe["s"]
        and run_test.details["s"]["contracts"]["max_steps 8"]["test"] == "binomial"
    )
    assert run_test.pvalues["s"] == pytest.approx(binomial_pvalue(26, 40, 0.95))
