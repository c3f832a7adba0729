"""The HTML report: one self-contained page, no script, nothing fetched, every untrusted string inert.

Pages are read back with the standard library's HTMLParser (the way a browser tokenises them), so a
test that finds no ``<script>`` or ``onerror=`` shows that the text stayed text. The real browser
check (Chromium, file:// URLs, clicks, requests) is .ci/html_check.py.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import math
import re
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

import pytest

from agentassay._features.coverage._report import coverage_svg, html_section
from agentassay._gate import BaselineCounts, ScenarioVerdict, SuiteDecision
from agentassay._plugins import Plugins, hookimpl
from agentassay._reports import HtmlReport, Section, load_traces, render_html
from agentassay._results import Results, ScenarioResult, TrialOutcome, load_results
from agentassay._spec import Settings
from agentassay._stats import SPRT, Verdict, deployment_decision, suite_verdict
from agentassay._traces import Action, Cost, Step, StoredTrial, Trace, TraceMetadata, TraceStore

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(1)><a href="javascript:alert(1)">x</a>'
SECRET = "sk-test-4f9a8b7c6d5e4f3a2b1c"


# -- reading a page -------------------------------------------------------------------------------
class Page(HTMLParser):
    """Start tags with their attributes (in order), table rows of each table, the text, the style."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.starts: list[tuple[str, dict[str, str | None]]] = []
        self.tables: list[list[list[str]]] = []
        self.text: list[str] = []
        self.styles: list[str] = []
        self._cell: list[str] | None = None
        self._in_style = False
        self._in_tbody = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.starts.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tbody":
            self._in_tbody = True
        elif tag == "tr" and self._in_tbody:
            self.tables[-1].append([])
        elif tag == "td" and self._in_tbody:
            self._cell = []
        elif tag == "style":
            self._in_style = True
            self.styles.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "tbody":
            self._in_tbody = False
        elif tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles[-1] += data
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.starts if t == name]

    def attributes(self) -> list[tuple[str, str, str]]:
        return [(t, k, v or "") for t, a in self.starts for k, v in a.items()]

    @property
    def all_text(self) -> str:
        return "".join(self.text)


def assert_inert(html: str, *, href: str | None = None) -> Page:
    """No script, no event handler, no style attribute, no javascript: URL, no link but the sidecar's."""
    page = Page(html)
    assert not page.tags("script") and "<script" not in html.lower()
    for tag in ("iframe", "object", "embed", "img", "image", "foreignobject", "form", "base", "link", "use"):
        assert not page.tags(tag), tag
    for tag, name, value in page.attributes():
        assert not name.lower().startswith("on"), (tag, name)
        assert name.lower() != "style", tag  # the CSP admits the hashed <style> block only
        assert "javascript:" not in value.lower(), (tag, name)
        if name.lower() in ("href", "src", "xlink:href", "action", "formaction"):
            assert tag == "a" and value == href, (tag, name, value)
    return page


def csp_of(page: Page) -> str:
    (meta,) = [m for m in page.tags("meta") if (m.get("http-equiv") or "").lower() == "content-security-policy"]
    return meta["content"] or ""


# -- results ----------------------------------------------------------------------------------------
def scenario(
    name: str,
    verdict: Verdict,
    passes: int = 5,
    trials: int = 10,
    *,
    base: tuple[int, int] | None = (38, 40),
    reason: str = "wrong answer",
    test: str = "sequential-regression",
    evidence: dict | None = None,
    fingerprint: dict | None = None,
    inp: str = "hello",
    notes: tuple[str, ...] = (),
    fixed_n: int | None = 184,
) -> ScenarioResult:
    outcomes = tuple(
        TrialOutcome(i, i < passes, i, failures=() if i < passes else (reason,), input_tokens=100, output_tokens=20,
                     latency_s=0.25, usd=1e-4)
        for i in range(trials)
    )
    v = ScenarioVerdict(verdict, test, f"{verdict.value.upper()}: because.", evidence or {}, trials, notes=notes,
                        data={"fingerprint": fingerprint})
    return ScenarioResult(name, inp, outcomes, v, None if base is None else BaselineCounts(*base), fixed_n=fixed_n)


def results_of(scenarios: Sequence[ScenarioResult], *, kind: str = "check", suite: str = "synthetic", **kw: object) -> Results:
    verdicts = [s.verdict.verdict for s in scenarios]
    overall = suite_verdict(verdicts)
    counts = {v.value: verdicts.count(v) for v in Verdict}
    decision = SuiteDecision(overall, deployment_decision(overall), counts, "holm")
    return Results(kind, {"name": suite}, {"entry": "m:agent", "version": "m:agent@1"}, Settings(), tuple(scenarios),
                   decision, "run-1", "t0", "t1", versions={"agentassay": "0.1.0"}, **kw)  # type: ignore[arg-type]


def trace_of(scenario_name: str, index: int, *, output: str = "done", args: object = None, error: str | None = None,
             steps: int = 3) -> Trace:
    body = [Step(Action.HANDOFF, agent="Triage", target="Helper")]
    body += [Step(Action.CALL_TOOL, agent="Helper", tool="lookup", arguments=args or {"q": f"question {i}"},
                  output=f"answer {i}") for i in range(max(steps - 2, 0))]
    body.append(Step(Action.RESPOND, agent="Helper", output=output, error=error))
    return Trace(tuple(body), output, Cost(100, 20, 0.25, 1e-4), TraceMetadata(scenario_name, index, index, "m:agent@1", "m"))


def stored(trace: Trace, scenario_name: str, index: int, passed: bool | None, version: str = "m:agent@1") -> StoredTrial:
    return StoredTrial(index + 1, "run-1", "synthetic", scenario_name, version, index, "hello", passed, trace.error, "t",
                       trace)


def traces_for(results: Results, **kw: object) -> dict[str, list[StoredTrial]]:
    return {
        s.name: [stored(trace_of(s.name, t.index, **kw), s.name, t.index, t.passed) for t in s.trials]  # type: ignore[arg-type]
        for s in results.scenarios
    }


def sprt_scenario(name: str, outcomes: Sequence[bool]) -> ScenarioResult:
    """A threshold scenario decided by a real SPRT over ``outcomes`` (its evidence as the run writes it)."""
    test = SPRT(threshold=0.8, delta=0.1, alpha=0.05, beta=0.1, max_trials=len(outcomes))
    for o in outcomes:
        if test.update(o) is not None:
            break
    r = test.result()
    trials = tuple(TrialOutcome(i, o, i, failures=() if o else ("nope",)) for i, o in enumerate(outcomes))
    v = ScenarioVerdict(r.verdict, "sprt", r.explain(), r.to_dict(), r.trials)
    return ScenarioResult(name, "hi", trials, v, None, fixed_n=120)


WILSON_Z = 1.959963984540054


def wilson(k: int, n: int) -> tuple[float, float]:
    """An independent Wilson interval to check the figures the page prints."""
    p = k / n
    centre = (p + WILSON_Z**2 / (2 * n)) / (1 + WILSON_Z**2 / n)
    half = WILSON_Z * math.sqrt(p * (1 - p) / n + WILSON_Z**2 / (4 * n * n)) / (1 + WILSON_Z**2 / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def mixed() -> Results:
    fp = {"verdict": "fail", "alpha": 0.05, "adjusted_p": 0.001, "n_baseline": 40, "n_candidate": 10,
          "shift": ["calls to lookup per run 0.1 → 0.9"], "largest": None, "explanation": "moved",
          "features": [{"name": "calls:lookup", "baseline": 0.1, "candidate": 0.9, "adjusted_p": 0.001},
                       {"name": "steps", "baseline": 3.0, "candidate": 3.1, "adjusted_p": 0.8}]}
    return results_of([
        scenario("refund", Verdict.FAIL, 3, 10, fingerprint=fp),
        scenario("greet", Verdict.PASS, 10, 10),
        scenario("lookup", Verdict.INCONCLUSIVE, 8, 10),
    ])


# -- the page's policy ------------------------------------------------------------------------------
def test_csp_allows_only_the_hashed_style_block() -> None:
    r = mixed()
    html = render_html(r, traces=traces_for(r)).html
    page = assert_inert(html)
    assert "javascript:" not in html.lower() and " on" not in "".join(f" {k}" for _, k, _ in page.attributes())
    csp = csp_of(page)
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives["default-src"] == ["'none'"]
    assert "script-src" not in directives and "unsafe-inline" not in csp and "connect-src" not in directives
    assert set(directives.get("img-src", ["data:"])) <= {"data:"}
    (style,) = page.styles
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode()
    assert directives["style-src"] == [f"'sha256-{digest}'"]
    # the policy is the first thing in <head> after the charset, before the style it governs
    tags = [t for t, _ in page.starts]
    assert tags.index("meta") < tags.index("style")


def test_decision_comes_first_then_one_row_per_scenario() -> None:
    r = mixed()
    html = render_html(r).html
    page = assert_inert(html)
    assert page.tags("header")[0]["class"] == "decision block"
    assert html.index('class="word">BLOCK<') < html.index("<table")
    assert re.search(r"<title>BLOCK · synthetic · 1 fail, 1 inconclusive, 1 pass", html)
    rows = page.tables[0]
    assert len(rows) == len(r.scenarios) == len(page.tags("tr")) - 1 - 0  # one header row in the first table
    assert [row[0] for row in rows] == ["refund", "lookup", "greet"]  # failing first, as in the PR comment
    refund = rows[0]
    assert refund[1] == "FAIL"
    lo, hi = wilson(38, 40)
    assert refund[2] == f"38/40 (95%)95% CI {100 * lo:.0f}–{100 * hi:.0f}%"
    lo, hi = wilson(3, 10)
    assert refund[3] == f"3/10 (30%)95% CI {100 * lo:.0f}–{100 * hi:.0f}%"
    assert refund[4] == "−65.0 pp" and refund[5] == "10"
    assert refund[6] == "shifted: calls to lookup per run 0.1 → 0.9"
    assert rows[1][6] == "—"


def test_run_results_show_the_threshold() -> None:
    r = results_of([scenario("a", Verdict.PASS, 9, 10, base=None), scenario("b", Verdict.FAIL, 2, 10, base=None)],
                   kind="run")
    html = render_html(r).html
    page = assert_inert(html)
    assert [len(row) for row in page.tables[0]] == [6, 6]  # no baseline column
    assert page.tables[0][1][3] == "+10.0 pp vs 80% threshold"
    assert "threshold" in "".join(re.findall(r"<svg.*?</svg>", html, re.S)[0])


def test_notes_warnings_and_an_interrupted_run_are_shown() -> None:
    r = results_of([scenario("a", Verdict.INCONCLUSIVE, 5, 10)], interrupted=True,
                   notes=tuple(f"note {i}" for i in range(25)))
    page = assert_inert(render_html(r).html)
    text = page.all_text
    assert "The run was interrupted: the verdicts cover the trials that finished." in text
    assert "note 18" in text and "note 19" not in text and "… 6 more notes" in text  # the interrupted line counts
    assert "MANUAL" in text and "No traces were given for this report" in text
    empty = assert_inert(render_html(dataclasses.replace(r, scenarios=())).html)
    assert "No scenario in this results file." in empty.all_text and not empty.tags("svg")


def test_charts_are_inline_svg_and_well_formed() -> None:
    fail = sprt_scenario("threshold_case", [True, False, False, True, False, False, False, False, False, False])
    good = sprt_scenario("fine", [True] * 40)
    r = results_of([fail, good, *mixed().scenarios])
    html = render_html(r).html
    page = assert_inert(html)
    svgs = re.findall(r"<svg\b.*?</svg>", html, re.S)
    # pass rates; 2 SPRT paths; refund's count path and fingerprint; lookup's and greet's count paths
    assert len(svgs) == len(page.tags("svg")) == 1 + 2 + 2 + 2
    for svg in svgs:
        ElementTree.fromstring(svg)  # well-formed XML
        assert 'style="' not in svg and " id=" not in svg
    assert html.count("log-likelihood ratio") >= 2 and "FAIL boundary 2.89" in html and "PASS boundary −2.25" in html
    assert "are not stored in the results file, so they are not drawn" in html
    assert "calls:lookup" in html and "0.1 → 0.9 · adj. p 0.001" in html


def test_sprt_path_is_rebuilt_from_the_outcomes() -> None:
    outcomes = [True, True, False, True, False, False, False, False, False, False, False, False]
    s = sprt_scenario("walk", outcomes)
    svg = re.findall(r"<svg\b.*?</svg>", render_html(results_of([s], kind="run")).html, re.S)[1]
    ev = s.verdict.evidence
    n = ev["trials"]
    poly = ElementTree.fromstring(svg).find(".//{http://www.w3.org/2000/svg}polyline")
    assert poly is not None and len(poly.attrib["points"].split()) == n + 1  # the start and one point per trial
    # a path that does not reach the recorded statistic is not drawn as one: pass counts instead
    wrong = dataclasses.replace(s.verdict, evidence={**ev, "log_likelihood_ratio": ev["log_likelihood_ratio"] + 1})
    html = render_html(results_of([dataclasses.replace(s, verdict=wrong)], kind="run")).html
    assert "boundaries could not be rebuilt" in html and "FAIL boundary" not in html


# -- untrusted text ------------------------------------------------------------------------------------
def hostile_results() -> Results:
    fp = {"verdict": "fail", "alpha": 0.05, "adjusted_p": 0.001, "n_baseline": 40, "n_candidate": 10,
          "shift": [HOSTILE], "largest": HOSTILE, "explanation": HOSTILE,
          "features": [{"name": HOSTILE, "baseline": 0.1, "candidate": 0.9, "adjusted_p": 0.001}]}
    bad = scenario(HOSTILE, Verdict.FAIL, 2, 6, reason=HOSTILE, inp=HOSTILE, notes=(HOSTILE,), fingerprint=fp)
    return results_of([bad, scenario("fine", Verdict.PASS, 6, 6)], suite=HOSTILE, notes=(HOSTILE,),
                      sections={"proxy": {"label": HOSTILE, "usd": 0.001, "rho": 0.9, "scenarios": {"x": {"trials": 3}},
                                          "notes": [HOSTILE]}})


def test_hostile_text_is_shown_as_text_only() -> None:
    r = hostile_results()
    traces = traces_for(r, output=HOSTILE, args={"q": HOSTILE, HOSTILE: 1}, error=HOSTILE)
    html = render_html(r, traces=traces).html
    page = assert_inert(html)
    assert not page.tags("a") and not page.tags("img")
    text = page.all_text
    assert text.count(HOSTILE) >= 8  # name, suite, input, reason, output, argument, error, notes …
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8
    # the proxy's lines (plain strings from its html branch) are escaped too, next to the cost
    assert f"Proxy {HOSTILE}: 3 trials, $0.0010; ρ 0.90 from paired runs." in text
    assert f"Proxy note: {HOSTILE}" in text


def test_invisible_characters_are_dropped() -> None:
    r = results_of([scenario("evil\u202ename\u200b\x07", Verdict.FAIL, reason="a\u2066b")])
    page = assert_inert(render_html(r).html)
    assert "evilname" in page.all_text and "\u202e" not in page.all_text and "\x07" not in page.all_text


def test_secrets_are_redacted_everywhere() -> None:
    r = results_of([scenario(f"s {SECRET}", Verdict.FAIL, reason=f"token {SECRET} leaked", inp=SECRET,
                             notes=(SECRET,))], notes=(f"note {SECRET}",))
    traces = traces_for(r, output=f"the key is {SECRET}", args={"key": SECRET})
    report = render_html(r, traces=traces, secrets=[SECRET])
    assert SECRET not in report.html and "[redacted: secret]" in report.html
    # and in the sidecar, when there is one
    report = render_html(r, traces=traces, secrets=[SECRET], inline_limit=10)
    assert report.sidecar is not None and SECRET not in report.sidecar and "[redacted: secret]" in report.sidecar


# -- traces -----------------------------------------------------------------------------------------
def test_trace_viewer_failing_trials_first_with_steps_and_output() -> None:
    r = results_of([scenario("s", Verdict.FAIL, 2, 5, reason="did not call tool 'lookup'")])
    traces = traces_for(r, output="x" * 5000, steps=60)
    report = render_html(r, traces=traces)
    assert report.sidecar is None
    page = assert_inert(report.html)
    summaries = re.findall(r'<details class="trial (\w+)"><summary>.*?trial (\d+) ', report.html)
    assert summaries == [("fail", "2"), ("fail", "3"), ("fail", "4"), ("pass", "0"), ("pass", "1")]
    assert "did not call tool &#39;lookup&#39;" in report.html
    assert "1,000 more characters not shown" in page.all_text  # a 5,000-character output cut at 4,000
    assert "20 more steps not shown" in page.all_text  # 60 steps, 40 shown
    assert '"q": "question 0"' in page.all_text  # tool arguments as JSON
    assert "tool call" in page.all_text and "Triage → Helper" in page.all_text


def test_large_trace_sets_go_to_a_sidecar_page() -> None:
    big = [scenario(f"scenario_{i}", Verdict.FAIL if i == 0 else Verdict.PASS, 290, 300) for i in range(10)]
    r = results_of(big)
    traces = traces_for(r, output="long output " * 400)  # 3,000 trials with 4,800-character outputs
    report = render_html(r, traces=traces)
    assert isinstance(report, HtmlReport) and report.sidecar is not None
    page = assert_inert(report.html, href="traces.html")
    (link,) = page.tags("a")
    assert link == {"class": "sidecar", "href": "traces.html"}
    # the viewer is not inline: only the failing trial of each scenario shown beside its baseline (issue 25)
    assert len(report.html) < 200_000 and report.html.count('<details class="trial') <= len(r.scenarios)
    assert [row[0] for row in page.tables[1]] == [f"scenario_{i}" for i in range(10)]  # the summary
    assert page.tables[1][0][2:5] == ["300", "10", "0"]
    side = assert_inert(report.sidecar)
    assert side.all_text.count("trial ") >= 3000 and len(side.tags("details")) == 3000 + 10
    assert "default-src 'none'" in csp_of(side)
    small = mixed()
    custom = render_html(small, traces=traces_for(small), sidecar_href="run-7/traces.html", inline_limit=0)
    assert custom.sidecar is not None
    assert_inert(custom.html, href="run-7/traces.html")


@pytest.mark.parametrize("href", ["javascript:alert(1)", "https://evil.example/t.html", "/etc/passwd", "../up.html",
                                  "a/../../b.html", "t.html?x=1", "t.html#x", "", "//evil.example", "c:\\x.html",
                                  "a\nb.html", "data:text/html,x"])
def test_sidecar_href_must_be_a_relative_path(href: str) -> None:
    with pytest.raises(ValueError, match="sidecar_href"):
        render_html(mixed(), sidecar_href=href)


def test_sidecar_href_is_percent_encoded() -> None:
    r = mixed()
    report = render_html(r, traces=traces_for(r), sidecar_href="my report.traces.html", inline_limit=0)
    assert_inert(report.html, href="my%20report.traces.html")


def test_load_traces_keeps_the_target_agents_trials_of_this_run(tmp_path: Path) -> None:
    r = results_of([scenario("a", Verdict.PASS, 3, 3), scenario("b", Verdict.PASS, 2, 2)])
    assert load_traces(tmp_path / "missing.db", r) == {}
    db = tmp_path / "t.db"
    with TraceStore(db) as store:
        for name, n in (("b", 2), ("a", 3)):
            for i in reversed(range(n)):
                store.add(trace_of(name, i), run_id="run-1", suite="synthetic", scenario=name, agent_version="m:agent@1",
                          trial=i, passed=True)
                store.add(trace_of(name, i), run_id="run-1", suite="synthetic", scenario=name,
                          agent_version="m:agent@1+proxy:openai/gpt-4.1-nano", trial=i, passed=True)
        store.add(trace_of("a", 0), run_id="other-run", suite="synthetic", scenario="a", agent_version="m:agent@1",
                  trial=0, passed=True)
    got = load_traces(db, r)
    assert sorted(got) == ["a", "b"]
    assert [t.trial for t in got["a"]] == [0, 1, 2] and [t.trial for t in got["b"]] == [0, 1]
    assert {t.agent_version for ts in got.values() for t in ts} == {"m:agent@1"}
    assert {t.run_id for ts in got.values() for t in ts} == {"run-1"}
    assert load_traces(db, dataclasses.replace(r, run_id="nothing")) == {}


# -- sections ---------------------------------------------------------------------------------------
class _ThirdParty:
    @hookimpl
    def agentassay_report_sections(self, results: Results, report: object) -> list[Section]:
        picture = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="5" height="5"/></svg>'
        return [
            Section(key="third", title=f"Third {HOSTILE}", paragraphs=("plain <b>text</b>",),
                    items=tuple(f"item {i}" for i in range(25)), svg=picture),
            Section(key="money", place="cost", paragraphs=("spent on the judge",), extra_usd=(("judge", 0.5),)),
            Section(key="evil", title="evil picture", svg='<svg onload="alert(1)"><a href="javascript:x">y</a></svg>'),
        ]


def test_plugin_sections_are_rendered_generically() -> None:
    report = render_html(mixed(), plugins=Plugins([_ThirdParty()], entry_points=False))
    page = assert_inert(report.html)
    text = page.all_text
    assert "Third <script>alert(1)</script><img src=x onerror=alert(1)>" in text  # a title, clipped to 80
    assert "plain <b>text</b>" in text and not page.tags("b")
    assert "item 19" in text and "item 20" not in text and "… 5 more items" in text
    assert "(+ $0.5000 judge)" in text and "spent on the judge" in text
    assert text.index("spent on the judge") < text.index("Third ")  # a cost section stands with the cost
    assert "the picture of the report section 'evil' was left out: it is not a plain inline SVG (attribute onload, <a>" in text
    assert len(page.tags("svg")) == 1 + 1 + 4  # the plugin's, the pass rates, 3 sequential paths and 1 fingerprint


def test_coverage_section_in_html_is_escaped_and_drawn() -> None:
    from tests.reports.test_coverage_report import behavioural, customer_service, hostile, hostile_behavioural

    for structural, behaviour in ((customer_service(), behavioural()), (hostile(), hostile_behavioural())):
        svg = coverage_svg(structural)
        tree = ElementTree.fromstring(svg)
        tags = {el.tag.rsplit("}", 1)[-1] for el in tree.iter()}
        assert tags <= {"svg", "g", "title", "path", "polygon", "rect", "text"}
        assert not any(k.startswith("on") or "href" in k for el in tree.iter() for k in el.attrib)
        section = html_section(structural, behaviour, secrets=["Seat Booking"])
        r = dataclasses.replace(mixed(), sections={"coverage": {"structural": structural, "behavioural": behaviour}})
        page = assert_inert(render_html(r).html)
        assert "Coverage" in page.all_text and section.items and section.svg
        assert len(page.tags("svg")) == 1 + 1 + 3 + 1
    tree = ElementTree.fromstring(coverage_svg(hostile()))
    labels = [el.text for el in tree.iter() if el.tag.endswith("}text")]
    for shown in ("<script>alert(1)</script…", 'Evil "Agent"] --> x[pwn …', "ünïcødé ✓ 名前 evil zerowi…", "end agent5"):
        assert shown in labels  # clipped, the bidirectional override and zero-width space dropped
    tooltips = [el.text or "" for el in tree.iter() if el.tag.endswith("}title")]
    assert any(t.startswith("<script>alert(1)</script> <img src=x onerror=alert(1)> agent1 (agent") for t in tooltips)
    cs = customer_service()
    text = " ".join(el.text or "" for el in ElementTree.fromstring(coverage_svg(cs, secrets=["Seat Booking"])).iter())
    assert "Seat Booking" not in text and "[redacted: secret] Agent" in text and "Triage Agent" in text
    assert "✗ restricted call" in text and "web_search (hosted)" in text


# -- the real demo -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``agentassay demo`` records: v1's baseline run to the cap, v2 checked against it, one store."""
    pytest.importorskip("agents")
    from agentassay._runner import run_suite
    from agentassay._spec import load_suite

    work = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        mp.syspath_prepend(str(ROOT))
        suite = load_suite(ROOT / "examples" / "customer_service" / "agentassay.yml")
        with TraceStore(work / "traces.db") as store:
            run_suite(suite, store=store, full=True, progress=False).results.save(work / "baseline.json")
            cand = run_suite(suite, entry="examples.customer_service.v2:triage_agent", store=store, progress=False,
                             baseline=load_results(work / "baseline.json"))
            cand.results.save(work / "candidate.json")
    return work


def test_demo_report_is_one_page_under_a_megabyte(demo: Path) -> None:
    cand = load_results(demo / "candidate.json")
    traces = load_traces(demo / "traces.db", cand)
    assert sum(len(t) for t in traces.values()) == sum(len(s.trials) for s in cand.scenarios)
    report = render_html(cand, traces=traces)
    assert report.sidecar is None and len(report.html.encode("utf-8")) < 1_000_000
    assert "<script" not in report.html.lower() and "javascript:" not in report.html.lower()
    page = assert_inert(report.html)
    assert "BLOCK" in page.all_text and len(page.tables[0]) == len(cand.scenarios)
    assert len(page.tags("details")) > sum(len(t) for t in traces.values())  # every trial is in the viewer
    assert "Coverage" in page.all_text and "Triage Agent" in page.all_text  # the coverage plugin's section and graph
    base = load_results(demo / "baseline.json")
    whole = render_html(base, traces=load_traces(demo / "traces.db", base))
    html = whole.html
    # the baseline records 1.5 x the cap (1,200 traced trials): its viewer goes to the sidecar page
    assert_inert(html, href="traces.html" if whole.sidecar is not None else None)
    assert "DEPLOY" in html and html.count(">FAIL boundary ") == len(base.scenarios)  # an SPRT path each
