"""A suite's independent errors are reported together (issue 25, point 7), without one causing others."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentassay._integrations.cli import main
from agentassay._spec import SpecError, load_suite, parse_suite
from agentassay._spec._loader import SpecErrors

THREE = """\
agent: tickets:route
config:
  trails: 5
  alpha: 1.5
scenarios:
  - input: hi
    evalutor: {contains: x}
  - input: there
    evaluator: {contain: y}
"""


def test_every_independent_error_is_listed_with_line_key_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "agentassay.yml"
    path.write_text(THREE)
    with pytest.raises(SpecErrors) as info:
        load_suite(path)
    e = info.value
    assert [(x.line, x.key) for x in e.errors] == [
        (3, "config.trails"),
        (4, "config.alpha"),
        (7, "scenarios[0].evalutor"),
        (9, "scenarios[1].evaluator"),
    ]
    lines = str(e).splitlines()
    assert lines[0] == f"4 problems in {path}; fix them all, then load it again:"
    assert lines[1] == f"  {path}:3: config.trails: " + e.errors[0].message
    assert "Did you mean 'evaluator'?" in lines[3] and "Did you mean 'contains'?" in lines[4]
    assert (e.line, e.key) == (3, "config.trails")  # the attributes are the first problem's


def test_one_mistake_is_one_error() -> None:
    # A misspelt evaluator leaves the scenario without checks: that is not reported again.
    with pytest.raises(SpecError) as info:
        parse_suite("agent: a:b\nscenarios:\n  - input: hi\n    evalutor: {contains: x}\n")
    assert info.value.errors == (info.value,) and not isinstance(info.value, SpecErrors)
    # A wrong config.delta is not also compared with each scenario's threshold.
    with pytest.raises(SpecError) as info:
        parse_suite(
            "agent: a:b\nconfig: {delta: 2}\nscenarios:\n  - {input: hi, threshold: 0.1, evaluator: {contains: x}}\n"
        )
    assert [x.key for x in info.value.errors] == ["config.delta"]
    # A bad agent is one error, not also "agent: required key missing".
    with pytest.raises(SpecError) as info:
        parse_suite("agent: 3\nscenarios:\n  - {input: hi, evaluator: {contains: x}}\n")
    assert [x.key for x in info.value.errors] == ["agent"]


def test_independent_sections_each_report(tmp_path: Path) -> None:
    text = "name: ''\nagent: foo.py\nmodel: opnai\nscenarios:\n  - {input: a, evaluator: {contains: x}}\n  - {name: n, input: b}\n"
    with pytest.raises(SpecErrors) as info:
        parse_suite(text)
    assert [x.key for x in info.value.errors] == ["name", "agent", "model", "scenarios[1]"]
    assert "Did you mean 'openai'?" in str(info.value)


def test_the_list_is_capped(tmp_path: Path) -> None:
    body = "".join(f"  - {{input: q{i}, evaluator: {{contain: x}}}}\n" for i in range(60))
    with pytest.raises(SpecErrors) as info:
        parse_suite("agent: a:b\nscenarios:\n" + body)
    assert len(info.value.errors) == 60
    text = str(info.value)
    assert len(text.splitlines()) == 1 + 50 + 1 and text.endswith("... and 10 more (fix these first)")


def test_the_cli_prints_them_all_and_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "agentassay.yml"
    path.write_text(THREE)
    assert main(["run", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"error: 4 problems in {path}")
    assert "config.trails" in err and "scenarios[1].evaluator" in err and "Traceback" not in err


def test_a_misspelt_required_key_is_not_also_missing() -> None:
    with pytest.raises(SpecError) as info:
        parse_suite("agnet: a:b\nscenarios:\n  - {inptu: hi, evaluator: {contains: x}}\n")
    assert [x.key for x in info.value.errors] == ["agnet", "scenarios[0].inptu"]
    assert "Did you mean 'input'?" in str(info.value)
