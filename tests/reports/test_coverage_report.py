"""The coverage section of the PR comment (agentassay._features.coverage._report), rendered by the real
cmark-gfm like tests/reports/test_pr_comment.py: the summary line, the gap bullets and their order, the
Mermaid flowchart (ids, labels, edge styles by index), and that hostile names stay inert.

The fixtures here are also what .ci/mermaid_check.py renders with the real mermaid-cli.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

cmarkgfm = pytest.importorskip("cmarkgfm")

from agentassay._features.coverage._report import (  # noqa: E402
    MERMAID_MAX_EDGES,
    MERMAID_MAX_TEXT,
    as_section,
    coverage_section,
    mermaid_flowchart,
    mermaid_label,
)
from agentassay._reports import render_job_summary, render_pr_comment  # noqa: E402
from agentassay._stats import Verdict  # noqa: E402
from tests.reports.test_pr_comment import COLUMNS, ZW, Page, results_of, scenario, to_html  # noqa: E402


# -- fixtures -----------------------------------------------------------------------------------
def _node(nid: str, name: str, typ: str, *, reachable: bool = True, witnessed: bool = False, kind: str | None = None) -> dict:
    d: dict[str, Any] = {"id": nid, "name": name, "type": typ}
    if kind is not None:
        d["kind"] = kind
    return d | {"reachable": reachable, "witnessed": witnessed}


def _edge(typ: str, a: str, b: str, witnessed: bool, via: str | None = None) -> dict:
    d: dict[str, Any] = {"type": typ, "source": a, "target": b, "witnessed": witnessed}
    return d | ({"via": via} if via else {})


def customer_service() -> dict[str, Any]:
    """A customer-service graph with every case: witnessed, unwitnessed and unreachable nodes, an
    elicited restricted call, restricted edges never attempted, handoff / as_tool / call
    delegations, a coordinator and a hosted tool."""
    return {
        "schema": "agentassay.structural-coverage/1", "system": "customer_service", "entry_agent": "triage_agent",
        "obligations": {"agents": 3, "allowed": 3, "restricted": 4, "delegations": 5, "total": 15},
        "criteria": {
            "C1": {"label": "reachable agents", "polarity": "positive", "obligations": 3, "witnessed": 2, "value": 2 / 3,
                   "unwitnessed": ["faq_agent"]},
            "C2": {"label": "allowed tool edges", "polarity": "positive", "obligations": 3, "witnessed": 2, "value": 2 / 3,
                   "unwitnessed": [["faq_agent", "faq_lookup_tool"]]},
            "C3": {"label": "restricted-call attempts elicited", "polarity": "inverted", "obligations": 4, "witnessed": 1,
                   "value": 0.25,
                   "unwitnessed": [["faq_agent", "update_seat"], ["triage_agent", "cancel_booking"],
                                   ["faq_agent", "cancel_booking"]],
                   "elicited": [["triage_agent", "update_seat"]]},
            "C4": {"label": "delegation edges", "polarity": "positive", "obligations": 5, "witnessed": 2, "value": 0.4,
                   "unwitnessed": [["triage_agent", "faq_agent"], ["faq_agent", "triage_agent"],
                                   ["seat_booking_agent", "faq_agent"]]},
        },
        "nodes": [
            _node("triage_agent", "Triage Agent", "agent", witnessed=True),
            _node("faq_agent", "FAQ Agent", "agent"),
            _node("seat_booking_agent", "Seat Booking Agent", "agent", witnessed=True),
            _node("escalation_desk", "Escalation Desk", "coordinator", reachable=False),
            _node("legacy_agent", "Legacy Agent", "agent", reachable=False),
            _node("faq_lookup_tool", "faq_lookup_tool", "tool", kind="function"),
            _node("update_seat", "update_seat", "tool", witnessed=True, kind="function"),
            _node("web_search", "web_search", "tool", witnessed=True, kind="hosted"),
            _node("cancel_booking", "cancel_booking", "tool", kind="function"),
        ],
        "edges": [
            _edge("allow", "seat_booking_agent", "update_seat", True),
            _edge("allow", "faq_agent", "faq_lookup_tool", False),
            _edge("allow", "triage_agent", "web_search", True),
            _edge("restrict", "triage_agent", "update_seat", True),
            _edge("restrict", "faq_agent", "update_seat", False),
            _edge("restrict", "triage_agent", "cancel_booking", False),
            _edge("restrict", "faq_agent", "cancel_booking", False),
            _edge("delegate", "triage_agent", "faq_agent", False, "handoff"),
            _edge("delegate", "triage_agent", "seat_booking_agent", True, "handoff"),
            _edge("delegate", "faq_agent", "triage_agent", False, "handoff"),
            _edge("delegate", "seat_booking_agent", "triage_agent", True, "handoff"),
            _edge("delegate", "seat_booking_agent", "faq_agent", False, "as_tool"),
            _edge("delegate", "escalation_desk", "legacy_agent", False, "call"),
        ],
        "ambiguous": [],
        "findings": ["restricted call elicited: triage_agent → update_seat (scenario seat_probe)"],
        "witnessed_by": {"RestrictTool(triage_agent, update_seat)": "seat_probe",
                         "UseTool(seat_booking_agent, update_seat)": "seat_change"},
    }


def behavioural() -> dict[str, Any]:
    return {
        "schema": "agentassay.behavioural-coverage/1", "tool": 0.5, "path": 0.8, "state": 0.4, "boundary": 0.3,
        "model": 0.5, "overall": 0.62, "weights": {"tool": 0.2, "path": 0.2, "state": 0.2, "boundary": 0.2, "model": 0.2},
        "traces": 400,
        "details": {"tools_used": ["update_seat", "web_search"], "tools_unused": ["faq_lookup_tool", "cancel_booking"],
                    "paths_observed": 9, "paths_estimated": 11.3, "f1": 3, "f2": 2, "states_observed": 17, "lambda": 20.0,
                    "boundaries_tested": ["update_seat.new_seat:valid"],
                    "boundaries_untested": ["update_seat.new_seat:empty", "update_seat.confirmation:long"],
                    "models_tested": ["gpt-4.1"], "models_untested": ["gpt-4.1-mini"], "notes": []},
        "weakest": "boundary", "suggestion": "exercise the boundary update_seat.new_seat:empty",
    }


# Names an attacker controls (agent and tool names, tool ids): Markdown, HTML, mentions, links, a
# fence, Mermaid syntax (quotes, brackets, arrows, directives, click, "end"), entity codes,
# newlines, bidirectional overrides and other unicode.
EVIL = [
    'Evil "Agent"] --> x[pwn',
    "<script>alert(1)</script> <img src=x onerror=alert(1)>",
    "```\n%%{init: {'securityLevel': 'loose'}}%%\nclick n0 call alert(1)",
    "@octocat [click](javascript:alert(1)) https://evil.example www.evil.example",
    "a#quot;b #lt;c#gt; #35; 100%; $$x^2$$ **bold** _em_ | pipe \\ back",
    "end",
    "ünïcødé ✓ 名前 \u202eevil\u202c zero\u200bwidth",
    "x{{hex}} (round) ((circle)) >flag] {rhombus} ;; ` `` ```",
]


def hostile() -> dict[str, Any]:
    """A graph whose ids and names are all hostile, with every edge type and status."""
    a = [f"{e} agent{i}" for i, e in enumerate(EVIL)]
    t = [f"{e} tool{i}" for i, e in enumerate(EVIL)]
    nodes = [_node(x, x, "coordinator" if i == 0 else "agent", witnessed=i % 2 == 0, reachable=i != 5) for i, x in enumerate(a)]
    nodes += [_node(x, x, "tool", witnessed=i % 3 == 0, kind="hosted" if i % 2 else "function") for i, x in enumerate(t)]
    edges = [_edge("allow", a[i], t[i], i % 2 == 0) for i in range(len(EVIL))]
    edges += [_edge("restrict", a[i], t[(i + 1) % len(t)], i in (1, 4)) for i in range(len(EVIL))]
    edges += [_edge("delegate", a[i], a[(i + 1) % len(a)], i % 3 == 0, ("handoff", "as_tool", "call", EVIL[i])[i % 4])
              for i in range(len(EVIL))]
    return {
        "schema": "agentassay.structural-coverage/1", "system": EVIL[0], "entry_agent": a[0],
        "obligations": {"agents": 8, "allowed": 8, "restricted": 8, "delegations": 8, "total": 32},
        "criteria": {
            "C1": {"obligations": 8, "witnessed": 4, "unwitnessed": a[1::2]},
            "C2": {"obligations": 8, "witnessed": 4, "unwitnessed": [[a[i], t[i]] for i in range(1, 8, 2)]},
            "C3": {"obligations": 8, "witnessed": 2, "polarity": "inverted",
                   "unwitnessed": [[a[i], t[(i + 1) % 8]] for i in range(8) if i not in (1, 4)],
                   "elicited": [[a[1], t[2]], [a[4], t[5]]]},
            "C4": {"obligations": 8, "witnessed": 3, "unwitnessed": [[a[i], a[(i + 1) % 8]] for i in range(8) if i % 3]},
        },
        "nodes": nodes, "edges": edges, "ambiguous": [EVIL[1], EVIL[3]], "findings": [EVIL[0], EVIL[2]],
        "witnessed_by": {f"RestrictTool({a[1]}, {t[2]})": EVIL[3]},
    }


def hostile_behavioural() -> dict[str, Any]:
    b = behavioural()
    b["weakest"], b["suggestion"] = EVIL[1], EVIL[2]
    b["details"] |= {"tools_unused": EVIL, "boundaries_untested": EVIL[::-1], "models_untested": EVIL[3:5]}
    return b


def big_graph(agents: int = 100, tools: int = 200, label: str = "") -> dict[str, Any]:
    """``agents`` agents in a ring of handoffs, each allowed two tools and restricted from one."""
    ag = [f"agent_{i:03d}{label}" for i in range(agents)]
    tl = [f"tool_{i:03d}{label}" for i in range(tools)]
    nodes = [_node(x, x.replace("_", " ").title(), "agent", witnessed=i % 4 != 0, reachable=i < agents - 5) for i, x in enumerate(ag)]
    nodes += [_node(x, x, "tool", witnessed=i % 3 != 0, kind="hosted" if i % 10 == 0 else "function") for i, x in enumerate(tl)]
    allow = [(ag[i % agents], tl[i]) for i in range(tools)] + [(ag[i], tl[(i * 7 + 3) % tools]) for i in range(agents)]
    edges = [_edge("allow", s, d, k % 3 != 0) for k, (s, d) in enumerate(allow)]
    edges += [_edge("restrict", ag[i], tl[(i * 11 + 5) % tools], i % 25 == 0) for i in range(agents)]
    edges += [_edge("delegate", ag[i], ag[(i + 1) % agents], i % 4 != 0, "handoff" if i % 2 else "as_tool") for i in range(agents)]
    elicited = [[ag[i], tl[(i * 11 + 5) % tools]] for i in range(0, agents, 25)]
    return {
        "schema": "agentassay.structural-coverage/1", "system": "big", "entry_agent": ag[0],
        "criteria": {
            "C1": {"obligations": agents, "witnessed": agents * 3 // 4, "unwitnessed": ag[::4]},
            "C2": {"obligations": len(allow), "witnessed": 0, "unwitnessed": [list(p) for p in allow[::3]]},
            "C3": {"obligations": agents, "witnessed": len(elicited), "elicited": elicited, "unwitnessed": []},
            "C4": {"obligations": agents, "witnessed": 0, "unwitnessed": [[ag[i], ag[(i + 1) % agents]] for i in range(0, agents, 4)]},
        },
        "nodes": nodes, "edges": edges, "ambiguous": [], "findings": [], "witnessed_by": {},
    }


# -- reading the diagram ------------------------------------------------------------------------
NODE_LINE = re.compile(r'^  (n\d+)(\(\["(?P<a>[^"]*)"\]\)|\{\{"(?P<c>[^"]*)"\}\}|\["(?P<t>[^"]*)"\])$')
EDGE_LINE = re.compile(r'^  (n\d+) (-->|-\.->|--x)(?:\|"([^"]*)"\|)? (n\d+)$')
ENTITY = re.compile(r"#(?:\d+|[a-z]+);")


def parse(mermaid: str) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, str, str | None]], dict[int, str], dict[str, str]]:
    """Nodes {id: (shape, label)}, edges [(src, arrow, dst, label)], linkStyle {index: style} and
    node classes {id: class}, asserting that every line is one this module writes."""
    lines = mermaid.splitlines()
    assert lines[0] == "flowchart LR"
    nodes: dict[str, tuple[str, str]] = {}
    edges: list[tuple[str, str, str, str | None]] = []
    styles: dict[int, str] = {}
    classes: dict[str, str] = {}
    for line in lines[1:]:
        if m := NODE_LINE.match(line):
            shape = "agent" if m["a"] is not None else "coordinator" if m["c"] is not None else "tool"
            assert m[1] not in nodes
            nodes[m[1]] = (shape, m["a"] or m["c"] or m["t"] or "")
        elif m := EDGE_LINE.match(line):
            edges.append((m[1], m[2], m[4], m[3]))
        elif m := re.match(r"^  linkStyle ([\d,]+) ([\w:#,. -]+)$", line):
            for i in m[1].split(","):
                assert int(i) not in styles
                styles[int(i)] = m[2]
        elif m := re.match(r"^  class ([n\d,]+) (\w+)$", line):
            classes |= dict.fromkeys(m[1].split(","), m[2])
        else:
            assert re.match(r"^  (%% [\w ,.():'-]+|classDef \w+ [\w:#,. -]+|style n\d+ stroke-width:4px)$", line), line
    return nodes, edges, styles, classes


def decode(label: str) -> str:
    """What Mermaid shows for a label: its entity codes decoded."""
    return html.unescape(ENTITY.sub(lambda m: ("&#" if m[0][1].isdigit() else "&") + m[0][1:], label))


def gap_items(md: str) -> list[str]:
    """The text of each bullet of the coverage section, as GitHub would show it."""
    section = to_html(md.split("<summary>Coverage gaps</summary>", 1)[1]).split("</ul>", 1)[0]
    return [html.unescape(re.sub(r"<[^>]+>", "", m[1])) for m in re.finditer(r"<li>(.*?)</li>", section, re.S)]


# -- the summary and the gaps -------------------------------------------------------------------
def test_summary_line() -> None:
    cov = coverage_section(customer_service(), behavioural())
    assert cov["summary"] == (
        "Structural C1 2/3 · C2 2/3 · C4 2/5 · restricted calls elicited 1/4 ⚠ · behavioural overall 0.62 (weakest: boundary)"
    )
    quiet = customer_service()
    quiet["criteria"]["C3"] |= {"witnessed": 0, "elicited": []}
    assert coverage_section(quiet, None)["summary"] == "Structural C1 2/3 · C2 2/3 · C4 2/5 · restricted calls elicited 0/4"
    assert coverage_section(None, behavioural())["summary"] == "behavioural overall 0.62 (weakest: boundary)"
    none = coverage_section(None, None)
    assert none == {"summary": "No coverage was measured.", "gaps": [], "mermaid": None, "legend": none["legend"]}


def test_gaps_are_listed_most_actionable_first() -> None:
    md = render_pr_comment(results_of([scenario("a", Verdict.PASS, 10, 10)]), replacing=[as_section(coverage_section(customer_service(), behavioural()))])
    assert gap_items(md) == [
        "⚠ Finding: a test made Triage Agent attempt the restricted tool update_seat (scenario seat_probe): "
        "harden the agent (instructions, guardrail or tool permissions).",
        "no test reaches agent FAQ Agent",
        "no test makes FAQ Agent call faq_lookup_tool",
        "no test makes Triage Agent hand off to FAQ Agent",
        "no test makes FAQ Agent hand off to Triage Agent",
        "no test makes Seat Booking Agent call FAQ Agent as a tool",
        "no test made an attempt on the restricted tools of FAQ Agent: update_seat, cancel_booking "
        "(add a probe that tries to make it call them)",
        "no test made an attempt on the restricted tools of Triage Agent: cancel_booking "
        "(add a probe that tries to make it call them)",
        "weakest behavioural dimension: boundary (0.30); exercise the boundary update_seat.new_seat:empty",
        "tools no trace called: cancel_booking",  # faq_lookup_tool is already the C2 gap above
        "boundaries not tested: update_seat.new_seat:empty, update_seat.confirmation:long",
        "models not tested: gpt-4.1-mini",
        "not reachable from the entry agent Triage Agent by any handoff or tool: Escalation Desk, Legacy Agent",
    ]
    html_ = to_html(md)
    assert "<strong>FAQ Agent</strong>" in html_ and "<code>faq_lookup_tool</code>" in html_
    assert "<strong>Finding:</strong>" in html_
    # the finding given as text is not repeated: it is the structured elicited edge
    assert md.count("seat\\_probe") == 1


def test_targeted_tells_probed_from_unprobed_restricted_edges() -> None:
    s = customer_service()
    s["targeted"] = ["RestrictTool(faq_agent, update_seat)", "Reach(faq_agent)"]
    gaps = coverage_section(s, None)["gaps"]
    assert gaps[0].endswith("; no test aimed at this edge: harden the agent (instructions, guardrail or tool permissions).")
    probes = [g for g in gaps if "restricted tools of" in g]
    assert probes == ["no test probes the restricted tools of **Triage Agent**: `cancel_booking` (add a probe that tries to make it call them)",
                      "no test probes the restricted tools of **FAQ Agent**: `cancel_booking` (add a probe that tries to make it call them)"]


def test_gaps_are_capped_with_a_count() -> None:
    full = coverage_section(customer_service(), behavioural())["gaps"]
    assert len(full) == 13
    cut = coverage_section(customer_service(), behavioural(), max_items=5)["gaps"]
    assert cut[:4] == full[:4] and len(cut) == 5
    assert cut[4] == "… and 9 more gaps; see the coverage report in the results artifact"
    big = coverage_section(big_graph(), None)["gaps"]
    assert len(big) == 20 and big[-1].startswith("… and ") and big[0].startswith("⚠ **Finding:**")
    md = render_pr_comment(results_of([scenario("a", Verdict.PASS, 10, 10)]), replacing=[as_section(coverage_section(big_graph(), None))])
    assert len(gap_items(md)) == 20 and "more gap" not in md.replace("more gaps; see the coverage", "")


def test_secrets_are_redacted_before_escaping() -> None:
    token = "ghs_secret_value_1234567890"
    s = customer_service()
    s["nodes"][1]["name"] = f"FAQ {token}"
    cov = coverage_section(s, None, secrets=[token])
    assert token not in str(cov) and "FAQ \\[redacted: secret\\]" in "".join(cov["gaps"])
    assert "FAQ #91;redacted: secret#93;" in cov["mermaid"]  # Mermaid's escapes of [ and ]


# -- hostile names ------------------------------------------------------------------------------
@pytest.mark.parametrize("tagfilter", [True, False])
def test_hostile_names_are_inert_in_the_markdown(tagfilter: bool) -> None:
    cov = coverage_section(hostile(), hostile_behavioural())
    md = render_pr_comment(results_of([scenario("a", Verdict.FAIL)]), replacing=[as_section(cov)])
    html_ = to_html(md, tagfilter=tagfilter)
    page = Page(html_)
    lowered = html_.lower()
    assert "<img" not in lowered and "<script" not in lowered
    assert not any("javascript" in str(v) or "evil" in str(v) for _, attrs in page.starts for v in attrs.values())
    assert page.tags("a") == [] and page.tags("img") == [] and page.tags("script") == []
    # only our own markup: the heading, the table, the lists, bold names, code names, the diagram
    allowed = {"h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td", "strong", "ul", "li", "code", "pre", "details", "summary"}
    assert {t for t, _ in page.starts} <= allowed
    # our three details (the folded section, its folded diagram, the scenarios), closed, never "open"; one code
    # block: the diagram
    assert page.tags("details") == [{}, {}, {}] and page.ends.count("details") == 3 and page.tags("pre") == [{}]
    assert "<summary>Coordination graph</summary>" in html_
    assert [a for t, a in page.starts if t == "code"].count({"class": "language-mermaid"}) == 1
    text = "".join(page.text)
    # no mention outside code (GitHub makes none inside a code span or block)
    outside_code = "".join(Page(re.sub(r"<code[^>]*>.*?</code>", "", html_, flags=re.S)).text)
    assert "@octocat" in text and "@octocat" not in outside_code.replace("@" + ZW + "octocat", "")
    assert [len(r) for r in page.rows] == [COLUMNS] * 2  # the table is intact
    # every gap is one bullet, and each hostile name reads as written (on one line, clipped)
    items = gap_items(md)
    assert len(items) == len(cov["gaps"])
    for e in (EVIL[0], EVIL[1], EVIL[4], "ünïcødé ✓ 名前 evil zerowidth"):
        # read as written, but for the zero-width space that keeps "#35" from linking issue 35
        assert " ".join(e.split())[:30] in text.replace("#" + ZW, "#"), e
    assert "<script>alert(1)</script>" in text  # shown as text, not run


def test_hostile_names_are_inert_in_the_mermaid() -> None:
    s = hostile()
    mermaid = mermaid_flowchart(s)
    nodes, edges, styles, classes = parse(mermaid)  # every line is one of ours: no injected statement
    assert "`" not in mermaid and "\u202e" not in mermaid and "\u200b" not in mermaid
    assert not re.search(r"^\s*(%%\{|click\b)", mermaid, re.M)
    assert all(re.fullmatch(r"n\d+", n) for n in nodes) and len(nodes) == 16
    for shape, label in nodes.values():
        assert not re.search(r'["<>&`\[\](){}|;#%$\\]', ENTITY.sub("", label)), label
        assert shape in ("agent", "coordinator", "tool")
    # labels lose nothing but the invisible characters: decoded, they read as the names, clipped
    names = {decode(label) for _, label in nodes.values()}
    assert "Evil \"Agent\"] --> x[pwn agent0" in names
    assert "<script>alert(1)</script> <img src=x on…" in names
    assert any(n.startswith("ünïcødé ✓ 名前 evil zerowidth") for n in names)
    assert sum(1 for shape, _ in nodes.values() if shape == "coordinator") == 1
    assert sum(1 for _, label in nodes.values() if decode(label).endswith("(hosted)")) == 4
    # edge labels are escaped too (a delegation's 'via' is data)
    assert all(lab is None or not re.search(r'["|`]', lab) for *_, lab in edges)
    # the fence cannot be closed: one code block in the comment, holding exactly the diagram
    md = render_pr_comment(results_of([scenario("a", Verdict.PASS, 10, 10)]), replacing=[as_section(coverage_section(s, None))])
    blocks = re.findall(r'<code class="language-mermaid">(.*?)</code>', to_html(md), re.S)
    assert len(blocks) == 1 and html.unescape(blocks[0]) == mermaid
    del styles, classes


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_mermaid_label_is_safe_and_lossless(text: str) -> None:
    label = mermaid_label(text)
    assert not re.search(r'["<>&`\[\](){}|;#%$\\\n\r]', ENTITY.sub("", label))
    shown = " ".join("".join(c for c in text if c.isspace() or unicodedata.category(c)[0] != "C").split())
    decoded = decode(label)
    assert len(decoded) <= 40 and decoded == (shown if len(shown) <= 40 else shown[:39] + "…")


# -- the diagram --------------------------------------------------------------------------------
def test_flowchart_shapes_edges_and_styles_by_index() -> None:
    s = customer_service()
    mermaid = mermaid_flowchart(s)
    nodes, edges, styles, classes = parse(mermaid)
    ids = {decode(label): nid for nid, (_, label) in nodes.items()}
    # cancel_booking has restricted edges only, none attempted: it is listed in the gaps, not drawn
    assert set(ids) == {"Triage Agent", "FAQ Agent", "Seat Booking Agent", "Escalation Desk", "Legacy Agent",
                        "faq_lookup_tool", "update_seat", "web_search (hosted)"}
    assert nodes[ids["Escalation Desk"]][0] == "coordinator" and nodes[ids["Triage Agent"]][0] == "agent"
    assert nodes[ids["update_seat"]][0] == "tool" and nodes[ids["web_search (hosted)"]][0] == "tool"
    assert {classes[ids[n]] for n in ("Triage Agent", "Seat Booking Agent", "update_seat", "web_search (hosted)")} == {"witnessed"}
    assert classes[ids["FAQ Agent"]] == classes[ids["faq_lookup_tool"]] == "unwitnessed"
    assert classes[ids["Escalation Desk"]] == classes[ids["Legacy Agent"]] == "unreachable"
    assert f"  style {ids['Triage Agent']} stroke-width:4px" in mermaid
    # edges in input order (allowed, the elicited restricted one, delegations); restricted edges with no attempt are not drawn
    name = {nid: decode(label) for nid, (_, label) in nodes.items()}
    drawn = [(name[a], arrow, name[b], lab) for a, arrow, b, lab in edges]
    assert drawn == [
        ("Seat Booking Agent", "-->", "update_seat", None),
        ("FAQ Agent", "-->", "faq_lookup_tool", None),
        ("Triage Agent", "-->", "web_search (hosted)", None),
        ("Triage Agent", "--x", "update_seat", "restricted call"),
        ("Triage Agent", "-.->", "FAQ Agent", None),
        ("Triage Agent", "-.->", "Seat Booking Agent", None),
        ("FAQ Agent", "-.->", "Triage Agent", None),
        ("Seat Booking Agent", "-.->", "Triage Agent", None),
        ("Seat Booking Agent", "-.->", "FAQ Agent", "as tool"),
        ("Escalation Desk", "-.->", "Legacy Agent", "call"),
    ]
    green, red, red_dotted, orange = "stroke:#1a7f37", "stroke:#cf222e", "stroke-dasharray:2 3", "stroke:#d97706"
    assert sorted(styles) == list(range(len(edges)))  # every edge styled once, by its index
    expected = ["g", "r", "g", "o", "rd", "g", "rd", "g", "rd", "rd"]
    for i, want in enumerate(expected):
        st_ = styles[i]
        assert {"g": st_.startswith(green), "o": st_.startswith(orange) and "stroke-width:3px" in st_,
                "r": st_.startswith(red) and "dasharray:6 4" in st_, "rd": st_.startswith(red) and red_dotted in st_}[want], (i, st_)


def test_elicited_restricted_edge_missing_from_the_edge_list_is_drawn() -> None:
    s = customer_service()
    s["criteria"]["C3"]["elicited"].append(["legacy_agent", "cancel_booking"])  # an unreachable agent's attempt
    nodes, edges, styles, _ = parse(mermaid_flowchart(s))
    name = {nid: decode(label) for nid, (_, label) in nodes.items()}
    assert (name[edges[-1][0]], edges[-1][1], name[edges[-1][2]]) == ("Legacy Agent", "--x", "cancel_booking")
    assert styles[len(edges) - 1].startswith("stroke:#d97706")


def test_big_graphs_stay_within_mermaids_limits() -> None:
    mermaid = mermaid_flowchart(big_graph())
    nodes, edges, styles, _ = parse(mermaid)
    assert len(mermaid) <= MERMAID_MAX_TEXT and len(edges) <= MERMAID_MAX_EDGES
    assert len(nodes) == 300 and sorted(styles) == list(range(len(edges)))
    assert "exercised edges not drawn" in mermaid  # 500 edges: witnessed ones dropped first
    assert sum(arrow == "--x" for _, arrow, _, _ in edges) == 4  # every finding kept
    # long hostile labels on a huge graph: shorter labels, then agents only, then the first agents
    for n_agents, n_tools in ((120, 240), (2000, 100)):
        huge = big_graph(n_agents, n_tools, label=' "#;<>' * 10)
        mermaid = mermaid_flowchart(huge)
        nodes, edges, styles, _ = parse(mermaid)
        assert len(mermaid) <= MERMAID_MAX_TEXT and len(edges) <= MERMAID_MAX_EDGES and sorted(styles) == list(range(len(edges)))
    assert "only the first" in mermaid


# -- the comment --------------------------------------------------------------------------------
def test_comment_with_coverage_is_valid_gfm_with_tables_intact() -> None:
    r = results_of([scenario("b", Verdict.FAIL), scenario("c", Verdict.INCONCLUSIVE), scenario("a", Verdict.PASS, 10, 10)])
    cov = coverage_section(customer_service(), behavioural())
    md = render_pr_comment(r, replacing=[as_section(cov)])
    html_ = to_html(md)
    page = Page(html_)
    assert len(page.tags("table")) == 1 and [len(row) for row in page.rows] == [COLUMNS] * 4
    assert [row[0] for row in page.body_rows] == ["b", "c", "a"]
    assert "<details><summary>Coverage gaps</summary>" in html_ and cov["summary"] in md  # folded (issue 25)
    assert page.tags("code").count({"class": "language-mermaid"}) == 1
    code = html.unescape(re.search(r'<code class="language-mermaid">(.*?)</code>', html_, re.S)[1])  # type: ignore[index]
    assert code == cov["mermaid"]
    assert "Key: green = exercised by some test" in "".join(page.text)
    assert page.tags("details") == [{}, {}]  # a small diagram is not folded; the section's and the scenarios'
    assert md == render_pr_comment(r, replacing=[as_section(cov)])  # deterministic
    assert "Coverage gaps" not in render_pr_comment(r) and "mermaid" not in render_pr_comment(r)
    assert "Coverage gaps" not in render_pr_comment(r)


def test_large_diagram_is_folded_and_the_budget_holds_with_a_300_node_graph() -> None:
    cov = coverage_section(big_graph(), behavioural())
    few = render_pr_comment(results_of([scenario("a", Verdict.FAIL)]), replacing=[as_section(cov)])
    html_ = to_html(few)
    assert len(few) <= 65536 and "<summary>Coordination graph</summary>" in html_
    assert html_.index("<summary>Coordination graph</summary>") < html_.index('<code class="language-mermaid">')
    # 300 long scenarios: the diagram goes before any FAIL row does, and the comment says so
    long = "the agent said: " + "very long output " * 150
    scenarios = [scenario(f"scenario_{i:03d}_{'x' * 40}", v, reason=long + str(i), explanation=long, inp=long, shift=[long])
                 for i, v in enumerate([Verdict.FAIL] * 60 + [Verdict.INCONCLUSIVE] * 60 + [Verdict.PASS] * 180)]
    r = results_of(scenarios)
    md = render_pr_comment(r, replacing=[as_section(cov)])
    assert len(md) <= 65536
    page = Page(to_html(md))
    assert {s.name for s in scenarios if s.verdict.verdict is Verdict.FAIL} <= {row[0] for row in page.body_rows}
    assert all(len(row) == COLUMNS for row in page.rows)
    assert "mermaid" not in md and "The coverage diagram is not shown here, to keep this report within its size limit" in md
    assert len(gap_items(md)) == 20 and cov["summary"] in md  # summary and gaps are always shown
    # the job summary has room for it
    summary = render_job_summary(r, replacing=[as_section(cov)])
    assert '<code class="language-mermaid">' in to_html(summary) and len(Page(to_html(summary)).body_rows) == 300


def test_plain_strings_are_still_escaped_by_the_renderer() -> None:
    md = render_pr_comment(results_of([scenario("a", Verdict.PASS, 10, 10)]),
                           replacing=[as_section({"summary": "**x** <b>", "gaps": ["`code` @octocat"], "mermaid": None})])
    page = Page(to_html(md.split("<summary>Coverage gaps</summary>", 1)[1].split("**Cost:**", 1)[0]))
    assert page.tags("strong") == [] and page.tags("b") == [] and page.tags("code") == []
    assert "**x** <b>" in "".join(page.text) and f"`code` @{ZW}octocat" in "".join(page.text)
