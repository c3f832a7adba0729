"""Terminal report: the verdict table and the decision, in plain text that also reads well in CI logs."""

from __future__ import annotations

import os
import sys
import textwrap
from typing import TYPE_CHECKING

from .._results import Results, ScenarioResult, more_trials_text
from .._visible import visible
from ._sections import ReportContext, Section, collect, extra_cost, warning_lines
from ._summary import VERDICT_WORD, clip, counts_text, explanation_of, savings_of, scenario_usd, trials_text

if TYPE_CHECKING:
    from .._plugins import Plugins

DEFAULT_WIDTH = 100  # columns of a CI log: explanations are wrapped there, never cut

TERMINAL = ReportContext(  # untrusted text is shown with its control characters escaped (_visible.py)
    "terminal", escape=lambda text, width=None: visible(text) if width is None else clip(visible(text), width)
)


def _rates(s: ScenarioResult) -> str:
    cand = f"{s.passes}/{s.counted_trials}"
    if s.baseline is None:
        return cand
    return f"{s.baseline.passes}/{s.baseline.trials} -> {cand}"


def _usd(s: ScenarioResult) -> str:
    """The scenario's cost (the comparison with a fixed-size test is said once, under the table)."""
    cost = scenario_usd(s)
    return "-" if cost is None else f"{cost[0]:.4f}"


def terminal_width() -> int:
    """Columns to wrap explanations at: ``COLUMNS`` when set, else the terminal's when standard output is one,
    else 100 (a CI log, a pipe, captured output); never under 60."""
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit():
        return max(60, int(env))
    try:
        columns = os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else DEFAULT_WIDTH
    except (AttributeError, OSError, ValueError):  # no real file behind stdout (captured, closed)
        columns = DEFAULT_WIDTH
    return max(60, columns)


def _wrapped(text: str, width: int, indent: int = 2) -> list[str]:
    """A text in full, wrapped at ``width`` (never cut): indented ``indent`` spaces, continued two further in."""
    first, rest = " " * indent, " " * (indent + 2)
    text = " ".join(text.split())
    return textwrap.wrap(
        text, width=width, initial_indent=first, subsequent_indent=rest, break_long_words=True, break_on_hyphens=False
    ) or [first]


def render_table(
    results: Results, *, reasons: int = 1, plugins: Plugins | None = None, width: int | None = None
) -> str:
    """One row per scenario (verdict, pass counts, trials used, tokens), then the plugins' sections
    (``plugins``: default, the installed ones), the decision and the cost. Explanations are wrapped at
    ``width`` columns (default: :func:`terminal_width`), never cut."""
    width = terminal_width() if width is None else width
    got = collect(results, TERMINAL, plugins)
    sections, warnings = got.sections, got.warnings
    rows = [
        (
            "scenario",
            "verdict",
            "baseline -> candidate" if results.kind not in ("run", "analyze") else "passed",
            "trials",
            "tokens",
            "cost (USD)",
        )
    ]
    for s in results.scenarios:
        cost = s.cost()
        rows.append(
            (
                clip(visible(s.name), 28),
                VERDICT_WORD[s.verdict.verdict.value],
                _rates(s),
                trials_text(s),
                f"{cost['input_tokens'] + cost['output_tokens']:,}",
                _usd(s),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    warned = warning_lines(sections)  # before the table: what the reader should know before the verdicts
    lines[:0] = [*warned, ""] if warned else []
    for s in results.scenarios:
        facts = [p.fact for p in got.parts.get(s.name, ()) if p.fact is not None]  # the plugins' lines
        if s.verdict.verdict.value == "pass" and not facts:
            continue
        lines += _wrapped(f"{visible(s.name)}: {visible(explanation_of(s))}", width)
        more = more_trials_text(s, results.settings)
        if more is not None:
            lines += _wrapped(f"more trials: {more}", width, indent=4)
        for label, text in facts:  # the behaviour line and the plugins' lines: wrapped as the explanation is
            lines += _wrapped(f"{label}: {text}", width, indent=4)
        if s.verdict.verdict.value != "pass":
            for reason, count in list(s.failure_reasons().items())[:reasons]:
                lines.append(f"    most common failure ({count}x): {clip(visible(reason), 140)}")
    for section in (s for s in sections if s.place == "body"):
        lines.extend(_body(section))
    d = results.decision
    total = results.cost()
    lines.append("")
    if results.aborted is not None:  # no suite decision was reached: say so, and why (issue 22, defect 11)
        a = results.aborted
        why = "the agent could not be run" if a.get("cause") == "agent" else "interrupted"
        lines.append(
            f"decision: ABORTED, none reached (exit {a.get('exit_code')}: {why}; scenarios so far: "
            f"{counts_text(d) or 'none'}); {total['trials']} trials, "
            f"{total['input_tokens'] + total['output_tokens']:,} tokens"
        )
    else:
        lines.append(
            f"decision: {d.decision.value.upper()} (suite {d.verdict.value}; {counts_text(d)}); "
            f"{total['trials']} trials, {total['input_tokens'] + total['output_tokens']:,} tokens"
        )
    saved = savings_of(results) if results.aborted is None else None  # a saving against a run that stopped
    if saved is not None:
        usd = "" if saved.usd is None else f", about ${abs(saved.usd):.4f} {'saved' if saved.usd >= 0 else 'extra'}"
        fewer = saved.verb == "saved"
        lines.append(
            f"trials: a fixed-size test with the same alpha and beta would need {saved.fixed_n_trials}; this "
            f"sequential run used {saved.run}, {saved.trials} {'fewer' if fewer else 'more'} ({saved.percent:.0f}%{usd})"
        )
    for section in (s for s in sections if s.place == "cost"):
        lines.extend(section.paragraphs)
    if total["usd"] is not None:
        lines.append(
            f"cost: ${total['usd']:.4f}{extra_cost(sections, TERMINAL.usd)} at config.prices or the price table"
        )
    for note in [*results.notes, *warnings]:
        lines.append(f"note: {note}")
    from .._boundary import redactor  # defence: a results file made elsewhere may hold secrets

    # Last, line by line: whatever a section or a plugin added reaches the terminal redacted and escaped.
    return "\n".join(visible(line) for line in redactor()("\n".join(lines)).split("\n"))


def _body(section: Section) -> list[str]:
    lines = [f"{section.title}:"] if section.title else []
    lines += [f"  {p}" if section.title else p for p in section.paragraphs]
    lines += [f"  - {item}" for item in section.items]
    return lines
