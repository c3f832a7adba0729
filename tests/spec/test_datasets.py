"""Scenarios from CSV / JSONL datasets (issue 25, point 2): rows become ordinary scenarios, errors name the row."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from agentassay._spec import Check, SpecError, _loader, load_suite, parse_suite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "customer_service" / "dataset" / "agentassay.yml"

HEAD = "agent: tickets:route\nscenarios:\n"
TEMPLATE = """\
  - dataset: {file}
    name: "refund_{{{{ id }}}}"
    input: "{{{{ question }}}}"
    properties: [{{must_call: "{{{{ tool }}}}"}}]
    evaluator: [{{contains: "{{{{ expected }}}}"}}]
"""


def suite(
    tmp_path: Path, data: str, *, file: str = "cases.csv", template: str = TEMPLATE, extra: str = ""
) -> Path:
    (tmp_path / file).write_text(textwrap.dedent(data), encoding="utf-8")
    path = tmp_path / "agentassay.yml"
    path.write_text(HEAD + extra + template.format(file=file), encoding="utf-8")
    return path


CSV = """\
id,question,tool,expected
1,Refund order 1,issue_refund,refunded
2,"Refund order 2, please",issue_refund,refunded
3,Where is order 3?,lookup_order,shipped
"""


def load_error(path: Path) -> SpecError:
    with pytest.raises(SpecError) as info:
        load_suite(path)
    return info.value


def test_rows_become_ordinary_scenarios(tmp_path: Path) -> None:
    loaded = load_suite(suite(tmp_path, CSV))
    inline = parse_suite(
        HEAD
        + "\n".join(
            f"  - {{name: refund_{i}, input: '{q}', properties: [{{must_call: {t}}}], evaluator: [{{contains: {e}}}]}}"
            for i, q, t, e in [
                (1, "Refund order 1", "issue_refund", "refunded"),
                (2, "Refund order 2, please", "issue_refund", "refunded"),
                (3, "Where is order 3?", "lookup_order", "shipped"),
            ]
        )
    )
    same = [replace(x, line=None) for x in loaded.scenarios]
    assert same == [
        replace(x, line=None) for x in inline.scenarios
    ]  # what an inline suite gives: nothing else changes
    assert loaded.scenarios[2].checks == (Check("contains", "shipped"), Check("must_call", "lookup_order"))


def test_the_example_dataset_suite_loads(tmp_path: Path) -> None:
    s = load_suite(EXAMPLE)
    rows = (EXAMPLE.parent / "cases.csv").read_text().splitlines()
    assert len(rows) - 1 >= 20
    assert len(s.scenarios) == 1 + len(rows) - 1
    assert s.scenarios[0].name == "out_of_scope"
    seat = s.scenario("seat_14c")
    assert seat.input.startswith("I'd like to change my seat to 14C")
    assert Check("max_steps", 8) in seat.checks and Check("contains", "14C") in seat.checks
    assert Check("must_reach", "Seat Booking Agent") in seat.checks
    assert Check("must_call", "faq_lookup_tool") in s.scenario("baggage").checks


def test_inline_and_dataset_items_mix_in_order_and_defaults_follow_inspect(tmp_path: Path) -> None:
    (tmp_path / "c.csv").write_text("input,name\nhello there,greet\nbye now,\n", encoding="utf-8")
    text = (
        HEAD
        + "  - {input: first, evaluator: {contains: x}}\n  - dataset: file://c.csv\n    evaluator: {contains: hi}\n"
    )
    path = tmp_path / "s.yml"
    path.write_text(text)
    with pytest.raises(SpecError, match="non-empty string") as info:  # row 3's name is empty
        load_suite(path)
    assert (info.value.row, info.value.column) == (3, "name")
    (tmp_path / "c.csv").write_text("input,id\nhello there,h1\nbye now,b2\n", encoding="utf-8")
    s = load_suite(path)
    assert [x.name for x in s.scenarios] == ["first", "h1", "b2"]  # the input and id columns by default
    assert [x.input for x in s.scenarios] == ["first", "hello there", "bye now"]
    (tmp_path / "c.csv").write_text("input,tier\nhello there,1\nbye now,2\n", encoding="utf-8")
    assert [x.name for x in load_suite(path).scenarios] == ["first", "hello_there", "bye_now"]  # else a slug


def test_jsonl_values_keep_their_types(tmp_path: Path) -> None:
    data = "\n".join(
        json.dumps(r)
        for r in [
            {"id": 1, "question": "a", "tools": ["x", "y"], "steps": 3, "thr": 0.9},
            {"id": 2, "question": "b", "tools": "z", "steps": 4, "thr": None},
        ]
    )
    template = """\
  - dataset: {file}
    name: "case_{{{{ id }}}}"
    input: "{{{{ question }}}}"
    threshold: "{{{{ thr }}}}"
    properties: [{{must_call: "{{{{ tools }}}}"}}, {{max_steps: "{{{{ steps }}}}"}}]
"""
    s = load_suite(suite(tmp_path, data + "\n\n", file="cases.jsonl", template=template))
    first, second = s.scenarios
    assert first.checks == (Check("must_call", "x"), Check("must_call", "y"), Check("max_steps", 3))
    assert first.threshold == 0.9 and second.threshold is None  # null reads as absent
    assert second.checks == (Check("must_call", "z"), Check("max_steps", 4))


def test_csv_numbers_are_read_where_numbers_are_expected(tmp_path: Path) -> None:
    template = TEMPLATE.replace(
        "properties: [", 'threshold: "{{{{ thr }}}}"\n    properties: [{{max_steps: "{{{{ n }}}}"}}, '
    )
    s = load_suite(suite(tmp_path, "id,question,tool,expected,n,thr\n1,q,t,e,5,0.75\n", template=template))
    assert Check("max_steps", 5) in s.scenarios[0].checks and s.scenarios[0].threshold == 0.75


def test_row_text_is_data_never_a_template(tmp_path: Path) -> None:
    s = load_suite(suite(tmp_path, "id,question,tool,expected\n1,{{ 7 * 7 }} {% if 1 %}x{% endif %},t,e\n"))
    assert s.scenarios[0].input == "{{ 7 * 7 }} {% if 1 %}x{% endif %}"


def test_the_template_runs_sandboxed(tmp_path: Path) -> None:
    template = TEMPLATE.replace(
        '"{{{{ question }}}}"', '"{{{{ question.__class__.__mro__[1].__subclasses__() }}}}"'
    )
    e = load_error(suite(tmp_path, CSV, template=template))
    assert e.row == 2 and "failed on this row" in str(e) and "unsafe" in str(e)


# -- errors: file, row (as a spreadsheet shows it), column, fix ------------------------------------------------


def test_missing_file_suggests_the_near_name(tmp_path: Path) -> None:
    path = suite(tmp_path, CSV)
    path.write_text(path.read_text().replace("dataset: cases.csv", "dataset: case.csv"))
    e = load_error(path)
    assert (e.file, e.line, e.key) == (str(path), 3, "scenarios[0].dataset")
    assert "dataset file not found" in e.message and "Did you mean 'cases.csv'?" in e.message
    assert "relative to the suite file's folder" in e.message


def test_unknown_column_is_reported_once_at_the_template(tmp_path: Path) -> None:
    path = suite(tmp_path, CSV, template=TEMPLATE.replace("{{{{ question }}}}", "{{{{ qestion }}}}"))
    e = load_error(path)
    assert e.errors == (e,)  # once, not once per row
    assert (e.file, e.line, e.key, e.suggestion) == (str(path), 5, "scenarios[0]", "question")
    assert "reads column 'qestion'" in str(e) and "Did you mean 'question'?" in str(e)
    assert "id, question, tool, expected" in str(e)


def test_empty_required_value_names_row_and_column(tmp_path: Path) -> None:
    path = suite(tmp_path, "id,question,tool,expected\n1,q1,t,e\n2,q2,t,\n3,q3,t,e\n4,q4,t,\n")
    e = load_error(path)
    assert e.errors == (e,) and e.rows == (3, 5)  # one problem in two rows: one line naming both
    assert (e.file, e.column, e.key) == (
        str(tmp_path / "cases.csv"),
        "expected",
        "scenarios[0].evaluator[0].contains",
    )
    assert str(e).startswith(
        f"{tmp_path / 'cases.csv'}, rows 3, 5, column 'expected': scenarios[0].evaluator[0]"
    )
    assert "fill it in, or remove the row" in str(e) and str(e).endswith(f"(template: {path}:7)")


def test_empty_input_cell_is_an_error(tmp_path: Path) -> None:
    e = load_error(suite(tmp_path, "id,question,tool,expected\n1,,t,e\n"))
    assert (e.row, e.column, e.key) == (2, "question", "scenarios[0].input")


def test_duplicate_names_after_templating(tmp_path: Path) -> None:
    e = load_error(suite(tmp_path, "id,question,tool,expected\n1,a,t,e\n2,b,t,e\n1,c,t,e\n"))
    assert (e.row, e.key) == (4, "scenarios[0].name")
    assert "duplicate scenario name 'refund_1' (also on " in str(e) and "cases.csv row 2)" in str(e)
    assert "must differ per row" in str(e)


@pytest.mark.parametrize(
    ("file", "data", "row", "needle"),
    [
        ("cases.csv", 'id,question,tool,expected\n1,q,t,e\n2,"q,t,e\n', 3, "malformed CSV"),
        ("cases.csv", "id,question,tool,expected\n1,q,t,e\n\n2,q,t,e,extra\n", 4, "5 values but the header"),
        ("cases.csv", "id,question,id\n", 1, "duplicate column 'id'"),
        (
            "cases.jsonl",
            '{"id": 1, "question": "q", "tool": "t", "expected": "e"}\n{"id": 2,\n',
            2,
            "malformed JSON",
        ),
        ("cases.jsonl", '["not", "an", "object"]\n', 1, "got a list"),
        ("cases.jsonl", '{"id": 1, "question": "q", "tool": "t"}\n', 1, "this row has no 'expected'"),
    ],
)
def test_malformed_rows_name_the_row(tmp_path: Path, file: str, data: str, row: int, needle: str) -> None:
    e = load_error(suite(tmp_path, data, file=file))
    assert e.row == row, str(e)
    assert e.file == str(tmp_path / file) and needle in str(e)
    assert f", row {row}" in str(e)


@pytest.mark.parametrize(
    ("file", "data", "needle"),
    [
        ("cases.csv", "id,question,tool,expected\n", "has no rows"),
        ("cases.csv", "", "is empty"),
        ("cases.tsv", "id\tquestion\n", "unknown dataset format '.tsv'"),
        ("cases.csv", b"\xff\xfe".decode("latin-1") + "id\n", "not UTF-8"),
    ],
)
def test_unusable_files(tmp_path: Path, file: str, data: str, needle: str) -> None:
    if needle == "not UTF-8":
        (tmp_path / file).write_bytes(b"id,question\n\xff\xfe,x\n")
        path = tmp_path / "agentassay.yml"
        path.write_text(HEAD + TEMPLATE.format(file=file))
    else:
        path = suite(tmp_path, data, file=file)
    e = load_error(path)
    assert needle in str(e) and e.key == "scenarios[0].dataset"


def test_template_syntax_error_names_the_suite_line(tmp_path: Path) -> None:
    path = suite(tmp_path, CSV, template=TEMPLATE.replace("{{{{ tool }}}}", "{{{{ tool }}"))
    e = load_error(path)
    assert (e.file, e.line) == (str(path), 6) and "template syntax error" in str(e)


def test_row_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_loader, "MAX_DATASET_ROWS", 2)
    e = load_error(suite(tmp_path, CSV))
    assert e.row == 4 and "more than 2 rows" in str(e) and "MAX_DATASET_ROWS" in str(e)


def test_every_scenario_feature_applies_to_rows(tmp_path: Path) -> None:
    template = TEMPLATE.replace(
        "    properties:", '    match: {{input: "(?i){{{{ question }}}}"}}\n    threshold: 0.9\n    properties:'
    )
    s = load_suite(suite(tmp_path, CSV, template=template))
    assert s.scenarios[0].extensions["match"].value == {"input": "(?i)Refund order 1"}
    assert all(x.threshold == 0.9 for x in s.scenarios)


def test_the_example_runs_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("agents")
    from agentassay._integrations.cli import main

    monkeypatch.chdir(ROOT)
    out = tmp_path / "base.json"
    code = main(
        ["run", str(EXAMPLE), "-o", str(out), "--trials", "30", "--store", str(tmp_path / "t.db"), "-q"]
    )
    results = json.loads(out.read_text())
    verdicts = {s["name"]: s["verdict"]["verdict"] for s in results["scenarios"]}
    assert len(verdicts) == 24 and "fail" not in verdicts.values(), verdicts
    assert code in (0, 2)
