"""Reports rendered from a results file (terminal, PR Markdown, the HTML report, JUnit XML).

Renderers know no feature: what a plugin adds comes as :class:`Section` objects from the
``agentassay_report_sections`` hook, read from the results file alone.
"""

from ._html import HtmlReport, load_traces, render_html
from ._junit import render_junit
from ._markdown import (
    MARKER,
    escape_markdown,
    escape_markdown_cell,
    render_job_summary,
    render_pr_comment,
    secret_values,
)
from ._sections import Diagram, ReportContext, ScenarioPart, Section, collect_sections
from ._terminal import render_table

__all__ = [
    "MARKER",
    "Diagram",
    "HtmlReport",
    "ReportContext",
    "ScenarioPart",
    "Section",
    "collect_sections",
    "escape_markdown",
    "escape_markdown_cell",
    "load_traces",
    "render_html",
    "render_job_summary",
    "render_junit",
    "render_pr_comment",
    "render_table",
    "secret_values",
]
