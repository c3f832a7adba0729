"""The sticky PR comment and job summary, rendered by the real cmark-gfm (GFM tables, autolinks).

Raw HTML is let through by the renderer here (CMARK_OPT_UNSAFE; with and without GFM's tag filter),
so a test that finds no ``<img`` or ``<script`` shows that our escaping made them inert, not that a
sanitizer removed them.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

cmarkgfm = pytest.importorskip("cmarkgfm")
from cmarkgfm.cmark import Options  # noqa: E402

from agentassay._features.coverage._report import as_section  # noqa: E402
from agentassay._gate import BaselineCounts, ScenarioVerdict, SuiteDecision  # noqa: E402
from agentassay._reports import (  # noqa: E402
    MARKER,
    escape_markdown,
    escape_markdown_cell,
    render_job_summary,
    render_pr_comment,
    secret_values,
)
from agentassay._results import Results, ScenarioResult, TrialOutcome, load_results  # noqa: E402
from agentassay._spec import Settings  # noqa: E402
from agentassay._stats import Verdict, deployment_decision, suite_verdict  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUITE = str(ROOT / "examples" / "customer_service" / "agentassay.yml")
ZW = "\u200b"
COLUMNS = 6

HOSTILE = (
    "<img src=x onerror=alert(1)> <script>alert(1)</script> </details> <details open> @octocat @org/team "
    "| broken | cells | `tick ![x](http://evil.example/a.png) [click](javascript:alert(1)) "
    "<https://evil.example> www.evil.example **bold** _em_ ~~del~~ $x$ &lt;b&gt; &#60;i&#62; \\| back\\slash\n"
    "# heading?\n- list?\n1. ordered?\n```\nfence?\n"
)


# -- rendering and reading HTML -----------------------------------------------------------------
def to_html(markdown: str, *, tagfilter: bool = True) -> str:
    extensions = ["table", "autolink", "strikethrough"] + (["tagfilter"] if tagfilter else [])
    return cmarkgfm.markdown_to_html_with_extensions(markdown, options=Options.CMARK_OPT_UNSAFE, extensions=extensions)


class Page(HTMLParser):
    """Start tags (with attributes), end tags, table rows as cell texts, and the whole text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.starts: list[tuple[str, dict[str, str | None]]] = []
        self.ends: list[str] = []
        self.rows: list[list[str]] = []
        self.tags_in_cells: list[str] = []
        self.text: list[str] = []
        self._cell: list[str] | None = None
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.starts.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif self._cell is not None:
            self.tags_in_cells.append(tag)

    def handle_endtag(self, tag: str) -> None:
        self.ends.append(tag)
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def tags(self, name: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.starts if t == name]

    @property
    def body_rows(self) -> list[list[str]]:
        return self.rows[1:]


# -- results ------------------------------------------------------------------------------------
def scenario(
    name: str,
    verdict: Verdict,
    passes: int = 5,
    trials: int = 10,
    *,
    base: tuple[int, int] | None = (38, 40),
    reason: str = "wrong answer",
    explanation: str | None = None,
    shift: list[str] | None = None,
    inp: str = "hello",
    notes: tuple[str, ...] = (),
    fixed_n: int | None = 184,
) -> ScenarioResult:
    outcomes = tuple(
        TrialOutcome(i, i < passes, i, failures=() if i < passes else (reason,), input_tokens=100, output_tokens=20, usd=1e-4)
        for i in range(trials)
    )
    fp = None
    if shift is not None:
        fp = {"verdict": "fail" if shift else "pass", "shift": shift, "adjusted_p": 0.001, "n_baseline": 40,
              "n_candidate": trials, "largest": None, "explanation": "fingerprints"}
    v = ScenarioVerdict(verdict, "sequential-regression", explanation or f"{verdict.value.upper()}: because.", {},
                        trials, notes=notes, data={"fingerprint": fp})
    return ScenarioResult(name, inp, outcomes, v, None if base is None else BaselineCounts(*base), fixed_n=fixed_n)


def results_of(scenarios: list[ScenarioResult], *, kind: str = "check", suite: str = "synthetic", **kw: object) -> Results:
    verdicts = [s.verdict.verdict for s in scenarios]
    overall = suite_verdict(verdicts)
    counts = {v.value: verdicts.count(v) for v in Verdict}
    decision = SuiteDecision(overall, deployment_decision(overall), counts, "holm")
    return Results(kind, {"name": suite}, {"entry": "m:agent"}, Settings(), tuple(scenarios), decision, "r1",
                   "t0", "t1", versions={"agentassay": "0.1.0"}, **kw)  # type: ignore[arg-type]


def wilson(k: int, n: int) -> tuple[float, float]:
    """An independent Wilson interval (z = 1.959964) to check the figures the comment prints."""
    z, p = 1.959963984540054, k / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


RATE = re.compile(r"(\d+)/(\d+) \((\d+(?:\.\d)?)%, (\d+(?:\.\d)?)–(\d+(?:\.\d)?)%\)")


def parse_rate(cell: str) -> tuple[int, int]:
    """``38/40 (95%, 83–99%)``: checks rate and interval against :func:`wilson`, returns the counts."""
    m = RATE.fullmatch(cell)
    assert m, cell
    k, n = int(m.group(1)), int(m.group(2))
    lo, hi = wilson(k, n)
    for shown, exact in ((m.group(3), 100 * k / n), (m.group(4), 100 * lo), (m.group(5), 100 * hi)):
        assert abs(float(shown) - exact) <= (0.05 if "." in shown else 0.5), (cell, exact)
    return k, n


# -- the real example: v1 recorded as baseline, v2 checked against it (v2 regresses) --------------
@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Results, Results]:
    pytest.importorskip("agents")
    from agentassay._integrations.cli import main

    tmp = tmp_path_factory.mktemp("example")
    base, v2, store = tmp / "base.json", tmp / "v2.json", str(tmp / "t.db")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        assert main(["run", SUITE, "--full", "-o", str(base), "-q", "--store", store]) == 0
        code = main(["check", SUITE, "--baseline", str(base), "--agent", "examples.customer_service.v2:triage_agent",
                     "-o", str(v2), "-q", "--store", store])
    assert code == 1  # v2 regresses
    return load_results(base), load_results(v2)


def test_real_check_renders_one_table_in_verdict_order(real: tuple[Results, Results]) -> None:
    _, v2 = real
    md = render_pr_comment(v2, run_url="https://github.com/o/r/actions/runs/7", baseline_info="run 6 on main")
    assert md.splitlines()[0] == MARKER
    worst = next(s for s in v2.scenarios if s.verdict.verdict is Verdict.FAIL)
    b, c = worst.baseline.passes / worst.baseline.trials, worst.passes / worst.counted_trials  # type: ignore[union-attr]
    assert md.splitlines()[1].startswith(
        f"### ❌ **BLOCK** — 1 of 4 scenarios regressed: {worst.name.replace('_', chr(92) + '_')} pass rate {100 * b:.1f}% → {100 * c:.1f}%"
    )
    assert f" · {v2.cost()['trials']:,} trials" in md.splitlines()[1]
    assert md.splitlines()[3].startswith("Suite customer-service (1 fail")
    page = Page(to_html(md))
    assert len(page.tags("table")) == 1
    assert page.rows[0] == ["scenario", "verdict", "baseline → candidate", "effect", "behaviour", "trials"]
    assert len(page.body_rows) == len(v2.scenarios) and all(len(r) == COLUMNS for r in page.rows)
    rank = {"FAIL": 0, "INCONCLUSIVE": 1, "PASS": 2}
    verdicts = [r[1].split()[0] for r in page.body_rows]
    assert verdicts == sorted(verdicts, key=rank.__getitem__) and verdicts[0] == "FAIL"
    for row in page.body_rows:
        s = v2.scenario(row[0])
        assert s is not None and s.baseline is not None and row[1].startswith(s.verdict.verdict.value.upper())
        base_cell, cand_cell = row[2].split(" → ")
        assert parse_rate(base_cell)[:2] == (s.baseline.passes, s.baseline.trials)
        assert parse_rate(cand_cell)[:2] == (s.passes, s.counted_trials)
        diff = 100 * (s.passes / s.counted_trials - s.baseline.passes / s.baseline.trials)
        assert row[3] == f"{diff:+.1f} pp".replace("-", "−")
        assert row[5].split(" (")[0] == f"{s.verdict.trials_used}" and "fixed" not in row[5]
    seat = next(r for r in page.body_rows if r[0] == "seat_change")
    fp = v2.scenario("seat_change").verdict.data["fingerprint"]  # type: ignore[union-attr]
    # the cell says what the fingerprint test decided (v2's seat_change FAILs on its pass rate after a few
    # looks, often before its fingerprint sample can show the shift)
    assert seat[4] == ("shifted: " + "; ".join(fp["shift"]) if fp["verdict"] == "fail" else "no shift")
    assert all(r[4] == "no shift" for r in page.body_rows if r[0] != "seat_change")
    # details, cost, link, version
    # the coverage gaps folded (issue 25), then the scenario details
    assert page.tags("details") == [{}, {}] and page.ends.count("details") == 2
    assert md.index("<details><summary>Coverage gaps</summary>") < md.index("<details><summary>Details</summary>")
    assert "Most common failures" in md and "did not reach agent 'Seat Booking Agent'" in "".join(page.text)
    saved = v2.savings()
    assert f"\\${v2.cost()['usd']:.4f}" in md and f"saved {saved['trials_saved']} trials" in md
    assert page.tags("a") == [{"href": "https://github.com/o/r/actions/runs/7"}]
    assert md.rstrip().endswith("AgentAssay 0.1.0") and "Baseline: run 6 on main" in md
    # the job summary is the same report without the marker
    assert render_job_summary(v2, run_url="https://github.com/o/r/actions/runs/7", baseline_info="run 6 on main") == (
        md.split("\n", 1)[1]
    )


def test_real_baseline_in_record_only_mode(real: tuple[Results, Results]) -> None:
    base, _ = real
    md = render_pr_comment(base, mode="record-only")
    assert md.splitlines()[1].startswith("### ✅ **DEPLOY** — 4 of 4 scenarios passed · ")
    for words in ("No baseline yet", "recorded only", "merged to the default branch", "actions/upload-artifact",
                  '"Recording a baseline" in the README'):
        assert words in md
    page = Page(to_html(md))
    assert page.rows[0][2] == "pass rate" and len(page.body_rows) == 4
    assert all(r[3].endswith("vs 80% threshold") for r in page.body_rows)
    assert "No baseline yet" not in render_pr_comment(base)


# -- synthetic results --------------------------------------------------------------------------
def test_rates_intervals_effect_and_trials_cells() -> None:
    md = render_pr_comment(results_of([scenario("s", Verdict.FAIL, 5, 10, base=(38, 40), shift=[])]))
    (row,) = Page(to_html(md)).body_rows
    assert row == ["s", "FAIL", "38/40 (95%, 83–99%) → 5/10 (50%, 24–76%)", "−45.0 pp", "no shift", "10"]
    shifted = scenario("moved", Verdict.FAIL, 10, 10, shift=["calls to lookup per run 0.1 → 0.9"])
    shifted = dataclasses.replace(shifted, verdict=dataclasses.replace(shifted.verdict, rate_verdict=Verdict.PASS))
    new = scenario("new", Verdict.PASS, 9, 10, base=None, fixed_n=None)
    rows = Page(to_html(render_pr_comment(results_of([shifted, new])))).body_rows
    assert rows[0][1:] == ["FAIL (behaviour)", "38/40 (95%, 83–99%) → 10/10 (100%, 72–100%)", "+5.0 pp",
                           "shifted: calls to lookup per run 0.1 → 0.9", "10"]
    assert rows[1][1:] == ["PASS", "— → 9/10 (90%, 60–98%)", "+10.0 pp vs 80% threshold", "—", "10"]


def test_fail_rows_first_then_inconclusive_then_pass() -> None:
    r = results_of([scenario("a", Verdict.PASS), scenario("b", Verdict.FAIL), scenario("c", Verdict.INCONCLUSIVE),
                    scenario("d", Verdict.FAIL), scenario("e", Verdict.PASS)])
    page = Page(to_html(render_pr_comment(r)))
    assert [row[0] for row in page.body_rows] == ["b", "d", "c", "a", "e"]
    md = render_pr_comment(r)
    assert [m.group(1) for m in re.finditer(r"^\*\*(\w)\*\* · ", md, re.M)] == ["b", "d", "c", "a", "e"]


def hostile_results() -> Results:
    bad = scenario(HOSTILE, Verdict.FAIL, reason=HOSTILE, explanation=HOSTILE, shift=[HOSTILE], inp=HOSTILE, notes=(HOSTILE,))
    ok = scenario("fine", Verdict.PASS, 10, 10, reason=HOSTILE)
    return results_of([ok, bad], suite=HOSTILE, notes=(HOSTILE,),
                      sections={"proxy": {"label": HOSTILE, "usd": 0.001, "rho": 0.9, "scenarios": {"x": {"trials": 3}},
                                          "notes": [HOSTILE]}})


@pytest.mark.parametrize("tagfilter", [True, False])
def test_untrusted_text_renders_inert(tagfilter: bool) -> None:
    md = render_pr_comment(
        hostile_results(), warnings=[HOSTILE], baseline_info=HOSTILE, run_url="javascript:alert(1)",
        replacing=[as_section({"summary": HOSTILE, "gaps": [HOSTILE, HOSTILE], "mermaid": None})],
    )
    html = to_html(md, tagfilter=tagfilter)
    page = Page(html)
    lowered = html.lower()
    assert "<img" not in lowered and "<script" not in lowered and 'href="javascript' not in lowered
    assert not any("javascript" in str(v) for _, attrs in page.starts for v in attrs.values())
    assert page.tags("img") == [] and page.tags("script") == []
    assert page.tags("a") == []  # no link at all: not the injected ones, not the bare URLs, not the bad run URL
    # ours (the folded coverage section and the scenario details), each closed once, never "open"
    assert page.tags("details") == [{}, {}] and page.ends.count("details") == 2
    assert page.tags("code") == [] and page.tags("pre") == [] and page.tags("del") == []
    assert page.tags("h1") == [] and page.tags("ol") == []
    assert page.tags_in_cells == ["strong"]  # only our own **FAIL**
    text = "".join(page.text)
    assert "@octocat" not in text and "@org/team" not in text
    assert f"@{ZW}octocat" in text and f"@{ZW}org/team" in text
    # The table keeps its shape: the newlines and pipes inside the text opened no row and no cell.
    assert [len(r) for r in page.rows] == [COLUMNS] * 3
    # Escaping loses nothing: the explanation reads exactly as the agent wrote it (on one line), with a
    # zero-width space after each '@' and each '#' before a digit (no mention, no issue reference).
    assert re.sub(r"#(?=\d)", "#" + ZW, " ".join(HOSTILE.split()).replace("@", "@" + ZW)) in text


def test_escape_helpers_never_open_a_block() -> None:
    for raw in ("# h", "- item", "+ item", "1. one", "12) twelve", "=== x", "> quote", "    code", "***", "```js"):
        html = to_html(f"- {escape_markdown(raw)}\n")
        page = Page(html)
        assert [t for t, _ in page.starts] == ["ul", "li"], (raw, html)
        assert "".join(page.text).strip() == raw.strip()
    assert escape_markdown_cell("a|b\nc", 3) == "a\\|…"  # clipped first, then escaped
    assert escape_markdown("x\u202eevil\x00") == "xevil"  # bidirectional overrides and controls dropped


def test_mermaid_and_gaps_in_the_coverage_section() -> None:
    r = results_of([scenario("a", Verdict.PASS, 10, 10)])
    diagram = "graph TD\n  A[<b>start</b>] --> B\n  click A href \"javascript:alert(1)\"\n````\n  B --> C"
    md = render_pr_comment(r, replacing=[as_section({"summary": "2 of 3 tools called", "gaps": ["tool `refund` never called"], "mermaid": diagram})])
    page = Page(to_html(md))
    assert "<details><summary>Coverage gaps</summary>" in md and [t for t, _ in page.starts].count("li") >= 1
    assert page.tags("code") == [{"class": "language-mermaid"}]  # one block; the '````' inside did not close it
    code = to_html(md).split('<code class="language-mermaid">', 1)[1].split("</code>", 1)[0]
    assert code.endswith("B --&gt; C\n") and "````" in code and "click" not in code
    assert "Coverage gaps" not in render_pr_comment(r)


def test_three_hundred_scenarios_fit_and_every_fail_is_in_the_table() -> None:
    long = "the agent said: " + "very long output " * 150
    scenarios = [
        scenario(f"scenario_{i:03d}_{'x' * 40}", v, reason=long + str(i), explanation=long, inp=long, shift=[long])
        for i, v in enumerate([Verdict.FAIL] * 60 + [Verdict.INCONCLUSIVE] * 60 + [Verdict.PASS] * 180)
    ]
    r = results_of(scenarios)
    start = time.perf_counter()
    md = render_pr_comment(r)
    elapsed = time.perf_counter() - start
    assert len(md) <= 65536 and elapsed < 10
    assert md.startswith(MARKER + "\n### ❌ **BLOCK** — 60 of 300 scenarios regressed: scenario\\_")
    assert "Suite synthetic (60 fail, 60 inconclusive, 180 pass)" in md
    page = Page(to_html(md))
    shown = [row[0] for row in page.body_rows]
    assert {s.name for s in scenarios if s.verdict.verdict is Verdict.FAIL} <= set(shown)
    assert all(len(row) == COLUMNS for row in page.rows)
    assert re.search(r"… (\d+ more scenarios|details of \d+ scenarios) omitted[;,].* see the job summary or the results artifact\.", md)
    not_shown = {m.group(2): int(m.group(1)) for m in re.finditer(r"^(\d+) (\w+) scenarios not shown", md, re.M)}
    assert "failing" not in not_shown and len(shown) + sum(not_shown.values()) == 300
    assert shown == [s.name for s in scenarios[: len(shown)]]  # what is left out is the tail: PASS first
    # the job summary has room for much more
    summary = render_job_summary(r)
    assert len(summary) > len(md) and len(Page(to_html(summary)).body_rows) == 300


def test_fail_rows_alone_too_long_are_cut_with_a_count() -> None:
    scenarios = [scenario(f"f{i:04d}" + "n" * 75, Verdict.FAIL, shift=["x" * 300]) for i in range(400)]
    md = render_pr_comment(results_of(scenarios))
    assert len(md) <= 65536 and md.startswith(MARKER + "\n### ❌ **BLOCK** — 400 of 400 scenarios regressed")
    page = Page(to_html(md))
    m = re.search(r"^(\d+) failing scenarios not shown", md, re.M)
    assert m and int(m.group(1)) + len(page.body_rows) == 400
    assert all(len(row) == COLUMNS for row in page.rows)
    tiny = render_pr_comment(results_of(scenarios), limit=600)
    assert len(tiny) <= 600 and tiny.startswith(MARKER + "\n### ❌ **BLOCK** — 400 of 400")


def test_secret_values_and_redaction() -> None:
    token, key = "ghs_16C7e42F292c6912E7710c838347Ae178B4a", "sk-test_abc<d>*ef1234"
    env = {"INPUT_GITHUB-TOKEN": token, "OPENAI_API_KEY": key, "PATH": "/usr/local/bin:/usr/bin:/bin",
           "HOME": "/home/runner", "SHORT_TOKEN": "abc", "db_password": "correct horse battery"}
    found = secret_values(env)
    assert set(found) == {token, key, "correct horse battery"}
    assert "/home/runner" not in found and env["PATH"] not in found
    r = results_of([scenario(f"leak {token}", Verdict.FAIL, reason=f"echoed {token} and {key}",
                             explanation=f"header Authorization: Bearer {token}", inp="x" * 5 + token)])
    md = render_pr_comment(r, secrets=found, run_url=f"https://example.test/run?t={token}", warnings=[f"w {key}"])
    assert token not in md and key not in md and token[:20] not in md
    text = "".join(Page(to_html(md)).text)
    assert "echoed [redacted: secret] and [redacted: secret]" in text and "leak [redacted: secret]" in text
    assert "Bearer [redacted: secret]" in text
    pem = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----"
    md = render_pr_comment(results_of([scenario("s", Verdict.FAIL, reason="printed MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")]),
                           secrets=[pem])
    assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in md


def test_marker_key_record_only_and_no_results() -> None:
    r = results_of([scenario("a", Verdict.PASS, 10, 10)])
    assert render_pr_comment(r).splitlines()[0] == MARKER == "<!-- agentassay:pr-comment -->"
    keyed = render_pr_comment(r, marker_key="suites/billing.yml")
    assert keyed.splitlines()[0] == "<!-- agentassay:pr-comment:suites/billing.yml -->"
    hostile = render_pr_comment(r, marker_key="a --> <img src=x> b")
    assert re.fullmatch(r"<!-- agentassay:pr-comment:[A-Za-z0-9._:/-]+ -->", hostile.splitlines()[0])
    assert Page(to_html(hostile, tagfilter=False)).tags("img") == []
    assert not render_job_summary(r, marker_key="k").startswith("<!--")

    rec = render_pr_comment(r, mode="record-only")
    assert "No baseline yet: this run was recorded only." in rec and "actions/upload-artifact" in rec
    none = render_pr_comment(None, mode="record-only", warnings=["baseline artifact expired — ran without it"])
    assert none.splitlines()[:2] == [MARKER, "### ❔ **NO RESULTS** · AgentAssay"]
    assert "No baseline yet." in none and "> - baseline artifact expired — ran without it" in none
    with pytest.raises(ValueError, match="record-only"):
        render_pr_comment(r, mode="recorded")


def test_cost_shows_the_saving_and_the_proxy() -> None:
    proxy = {"label": "mini", "usd": 0.0016, "rho": 0.93, "scenarios": {"a": {"trials": 30, "errors": 0}},
             "allocation": {"proxy_pays": True, "n_target": 10, "n_proxy": 30}}
    r = results_of([scenario("a", Verdict.FAIL)], sections={"proxy": proxy})
    text = "".join(Page(to_html(render_pr_comment(r))).text)
    saved = r.savings()
    assert "$0.0010 (+ $0.0016 proxy) at config.prices or the price table (10 trials, 1,200 tokens)" in text
    assert f"saved {saved['trials_saved']} trials" in text and f"about ${saved['usd_saved']:.4f}" in text
    assert "mini: 30 trials, $0.0016; ρ 0.93 from paired runs; 10 target + 30 proxy trials per scenario." in text
    unpriced = dataclasses.replace(r, sections={}, scenarios=tuple(
        dataclasses.replace(s, trials=tuple(dataclasses.replace(t, usd=None) for t in s.trials)) for s in r.scenarios))
    assert "**Cost:** not priced (10 trials, 1,200 tokens)." in render_pr_comment(unpriced)


def test_templates_refuse_unescaped_values() -> None:
    from agentassay._reports._markdown import Md, _environment

    env = _environment()
    assert env.from_string("{{ x }} {{ n }}").render(x=Md("ok"), n=3) == "ok 3"
    with pytest.raises(TypeError, match="unescaped str"):
        env.from_string("{{ x }}").render(x="<b>raw</b>")


def test_details_are_cut_from_the_end_with_a_count() -> None:
    scenarios = [scenario(f"s{i:02d}", Verdict.FAIL, reason="r" * 900, explanation="e" * 900) for i in range(40)]
    md = render_pr_comment(results_of(scenarios), limit=20000)
    assert len(md) <= 20000
    html = to_html(md)
    m = re.search(r"<p>… (\d+) more scenarios omitted; see the job summary or the results artifact\.</p>", html)
    shown = re.findall(r"^\*\*(s\d\d)\*\* · FAIL", md, re.M)
    assert m and shown == [f"s{i:02d}" for i in range(len(shown))] and len(shown) + int(m.group(1)) == 40
    assert len(Page(html).body_rows) == 40 and "<p><strong>Run</strong></p>" in html  # rows and run details kept
