"""`agentassay manifest / generate / coverage` end to end on the offline customer-service example (issue 6)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

pytest.importorskip("agents")
pytest.importorskip("dspy")

from agentassay._integrations.cli import main
from agentassay._results import load_results
from agentassay._spec import load_suite

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "customer_service"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # entry points `examples.…` import from the repository root


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_manifest_of_the_customer_service_example_has_the_papers_13_obligations(capsys):
    code, out, err = cli(["manifest", "examples.customer_service.v1:triage_agent", "--json"], capsys)
    assert code == 0
    d = json.loads(out)
    assert d["counts"] == {"agents": 3, "allowed": 2, "restricted": 4, "delegations": 4, "total": 13, "tools": 2}
    assert sorted(map(tuple, d["obligations"]["restricted"])) == sorted(
        [
            ("triage_agent", "faq_lookup_tool"),
            ("triage_agent", "update_seat"),
            ("faq_agent", "update_seat"),
            ("seat_booking_agent", "faq_lookup_tool"),
        ]
    )
    assert "3 reachable agents, 2 tools, 2 allowed edges, 4 restricted edges, 4 delegations = 13 obligations" in err
    code, out, _ = cli(["manifest", "examples.customer_service.v1:triage_agent"], capsys)
    assert code == 0 and yaml.safe_load(out)["system"] == {"id": "customer_service", "entry_agent": "triage_agent"}


BAD_MANIFESTS = {
    "contradictory": (
        """\
        system: {id: s, entry_agent: a}
        agents: [{id: a}, {id: b}]
        tools: [{id: t}, {id: u}]
        permissions:
          allow: [[a, t], [b, u]]
          restrict: [[a, t], [b, u]]
        """,
        ["both allowed and restricted", "(a, t)", "(b, u)", "Fix:"],
    ),
    "unknown node": (
        """\
        system: {id: s, entry_agent: a}
        agents: [{id: a}]
        tools: [{id: t}]
        permissions:
          allow: [[a, t], [ghost, t]]
        delegations:
          - {from: a, to: nobody}
        """,
        ["ghost", "nobody", "Fix:"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MANIFESTS))
def test_bad_manifest_is_a_clear_error_with_exit_3(case, tmp_path, capsys):
    text, needles = BAD_MANIFESTS[case]
    path = tmp_path / "manifest.yml"
    path.write_text(textwrap.dedent(text))
    code, _, err = cli(["manifest", str(path)], capsys)
    assert code == 3
    assert str(path) in err
    for needle in needles:
        assert needle in err


def test_entry_point_that_fails_to_import_is_exit_3(capsys):
    code, _, err = cli(["manifest", "examples.no_such_module:agent"], capsys)
    assert code == 3
    assert "cannot import agent module 'examples.no_such_module'" in err


def test_generate_then_run_then_coverage(tmp_path, capsys):
    """Acceptance 2 and 3 through the CLI: realize, write a suite, run it, read C1–C4 and the tuple."""
    work = tmp_path / "cs"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("*.structural.yml", "__pycache__"))
    suite = work / "agentassay.yml"
    out_suite = work / "generated.yml"
    report_path = tmp_path / "report.json"
    code, out, err = cli(
        ["generate", str(suite), "--script", str(work / "realizer_script.yml"), "-o", str(out_suite),
         "--report", str(report_path)],
        capsys,
    )
    assert code == 0, err
    assert "9 of 13 objectives realized, 4 unrealized" in err
    report = json.loads(report_path.read_text())
    unrealized = set(report["unrealized_objectives"])
    assert unrealized == {
        "RestrictTool(triage_agent, faq_lookup_tool)",
        "RestrictTool(triage_agent, update_seat)",
        "RestrictTool(faq_agent, update_seat)",
        "RestrictTool(seat_booking_agent, faq_lookup_tool)",
    }
    text = out_suite.read_text()
    for q in sorted(unrealized):
        assert f"#   {q}" in text  # reported at the top of the generated file, not dropped
    generated = load_suite(out_suite)  # a valid suite
    assert generated.settings.part("coverage").probe_restricted
    witnessed = {w for s in generated.scenarios for w in s.witness}
    assert {"Reach(faq_agent)", "UseTool(seat_booking_agent, update_seat)", "Delegate(faq_agent, triage_agent)"} <= witnessed

    results = tmp_path / "results.json"
    code, _, err = cli(
        ["run", str(out_suite), "--trials", "5", "--method", "fixed", "--no-store", "-q", "-o", str(results)], capsys
    )
    assert code in (0, 2), err
    cov = load_results(results).sections.get("coverage")
    c = cov["structural"]["criteria"]
    assert (c["C1"]["witnessed"], c["C2"]["witnessed"], c["C4"]["witnessed"]) == (3, 2, 4)
    assert c["C3"]["polarity"] == "inverted" and c["C3"]["witnessed"] == 0 and c["C3"]["obligations"] == 4
    b = cov["behavioural"]
    assert set(b) >= {"tool", "path", "state", "boundary", "model", "overall", "weakest", "suggestion"}
    assert b["tool"] == 1.0 and 0.0 < b["state"] < 1.0

    code, out, _ = cli(["coverage", str(results)], capsys)
    assert code == 0
    assert "C3 restricted-call attempts elicited" in out and "inverted" in out
    code, out, _ = cli(["coverage", str(results), "--markdown"], capsys)
    assert code == 0 and "```mermaid\nflowchart LR" in out
    code, out, _ = cli(["coverage", str(results), "--mermaid"], capsys)
    assert code == 0 and out.startswith("flowchart LR")


def test_coverage_of_a_file_without_coverage_is_exit_3(tmp_path, capsys):
    bad = tmp_path / "r.json"
    bad.write_text("{}")
    code, _, err = cli(["coverage", str(bad)], capsys)
    assert code == 3 and "schema" in err


def test_generate_without_an_lm_says_how_to_configure_one(tmp_path, capsys):
    suite = tmp_path / "agentassay.yml"
    shutil.copy(EXAMPLE / "agentassay.yml", suite)
    code, _, err = cli(["generate", str(suite)], capsys)
    assert code == 3
    assert "--lm PROVIDER/MODEL" in err and "--script FILE" in err


def test_min_coverage_gate_turns_a_pass_into_manual(tmp_path, capsys):
    """Paper Eq. 26: PASS with overall coverage below config.coverage.min is a manual decision (exit 2)."""
    suite = tmp_path / "agentassay.yml"
    base = yaml.safe_load((EXAMPLE / "agentassay.yml").read_text())
    base["agent"] = "examples.customer_service.v1:triage_agent"
    base["config"].update({"method": "fixed", "trials": 30, "threshold": 0.5})
    base["scenarios"] = [s for s in base["scenarios"] if s["name"] == "baggage"]
    for minimum, expected in ((0.0, 0), (0.99, 2)):
        base["config"]["coverage"] = {"min": minimum}
        suite.write_text(yaml.safe_dump(base))
        results = tmp_path / f"r{minimum}.json"
        code, _, err = cli(["run", str(suite), "--no-store", "-q", "-o", str(results)], capsys)
        r = load_results(results)
        assert code == expected, err
        assert r.sections["coverage"]["gate"]["min"] == minimum
        if expected == 2:
            assert r.scenarios[0].verdict.verdict.value == "pass"
            assert any("Eq. 26" in n for n in r.notes)


def test_coverage_can_be_switched_off(tmp_path, capsys):
    suite = tmp_path / "agentassay.yml"
    base = yaml.safe_load((EXAMPLE / "agentassay.yml").read_text())
    base["config"].update({"method": "fixed", "trials": 3, "coverage": False})
    base["scenarios"] = base["scenarios"][:1]
    suite.write_text(yaml.safe_dump(base))
    results = tmp_path / "r.json"
    cli(["run", str(suite), "--no-store", "-q", "-o", str(results)], capsys)
    assert load_results(results).sections.get("coverage") is None
