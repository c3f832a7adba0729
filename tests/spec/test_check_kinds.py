"""Check kinds are a registry: the kernel's, then those built-in features add (_spec/_kinds.py); the kernel
names no feature's kind, and a scenario with no checks is fine only when a grading plugin's key covers it."""

from __future__ import annotations

import pytest

from agentassay._runner._identity import code_modules
from agentassay._spec import CHECK_KINDS, SpecError, parse_suite
from agentassay._spec._kinds import KERNEL_KINDS, check_kinds, names_code
from agentassay._spec._settings import graders

AGENT = "agent: app:run\n"


def test_the_judge_kind_is_the_judge_feature_s() -> None:
    assert "judge" not in {k.name for k in KERNEL_KINDS}
    judge = check_kinds()["judge"]
    assert judge.build == "agentassay._features.judge._check:build" and judge.names_code
    assert CHECK_KINDS[-1] == "judge" and CHECK_KINDS[: len(KERNEL_KINDS)] == tuple(k.name for k in KERNEL_KINDS)


def test_the_identity_digests_every_kind_that_names_code() -> None:
    assert names_code("python") and names_code("judge") and not names_code("contains")
    suite = parse_suite(
        AGENT + "scenarios:\n  - input: hi\n    evaluator: [{python: chk:f}, {judge: grade.sub:g}, {contains: x}]\n"
    )
    assert code_modules("app:run", suite) == ["app", "chk", "grade.sub"]


def test_a_scenario_without_checks_needs_a_grading_plugin() -> None:
    assert [words for *_, words in graders()] == ["an LLM judge (`judge:`, docs/judge.md)"]
    bare = "scenarios:\n  - input: hi\n"
    with pytest.raises(SpecError, match=r"\) or an LLM judge \(`judge:`, docs/judge.md\); natural-language"):
        parse_suite(AGENT + bare)
    judge = "judge: {rubric: be kind, model: {provider: offline, behaviour: 'j:f'}}\n"
    assert parse_suite(AGENT + judge + bare).scenarios[0].checks == ()  # the suite's judge grades it
    with pytest.raises(SpecError, match="scenario has no checks"):  # ... unless the scenario turns it off
        parse_suite(AGENT + judge + bare + "    judge: false\n")
    assert parse_suite(AGENT + bare + "    judge: {rubric: be kind}\n").scenarios[0].checks == ()
