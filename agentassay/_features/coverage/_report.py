"""The coverage section of the PR comment: structural (C1–C4) and behavioural coverage as one summary
line, gap bullets (most actionable first) and a Mermaid flowchart of the coordination graph.

Input is the ``to_dict()`` form of ``agentassay.structural-coverage/1`` and of
``agentassay.behavioural-coverage/1``. Every agent, tool, boundary and model name in it comes from
user code or an agent's run, so all of it is untrusted: in Markdown it is escaped with
:func:`escape_markdown` (or shown as a code span that nothing inside can close), in Mermaid every
character that means something to Mermaid, HTML or Markdown becomes a Mermaid entity code
(``#quot;``, ``#lt;``, ``#35;`` …) inside a quoted label, and node ids are ours (``n0``, ``n1`` …).

C3 has inverted polarity: a witnessed restricted edge means a test made an agent *attempt* a
restricted call. That is a finding (something to harden), so it is listed first and drawn in
orange; restricted edges with no attempt are only listed, not drawn, to keep the chart readable.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..._reports._markdown import Md, _redactor, escape_markdown
from ..._reports._sections import Diagram, Section
from ..._reports._summary import clip
from ..._reports._summary import invisible_dropped as _visible
from ..._reports._svg import FONT, MONO, MUTED, Svg, arrowhead, num

if TYPE_CHECKING:
    from ..._reports._svg import Svg

__all__ = ["as_section", "coverage_section", "coverage_svg", "html_section", "mermaid_flowchart"]

STRUCTURAL_SCHEMA = "agentassay.structural-coverage/1"
BEHAVIOURAL_SCHEMA = "agentassay.behavioural-coverage/1"

_W_NAME = 60  # characters of a name in a gap bullet
_W_TEXT = 240  # characters of free text (a suggestion, a finding) in a gap bullet
_W_LABEL, _W_LABEL_SHORT = 40, 16  # characters of a Mermaid node label (the short one for big graphs)
_MAX_NAMES = 8  # names listed in one grouped bullet before "and N more"

# Mermaid's own limits (defaults that GitHub keeps): a larger diagram shows an error box instead.
MERMAID_MAX_TEXT = 50_000
MERMAID_MAX_EDGES = 500
_MAX_TEXT, _MAX_EDGES = 45_000, 400  # what this module stays within, with room to spare

LEGEND = (
    "Key: green = exercised by some test; red dashed = never exercised; grey = not reachable from the "
    "entry agent (the one with the thick border); orange ✗ = a restricted call that a test made an agent attempt. "
    "Dotted arrows are delegations, solid arrows allowed tool calls."
)

# Inside a quoted Mermaid label only '"' ends the string, but labels end up as HTML, a backtick
# after the quote would make a Markdown string and "$$" opens KaTeX math, so every character with a
# meaning to Mermaid's syntax, HTML, its Markdown strings or math becomes an entity code: Mermaid
# turns "#name;" / "#123;" into "&name;" / "&#123;" (so '#' and ';' themselves are coded too).
_MERMAID_ESCAPES: dict[int, str | None] = {ord(c): f"#{ord(c)};" for c in "#;`[](){}|%\\$"}
_MERMAID_ESCAPES |= {ord('"'): "#quot;", ord("<"): "#lt;", ord(">"): "#gt;", ord("&"): "#amp;"}

_NODE_CLASSES = {
    "witnessed": "fill:#dafbe1,stroke:#1a7f37,color:#1f2328",
    "unwitnessed": "fill:#fff5f5,stroke:#cf222e,stroke-dasharray:5 4,color:#1f2328",
    "unreachable": "fill:#f6f8fa,stroke:#8c959f,stroke-dasharray:2 2,color:#57606a",
}
_LINK_STYLES = {  # edge status -> linkStyle
    "witnessed": "stroke:#1a7f37,stroke-width:2px",
    "unwitnessed": "stroke:#cf222e,stroke-width:1.5px,stroke-dasharray:6 4",
    "unwitnessed-delegation": "stroke:#cf222e,stroke-width:1.5px,stroke-dasharray:2 3",
    "elicited": "stroke:#d97706,stroke-width:3px",
}
_VIA = {"as_tool": "as tool", "call": "call", "declared": "declared"}  # handoff edges carry no label


# -- escaping ----------------------------------------------------------------------------------


def _plain(text: Any, width: int, redact: Callable[[str], str]) -> str:
    """Redacted, invisible characters dropped, on one line, clipped: still unescaped."""
    return clip(_visible(redact(str(text))), width)


def _md(text: Any, width: int, redact: Callable[[str], str]) -> str:
    return escape_markdown(_plain(text, width, redact))


def _code(text: Any, width: int, redact: Callable[[str], str]) -> str:
    """A code span: shown literally (no HTML, link, mention or emphasis inside one), with a fence
    longer than any backtick run inside, so nothing inside can close it."""
    body = _plain(text, width, redact) or " "
    fence = "`" * (1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    pad = " " if body[0] == "`" or body[-1] == "`" or (body[0] == body[-1] == " " and body.strip()) else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def mermaid_label(text: Any, width: int = _W_LABEL, redact: Callable[[str], str] = str) -> str:
    """Untrusted text as the inside of a quoted Mermaid label: one line, clipped, then entity-coded
    (clipped first, so that a cut never splits an entity code)."""
    return _plain(text, width, redact).translate(_MERMAID_ESCAPES)


# -- reading the inputs --------------------------------------------------------------------------


def _int(x: Any) -> int:
    try:
        return int(x)
    except (TypeError, ValueError):
        return 0


def _float(x: Any) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _pair(x: Any) -> tuple[str, str] | None:
    if isinstance(x, list | tuple) and len(x) == 2:
        return str(x[0]), str(x[1])
    return None


def _pairs(xs: Any) -> list[tuple[str, str]]:
    return [p for p in (_pair(x) for x in (xs or ())) if p is not None]


def _criterion(structural: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    c = (structural.get("criteria") or {}).get(key)
    return c if isinstance(c, Mapping) else {}


@dataclass(frozen=True)
class _Node:
    id: str
    name: str
    type: str  # agent | coordinator | tool
    kind: str | None
    reachable: bool
    witnessed: bool


def _nodes(structural: Mapping[str, Any]) -> dict[str, _Node]:
    out: dict[str, _Node] = {}
    for n in structural.get("nodes") or ():
        if not isinstance(n, Mapping) or "id" not in n:
            continue
        nid = str(n["id"])
        kind = n.get("kind")
        out.setdefault(nid, _Node(nid, str(n.get("name") or nid), str(n.get("type") or "agent"),
                                  None if kind is None else str(kind), bool(n.get("reachable", True)),
                                  bool(n.get("witnessed", False))))
    return out


@dataclass(frozen=True)
class _Edge:
    type: str  # allow | restrict | delegate
    source: str
    target: str
    witnessed: bool
    via: str | None


def _edges(structural: Mapping[str, Any]) -> list[_Edge]:
    out: list[_Edge] = []
    for e in structural.get("edges") or ():
        if isinstance(e, Mapping) and "source" in e and "target" in e:
            via = e.get("via")
            out.append(_Edge(str(e.get("type") or "allow"), str(e["source"]), str(e["target"]),
                             bool(e.get("witnessed", False)), None if via is None else str(via)))
    return out


# -- the summary line and the gaps -----------------------------------------------------------------


def _summary(structural: Mapping[str, Any] | None, behavioural: Mapping[str, Any] | None,
             redact: Callable[[str], str], namer: type[_Namer] | None = None) -> str:
    say = (namer or _Namer)({}, redact)
    parts: list[str] = []
    if structural is not None:
        crit = [(k, _criterion(structural, k)) for k in ("C1", "C2", "C4")]
        shown = [f"{k} {_int(c.get('witnessed'))}/{_int(c.get('obligations'))}" for k, c in crit if c]
        c3 = _criterion(structural, "C3")
        if c3:
            n = _int(c3.get("witnessed"))
            shown.append(f"restricted calls elicited {n}/{_int(c3.get('obligations'))}" + (" ⚠" if n else ""))
        parts.append("Structural " + " · ".join(shown) if shown else "Structural coverage: no criteria")
    if behavioural is not None:
        overall = _float(behavioural.get("overall"))
        text = "behavioural overall " + ("?" if overall is None else f"{overall:.2f}")
        if behavioural.get("weakest"):
            text += f" (weakest: {say.text(behavioural['weakest'], _W_NAME)})"
        parts.append(text)
    return " · ".join(parts) if parts else "No coverage was measured."


class _Namer:
    """How a node is named in a bullet: an agent in bold, a tool as code, by display name. This one
    writes Markdown; :class:`_HtmlNamer` writes the same bullets as HTML."""

    def __init__(self, nodes: Mapping[str, _Node], redact: Callable[[str], str]) -> None:
        self.nodes, self.redact = nodes, redact

    def text(self, x: Any, width: int) -> str:
        """Untrusted text in running prose."""
        return _md(x, width, self.redact)

    def strong(self, ours: str) -> str:
        """Our own words, emphasised."""
        return f"**{ours}**"

    def name(self, nid: str) -> str:
        n = self.nodes.get(nid)
        return n.name if n is not None else nid

    def agent(self, nid: str) -> str:
        return f"**{_md(self.name(nid), _W_NAME, self.redact)}**"

    def tool(self, nid: str) -> str:
        return _code(self.name(nid), _W_NAME, self.redact)

    def any(self, nid: str) -> str:
        n = self.nodes.get(nid)
        return self.tool(nid) if n is not None and n.type == "tool" else self.agent(nid)

    def codes(self, names: Sequence[Any]) -> str:
        shown = ", ".join(_code(x, _W_NAME, self.redact) for x in names[:_MAX_NAMES])
        return shown + (f" and {len(names) - _MAX_NAMES} more" if len(names) > _MAX_NAMES else "")


class _HtmlNamer(_Namer):
    """The same bullets as HTML: an agent in ``<strong>``, a tool in ``<code>``, every name redacted,
    stripped of invisible characters, clipped and then HTML-escaped."""

    def text(self, x: Any, width: int) -> str:
        return html.escape(_plain(x, width, self.redact), quote=True)

    def strong(self, ours: str) -> str:
        return f"<strong>{ours}</strong>"

    def agent(self, nid: str) -> str:
        return self.strong(self.text(self.name(nid), _W_NAME))

    def tool(self, nid: str) -> str:
        return f"<code>{self.text(self.name(nid), _W_NAME)}</code>"

    def codes(self, names: Sequence[Any]) -> str:
        shown = ", ".join(f"<code>{self.text(x, _W_NAME)}</code>" for x in names[:_MAX_NAMES])
        return shown + (f" and {len(names) - _MAX_NAMES} more" if len(names) > _MAX_NAMES else "")


def _structural_gaps(s: Mapping[str, Any], redact: Callable[[str], str],
                     namer: type[_Namer] = _Namer) -> tuple[list[str], list[str], set[str]]:
    """(findings and gaps, low-priority notes, names of tools already reported as never called)."""
    nodes, edges = _nodes(s), _edges(s)
    say = namer(nodes, redact)
    entry = str(s.get("entry_agent") or "")
    witnessed_by = s.get("witnessed_by") if isinstance(s.get("witnessed_by"), Mapping) else {}
    targeted = s.get("targeted")
    aimed = None if targeted is None else {str(t) for t in targeted}
    reachable_restricted = {(e.source, e.target) for e in edges if e.type == "restrict"}
    c3 = _criterion(s, "C3")
    elicited = _pairs(c3.get("elicited"))
    ambiguous = [str(x) for x in s.get("ambiguous") or ()]
    out: list[str] = []

    # 1. findings: restricted calls that a test made an agent attempt
    for a, t in elicited:
        line = f"⚠ {say.strong('Finding:')} a test made {say.agent(a)} attempt the restricted tool {say.tool(t)}"
        scenario = witnessed_by.get(f"RestrictTool({a}, {t})")
        if scenario:
            line += f" (scenario {say.text(scenario, _W_NAME)})"
        if aimed is not None and f"RestrictTool({a}, {t})" not in aimed:
            line += "; no test aimed at this edge"
        if reachable_restricted and (a, t) not in reachable_restricted:
            line += f"; {say.agent(a)} is not reachable from the entry agent"
        out.append(line + ": harden the agent (instructions, guardrail or tool permissions).")
    covered = [f"{a} → {t}" for a, t in elicited]
    for f in s.get("findings") or ():
        text = str(f)
        if any(c in text for c in covered) or any(text.endswith(x) for x in ambiguous):
            continue  # already said above from the structured fields
        out.append(f"⚠ {say.strong('Finding:')} {say.text(text, _W_TEXT)}")

    # 2. positive criteria: agents never reached, tool edges never used, delegations never taken
    for a in _criterion(s, "C1").get("unwitnessed") or ():
        out.append(f"no test reaches agent {say.agent(str(a))}")
    never_called: set[str] = set()
    for a, t in _pairs(_criterion(s, "C2").get("unwitnessed")):
        out.append(f"no test makes {say.agent(a)} call {say.tool(t)}")
        never_called |= {t, say.name(t)}
    via = {(e.source, e.target): e.via for e in edges if e.type == "delegate"}
    for a, b in _pairs(_criterion(s, "C4").get("unwitnessed")):
        how = via.get((a, b))
        if how == "as_tool":
            out.append(f"no test makes {say.agent(a)} call {say.agent(b)} as a tool")
        elif how == "handoff":
            out.append(f"no test makes {say.agent(a)} hand off to {say.agent(b)}")
        else:
            out.append(f"no test makes {say.agent(a)} delegate to {say.agent(b)}")

    # 3. restricted edges with no attempt: never probed (when the tests' targets are known) or unbroken
    elicited_set = set(elicited)
    quiet: dict[str, list[str]] = {}
    for a, t in _pairs(c3.get("unwitnessed")):
        if (a, t) in elicited_set or (aimed is not None and f"RestrictTool({a}, {t})" in aimed):
            continue  # probed and refused: the good outcome, not a gap
        quiet.setdefault(a, []).append(say.name(t))
    for a, tools in quiet.items():
        what = "no test probes" if aimed is not None else "no test made an attempt on"
        out.append(f"{what} the restricted tools of {say.agent(a)}: {say.codes(tools)} "
                   "(add a probe that tries to make it call them)")

    # low priority: agents no path reaches, events no id fits
    notes: list[str] = []
    lost = [n.id for n in nodes.values() if n.type != "tool" and not n.reachable]
    if lost:
        names = ", ".join(say.agent(x) for x in lost[:_MAX_NAMES])
        more = f" and {len(lost) - _MAX_NAMES} more" if len(lost) > _MAX_NAMES else ""
        start = f" from the entry agent {say.agent(entry)}" if entry else ""
        notes.append(f"not reachable{start} by any handoff or tool: {names}{more}")
    if ambiguous:
        notes.append(f"{len(ambiguous)} runtime events matched no single agent or tool and were not "
                     f"credited: {say.codes(ambiguous)}")
    return out, notes, never_called


def _behavioural_gaps(b: Mapping[str, Any], never_called: set[str], redact: Callable[[str], str],
                      namer: type[_Namer] = _Namer) -> list[str]:
    say = namer({}, redact)
    details = b.get("details") if isinstance(b.get("details"), Mapping) else {}
    out: list[str] = []
    weakest = b.get("weakest")
    if weakest:
        value = _float(b.get(str(weakest)))
        score = "" if value is None else f" ({value:.2f})"
        line = f"weakest behavioural dimension: {say.text(weakest, _W_NAME)}{score}"
        if b.get("suggestion"):
            line += f"; {say.text(b['suggestion'], _W_TEXT)}"
        out.append(line)
    unused = [t for t in details.get("tools_unused") or () if str(t) not in never_called]
    if unused:
        out.append(f"tools no trace called: {say.codes(unused)}")
    for key, what in (("boundaries_untested", "boundaries not tested"), ("models_untested", "models not tested")):
        items = list(details.get(key) or ())
        if items:
            out.append(f"{what}: {say.codes(items)}")
    return out


def _gaps(structural: Mapping[str, Any] | None, behavioural: Mapping[str, Any] | None, max_items: int,
          redact: Callable[[str], str], namer: type[_Namer]) -> list[str]:
    """The gap bullets, most actionable first, cut to ``max_items`` with a count of the rest."""
    gaps: list[str] = []
    notes: list[str] = []
    never_called: set[str] = set()
    if structural is not None:
        gaps, notes, never_called = _structural_gaps(structural, redact, namer)
    if behavioural is not None:
        gaps += _behavioural_gaps(behavioural, never_called, redact, namer)
    gaps += notes
    max_items = max(int(max_items), 1)
    if len(gaps) > max_items:
        rest = len(gaps) - (max_items - 1)
        gaps = [*gaps[: max_items - 1], f"… and {rest} more gaps; see the coverage report in the results artifact"]
    return gaps


def coverage_section(
    structural: Mapping[str, Any] | None,
    behavioural: Mapping[str, Any] | None,
    *,
    max_items: int = 20,
    secrets: Sequence[str] = (),
) -> dict[str, Any]:
    """The ``coverage=`` argument of :func:`render_pr_comment`: ``{"summary", "gaps", "mermaid", "legend"}``.

    ``structural`` and ``behavioural`` are the ``to_dict()`` forms (either may be None). ``summary``
    is one line; ``gaps`` at most ``max_items`` bullets, most actionable first (elicited restricted
    calls, then unreached agents, unused tool edges, untaken delegations, unprobed restricted
    edges, the weakest behavioural dimension, unused tools, untested boundaries and models), the
    last one "… and N more gaps" when cut; ``mermaid`` the coordination graph (None without
    ``structural``). Summary and gaps are escaped Markdown (``Md``), which the renderer prints as
    they are; ``secrets`` are redacted from them before escaping, as the renderer does.
    """
    redact = _redactor(secrets)
    gaps = _gaps(structural, behavioural, max_items, redact, _Namer)
    return {
        "summary": Md(_summary(structural, behavioural, redact)),
        "gaps": [Md(g) for g in gaps],
        "mermaid": None if structural is None else mermaid_flowchart(structural, secrets=secrets),
        "legend": Md(LEGEND),
    }


# -- the diagram -----------------------------------------------------------------------------------


def _status(n: _Node) -> str:
    return "witnessed" if n.witnessed else "unwitnessed" if n.reachable else "unreachable"


def _edge_status(e: _Edge) -> str:
    if e.type == "restrict":
        return "elicited"
    if e.witnessed:
        return "witnessed"
    return "unwitnessed-delegation" if e.type == "delegate" else "unwitnessed"


def _drawn_edges(structural: Mapping[str, Any], nodes: Mapping[str, _Node]) -> list[_Edge]:
    """Allowed and delegation edges, and restricted edges only where an attempt was elicited (those
    of unreachable agents too, which the edge list leaves out)."""
    edges = [e for e in _edges(structural) if e.type in ("allow", "delegate") or (e.type == "restrict" and e.witnessed)]
    have = {(e.source, e.target) for e in edges if e.type == "restrict"}
    for a, t in _pairs(_criterion(structural, "C3").get("elicited")):
        if (a, t) not in have:
            edges.append(_Edge("restrict", a, t, True, None))
            have.add((a, t))
    return edges


def _shape(n: _Node, label: str) -> str:
    if n.type == "tool":
        return f'["{label}"]'
    if n.type == "coordinator":
        return '{{"' + label + '"}}'
    return f'(["{label}"])'


def _chart(nodes: Sequence[_Node], edges: Sequence[_Edge], entry: str, width: int, redact: Callable[[str], str],
           notes: Iterable[str]) -> str:
    ids = {n.id: f"n{i}" for i, n in enumerate(nodes)}
    lines = ["flowchart LR"]
    lines += [f"  %% {note}" for note in notes]  # our own words only: no untrusted text in a comment
    for n in nodes:
        label = n.name
        if n.type == "tool" and n.kind and n.kind != "function":
            label = f"{clip(label, max(width - len(n.kind) - 3, 4))} ({n.kind})"
        lines.append(f"  {ids[n.id]}{_shape(n, mermaid_label(label, width, redact))}")
    styles: dict[str, list[int]] = {}
    for i, e in enumerate(edges):
        a, b = ids[e.source], ids[e.target]
        if e.type == "delegate":
            via = _VIA.get(e.via or "handoff", e.via)
            arrow = f'-.->|"{mermaid_label(via, 16)}"|' if via and e.via != "handoff" else "-.->"
        elif e.type == "restrict":
            arrow = '--x|"restricted call"|'
        else:
            arrow = "-->"
        lines.append(f"  {a} {arrow} {b}")
        styles.setdefault(_edge_status(e), []).append(i)
    for cls, style in _NODE_CLASSES.items():
        lines.append(f"  classDef {cls} {style}")
    by_class: dict[str, list[str]] = {}
    for n in nodes:
        by_class.setdefault(_status(n), []).append(ids[n.id])
    lines += [f"  class {','.join(members)} {cls}" for cls, members in by_class.items()]
    if entry in ids:
        lines.append(f"  style {ids[entry]} stroke-width:4px")
    lines += [f"  linkStyle {','.join(map(str, idx))} {_LINK_STYLES[st]}" for st, idx in styles.items()]
    return "\n".join(lines) + "\n"


def mermaid_flowchart(structural: Mapping[str, Any], *, secrets: Sequence[str] = ()) -> str:
    """A Mermaid ``flowchart LR`` of the coordination graph (paper Fig. 1).

    Agents are stadium nodes ``(["…"])``, coordinators hexagons ``{{"…"}}``, tools rectangles
    ``["…"]`` (a non-function tool's kind, e.g. ``hosted``, follows its name). Allowed tool edges
    are solid ``-->``, delegations dotted ``-.->`` (labelled when ``as_tool`` or ``call``), and a
    restricted edge is drawn (``--x``, orange) only when a test elicited an attempt on it.
    Node classes ``witnessed`` / ``unwitnessed`` / ``unreachable`` and ``linkStyle`` lines by edge
    index (green witnessed, red dashed unwitnessed, orange elicited) mark what the tests exercised.
    Node ids are ``n0``, ``n1``, … in node order; labels are entity-coded (:func:`mermaid_label`).
    Tools with no drawn edge are left out. A graph too big for Mermaid (``MERMAID_MAX_EDGES``,
    ``MERMAID_MAX_TEXT``) is cut down, in this order, until it fits: the witnessed edges, shorter
    labels, agents only, the first agents only; a comment says what was left out.
    """
    redact = _redactor(secrets)
    known = _nodes(structural)
    edges = _drawn_edges(structural, known)
    nodes = dict(known)
    for e in edges:  # an edge to an id the node list does not have still gets a node
        for nid, typ in ((e.source, "agent"), (e.target, "agent" if e.type == "delegate" else "tool")):
            nodes.setdefault(nid, _Node(nid, nid, typ, None, True, e.witnessed))
    entry = str(structural.get("entry_agent") or "")

    def build(edges: list[_Edge], width: int, agents_only: bool, max_agents: int | None, notes: list[str]) -> str:
        if agents_only:
            edges = [e for e in edges if e.type == "delegate" or e.type == "restrict"]
        # order kept; too many edges -> drop witnessed ones first (the gaps and findings matter most)
        if len(edges) > _MAX_EDGES:
            keep = sorted(range(len(edges)), key=lambda i: (edges[i].witnessed and edges[i].type != "restrict", i))
            chosen = set(keep[:_MAX_EDGES])
            notes = [*notes, f"{len(edges) - _MAX_EDGES} exercised edges not drawn (Mermaid's edge limit)"]
            edges = [e for i, e in enumerate(edges) if i in chosen]
        agents = [n for n in nodes.values() if n.type != "tool"]
        if max_agents is not None and len(agents) > max_agents:
            notes = [*notes, f"only the first {max_agents} of {len(agents)} agents are drawn"]
            kept_agents = {n.id for n in agents[:max_agents]}
            edges = [e for e in edges if e.source in kept_agents and (e.target in kept_agents or nodes[e.target].type == "tool")]
            agents = agents[:max_agents]
        linked = {x for e in edges for x in (e.source, e.target)}
        shown = {n.id for n in agents} | linked
        hidden_tools = sum(1 for n in nodes.values() if n.type == "tool" and n.id not in shown)
        if hidden_tools:
            why = "left out to fit" if agents_only else "no drawn edge (restricted only, no attempt)"
            notes = [*notes, f"{hidden_tools} tool{'s' if hidden_tools != 1 else ''} not drawn: {why}"]
        return _chart([n for n in nodes.values() if n.id in shown], edges, entry, width, redact, notes)

    legend = ["key: green exercised, red dashed never exercised, grey unreachable, orange x restricted call attempted"]
    text = ""
    for width, agents_only in ((_W_LABEL, False), (_W_LABEL_SHORT, False), (_W_LABEL_SHORT, True)):
        notes = legend + (["labels shortened and tools left out to fit Mermaid's size limit"] if agents_only else [])
        text = build(edges, width, agents_only, None, notes)
        if len(text) <= _MAX_TEXT:
            return text
    agents = sum(1 for n in nodes.values() if n.type != "tool")
    lo, hi = 1, agents  # the most agents (in order) that fit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(build(edges, _W_LABEL_SHORT, True, mid, legend)) <= _MAX_TEXT:
            lo = mid
        else:
            hi = mid - 1
    return build(edges, _W_LABEL_SHORT, True, lo, legend)


COVERAGE_DROPPED = "The coverage diagram is not shown here, to keep this report within its size limit; see {pointer}."


def trivial(structural: Mapping[str, Any] | None, coverage: Mapping[str, Any]) -> bool:
    """Nothing a reviewer could act on: no gap, and every structural criterion fully exercised with no
    restricted call elicited (e.g. a one-tool agent its tests call). The PR comment then leaves coverage out."""
    if coverage.get("gaps") or structural is None:
        return False
    for key in ("C1", "C2", "C4"):
        c = _criterion(structural, key)
        if c and _int(c.get("witnessed")) < _int(c.get("obligations")):
            return False
    return _int(_criterion(structural, "C3").get("witnessed")) == 0


def as_section(coverage: Mapping[str, Any]) -> Section:
    """The PR comment's "Coverage gaps" section from :func:`coverage_section`'s dictionary, folded: a reviewer
    opens it when the verdicts above leave a question."""
    diagram = coverage.get("mermaid")
    legend = coverage.get("legend")
    return Section(
        key="coverage",
        title="Coverage gaps",
        paragraphs=(coverage.get("summary") or "",),
        items=tuple(coverage.get("gaps") or ()),
        diagram=Diagram(str(diagram), legend or None, "Coordination graph", COVERAGE_DROPPED) if diagram else None,
        noun="gaps",
        fold=True,
    )


# -- the graph as inline SVG (the HTML report) -----------------------------------------------------

SVG_LEGEND = (
    "Green: exercised by some test. Red dashed: never exercised. Grey: not reachable from the entry agent "
    "(the one with the thick border). Orange: a restricted call that a test made an agent attempt. Agents "
    "stand in columns by their distance from the entry agent, tools on the right; hollow arrowheads are "
    "delegations (handoffs, agents called as tools or by a coordinator), filled ones tool calls."
)
_SVG_MAX_AGENTS, _SVG_MAX_TOOLS = 60, 120  # more than this is not readable as one picture anyway
_BOX_W, _BOX_H, _ROW_H, _COL_W, _TOP, _LEFT = 180, 30, 54, 260, 40, 12
_SVG_LABEL = 25  # characters of a node label (the full name is the node's tooltip)
_SVG_NODE = {  # node status -> (fill, stroke, dash)
    "witnessed": ("#dafbe1", "#1a7f37", None),
    "unwitnessed": ("#fff5f5", "#cf222e", "5 4"),
    "unreachable": ("#f6f8fa", "#8c959f", "2 2"),
}
_SVG_EDGE = {  # edge status -> (stroke, width, dash)
    "witnessed": ("#1a7f37", 1.6, None),
    "unwitnessed": ("#cf222e", 1.4, "6 4"),
    "unwitnessed-delegation": ("#cf222e", 1.4, "2 3"),
    "elicited": ("#d97706", 2.6, None),
}


def _columns(agents: Sequence[_Node], edges: Sequence[_Edge], entry: str) -> tuple[dict[str, int], int | None]:
    """Each agent's column: its distance from the entry agent along delegations (breadth first);
    agents that no delegation reaches from it share one column after the last, returned second
    (None when every agent is reached)."""
    out: dict[str, list[str]] = {}
    for e in edges:
        if e.type == "delegate":
            out.setdefault(e.source, []).append(e.target)
    ids = {n.id for n in agents}
    depth: dict[str, int] = {}
    if entry in ids:
        depth[entry] = 0
        queue = [entry]
        for nid in queue:
            for nxt in out.get(nid, ()):
                if nxt in ids and nxt not in depth:
                    depth[nxt] = depth[nid] + 1
                    queue.append(nxt)
    rest = max(depth.values(), default=-1) + 1
    return {n.id: depth.get(n.id, rest) for n in agents}, (rest if len(depth) < len(ids) else None)


def _route(s: tuple[float, float], t: tuple[float, float], off: float, lane: float
           ) -> tuple[str, tuple[float, float], tuple[float, float], tuple[float, float]]:
    """An edge's path from the box at ``s`` to the box at ``t`` (top-left corners): its ``d``, the point
    its arrowhead aims from, the tip, and where its label goes.

    Neighbouring columns are joined by one curve inside the gap between them; an edge that spans
    more columns drops into the gap between two rows (``lane``) and runs along it, so it never
    crosses a box. An edge within a column loops out to the right."""

    def p(x: float, y: float) -> str:
        return f"{num(x)},{num(y)}"

    (sx, sy), (tx, ty) = s, t
    y1, y2 = sy + _BOX_H / 2 + off, ty + _BOX_H / 2 + off
    if tx == sx:
        a, b = (sx + _BOX_W, y1), (tx + _BOX_W, y2)
        c2 = (b[0] + 45, b[1])
        return f"M{p(*a)} C{p(a[0] + 45, a[1])} {p(*c2)} {p(*b)}", c2, b, (a[0] + 36, (a[1] + b[1]) / 2)
    sign = 1 if tx > sx else -1
    a = (sx + _BOX_W, y1) if sign > 0 else (sx, y1)
    b = (tx, y2) if sign > 0 else (tx + _BOX_W, y2)
    if abs(tx - sx) <= _COL_W:
        c2 = (b[0] - sign * 40, b[1])
        d = f"M{p(*a)} C{p(a[0] + sign * 40, a[1])} {p(*c2)} {p(*b)}"
        return d, c2, b, ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2 - 3)
    r = 20.0  # the curves into and out of the lane
    c2 = (b[0] - sign * r, b[1])
    d = (f"M{p(*a)} C{p(a[0] + sign * r, a[1])} {p(a[0] + sign * r, lane)} {p(a[0] + sign * 2 * r, lane)} "
         f"L{p(b[0] - sign * 2 * r, lane)} C{p(b[0] - sign * r, lane)} {p(*c2)} {p(*b)}")
    return d, c2, b, ((a[0] + b[0]) / 2, lane - 3)


@dataclass
class _SvgLayout:
    """Where everything of :func:`coverage_svg` goes, computed once so drawing is only drawing."""

    nodes: dict[str, _Node]
    edges: list[_Edge]
    entry: str
    rows: dict[int, list[str]]  # column -> the agents in it, top to bottom
    unreached: int | None  # the column of agents no delegation reaches, if any
    tools: list[str]
    tool_col: int
    pos: dict[str, tuple[float, float]]
    notes: list[str]


def _svg_graph(structural: Mapping[str, Any]) -> tuple[dict[str, _Node], list[_Edge], str]:
    """The nodes (with a stand-in for every edge end not declared), the drawn edges and the entry agent."""
    known = _nodes(structural)
    edges = _drawn_edges(structural, known)
    nodes = dict(known)
    for e in edges:
        for nid, typ in ((e.source, "agent"), (e.target, "agent" if e.type == "delegate" else "tool")):
            nodes.setdefault(nid, _Node(nid, nid, typ, None, True, e.witnessed))
    return nodes, edges, str(structural.get("entry_agent") or "")


def _svg_agents(nodes: dict[str, _Node], edges: list[_Edge], entry: str, notes: list[str]
                ) -> tuple[list[_Node], list[_Edge]]:
    """The agents drawn (entry first, so a cut never drops it) and the edges left between what is drawn."""
    agents = [n for n in nodes.values() if n.type != "tool"]
    if entry in nodes and nodes[entry].type != "tool":
        agents = [nodes[entry], *(n for n in agents if n.id != entry)]
    if len(agents) > _SVG_MAX_AGENTS:
        notes.append(f"{len(agents) - _SVG_MAX_AGENTS} of {len(agents)} agents not drawn (only the first {_SVG_MAX_AGENTS})")
        agents = agents[:_SVG_MAX_AGENTS]
    kept = {n.id for n in agents}
    edges = [e for e in edges if e.source in kept and (e.target in kept or nodes[e.target].type == "tool")]
    return agents, edges


def _svg_tools(nodes: dict[str, _Node], edges: list[_Edge], pos: dict[str, tuple[float, float]],
               notes: list[str]) -> tuple[list[str], list[_Edge]]:
    """The tools drawn: those with a drawn edge, ordered by the mean row of the agents that reach them."""
    linked: dict[str, list[float]] = {}
    for e in edges:
        if nodes[e.target].type == "tool":
            linked.setdefault(e.target, []).append(pos[e.source][1])
    tools = sorted(linked, key=lambda t: (sum(linked[t]) / len(linked[t]), list(nodes).index(t)))
    if len(tools) > _SVG_MAX_TOOLS:
        notes.append(f"{len(tools) - _SVG_MAX_TOOLS} of {len(tools)} tools not drawn (only the first {_SVG_MAX_TOOLS})")
        tools = tools[:_SVG_MAX_TOOLS]
        edges = [e for e in edges if nodes[e.target].type != "tool" or e.target in set(tools)]
    hidden = sum(1 for n in nodes.values() if n.type == "tool" and n.id not in linked)
    if hidden:
        notes.append(f"{hidden} tool{'s' if hidden != 1 else ''} with no drawn edge (restricted only, no attempt) not drawn")
    return tools, edges


def _svg_layout(structural: Mapping[str, Any]) -> _SvgLayout:
    """Agents in columns by delegation distance from the entry agent, tools in a column on the right."""
    nodes, edges, entry = _svg_graph(structural)
    notes: list[str] = []
    agents, edges = _svg_agents(nodes, edges, entry, notes)
    column, unreached = _columns(agents, edges, entry)
    rows: dict[int, list[str]] = {}
    for n in agents:
        rows.setdefault(column[n.id], []).append(n.id)
    pos: dict[str, tuple[float, float]] = {}
    for col, members in rows.items():
        for i, nid in enumerate(members):
            pos[nid] = (_LEFT + col * _COL_W, _TOP + i * _ROW_H)
    tools, edges = _svg_tools(nodes, edges, pos, notes)
    tool_col = max(column.values(), default=-1) + 1
    for i, t in enumerate(tools):
        pos[t] = (_LEFT + tool_col * _COL_W, _TOP + i * _ROW_H)
    return _SvgLayout(nodes, edges, entry, rows, unreached, tools, tool_col, pos, notes)


def _svg_edges(svg: Svg, lay: _SvgLayout, redact: Callable[[str], str]
               ) -> list[tuple[float, float, str, str]]:
    """Draw the edges before the boxes, so boxes sit on top; return their labels, to go over everything."""

    labels: list[tuple[float, float, str, str]] = []
    in_lane: dict[float, int] = {}
    gap = _ROW_H - _BOX_H
    pos, nodes = lay.pos, lay.nodes
    for e in lay.edges:
        if e.source not in pos or e.target not in pos:
            continue
        (sx, sy), (tx, ty) = pos[e.source], pos[e.target]
        stroke, w, dash = _SVG_EDGE[_edge_status(e)]
        off = -4.0 if tx >= sx else 4.0  # a pair of edges both ways stays apart
        lane = ty - gap / 2 if sy <= ty else ty + _BOX_H + gap / 2  # the row gap on the source's side
        k = in_lane[lane] = in_lane.get(lane, -1) + 1
        d, aim, tip, mid = _route((sx, sy), (tx, ty), off, lane + (k % 3 - 1) * 4)
        delegation = e.type == "delegate"
        say = f"{_plain(nodes[e.source].name, 80, redact)} → {_plain(nodes[e.target].name, 80, redact)}: {_edge_words(e)}"
        svg.group(tooltip=say)
        svg.path(d, fill="none", stroke=stroke, stroke_width=w, stroke_dasharray=dash)
        svg.polygon(arrowhead(tip, aim), fill="#ffffff" if delegation else stroke, stroke=stroke, stroke_width=1.2)
        svg.end()
        label = "✗ restricted call" if e.type == "restrict" else _VIA.get(e.via or "handoff") if delegation else None
        if label:
            labels.append((mid[0], mid[1], clip(label, 18), stroke))
    return labels


def _svg_node(svg: Svg, n: _Node, x: float, y: float, entry: bool, redact: Callable[[str], str]) -> None:
    """Draw one node's box (a hexagon for a coordinator) with its clipped label and full-name tooltip."""

    fill, stroke, dash = _SVG_NODE[_status(n)]
    width_ = 3.5 if entry else 1.4
    label = n.name
    if n.type == "tool" and n.kind and n.kind != "function":
        label = f"{clip(label, max(_SVG_LABEL - len(n.kind) - 3, 4))} ({n.kind})"
    shown = _plain(label, _SVG_LABEL, redact)
    what = {"tool": "tool", "coordinator": "coordinator"}.get(n.type, "agent")
    svg.group(tooltip=f"{_plain(n.name, 200, redact)} ({what}, {_status(n)})")
    if n.type == "coordinator":
        k = 10
        svg.polygon([(x + k, y), (x + _BOX_W - k, y), (x + _BOX_W, y + _BOX_H / 2), (x + _BOX_W - k, y + _BOX_H),
                     (x + k, y + _BOX_H), (x, y + _BOX_H / 2)],
                    fill=fill, stroke=stroke, stroke_width=width_, stroke_dasharray=dash)
    else:
        svg.rect(x, y, _BOX_W, _BOX_H, rx=3 if n.type == "tool" else _BOX_H / 2, fill=fill, stroke=stroke,
                 stroke_width=width_, stroke_dasharray=dash)
    svg.text(x + _BOX_W / 2, y + _BOX_H / 2 + 4, shown, size=12, anchor="middle",
             font_family=MONO if n.type == "tool" else FONT)
    svg.end()


def coverage_svg(structural: Mapping[str, Any], *, secrets: Sequence[str] = ()) -> str:
    """The coordination graph of :func:`mermaid_flowchart` — the same nodes, edges and statuses — as an
    inline SVG for the HTML report, laid out here in Python (no script, no Mermaid).

    Agents (rounded; coordinators as hexagons) stand in columns by their distance from the entry agent
    (thick border) along delegations, agents no delegation reaches in a column after them, tools on the
    right ordered by the agents that use them. Colours as in the flowchart: green witnessed, red dashed
    unwitnessed, grey unreachable, orange an elicited restricted call. Every label is redacted,
    clipped and escaped; the full name is the node's tooltip. Beyond 60 agents or 120 tools the first
    ones are drawn and a line under the picture says how many were left out.
    """

    redact = _redactor(secrets)
    lay = _svg_layout(structural)
    rows, tools, tool_col, notes = lay.rows, lay.tools, lay.tool_col, lay.notes
    height_rows = max([len(m) for m in rows.values()] + [len(tools), 1])
    width = _LEFT * 2 + tool_col * _COL_W + _BOX_W
    height = _TOP + height_rows * _ROW_H + 6 + 16 * len(notes)
    svg = Svg(width, height, label="Coordination graph: agents, tools, and which edges the tests exercised",
              class_="chart graph")
    for c in rows:
        words = ("not reached from the entry agent" if c == lay.unreached else "entry agent" if c == 0
                 else f"{c} delegation{'s' if c != 1 else ''} away")
        svg.text(_LEFT + c * _COL_W, 16, words, size=11, fill=MUTED)
    if tools:
        svg.text(_LEFT + tool_col * _COL_W, 16, "tools", size=11, fill=MUTED)
    labels = _svg_edges(svg, lay, redact)
    for nid, (x, y) in lay.pos.items():
        _svg_node(svg, lay.nodes[nid], x, y, nid == lay.entry, redact)
    for x, y, text, colour in labels:  # a white halo keeps a label readable over the lines under it
        svg.text(x, y, text, size=10, anchor="middle", fill=colour, stroke="#ffffff", stroke_width=3,
                 paint_order="stroke")
    for i, note in enumerate(notes):
        svg.text(_LEFT, _TOP + height_rows * _ROW_H + 10 + 16 * i, note, size=11, fill=MUTED)
    return svg.render()


def _edge_words(e: _Edge) -> str:
    if e.type == "restrict":
        return "restricted call attempted"
    kind = f"delegation ({_VIA.get(e.via or 'handoff', e.via) or 'handoff'})" if e.type == "delegate" else "tool call"
    return f"{kind}, {'exercised' if e.witnessed else 'never exercised'}"


def html_section(
    structural: Mapping[str, Any] | None,
    behavioural: Mapping[str, Any] | None,
    *,
    max_items: int = 20,
    secrets: Sequence[str] = (),
) -> Section:
    """The HTML report's coverage section: the summary line and the gap bullets of
    :func:`coverage_section` written as HTML (names escaped here, so they are ``Markup`` the renderer
    prints as it is), the legend, and the graph as an inline SVG (:func:`coverage_svg`)."""
    from markupsafe import Markup

    redact = _redactor(secrets)
    gaps = _gaps(structural, behavioural, max_items, redact, _HtmlNamer)
    svg = None if structural is None else coverage_svg(structural, secrets=secrets)
    summary = Markup(_summary(structural, behavioural, redact, _HtmlNamer))
    return Section(
        key="coverage",
        title="Coverage",
        paragraphs=(summary, SVG_LEGEND) if svg else (summary,),
        items=tuple(Markup(g) for g in gaps),
        svg=svg,
        noun="gaps",
    )
