"""Issue 25 (points 4 and 6): the comment's headline, plain columns, folded coverage and report link; the HTML
report's baseline beside candidate (rates, failures, a passing baseline trace beside a failing candidate trace,
tool calls per run), and what it says when the baseline's traces are not there."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentassay._features.coverage._report import coverage_section, trivial
from agentassay._reports import render_html, render_pr_comment, render_table
from agentassay._reports._files import write_report_files
from agentassay._reports._side import tool_calls
from agentassay._results import load_results
from agentassay._stats import Verdict
from agentassay._traces import Action, Cost, Step, Trace, TraceMetadata
from tests.reports.test_html_report import HOSTILE, Page, assert_inert, results_of, scenario, stored
from tests.reports.test_pr_comment import to_html

ROOT = Path(__file__).resolve().parents[2]
SUITE = "examples/customer_service/agentassay.yml"


def _with_p(s, p: float):  # type: ignore[no-untyped-def]
    return dataclasses.replace(s, verdict=dataclasses.replace(s.verdict, pvalue=p))


# -- the comment ------------------------------------------------------------------------------------------


def test_headline_has_icon_counts_worst_rates_p_trials_and_cost() -> None:
    worst = _with_p(scenario("refund_request", Verdict.FAIL, 10, 21, base=(29, 30)), 0.001)
    mild = scenario("greeting", Verdict.FAIL, 8, 10, base=(9, 10))
    r = results_of([mild, worst, scenario("a", Verdict.PASS, 10, 10), scenario("b", Verdict.PASS, 10, 10)])
    line = render_pr_comment(r).splitlines()[1]
    assert line == (
        "### ❌ **BLOCK** — 2 of 4 scenarios regressed: refund\\_request pass rate 96.7% → 47.6% (p = 0.001) and "
        "1 more · 51 trials · \\$0.0051"
    )
    ok = results_of([scenario("a", Verdict.PASS, 10, 10)])
    assert render_pr_comment(ok).splitlines()[1] == "### ✅ **DEPLOY** — 1 of 1 scenarios passed · 10 trials · \\$0.0010"
    unsure = results_of([scenario("a", Verdict.INCONCLUSIVE, 9, 10), scenario("b", Verdict.PASS, 10, 10)])
    assert render_pr_comment(unsure).splitlines()[1].startswith(
        "### ⚠️ **MANUAL** — 1 of 2 scenarios inconclusive: a pass rate 95.0% → 90.0% · 20 trials"
    )
    run = results_of([scenario("a", Verdict.FAIL, 5, 10, base=None)], kind="run")
    assert "1 of 1 scenarios failed: a pass rate 50.0% (threshold 80.0%)" in render_pr_comment(run).splitlines()[1]


def test_hostile_scenario_name_in_the_headline_is_escaped() -> None:
    r = results_of([scenario(HOSTILE, Verdict.FAIL, 1, 10)])
    head = render_pr_comment(r).splitlines()[1]
    page = Page(to_html(head))
    assert not page.tags("script") and not page.tags("img") and not page.tags("a")


def test_plain_columns_and_the_fixed_size_comparison_said_once() -> None:
    r = results_of([scenario("a", Verdict.FAIL, 5, 10)])
    md = render_pr_comment(r)
    assert "| scenario | verdict | baseline → candidate | effect | behaviour | trials |" in md
    assert "fixed-n)" not in md and "/ 184" not in md
    assert "a fixed-size test would have cost" in md
    table = render_table(r)
    header = table.splitlines()[0].split()
    assert header[-4:] == ["trials", "tokens", "cost", "(USD)"] and "used/run/fixed-n" not in table
    assert "a fixed-size test with the same alpha and beta would need 184; this sequential run used 10, 174 fewer" in table


def test_report_link_under_the_headline_and_only_http() -> None:
    r = results_of([scenario("a", Verdict.FAIL, 5, 10)])
    url = "https://github.com/o/r/actions/runs/7#artifacts"
    md = render_pr_comment(r, report_url=url)
    assert md.splitlines()[5].startswith("📄 [HTML report](https://github.com/o/r/actions/runs/7#artifacts)")
    assert {"href": url} in Page(to_html(md)).tags("a")
    bad = render_pr_comment(r, report_url="javascript:alert(1)")
    assert not Page(to_html(bad)).tags("a") and "HTML report: javascript:alert(1)" in bad
    assert "HTML report" not in render_pr_comment(r)


def test_coverage_is_folded_and_left_out_when_trivial() -> None:
    full = {
        "entry": "Agent",
        "criteria": {
            "C1": {"witnessed": 1, "obligations": 1},
            "C2": {"witnessed": 1, "obligations": 1},
            "C3": {"witnessed": 0, "obligations": 0},
            "C4": {"witnessed": 0, "obligations": 0},
        },
    }
    assert trivial(full, {"gaps": []})
    assert not trivial(full, {"gaps": ["no test reaches agent X"]})
    half = {**full, "criteria": {**full["criteria"], "C2": {"witnessed": 1, "obligations": 2}}}
    assert not trivial(half, {"gaps": []})
    elicited = {**full, "criteria": {**full["criteria"], "C3": {"witnessed": 1, "obligations": 1}}}
    assert not trivial(elicited, {"gaps": []})
    assert not trivial(None, coverage_section(None, {"overall": 0.5, "weakest": "x"}))
    r = results_of([scenario("a", Verdict.PASS, 10, 10)], sections={"coverage": {"structural": full}})
    assert "Coverage" not in render_pr_comment(r)


# -- the HTML report: baseline beside candidate -------------------------------------------------------------


def _trace(name: str, index: int, tools: list[str], output: str = "done") -> Trace:
    steps = [Step(Action.CALL_TOOL, agent="Helper", tool=t, arguments={"i": index}, output="ok") for t in tools]
    steps.append(Step(Action.RESPOND, agent="Helper", output=output))
    return Trace(tuple(steps), output, Cost(100, 20, 0.25, 1e-4), TraceMetadata(name, index, index, "m:agent@1", "m"))


def _side_by_side() -> tuple:  # type: ignore[type-arg]
    cand = results_of([scenario("refund", Verdict.FAIL, 5, 10, base=(9, 10), reason="no refund issued")])
    base = results_of([scenario("refund", Verdict.PASS, 9, 10, base=None, reason="slow answer")], kind="run")
    base = dataclasses.replace(base, run_id="run-0")
    base_traces = {"refund": [stored(_trace("refund", i, ["lookup", "issue_refund"]), "refund", i, i < 9)
                              for i in range(10)]}
    cand_traces = {"refund": [stored(_trace("refund", i, ["lookup"] if i >= 5 else ["lookup", "issue_refund"],
                                            output=HOSTILE), "refund", i, i < 5) for i in range(10)]}
    return cand, base, cand_traces, base_traces


def test_baseline_beside_candidate_with_traces_and_tool_use() -> None:
    cand, base, cand_traces, base_traces = _side_by_side()
    html = render_html(cand, traces=cand_traces, baseline=base, baseline_traces=base_traces).html
    page = assert_inert(html)
    block = html.split('<div class="compare">', 1)[1].split('id="traces"', 1)[0]
    assert "Baseline beside candidate" in html and "9/10 passed (90.0%" in block and "5/10 passed (50.0%" in block
    assert "1×: slow answer" in block and "5×: no refund issued" in block
    assert "A passing baseline trial" in block and "A failing candidate trial" in block
    assert '<details class="trial pass" open>' in block and '<details class="trial fail" open>' in block
    # tool calls per run, biggest change first: issue_refund 1.00 -> 0.50, lookup unchanged
    tools = next(t for t in page.tables if t and t[0][0] in ("issue_refund", "lookup"))
    assert tools == [["issue_refund", "1.00", "0.50", "−0.50"], ["lookup", "1.00", "1.00", "+0.00"]]
    assert '<tr class="changed"><td class="name">issue_refund</td>' in html
    assert HOSTILE not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in block  # the failing output, escaped


def test_missing_baseline_traces_or_results_are_said() -> None:
    cand, base, cand_traces, _ = _side_by_side()
    no_traces = render_html(cand, traces=cand_traces, baseline=base).html
    assert "The baseline&#39;s traces are not available" in no_traces and "No baseline traces." in no_traces
    assert "A failing candidate trial" in no_traces
    no_base = render_html(cand, traces=cand_traces).html
    assert "keeps only the baseline&#39;s pass count" in no_base and "--baseline BASELINE.json" in no_base
    assert "38/40" not in no_base and "9/10 passed (90.0%" in no_base  # the counts the candidate's file keeps
    run = results_of([scenario("a", Verdict.PASS, 10, 10, base=None)], kind="run")
    assert "Baseline beside candidate" not in render_html(run, traces={}).html


def test_tool_calls_per_run() -> None:
    t = [stored(_trace("s", i, ["a", "a", "b"] if i else []), "s", i, True) for i in range(4)]
    assert tool_calls(t) == {"a": 1.5, "b": 0.75} and tool_calls([]) == {}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline example: a baseline of v1 and a check of v2 sharing one trace store, as a local user has."""
    from agentassay._integrations.cli import main

    tmp = tmp_path_factory.mktemp("side")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        assert main(["run", SUITE, "--full", "-o", str(tmp / "base.json"), "-q", "--store", str(tmp / "t.db")]) == 0
        main(["check", SUITE, "--baseline", str(tmp / "base.json"), "--agent", "examples.customer_service.v2:triage_agent",
              "-o", str(tmp / "v2.json"), "-q", "--store", str(tmp / "t.db"), "--html", str(tmp / "check.html")])
    return tmp


def test_check_html_and_report_baseline_show_the_real_baseline(demo: Path) -> None:
    page = (demo / "check.html").read_text(encoding="utf-8")  # check --html: the baseline and the shared store
    assert page.count('<div class="compare">') == 4 and "A passing baseline trial" in page
    assert '<details class="trial pass" open>' in page and "not available" not in page
    cand = load_results(demo / "v2.json")
    out = write_report_files(cand, html=demo / "r.html", store=demo / "t.db", baseline=load_results(demo / "base.json"),
                             baseline_store=demo / "missing.db")
    assert "The baseline&#39;s traces are not available" in out[0].read_text(encoding="utf-8")

