"""The shared validation helpers (agentassay/_config_check.py): one did-you-mean rule everywhere."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agentassay._config_check import KeyLines, closest, did_you_mean, show, unknown_message, yaml_line

PACKAGE = Path(__file__).resolve().parents[2] / "agentassay"


@pytest.mark.parametrize(
    ("name", "valid", "expected"),
    [
        ("trails", ["trials", "threshold"], "trials"),  # a close spelling
        ("TRIALS", ["trials", "threshold"], "trials"),  # case is ignored when nothing matches with it
        ("Max_Mutants", ["max_mutants", "operators"], "max_mutants"),
        ("triage", ["triage_agent", "faq_agent", "seat_booking_agent"], "triage_agent"),
        ("faq_agnt", ["triage_agent", "faq_agent", "seat_booking_agent"], "faq_agent"),
        ("faq_agent_v2", ["faq_agent", "triage_agent"], "faq_agent"),
        ("probe", ["probe_restricted", "enabled"], None),  # a prefix alone is not close enough
        ("zzz", ["trials", "threshold"], None),  # nothing close
        ("x", [], None),
    ],
)
def test_closest_suggests_a_close_spelling(name: str, valid: list[str], expected: str | None) -> None:
    assert closest(name, valid) == expected


def test_closest_suggests_nothing_when_two_names_are_about_as_close() -> None:
    # 'billing_agent' is 0.645 like 'seat_booking_agent' and 0.64 like 'triage_agent': only the shared
    # '_agent' makes them alike, so either guess would mislead.
    assert closest("billing_agent", ["triage_agent", "faq_agent", "seat_booking_agent"]) is None


def test_aliases_map_words_no_spelling_metric_would() -> None:
    assert closest("source", ["from", "to"], aliases={"source": "from"}) == "from"
    assert closest("Source", ["from", "to"], aliases={"source": "from"}) == "from"
    assert closest("source", ["to"], aliases={"source": "from"}) is None  # the alias's target is not valid here


def test_closest_of_a_non_string_is_none() -> None:
    assert closest(3, ["trials"]) is None  # type: ignore[arg-type]


def test_messages_share_one_form() -> None:
    assert did_you_mean("trials") == " Did you mean 'trials'?"
    assert did_you_mean(None) == ""
    message, best = unknown_message("key", "trails", ("trials", "seed"))
    assert message == "unknown key 'trails'. Did you mean 'trials'? Valid keys: trials, seed."
    assert best == "trials"
    assert unknown_message("scale", "x", ("pass_fail", "1-5")) == (
        "unknown scale 'x'. Valid scales: pass_fail, 1-5.",
        None,
    )


def test_show_quotes_and_clips() -> None:
    assert show("abc") == "'abc'"
    assert show(None) == "None"
    long = show("x" * 100)
    assert len(long) == 60 and long.endswith("…")


def test_yaml_line_finds_the_innermost_key(tmp_path: Path) -> None:
    text = "scenarios:\n  - name: a\n    contracts:\n      - require: search\n        p: 0.9\n"
    path = tmp_path / "agentassay.yml"
    path.write_text(text)
    lines = KeyLines(path)
    assert lines.line("scenarios[0].contracts[0].p") == 5
    assert lines.line("scenarios[0].contracts[0].missing") == 4  # the deepest part that exists
    assert lines.line("scenarios[3]") == 1  # no fourth item: the list's key
    assert lines.line("nothing") is None
    assert yaml_line(None, "scenarios") is None
    assert KeyLines(None).line("scenarios") is None
    assert KeyLines(tmp_path / "absent.yml").line("scenarios") is None


def test_get_close_matches_is_called_only_in_the_shared_module() -> None:
    """Every validator suggests through `closest`, so a misspelling gets the same answer everywhere."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "_config_check.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            named = (isinstance(node, ast.Attribute) and node.attr == "get_close_matches") or (
                isinstance(node, ast.Name) and node.id == "get_close_matches"
            )
            imported = isinstance(node, ast.ImportFrom) and any(a.name == "get_close_matches" for a in node.names)
            if named or imported:
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert offenders == []
