"""The pull-request comment and the job summary: one Markdown report that may quote untrusted text.

Scenario names and inputs come from the suite file in the pull request, failure reasons quote the
agent's output and tool arguments: all of it is attacker-controlled. So every such string is
redacted (secrets), collapsed to one line, clipped and escaped before a template sees it, and the
templates may print escaped values only (``Md``; anything else raises). The output's only HTML is
our own ``<details>``/``<summary>`` and the hidden marker the Action finds its sticky comment by.

GitHub refuses comments over 65,536 characters, so the report is built from measured pieces and
the least important are dropped first: scenario details from the end, the run details, the
sections' diagrams, then table rows from the end (PASS, then INCONCLUSIVE, then FAIL), each drop
counted in the text. The marker and the decision line are never dropped.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from .. import __version__
from .._boundary import redactor, secret_env
from .._results import Results, ScenarioResult, more_trials_text
from .._stats import Verdict, proportion_ci
from ._sections import (
    ReportContext,
    ScenarioPart,
    Section,
    collect,
    extra_cost,
    replace_section,
    settings_words,
    warning_lines,
)
from ._summary import (
    STATUS_ICON,
    VERDICT_WORD,
    aborted_gloss,
    counts_text,
    explanation_of,
    headline,
    invisible_dropped,
    savings_of,
    scenario_usd,
    trials_text,
)
from ._summary import clip as _clip

if TYPE_CHECKING:
    import jinja2

    from .._plugins import Plugins
    from .._spec import Settings

MARKER = "<!-- agentassay:pr-comment -->"
COMMENT_LIMIT = 65536  # GitHub's limit on an issue or pull-request comment body, in characters
SUMMARY_LIMIT = 1_000_000  # GitHub's limit on one step's $GITHUB_STEP_SUMMARY is 1 MiB
MODES = ("check", "record-only")

_KEY_CHARS = re.compile(r"[^A-Za-z0-9._:/-]+")

# One pass of str.translate escapes every character that could start Markdown or HTML syntax in
# running text. '<', '>' and '&' become entities (a backslash does not stop an HTML tag in every
# renderer); '@' gets a zero-width space so GitHub makes no @mention (or @org/team) of it, and so do
# issue references (_REFS); '$' would open GitHub's math. Other control characters and bidirectional overrides (text that
# displays differently from what it says) are dropped.
_ESCAPES: dict[int, str | None] = {ord(c): "\\" + c for c in "\\`*_[]|~$"}
_ESCAPES |= {ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;", ord("@"): "@\u200b"}
_ESCAPES |= {
    c: None for c in [*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
}
_CONTROLS: dict[int, None] = {c: None for c in range(0x20) if c != 9}  # tabs may indent a diagram
_URL_SAFE = ":/?#&=%+,;@~._-!$'*"
_LIST_NUMBER = re.compile(r"\d{1,9}(?=[.)])")
# GFM's autolink extension links bare "http://", "https://", "ftp://" and "www." text; a backslash
# before the ':' or '.' keeps the text as it reads but unlinked, so untrusted text makes no links at all.
_AUTOLINK = re.compile(r"(?=://)|(?i:(?<=www)(?=\.))")
# "#12", "owner/repo#12" and "GH-12" link (and cross-reference) issue 12: a zero-width space after the
# '#' or the "GH" keeps the text as it reads, unlinked (Renovate does the same).
_REFS = re.compile(r"#(?=[0-9])|(?<![0-9A-Za-z_])(?i:gh)(?=-[0-9])")

_ORDER = {Verdict.FAIL: 0, Verdict.INCONCLUSIVE: 1, Verdict.PASS: 2}
_OMITTED = {Verdict.FAIL: "failing", Verdict.INCONCLUSIVE: "inconclusive", Verdict.PASS: "passing"}

# Widths (characters of the raw text) that keep one row or one details block bounded, so that a
# single enormous failure reason cannot crowd every other scenario out of the comment.
_W_NAME, _W_CELL, _W_LINE, _W_TEXT = 80, 200, 300, 1000
_MAX_LIST = 20  # warnings, notes, a section's items shown before "… N more"
_FOLD_LINES = 40  # a section's diagram with more lines than this is shown folded


class Md(str):
    """Text that is safe to place in Markdown as it stands: escaped untrusted text or our own markup."""

    __slots__ = ()


def _single_line(text: str) -> str:
    return " ".join(str(text).split())


def escape_markdown(text: str) -> str:
    """Untrusted text as one inert line of Markdown: it shows as written, and makes no HTML, link,
    image, mention, emphasis or code span (bare URLs are not linked either).

    Whitespace runs (newlines included) become one space, since a newline could end a table row or
    start a block; a leading '#', '-', '+', '=' or '1.' is escaped so the text never opens a heading
    or a list when it starts a list item.
    """
    out = _AUTOLINK.sub("\\\\", _single_line(text).translate(_ESCAPES))
    out = _REFS.sub(lambda m: m.group() + "\u200b", out)
    if out[:1] in ("#", "-", "+", "="):
        return "\\" + out
    m = _LIST_NUMBER.match(out)
    return out[: m.end()] + "\\" + out[m.end() :] if m else out


def escape_markdown_cell(text: str, width: int | None = None) -> str:
    """Untrusted text for a table cell: :func:`escape_markdown` (which escapes '|'), clipped first.

    Clipping comes before escaping so that a cut never splits an entity or leaves a lone backslash.
    """
    return escape_markdown(text if width is None else _clip(text, width))


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of secret-looking variables (:func:`agentassay._boundary.secret_env`'s rule), longest first.

    Actions hands its inputs over as ``INPUT_GITHUB-TOKEN`` and the like, so those are caught too.
    ``environ`` defaults to ``os.environ``.
    """

    return sorted(secret_env(environ), key=lambda v: (-len(v), v))


def _redactor(secrets: Sequence[str]) -> Callable[[str], str]:
    """The one redactor (agentassay/_boundary.py): the environment's secrets, token formats, and ``secrets``.

    Every renderer redacts again as defence: a results file or trace store made elsewhere (another
    version, a hand-edited file) may hold what the boundary would have removed.
    """

    return redactor(secrets)


@dataclass(frozen=True)
class _Escaper:
    """Redact, then clip, then escape: redacting first so a clip can never cut a secret in half."""

    redact: Callable[[str], str]

    def __call__(self, text: Any, width: int | None = _W_TEXT) -> Md:
        return Md(escape_markdown_cell(self.redact(str(text)), width))


def _plain(text: Any, width: int | None = _W_TEXT, *, redact: Callable[[str], str]) -> str:
    """``ReportContext.clean`` here: redacted, invisible characters dropped, clipped; not escaped."""
    out = invisible_dropped(redact(str(text)))
    return out if width is None else _clip(out, width)


def _checked(value: Any) -> Any:
    """Jinja ``finalize``: only escaped Markdown and numbers may be printed (autoescape is off)."""
    if isinstance(value, Md) or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    raise TypeError(f"template printed an unescaped {type(value).__name__}: {str(value)[:80]!r}")


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2  # here, not at the top: the terminal report (every CLI run) must not pay for it

    return jinja2.Environment(
        loader=jinja2.PackageLoader("agentassay._reports", "templates"),
        autoescape=False,  # Markdown, not HTML: escaping is done by _Escaper and enforced by _checked
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_checked,
    )


# -- figures -----------------------------------------------------------------------------------


def _pct(x: float) -> str:
    """A percentage that never rounds a non-zero rate to 0 or a rate below 1 to 100."""
    v = 100 * x
    return f"{v:.1f}" if (round(v) == 100 and x < 1) or (round(v) == 0 and x > 0) else f"{v:.0f}"


def _rate(passes: int, trials: int) -> str:
    """``38/40 (95%, 83–99%)``: the count, the rate and its 95% Wilson interval."""
    if trials <= 0:
        return f"{passes}/{trials}"
    lo, hi = proportion_ci(passes, trials, method="wilson")
    return f"{passes}/{trials} ({_pct(passes / trials)}%, {_pct(float(lo))}–{_pct(float(hi))}%)"


def _pp(diff: float) -> str:
    return f"{diff * 100:+.1f} pp".replace("-", "−")


def _usd(x: float) -> str:
    return f"\\${x:.4f}"  # escaped: two '$' on one line would open GitHub's math


def _usd_short(x: float) -> str:
    """Cents in a headline; four decimals below ten cents, so a cheap run does not read as free."""
    return f"\\${x:.2f}" if x >= 0.1 else f"\\${x:.4f}"


def _threshold(results: Results, s: ScenarioResult) -> float:
    return s.threshold if s.threshold is not None else results.settings.threshold


# -- views -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    name: Md
    verdict: Md
    rates: Md
    effect: Md
    behaviour: Md
    trials: Md


@dataclass(frozen=True)
class _Details:
    name: Md
    verdict: Md
    test: Md
    explanation: Md
    facts: tuple[tuple[Md, Md], ...]
    reasons: tuple[tuple[int, Md], ...]
    more_reasons: Md | None


@dataclass(frozen=True)
class _Run:
    facts: tuple[tuple[Md, Md], ...]
    notes: tuple[Md, ...]


@dataclass(frozen=True)
class _Diagram:
    fenced: Md
    folded: bool  # a large diagram goes into a collapsed <details>
    legend: Md | None
    title: Md  # the <summary> of the folded diagram


@dataclass(frozen=True)
class _SectionView:
    title: Md | None
    paragraphs: tuple[Md, ...]
    items: tuple[Md, ...]
    has_diagram: bool
    dropped: Md | None  # what is said instead of a diagram that did not fit
    folded: bool = False  # the whole section in a collapsed <details> under ``summary`` (its title)
    summary: Md | None = None


def _verdict_word(s: ScenarioResult) -> str:
    v = s.verdict
    if v.verdict is Verdict.FAIL:
        why = " (behaviour)" if v.rate_verdict is not None and v.rate_verdict is not Verdict.FAIL else ""
        return f"**FAIL**{why}"
    return VERDICT_WORD[v.verdict.value]


def _cell(parts: Sequence[ScenarioPart], esc: _Escaper) -> Md:
    """The Behaviour cell: what the plugins say about the scenario (escaped unless they marked it up), or a dash."""
    cells = [_escaped(p.cell, esc, _W_CELL) for p in parts if p.cell is not None]
    return Md("; ".join(cells)) if cells else Md("—")


def _row(
    results: Results, s: ScenarioResult, esc: _Escaper, with_baseline: bool, said: Sequence[ScenarioPart] = ()
) -> _Row:
    """One table row; a scenario new to a checked suite (no baseline) is shown against its threshold."""
    cand = s.passes / s.counted_trials if s.counted_trials else None
    rates, effect = _rate(s.passes, s.counted_trials), "—"
    if with_baseline and s.baseline is None:
        rates = f"— → {rates}"
    if s.baseline is not None:
        rates = f"{_rate(s.baseline.passes, s.baseline.trials)} → {rates}"
        if cand is not None and s.baseline.trials:
            effect = _pp(cand - s.baseline.passes / s.baseline.trials)
    elif cand is not None:
        threshold = _threshold(results, s)
        effect = f"{_pp(cand - threshold)} vs {_pct(threshold)}% threshold"
    words = _cell(said, esc)
    return _Row(esc(s.name, _W_NAME), Md(_verdict_word(s)), Md(rates), Md(effect), words, Md(trials_text(s)))


def _details(s: ScenarioResult, esc: _Escaper, settings: Settings, said: Sequence[ScenarioPart] = ()) -> _Details:
    facts: list[tuple[Md, Md]] = [(Md("Input"), esc(s.input, _W_LINE))]
    more = more_trials_text(s, settings)
    if more is not None:
        facts.append((Md("More trials"), esc(more, _W_LINE)))
    facts += [(esc(p.fact[0], _W_NAME), esc(p.fact[1], _W_TEXT)) for p in said if p.fact is not None]
    cost = scenario_usd(s)
    if cost is not None:
        usd, saved = cost
        vs = (
            ""
            if saved is None
            else f" (a fixed-size test would have cost {_usd(abs(saved))} {'more' if saved >= 0 else 'less'})"
        )
        facts.append((Md("Cost"), Md(f"{_usd(usd)} for {len(s.trials)} trials{vs}")))
    facts.extend((Md("Note"), esc(note, _W_LINE)) for note in s.verdict.notes[:_MAX_LIST])
    reasons = list(s.failure_reasons().items())
    return _Details(
        esc(s.name, _W_NAME),
        Md(VERDICT_WORD[s.verdict.verdict.value]),
        esc(s.verdict.test, _W_NAME),
        esc(explanation_of(s), _W_TEXT),
        tuple(facts),
        tuple((count, esc(reason, _W_LINE)) for reason, count in reasons[:3]),
        _more(len(reasons) - 3, "failure reasons"),
    )


def _run_details(results: Results, esc: _Escaper, sections: Sequence[Section] = ()) -> _Run:
    st = results.settings
    agent = results.agent.get("version") or results.agent.get("entry") or "unknown"
    settings = (
        f"alpha {st.alpha:g}, beta {st.beta:g}, method {st.method}, correction {st.correction}, "
        f"threshold {st.threshold:g}, delta {st.delta:g}, regression margin {st.margin:g}, at most {st.trial_cap} "
        f"trials per scenario, errors {st.errors}{settings_words(sections)}, seed {st.seed}"
    )
    versions = ", ".join(f"{k} {v}" for k, v in results.versions.items()) or "not recorded"
    facts = [
        (
            Md("Kind"),
            esc(f"{results.kind} (run {results.run_id}, {results.started_at} to {results.finished_at})"),
        ),
        (Md("Agent"), esc(agent, _W_LINE)),
        (Md("Settings"), esc(settings)),
        (Md("Versions"), esc(versions)),
    ]
    return _Run(tuple(facts), tuple(_listed(results.notes, esc, _W_TEXT, "notes")))


def _cost(results: Results, esc: _Escaper, sections: Sequence[Section]) -> list[Md]:
    """The cost line (with what sections spent besides the trials), the savings, then the sections placed here."""
    total = results.cost()
    tokens = f"{total['trials']} trials, {total['input_tokens'] + total['output_tokens']:,} tokens"
    if total["usd"] is None:
        line = f"**Cost:** not priced ({tokens})."
    else:
        line = (
            f"**Cost:** {_usd(total['usd'])}{extra_cost(sections, _usd)} at config.prices or the price table ({tokens})."
        )
    saved = savings_of(results)
    if saved is not None:
        usd = "" if saved.usd is None else f", about {_usd(saved.usd)}"
        line += (
            f" Against a fixed-size test with the same α and β ({saved.fixed_n_trials} trials) this run "
            f"{saved.verb} {saved.trials} trials ({saved.percent:.0f}%{usd})."
        )
    lines = [Md(line), *_estimate_line(results)]
    for section in sections:
        if section.place == "cost":
            lines.extend(_escaped(p, esc, _W_LINE) for p in section.paragraphs[:_MAX_LIST])
    return lines


def _estimate_line(results: Results) -> list[Md]:
    """Issue 25: the estimate ``agentassay plan`` gives (recorded by the check, section ``plan``, per scenario)
    beside what the check's tests used and what its trials cost. Empty when the results carry no estimate."""
    plan = results.sections.get("plan")
    rows = plan.get("scenarios") if isinstance(plan, dict) else None
    if not isinstance(rows, dict) or not rows or not all(isinstance(r, dict) for r in rows.values()):
        return []
    try:
        expected = sum(float(r["expected_trials"]) for r in rows.values())
        p95 = sum(int(r["p95_trials"]) for r in rows.values())
    except (KeyError, TypeError, ValueError):  # a damaged section costs only this line
        return []
    usd = [r.get("usd_expected") for r in rows.values()], [r.get("usd_p95") for r in rows.values()]
    priced = all(isinstance(x, int | float) for x in usd[0] + usd[1])
    used = sum(s.verdict.trials_used for s in results.scenarios if s.name in rows)
    cost = results.cost()
    run = f"{cost['trials']} trials run" + ("" if cost["usd"] is None else f", {_usd(cost['usd'])}")
    return [
        Md(
            f"**Estimate vs actual:** `agentassay plan` expected {expected:.0f} candidate trials"
            f"{f' and {_usd(sum(usd[0]))}' if priced else ''} (95th percentile {p95}"
            f"{f', {_usd(sum(usd[1]))}' if priced else ''}); this check's tests used {used} ({run})."
        )
    ]


def _more(n: int, what: str) -> Md | None:
    """``… 3 more notes`` (``what`` is the plural; an 's' is dropped for one), None for none."""
    return Md(f"… {n} more {what if n != 1 else what[:-1]}") if n > 0 else None


def _escaped(text: Any, esc: _Escaper, width: int) -> Md:
    """Text as Markdown: escaped, unless it already is escaped Markdown (``Md``, e.g. a plugin's section
    that escaped every name it put in)."""
    return text if isinstance(text, Md) else esc(text, width)


def _listed(items: Sequence[str], esc: _Escaper, width: int, what: str) -> list[Md]:
    more = _more(len(items) - _MAX_LIST, what)
    return [_escaped(i, esc, width) for i in items[:_MAX_LIST]] + ([more] if more else [])


def _mermaid(text: str, redact: Callable[[str], str]) -> Md:
    """A fenced diagram. Code is shown verbatim, so it is not escaped: the fence is made longer than
    any backtick run inside (nothing can close it early), and directives that could loosen
    Mermaid's security level or attach click handlers are dropped."""
    lines = [ln for ln in redact(str(text)).splitlines() if not ln.lstrip().startswith(("%%{", "click "))]
    body = "\n".join(ln.translate(_CONTROLS) for ln in lines)
    fence = "`" * max(3, 1 + max((len(m) for m in re.findall(r"`+", body)), default=0))
    return Md(f"{fence}mermaid\n{body}\n{fence}")


def _link(url: str | None, esc: _Escaper, label: str = "Workflow run") -> Md | None:
    """A Markdown link (``label`` is ours); an URL that is not http(s) is shown as inert text."""
    if not url:
        return None
    url = url.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return Md(f"{label}: {esc(url, _W_LINE)}")
    # Parentheses, brackets, angle brackets, spaces and backticks are percent-encoded: none can end the link.
    return Md(f"[{label}]({urllib.parse.quote(url, safe=_URL_SAFE)})")


def _report_link(url: str | None, esc: _Escaper) -> Md | None:
    """The line under the headline that leads to the HTML report (an artifact, or wherever the caller put it)."""
    link = _link(esc.redact(url) if url else None, esc, "HTML report")
    if link is None:
        return None
    return Md(f"📄 {link}: baseline beside candidate per scenario, with the traces (`report.html` in the results artifact)")


# -- assembly ----------------------------------------------------------------------------------


def _marker(marker_key: str | None) -> str:
    """The hidden marker; a key (e.g. the suite path) gives each suite its own sticky comment.

    Characters outside ``[A-Za-z0-9._:/-]`` become '_', so no key can close the HTML comment, and
    the same key always maps to the same marker.
    """
    key = _KEY_CHARS.sub("_", marker_key.strip()) if marker_key else ""
    return f"<!-- agentassay:pr-comment:{key} -->" if key else MARKER


def _part(macro: Callable[[Any], str], view: Any) -> Md:
    """One measured piece; the page template supplies the newlines around it, so it has none of its own."""
    return Md(macro(view).strip("\n"))


@dataclass(frozen=True)
class _Piece:
    kind: str  # "row", "diagram", "run" or "details"
    text: Md
    verdict: Verdict | None = None
    section: int | None = None  # the section a diagram belongs to


def _section_view(section: Section, esc: _Escaper, pointer: str) -> _SectionView:
    dropped = None
    if section.diagram is not None:
        dropped = Md(esc(section.diagram.dropped, _W_TEXT).replace("{pointer}", pointer))
    title = _escaped(section.title, esc, _W_NAME) if section.title else None
    paragraphs = [_escaped(p, esc, _W_TEXT) for p in section.paragraphs[:_MAX_LIST]]
    summary = _summary_line(section.title, esc) if section.fold else None
    return _SectionView(
        title=title,
        paragraphs=tuple(paragraphs),
        items=tuple(_listed(list(section.items), esc, _W_LINE, section.noun)),
        has_diagram=section.diagram is not None,
        dropped=dropped,
        folded=section.fold,
        summary=summary,
    )


def _summary_line(title: Any, esc: _Escaper) -> Md:
    """A folded section's ``<summary>``: raw HTML on GitHub, where Markdown (a backslash escape too) is not
    read, so a plain title is entity-escaped instead (and un-mentioned); a plugin's ``Md`` is kept as it is."""
    if isinstance(title, Md):
        return title
    if not title:
        return Md("Details")
    text = html.escape(_plain(title, _W_NAME, redact=esc.redact).replace("\n", " "))
    return Md(_REFS.sub(lambda m: m.group() + "\u200b", text.replace("@", "@\u200b")))


def _diagram_piece(
    section: Section, index: int, esc: _Escaper, redact: Callable[[str], str], parts: Any
) -> _Piece:
    d = section.diagram
    assert d is not None
    view = _Diagram(
        _mermaid(d.mermaid, redact),
        folded=len(str(d.mermaid).splitlines()) > _FOLD_LINES,
        legend=_escaped(d.legend, esc, _W_TEXT) if d.legend else None,
        title=_escaped(d.fold_title, esc, _W_NAME),
    )
    return _Piece("diagram", _part(parts.diagram, view), section=index)


def _warned(results: Results | None, warnings: Sequence[str], sections: Sequence[Section]) -> list[str]:
    """The warnings shown: the caller's, an interrupted run's, and the sections placed with the warnings."""
    warned = list(warnings)
    if results is not None and results.interrupted and results.aborted is None:
        warned.append("the run was interrupted: the verdicts cover the trials that finished")
    warned += warning_lines(sections)  # sections placed with the warnings (change alerts), escaped below
    return warned


def _context(
    baseline_info: str | None,
    mode: str,
    warned: list[str],
    pointer: str,
    body: list[Section],
    run_url: str | None,
    esc: _Escaper,
    report_url: str | None = None,
) -> dict[str, Any]:
    """The page's parts that do not depend on the verdicts; the verdict parts start empty."""
    ctx: dict[str, Any] = {
        "report_link": _report_link(report_url, esc),
        "baseline_info": esc(baseline_info, _W_LINE) if baseline_info else None,
        "record_only": mode == "record-only",
        "warnings": _listed(warned, esc, _W_TEXT, "warnings"),
        "pointer": Md(pointer),
        "table": None,
        "sections": [_section_view(s, esc, pointer) for s in body],
        "cost": [],
        "details_shown": False,
    }
    link = _link(esc.redact(run_url) if run_url else None, esc)  # redacted before percent-encoding hides it
    footer = f"AgentAssay {__version__}"
    ctx["footer"] = Md(f"{link} · {footer}" if link else footer)
    return ctx


def _headline(results: Results | None, error: str | None, warned: list[str], esc: _Escaper) -> tuple[Md, Md]:
    """The title and the gloss under it: the engine's error, no results, or the suite's decision."""
    if error is not None:  # the engine stopped before a verdict: no table, whatever results it left
        return (
            Md("⛔ **ERROR** · AgentAssay"),
            Md(f"The run stopped with an error, before any verdict: {esc(error, _W_TEXT)}"),
        )
    if results is None:
        why = "the warnings below say why" if warned else "the workflow run's log says why"
        return Md("❔ **NO RESULTS** · AgentAssay"), Md(f"This run produced no results file; {why}.")
    d = results.decision
    order = ("fail", "inconclusive", "pass")
    counts = counts_text(d, order) or "no scenarios"
    name = esc(results.suite.get("name", "?"), _W_NAME)
    line = headline(results, name=lambda text: esc(text, _W_NAME), usd=_usd_short)
    title = Md(f"{STATUS_ICON.get(d.decision.value, '')} **{d.decision.value.upper()}** — {line}".strip())
    against = (
        "its threshold" if results.kind in ("run", "analyze") else "the baseline (pass rate or behaviour)"
    )
    gloss = Md(
        {
            "deploy": f"Every scenario passed against {against}.",
            "block": f"At least one scenario failed against {against}.",
            "manual": "No scenario failed, but some are inconclusive: more trials or a human call is needed.",
            "aborted": esc(aborted_gloss(results), _W_TEXT),
        }[d.decision.value]
    )
    return title, Md(f"Suite {name} ({counts}). {gloss}")


def _table(
    results: Results, ordered: list[ScenarioResult], esc: _Escaper, parts: Any, said: Mapping[str, list[ScenarioPart]]
) -> tuple[dict[str, Md], list[_Piece]]:
    """The table's header and legend, and one row piece a scenario (worst first, so rows drop best first)."""
    with_baseline = any(s.baseline is not None for s in ordered)
    table = {
        "rates_header": Md("baseline → candidate" if with_baseline else "pass rate"),
        "legend": Md(
            "Pass rates with 95% Wilson intervals. Effect: candidate minus "
            f"{'baseline' if with_baseline else 'threshold'} pass rate, in percentage points. "
            "Trials: candidate trials the test needed to decide (and how many ran, where more did); "
            "the cost line below compares them with a fixed-size test of the same α and β."
        ),
    }
    rows = [
        _Piece("row", _part(parts.row, _row(results, s, esc, with_baseline, said.get(s.name, ()))), s.verdict.verdict)
        for s in ordered
    ]
    return table, rows


def _page_text(
    keep: int,
    *,
    page: Any,
    ctx: dict[str, Any],
    pieces: list[_Piece],
    n_sections: int,
    pointer: str,
    head: str,
    redact: Callable[[str], str],
) -> str:
    """The whole comment with the first ``keep`` pieces, saying how many of the rest were left out."""
    kept, dropped = pieces[:keep], pieces[keep:]
    omitted = {v: 0 for v in _OMITTED}
    for p in dropped:
        if p.verdict is not None:
            omitted[p.verdict] += 1
    diagrams = {p.section: p.text for p in kept if p.kind == "diagram"}
    out = page.render(
        ctx,
        rows=[p.text for p in kept if p.kind == "row"],
        omitted_rows=[
            Md(
                f"{n} {_OMITTED[v]} scenarios not shown, to keep this report within its size limit; see {pointer}."
            )
            for v, n in omitted.items()
            if n
        ],
        diagrams=[diagrams.get(i) for i in range(n_sections)],
        run=next((p.text for p in kept if p.kind == "run"), None),
        details=[p.text for p in kept if p.kind == "details"],
        details_omitted=sum(p.kind == "details" for p in dropped),
    )
    return head + redact(out.rstrip("\n")) + "\n"


def _fit(pieces: list[_Piece], text: Callable[[int], str], limit: int) -> str:
    """The comment with as many pieces as fit within ``limit``; cut, as a last resort, when none do."""
    out = text(len(pieces))
    if len(out) <= limit:
        return out
    # Everything dropped gives an upper bound on the rest (its omission counts are the largest); each
    # kept piece adds its own length and at most two newlines. So one pass over prefix sums finds
    # how many pieces fit; the check after it only guards against redaction across piece borders.
    base = len(text(0))
    sizes = list(accumulate((len(p.text) + 2 for p in pieces), initial=0))
    keep = max((k for k in range(len(pieces) + 1) if base + sizes[k] <= limit), default=0)
    out = text(keep)
    while len(out) > limit and keep > 0:
        over, k = len(out) - limit, keep
        while k > 0 and sizes[keep] - sizes[k] < over:
            k -= 1
        keep = k
        out = text(keep)
    if len(out) > limit:  # the fixed parts alone are too long (a tiny limit): cut, keeping the head
        tail = "\n\n… report cut to its size limit; see the results artifact.\n"
        out = out[: max(limit - len(tail), 0)] + tail
        out = out[:limit]
    return out


def _render(
    results: Results | None,
    *,
    marker: str | None,
    mode: str,
    run_url: str | None,
    warnings: Sequence[str],
    baseline_info: str | None,
    secrets: Sequence[str],
    limit: int,
    sections: Sequence[Section],
    pointer: str,
    error: str | None = None,
    said: Mapping[str, list[ScenarioPart]] | None = None,
    report_url: str | None = None,
) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    redact = _redactor(secrets)
    esc = _Escaper(redact)
    env = _environment()
    parts = env.get_template("_parts.md.j2").module
    page = env.get_template("pr_comment.md.j2")

    warned = _warned(results, warnings, sections)
    body = [s for s in sections if s.place == "body"]
    ctx = _context(baseline_info, mode, warned, pointer, body, run_url, esc, report_url)
    said = said or {}
    ordered = (
        sorted(results.scenarios, key=lambda s: _ORDER[s.verdict.verdict]) if results is not None else []
    )
    if error is not None:  # the engine stopped before a verdict: no table, whatever results it left
        results, ordered = None, []
    ctx["title"], ctx["gloss"] = _headline(results, error, warned, esc)
    pieces: list[_Piece] = []
    if results is not None:
        if ordered:
            ctx["table"], pieces = _table(results, ordered, esc, parts, said)
            ctx["details_shown"] = True
        ctx["cost"] = _cost(results, esc, sections)
    pieces += [_diagram_piece(s, i, esc, redact, parts) for i, s in enumerate(body) if s.diagram is not None]
    if results is not None and ordered:
        pieces.append(_Piece("run", _part(parts.run, _run_details(results, esc, sections))))
        pieces += [
            _Piece("details", _part(parts.scenario, _details(s, esc, results.settings, said.get(s.name, ()))))
            for s in ordered
        ]

    head = "" if marker is None else marker + "\n"
    text = partial(
        _page_text,
        page=page,
        ctx=ctx,
        pieces=pieces,
        n_sections=len(body),
        pointer=pointer,
        head=head,
        redact=redact,
    )
    return _fit(pieces, text, limit)


def _sections(
    results: Results | None,
    secrets: Sequence[str],
    replacing: Sequence[Section],
    sections: Sequence[Section] | None,
    plugins: Plugins | None,
) -> tuple[list[Section], dict[str, list[ScenarioPart]], list[str]]:
    """The plugins' sections (unless ``sections`` are given), each of ``replacing`` in place of theirs with
    its key; their scenario parts; a warning per plugin that failed."""
    warnings: list[str] = []
    said: dict[str, list[ScenarioPart]] = {}
    if sections is not None:
        found = list(sections)
    elif results is not None:
        redact = _redactor(secrets)
        esc = _Escaper(redact)
        clean = partial(_plain, redact=redact)
        report = ReportContext("markdown", tuple(secrets), escape=esc, usd=_usd, markup=Md, clean=clean)
        got = collect(results, report, plugins)
        found, said, warnings = got.sections, got.parts, got.warnings
    else:
        found = []
    for section in replacing:
        found = replace_section(found, section)
    return found, said, warnings


def render_pr_comment(
    results: Results | None,
    *,
    marker_key: str | None = None,
    mode: str = "check",
    run_url: str | None = None,
    warnings: Sequence[str] = (),
    baseline_info: str | None = None,
    secrets: Sequence[str] = (),
    limit: int = COMMENT_LIMIT,
    replacing: Sequence[Section] = (),
    sections: Sequence[Section] | None = None,
    plugins: Plugins | None = None,
    error: str | None = None,
    report_url: str | None = None,
) -> str:
    """The Markdown of the one sticky PR comment, at most ``limit`` characters, marker on the first line.

    ``results`` None: the run produced no results file (``warnings`` say why). ``mode``
    "record-only": there is no baseline yet, the run was recorded only. ``warnings`` and
    ``baseline_info`` come from the workflow; every text is redacted (agentassay/_boundary.py) and so are
    ``secrets`` (see :func:`secret_values`). The sections after the table (a built-in or third-party plugin's)
    come from the plugins that read ``results`` (``plugins``: default, the installed ones), unless
    ``sections`` are given. Each of ``replacing`` takes the place of the plugin section with its key
    (appended when there is none); its escaped ``Md`` strings are printed as they are, plain strings
    are escaped here. A diagram of more than 40 lines is folded into a ``<details>``. ``error``: the run
    stopped before a verdict (an engine error); the comment says so, with no table. ``report_url``: where the
    HTML report can be opened (http(s); the Action gives the run's artifacts list), linked under the headline.
    """
    found, said, failed = _sections(results, secrets, replacing, sections, plugins)
    return _render(
        results,
        marker=_marker(marker_key),
        mode=mode,
        run_url=run_url,
        warnings=[*warnings, *failed],
        baseline_info=baseline_info,
        secrets=secrets,
        limit=limit,
        sections=found,
        pointer="the job summary or the results artifact",
        error=error,
        said=said,
        report_url=report_url,
    )


def render_job_summary(
    results: Results | None,
    *,
    marker_key: str | None = None,
    mode: str = "check",
    run_url: str | None = None,
    warnings: Sequence[str] = (),
    baseline_info: str | None = None,
    secrets: Sequence[str] = (),
    limit: int = SUMMARY_LIMIT,
    replacing: Sequence[Section] = (),
    sections: Sequence[Section] | None = None,
    plugins: Plugins | None = None,
    error: str | None = None,
    report_url: str | None = None,
) -> str:
    """The same report for ``$GITHUB_STEP_SUMMARY``: no marker (``marker_key`` is accepted and unused,
    so both calls take the same arguments) and GitHub's larger summary limit, so that what the
    comment had to leave out is here."""
    del marker_key
    found, said, failed = _sections(results, secrets, replacing, sections, plugins)
    return _render(
        results,
        marker=None,
        mode=mode,
        run_url=run_url,
        warnings=[*warnings, *failed],
        baseline_info=baseline_info,
        secrets=secrets,
        limit=limit,
        sections=found,
        pointer="the results artifact",
        error=error,
        said=said,
        report_url=report_url,
    )
