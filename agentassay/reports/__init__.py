"""Reports rendered from a results file (terminal today; PR Markdown, HTML and JUnit follow)."""

from ._terminal import render_table

__all__ = ["render_table"]
