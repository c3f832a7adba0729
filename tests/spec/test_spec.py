"""The suite file loader: every bad input names file, line and key; good inputs give the documented objects."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentassay._spec import (
    AgentConfig,
    Check,
    ModelConfig,
    Settings,
    SpecError,
    load_suite,
    parse_suite,
)

AGENT = "agent: tickets:route\n"
ONE = "scenarios:\n  - input: hi\n    evaluator: {contains: hello}\n"


def write(tmp_path: Path, text: str, name: str = "agentassay.yml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


# (yaml text, substring of the message, line, key)
BAD: list[tuple[str, str, int | None, str | None]] = [
    # unknown keys, with the closest valid one
    (
        "agnet: tickets:route\n" + ONE,
        "unknown key. Did you mean 'agent'? Valid keys: agent, config,",
        1,
        "agnet",
    ),
    (
        AGENT + ONE + "config:\n  trials: 10\n  trails: 5\n",
        "unknown key. Did you mean 'trials'?",
        7,
        "config.trails",
    ),
    (
        AGENT + ONE + "config:\n  regression: {baseline: b.json, dleta: 0.1}\n",
        "Did you mean 'delta'?",
        6,
        "config.regression.dleta",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evalutor: {contains: x}\n",
        "Did you mean 'evaluator'?",
        4,
        "scenarios[0].evalutor",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    max_steps: 3\n",
        "'max_steps' is a check; put it under `properties:`",
        4,
        "scenarios[0].max_steps",
    ),
    ("agent: {entry: a:b, factroy: true}\n" + ONE, "Did you mean 'factory'?", 1, "agent.factroy"),
    (
        AGENT + "model: {provider: offline, behavior: x:y}\n" + ONE,
        "Did you mean 'behaviour'?",
        2,
        "model.behavior",
    ),
    # unknown check kinds
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {contain: x}\n",
        "unknown check 'contain'. Did you mean 'contains'?",
        4,
        "scenarios[0].evaluator",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator:\n      - {contains: x}\n      - exact_mach\n",
        "Did you mean 'exact_match'?",
        6,
        "scenarios[0].evaluator[1]",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {type: regexp, pattern: x}\n",
        "Did you mean 'regex'?",
        4,
        "scenarios[0].evaluator.type",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {type: regex, patern: x}\n",
        "Did you mean 'pattern'?",
        4,
        "scenarios[0].evaluator.patern",
    ),
    # wrong types and ranges
    (
        AGENT + ONE + "config:\n  trials: fifty\n",
        "expected an integer >= 1, got 'fifty' (string).",
        6,
        "config.trials",
    ),
    (
        AGENT + ONE + "config:\n  trials: true\n",
        "expected an integer >= 1, got true (boolean).",
        6,
        "config.trials",
    ),
    (AGENT + ONE + "config:\n  trials: -3\n", "expected an integer >= 1, got -3.", 6, "config.trials"),
    (AGENT + ONE + "config:\n  trials: 50.0\n", "expected an integer >= 1, got 50.0.", 6, "config.trials"),
    (
        AGENT + ONE + "config:\n  alpha: 1.5\n",
        "expected a number strictly between 0 and 1, got 1.5.",
        6,
        "config.alpha",
    ),
    (AGENT + ONE + "config:\n  beta: 0\n", "strictly between 0 and 1, got 0.", 6, "config.beta"),
    (
        AGENT + ONE + "config:\n  threshold: 0.1\n  delta: 0.2\n",
        "expected threshold - delta > 0 for method 'sprt'",
        7,
        "config.delta",
    ),
    (AGENT + ONE + "config:\n  threshold: 0.1\n", "got 0.1 - 0.1 = 0.", 6, "config.threshold"),
    (AGENT + ONE + "config:\n  alpha: 0.6\n  beta: 0.5\n", "alpha + beta < 1", 7, "config.beta"),
    (
        AGENT + ONE + "config:\n  trials: 50\n  max_trials: 20\n",
        "expected an integer >= trials (50), got 20.",
        7,
        "config.max_trials",
    ),
    (
        AGENT + ONE + "config:\n  concurrency: 0\n",
        "expected an integer >= 1, got 0.",
        6,
        "config.concurrency",
    ),
    (
        AGENT + ONE + "config:\n  timeout: 0\n",
        "expected a number of seconds > 0, got 0.",
        6,
        "config.timeout",
    ),
    (AGENT + ONE + "config:\n  retries: -1\n", "expected an integer >= 0, got -1.", 6, "config.retries"),
    (AGENT + ONE + "config:\n  seed: abc\n", "expected an integer >= 0", 6, "config.seed"),
    (
        AGENT + ONE + "config:\n  method: sprtt\n",
        "expected one of sprt, fixed, got 'sprtt' (string). Did you mean 'sprt'?",
        6,
        "config.method",
    ),
    (AGENT + ONE + "config:\n  errors: ignore\n", "expected one of fail, exclude", 6, "config.errors"),
    (AGENT + ONE + "config:\n  correction: holms\n", "Did you mean 'holm'?", 6, "config.correction"),
    (AGENT + ONE + "config: [1, 2]\n", "expected a mapping, got a list.", 5, "config"),
    (
        AGENT + "scenarios:\n  - input: hi\n    threshold: 0.05\n    evaluator: {contains: x}\n",
        "got 0.05 - 0.1 (config.delta)",
        4,
        "scenarios[0].threshold",
    ),
    # agent
    (ONE, "required key missing. Add `agent: package.module:attribute`", 1, "agent"),
    (
        "agent: examples/foo.py\n" + ONE,
        "got 'examples/foo.py' (string). Name a module, not a file: e.g. 'examples.foo:agent'.",
        1,
        "agent",
    ),
    ("agent: ticket_router_v2\n" + ONE, "A colon separates the module from the attribute", 1, "agent"),
    ("agent: 42\n" + ONE, "expected 'package.module:attribute'", 1, "agent"),
    ("agent: {factory: true}\n" + ONE, "required key missing. Add `entry:", 1, "agent.entry"),
    ("agent: {entry: a:b, factory: yes please}\n" + ONE, "expected true or false", 1, "agent.factory"),
    # model
    (AGENT + "model: gpt-4o\n" + ONE, "unknown provider 'gpt-4o'", 2, "model"),
    (
        AGENT + "model: {provider: openai}\n" + ONE,
        "required for provider 'openai'. Add `name:`",
        2,
        "model.name",
    ),
    (
        AGENT + "model:\n  provider: openai-compatible\n  name: llama\n  api_key_env: KEY\n" + ONE,
        "Add `base_url:`",
        3,
        "model.base_url",
    ),
    (
        AGENT + "model:\n  provider: openai-compatible\n  name: llama\n  base_url: http://x/v1\n" + ONE,
        "Add `api_key_env:`",
        3,
        "model.api_key_env",
    ),
    (
        AGENT + "model: {provider: openai, name: m, api_key_env: sk-secret-123}\n" + ONE,
        "got a value that is not a variable name",
        2,
        "model.api_key_env",
    ),
    (
        AGENT + "model: {provider: openai, name: m, temperature: -1}\n" + ONE,
        "expected a number >= 0, got -1.",
        2,
        "model.temperature",
    ),
    # scenarios
    (AGENT, "required key missing. Add `scenarios:`", 1, "scenarios"),
    (AGENT + "scenarios: []\n", "expected a non-empty list of scenarios", 2, "scenarios"),
    (AGENT + "scenarios:\n", "got nothing (null)", 2, "scenarios"),
    (
        AGENT + "scenarios:\n  - evaluator: {contains: x}\n",
        "required key missing. Add `input:`",
        3,
        "scenarios[0].input",
    ),
    (
        AGENT + "scenarios:\n  - input: [a, b]\n    evaluator: {contains: x}\n",
        "expected a string (the agent's input), got a list.",
        3,
        "scenarios[0].input",
    ),
    (
        AGENT + "scenarios:\n  - just a string\n",
        "expected a scenario: a mapping with at least `input:`",
        3,
        "scenarios[0]",
    ),
    (
        AGENT + "scenarios:\n  - name: a\n    input: x\n    evaluator: {contains: x}\n"
        "  - name: a\n    input: y\n    evaluator: {contains: y}\n",
        "duplicate scenario name 'a' (also on line 3)",
        6,
        "scenarios[1].name",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    properties: [the answer is polite]\n",
        "scenario has no checks",
        3,
        "scenarios[0]",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    properties: {expected: x}\n",
        "add `evaluator: exact_match`",
        3,
        "scenarios[0]",
    ),
    # properties
    (
        AGENT + "scenarios:\n  - input: hi\n    properties:\n      - max_steps: many\n",
        "expected an integer >= 1, got 'many' (string).",
        5,
        "scenarios[0].properties[0].max_steps",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    properties: {must_call: []}\n",
        "expected a non-empty list for must_call",
        4,
        "scenarios[0].properties.must_call",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    properties: [{json_schema: {type: object}}]\n",
        "move it under `evaluator:`",
        4,
        "scenarios[0].properties[0].json_schema",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    properties:\n      - 42\n    evaluator: {contains: x}\n",
        "expected a description (string)",
        5,
        "scenarios[0].properties[0]",
    ),
    (
        AGENT
        + "scenarios:\n  - input: hi\n    properties:\n      - tone: calm\n      - tone: warm\n    evaluator: {contains: x}\n",
        "duplicate property (first on line 5)",
        6,
        "scenarios[0].properties[1].tone",
    ),
    # evaluator values
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {regex: '[a-'}\n",
        "invalid regular expression '[a-': unterminated character set at position 0",
        4,
        "scenarios[0].evaluator.regex",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    properties:\n      - regex: '(unclosed'\n",
        "missing ), unterminated subpattern",
        5,
        "scenarios[0].properties[0].regex",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {json_schema: object}\n",
        "expected a JSON schema (a mapping)",
        4,
        "scenarios[0].evaluator.json_schema",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {python: checks.py}\n",
        "Name a module, not a file",
        4,
        "scenarios[0].evaluator.python",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {type: judge}\n",
        "Add `entry: module:function`",
        4,
        "scenarios[0].evaluator.entry",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: python\n",
        "a python check needs an entry",
        4,
        "scenarios[0].evaluator",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {type: judge, entry: j:f, output: x}\n",
        "passed to the judge by AgentAssay",
        4,
        "scenarios[0].evaluator.output",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: exact_match\n",
        "this scenario has none",
        4,
        "scenarios[0].evaluator",
    ),
    (
        AGENT
        + "scenarios:\n  - input: hi\n    properties: {expected_a: 1, expected_b: 2}\n    evaluator: exact_match\n",
        "several (expected_a, expected_b)",
        5,
        "scenarios[0].evaluator",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {contains: x, regex: y}\n",
        "expected one check per item, got a mapping with keys contains, regex",
        4,
        "scenarios[0].evaluator",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {contains: ''}\n",
        "expected a non-empty string",
        4,
        "scenarios[0].evaluator.contains",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {max_steps: 0}\n",
        "expected an integer >= 1, got 0.",
        4,
        "scenarios[0].evaluator.max_steps",
    ),
    (
        AGENT + "scenarios:\n  - input: hi\n    evaluator: {exact_match: null}\n",
        "expected a string, number or boolean",
        4,
        "scenarios[0].evaluator.exact_match",
    ),
    # YAML-level problems
    (AGENT + "scenarios: [\n", "YAML syntax error", 3, None),
    (AGENT + "scenarios:\n  - input: hi\n\tevaluator: x\n", "Indent with spaces, not tabs", 4, None),
    (AGENT + "agent: other:thing\n" + ONE, "duplicate key (first on line 1)", 2, "agent"),
    ("- a\n- b\n", "expected a mapping at the top level", 1, None),
    ("just text\n", "expected a mapping at the top level", 1, None),
    ("", "the file is empty", 1, None),
]


@pytest.mark.parametrize(
    ("text", "message", "line", "key"), BAD, ids=[f"{b[3] or 'file'}:{b[2]}" for b in BAD]
)
def test_bad_suite(tmp_path: Path, text: str, message: str, line: int | None, key: str | None) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SpecError) as info:
        load_suite(path)
    e = info.value
    assert message in str(e)
    assert (e.line, e.key) == (line, key), str(e)
    assert e.file == str(path)
    # The format promised in docs/suite.md: file:line: key: message
    prefix = f"{path}:{line}: " + (f"{key}: " if key else "")
    assert str(e).startswith(prefix), str(e)


def test_message_format_matches_the_docs() -> None:
    text = AGENT + ONE + "config:\n  trails: 5\n"
    with pytest.raises(SpecError) as info:
        parse_suite(text, path=Path("examples/x/agentassay.yml"))
    assert str(info.value) == (
        "examples/x/agentassay.yml:6: config.trails: unknown key. Did you mean 'trials'? Valid keys: "
        "alpha, baseline_trials, beta, budget_usd, concurrency, correction, coverage, delta, errors, fingerprints, max_trials, metamorphic, method, prices, proxy, regression, "
        "retries, seed, threshold, timeout, trials, warm_start."
    )
    e = info.value
    assert (e.suggestion, e.got) == ("trials", "trails")
    with pytest.raises(SpecError) as info:
        parse_suite(AGENT + ONE + "config:\n  alpha: 1.5\n", path=Path("examples/x/agentassay.yml"))
    assert str(info.value) == (
        "examples/x/agentassay.yml:6: config.alpha: expected a number strictly between 0 and 1, got 1.5."
    )
    assert (info.value.expected, info.value.got) == ("a number strictly between 0 and 1", "1.5")


def test_without_a_path_the_message_names_the_line() -> None:
    with pytest.raises(SpecError) as info:
        parse_suite(AGENT + ONE + "config:\n  trials: 0\n")
    assert str(info.value) == "line 6: config.trials: expected an integer >= 1, got 0."
    assert info.value.file is None


def test_file_not_found_suggests_a_sibling(tmp_path: Path) -> None:
    write(tmp_path, AGENT + ONE, "agentassay.yaml")
    with pytest.raises(SpecError) as info:
        load_suite(tmp_path / "agentassay.yml")
    e = info.value
    assert (e.line, e.key) == (None, None)
    assert str(e).startswith(f"{tmp_path / 'agentassay.yml'}: file not found.")
    assert e.suggestion == str(tmp_path / "agentassay.yaml")
    with pytest.raises(SpecError, match="file not found"):
        load_suite(tmp_path / "nothing" / "here.yml")


def test_directory_points_at_its_suite_file(tmp_path: Path) -> None:
    write(tmp_path, AGENT + ONE)
    with pytest.raises(SpecError, match="is a directory") as info:
        load_suite(tmp_path)
    assert info.value.suggestion == str(tmp_path / "agentassay.yml")


def test_unreadable_bytes(tmp_path: Path) -> None:
    p = tmp_path / "agentassay.yml"
    p.write_bytes(b"agent: a:b\n\xff\xfe\n")
    with pytest.raises(SpecError, match="not UTF-8"):
        load_suite(p)


# -- good inputs ---------------------------------------------------------------------------------

PAPER = """\
name: ticket_routing_accuracy
description: Route support tickets to correct department
agent: tickets:route
scenarios:
  - input: "My payment failed"
    properties:
      - expected_department: billing
      - max_steps: 5
    evaluator: exact_match
  - input: "Cannot login to account"
    properties:
      - expected_department: authentication
    evaluator: exact_match

config:
  trials: 50
  threshold: 0.90
  alpha: 0.05
  beta: 0.10
  method: sprt
  regression:
    baseline: ./baselines/v1.json
    delta: 0.10
"""


def test_paper_example(tmp_path: Path) -> None:
    path = write(tmp_path, PAPER)
    suite = load_suite(path)
    assert suite.name == "ticket_routing_accuracy"
    assert suite.description == "Route support tickets to correct department"
    assert suite.agent == AgentConfig("tickets:route")
    assert suite.path == path.resolve()
    assert suite.model == ModelConfig()
    s = suite.settings
    assert (s.trials, s.threshold, s.alpha, s.beta, s.method) == (50, 0.9, 0.05, 0.1, "sprt")
    assert s.baseline == str((tmp_path / "baselines" / "v1.json").resolve())
    assert s.regression_delta == 0.1 and s.margin == 0.1
    a, b = suite.scenarios
    assert (a.name, a.input, a.line) == ("my_payment_failed", "My payment failed", 5)
    assert a.properties == {"expected_department": "billing", "max_steps": 5}
    assert a.checks == (Check("exact_match", "billing", {"field": "department"}), Check("max_steps", 5))
    assert a.checks[0].key == "scenarios[0].evaluator" and a.checks[0].line == 9
    assert a.checks[1].key == "scenarios[0].properties[1].max_steps" and a.checks[1].line == 8
    assert b.name == "cannot_login_to_account"
    assert b.checks == (Check("exact_match", "authentication", {"field": "department"}),)
    assert suite.scenario("cannot_login_to_account") is b


def test_defaults() -> None:
    suite = parse_suite(AGENT + ONE)
    assert suite.settings == Settings()
    assert suite.model == ModelConfig(provider="offline")
    assert suite.name == "suite" and suite.description == "" and suite.path is None
    (sc,) = suite.scenarios
    assert sc.threshold is None and sc.properties == {} and sc.descriptions == () and sc.description == ""


def test_default_name_is_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "billing_bot"
    folder.mkdir()
    assert load_suite(write(folder, AGENT + ONE)).name == "billing_bot"


def test_full_config_and_model(tmp_path: Path) -> None:
    text = """\
    agent: {entry: pkg.mod:make_agent, factory: true, version: "1.10"}
    model:
      provider: openai-compatible
      name: llama-3
      base_url: http://localhost:8000/v1
      api_key_env: LOCAL_KEY
      temperature: 0.2
    config:
      trials: 30
      max_trials: 60
      threshold: 0.85
      alpha: 0.01
      beta: 0.2
      delta: 0.15
      method: fixed
      concurrency: 4
      timeout: 30
      retries: 0
      seed: 7
      errors: exclude
      correction: bonferroni
      regression: {baseline: /abs/base.json}
    """
    suite = load_suite(write(tmp_path, textwrap.dedent(text) + ONE))
    assert suite.agent == AgentConfig("pkg.mod:make_agent", factory=True, version="1.10")
    assert suite.model == ModelConfig(
        "openai-compatible", "llama-3", None, "http://localhost:8000/v1", "LOCAL_KEY", 0.2
    )
    assert suite.settings == Settings(
        trials=30,
        max_trials=60,
        threshold=0.85,
        alpha=0.01,
        beta=0.2,
        delta=0.15,
        method="fixed",
        concurrency=4,
        timeout=30.0,
        retries=0,
        seed=7,
        errors="exclude",
        correction="bonferroni",
        baseline="/abs/base.json",
    )
    assert suite.settings.margin == 0.15  # no regression.delta: falls back to delta


def test_model_as_a_string() -> None:
    assert parse_suite(AGENT + "model: offline\n" + ONE).model == ModelConfig("offline")


def test_fixed_method_allows_threshold_below_delta() -> None:
    suite = parse_suite(AGENT + ONE + "config: {method: fixed, threshold: 0.05}\n")
    assert suite.settings.threshold == 0.05


def test_scenario_names_are_slugs_deduplicated() -> None:
    text = AGENT + textwrap.dedent("""\
    scenarios:
      - input: "Where's my REFUND?!"
        evaluator: {contains: refund}
      - input: "Where's my refund"
        evaluator: {contains: refund}
      - name: where_s_my_refund_3
        input: other
        evaluator: {contains: x}
      - input: "Where's my refund"
        evaluator: {contains: refund}
      - input: "???"
        evaluator: {contains: x}
      - input: "A very long input that goes on and on beyond forty characters for sure"
        evaluator: {contains: x}
    """)
    names = [s.name for s in parse_suite(text).scenarios]
    assert names == [
        "where_s_my_refund",
        "where_s_my_refund_2",
        "where_s_my_refund_3",
        "where_s_my_refund_4",
        "scenario",
        "a_very_long_input_that_goes_on_and_on_be",
    ]
    assert all(len(n) <= 40 for n in names)


def test_properties_become_checks_and_data() -> None:
    text = AGENT + textwrap.dedent("""\
    scenarios:
      - name: seat
        description: change a seat
        input: "Move me to 12A"
        threshold: 0.7
        properties:
          - The agent confirms the new seat.
          - must_call: update_seat
          - must_call: [lookup_booking]
          - must_not_call: cancel_booking
          - must_reach: Seat Agent
          - contains: 12A
          - not_contains: sorry
          - regex: "\\\\b12A\\\\b"
          - max_steps: 8
          - expected_department: seats
          - priority: 2
    """)
    (sc,) = parse_suite(text).scenarios
    assert sc.description == "change a seat" and sc.threshold == 0.7
    assert sc.descriptions == ("The agent confirms the new seat.",)
    assert sc.properties == {
        "must_call": ["update_seat", "lookup_booking"],
        "must_not_call": "cancel_booking",
        "must_reach": "Seat Agent",
        "contains": "12A",
        "not_contains": "sorry",
        "regex": "\\b12A\\b",
        "max_steps": 8,
        "expected_department": "seats",
        "priority": 2,
    }
    assert sc.checks == (
        Check("must_call", "update_seat"),
        Check("must_call", "lookup_booking"),
        Check("must_not_call", "cancel_booking"),
        Check("must_reach", "Seat Agent"),
        Check("contains", "12A"),
        Check("not_contains", "sorry"),
        Check("regex", "\\b12A\\b"),
        Check("max_steps", 8),
    )


def test_properties_as_a_mapping() -> None:
    text = AGENT + "scenarios:\n  - input: hi\n    properties: {must_call: [a, b], team: x}\n"
    (sc,) = parse_suite(text).scenarios
    assert sc.properties == {"must_call": ["a", "b"], "team": "x"}
    assert sc.checks == (Check("must_call", "a"), Check("must_call", "b"))


def test_evaluator_forms() -> None:
    text = AGENT + textwrap.dedent("""\
    scenarios:
      - input: hi
        properties:
          - expected: Hello
        evaluator:
          - exact_match
          - {contains: hel}
          - {not_contains: [bye, ciao]}
          - {type: regex, pattern: "^H"}
          - {type: exact_match, expected: 3, field: count}
          - {type: json_schema, schema: {type: object, required: [a]}}
          - {python: checks:polite}
          - {type: python, entry: checks.sub:fn}
          - {type: judge, entry: judges:llm, rubric: be kind, model: small}
          - {judge: judges:llm}
          - {type: max_steps, max: 4}
          - {type: must_call, tool: lookup}
          - {type: must_reach, agent: Billing}
          - {type: contains}
    """)
    (sc,) = parse_suite(text).scenarios
    assert sc.checks == (
        Check("exact_match", "Hello"),
        Check("contains", "hel"),
        Check("not_contains", "bye"),
        Check("not_contains", "ciao"),
        Check("regex", "^H"),
        Check("exact_match", 3, {"field": "count"}),
        Check("json_schema", {"type": "object", "required": ["a"]}),
        Check("python", "checks:polite"),
        Check("python", "checks.sub:fn"),
        Check("judge", "judges:llm", {"rubric": "be kind", "model": "small"}),
        Check("judge", "judges:llm"),
        Check("max_steps", 4),
        Check("must_call", "lookup"),
        Check("must_reach", "Billing"),
        Check("contains", "Hello"),  # no value of its own: taken from `expected`
    )
    assert [c.key for c in sc.checks[:3]] == [
        "scenarios[0].evaluator[0]",
        "scenarios[0].evaluator[1]",
        "scenarios[0].evaluator[2]",
    ]


def test_single_evaluator_mapping_and_scenario_threshold_override() -> None:
    text = AGENT + "scenarios:\n  - input: hi\n    threshold: 0.95\n    evaluator: {regex: '(?i)hello'}\n"
    (sc,) = parse_suite(text).scenarios
    assert sc.checks == (Check("regex", "(?i)hello"),) and sc.threshold == 0.95


def test_yaml_anchors_and_merge_keys() -> None:
    text = AGENT + textwrap.dedent("""\
    scenarios:
      - &base
        input: hi
        properties: {max_steps: 3}
      - <<: *base
        name: again
    """)
    a, b = parse_suite(text).scenarios
    assert b.name == "again" and b.checks == a.checks == (Check("max_steps", 3),)


def test_relative_baseline_without_a_path_is_kept() -> None:
    suite = parse_suite(AGENT + ONE + "config: {regression: {baseline: b.json}}\n")
    assert suite.settings.baseline == "b.json"


def test_import_stays_light() -> None:
    code = (
        "import sys, agentassay._spec, agentassay._evaluators\n"
        "heavy = {'numpy', 'scipy', 'jsonschema', 'agents'} & {m.split('.')[0] for m in sys.modules}\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- config.coverage and scenario witness (issue 6) ---------------------------------------------------
def test_coverage_config_reads_every_key(tmp_path: Path) -> None:
    text = (
        AGENT
        + (
            "config:\n  coverage:\n    manifest: m.yml\n    derive_restrictions: false\n    probe_restricted: true\n"
            "    min: 0.4\n    weights: {tool: 1, model: 0}\n    state_lambda: 12\n    models: [a, b]\n"
        )
        + "scenarios:\n  - input: hi\n    witness: ['Reach(a)']\n    evaluator: {contains: hello}\n"
    )
    suite = parse_suite(text, path=tmp_path / "agentassay.yml")
    cov = suite.settings.part("coverage")
    assert cov.manifest == str((tmp_path / "m.yml").resolve())
    assert (cov.derive_restrictions, cov.probe_restricted, cov.min, cov.state_lambda) == (
        False,
        True,
        0.4,
        12.0,
    )
    assert cov.weights == {"tool": 1.0, "model": 0.0} and cov.models == ("a", "b")
    assert suite.scenarios[0].witness == ("Reach(a)",)
    assert parse_suite(AGENT + "config:\n  coverage: false\n" + ONE).settings.part("coverage").enabled is False


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("    min: 1.5\n", "config.coverage.min: expected a coverage between 0 and 1"),
        ("    weights: {tools: 1}\n", "config.coverage.weights.tools: unknown key. Did you mean 'tool'?"),
        ("    weights: {tool: 0}\n", "config.coverage.weights: at least one weight must be > 0"),
        ("    models: gpt\n", "config.coverage.models: expected a list of model names"),
        ("    probe: true\n", "config.coverage.probe: unknown key. Valid keys: derive_restrictions, enabled"),
    ],
)
def test_coverage_config_errors_name_the_key(body: str, needle: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_suite(AGENT + "config:\n  coverage:\n" + body + ONE, path=Path("s.yml"))
    assert needle in str(info.value)


def test_agent_framework_and_whether_a_model_is_named() -> None:
    """`agent.framework` names the framework a callable runs inside; `model:` omitted lets it keep its own."""
    body = "scenarios:\n  - name: a\n    input: hi\n    evaluator:\n      - contains: hi\n"
    framed = parse_suite("agent: {entry: 'm:f', framework: langgraph}\n" + body)
    assert framed.agent.framework == "langgraph" and not framed.model_given
    assert parse_suite("agent: m:f\nmodel: {provider: offline}\n" + body).model_given
    with pytest.raises(SpecError, match=r"agent\.framework"):
        parse_suite("agent: {entry: 'm:f', framework: [x]}\n" + body)
