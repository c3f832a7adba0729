"""Reports rendered from a results file (terminal today; PR Markdown, HTML and JUnit follow)."""

from ._coverage import coverage_section, mermaid_flowchart
from ._markdown import (
    MARKER,
    escape_markdown,
    escape_markdown_cell,
    render_job_summary,
    render_pr_comment,
    secret_values,
)
from ._terminal import render_table

__all__ = [
    "MARKER",
    "coverage_section",
    "escape_markdown",
    "escape_markdown_cell",
    "mermaid_flowchart",
    "render_job_summary",
    "render_pr_comment",
    "render_table",
    "secret_values",
]
