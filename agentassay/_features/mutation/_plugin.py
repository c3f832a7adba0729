"""The ``mutation`` section of a results file (``agentassay mutate``) in every report.

Reports only: mutation testing is a command that drives runs (agentassay/mutation), not a phase of
one; this plugin renders what it wrote — the scores with their intervals, one line per mutant, and
the surviving mutants as hints — in the terminal, the PR comment and the HTML report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookimpl
from ..._reports import Section

if TYPE_CHECKING:
    from ..._reports import ReportContext, Section
    from ..._results import Results

WORD = {"killed": "KILLED", "survived": "SURVIVED", "inconclusive": "INCONCLUSIVE", "not_activated": "not activated",
        "not_run": "not run"}


def score_text(name: str, s: dict[str, Any]) -> str:
    if s.get("score") is None:
        return f"{name}: no activated mutant ({s['mutants']} mutants)"
    lo, hi = s["interval"]
    return f"{name}: {s['killed']}/{s['activated']} killed, score {s['score']:.2f} (95% exact CI {lo:.2f}–{hi:.2f})"


def mutant_line(m: dict[str, Any]) -> str:
    trials = f", {m['trials']} trials" if m.get("trials") else ""
    return f"{WORD.get(m['status'], m['status'])}: {m['id']} — {m['diff']}{trials}. {m.get('reason') or ''}".strip()


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section] | None:
    section = results.sections.get("mutation")
    if not isinstance(section, dict):
        return None

    scores = section.get("scores") or {}
    paragraphs = [score_text("Mutation score", scores.get("overall") or {"mutants": 0})]
    paragraphs += [score_text(f"  {c}", s) for c, s in (scores.get("by_class") or {}).items()]
    items = [mutant_line(m) for m in section.get("mutants") or ()]
    items += [f"hint: {h}" for h in section.get("hints") or ()]
    items += [f"note: {n}" for n in section.get("notes") or ()]
    return [Section(key="mutation", title="Mutation testing", paragraphs=tuple(paragraphs), items=tuple(items),
                    noun="mutants")]
