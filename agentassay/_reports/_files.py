"""Writing a results file's reports to disk: HTML (with its trace sidecar), JUnit XML, the PR comment.

One function for the CLI (``report``, ``run``/``check --html/--junit``), the demo and the Action,
so the files are the same wherever they are made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ._html import load_traces, render_html
from ._junit import render_junit
from ._markdown import render_pr_comment

if TYPE_CHECKING:
    from .._plugins import Plugins
    from .._results import Results


def sidecar_of(html: Path) -> Path:
    """Where the full trace viewer goes when it is too big to inline: ``report.html`` -> ``report.traces.html``."""
    return html.with_name(f"{html.stem}.traces.html")


def write_report_files(
    results: Results,
    *,
    html: Path | None = None,
    junit: Path | None = None,
    markdown: Path | None = None,
    store: Path | None = None,
    plugins: Plugins | None = None,
    secrets: Sequence[str] = (),
    junit_inconclusive: str = "skipped",
    baseline: Results | None = None,
    baseline_store: Path | None = None,
) -> list[Path]:
    """Write the reports asked for; return the paths written. ``store``: the trace store the HTML
    report's trace viewer reads (the run's traces, by run id); without it the viewer is left out.
    ``junit_inconclusive``: how the JUnit XML writes an INCONCLUSIVE scenario (skipped, pass, failure).
    ``baseline``: the results file the run was checked against, for the HTML report's baseline beside
    candidate; its traces come from ``baseline_store`` (default: ``store``, which a local ``run`` and
    ``check`` share)."""
    written: list[Path] = []
    if html is not None:
        traces = load_traces(store, results) if store is not None and Path(store).is_file() else None
        base_store = baseline_store if baseline_store is not None else store
        base_traces = None
        if baseline is not None and base_store is not None and Path(base_store).is_file():
            base_traces = load_traces(base_store, baseline)
        sidecar = sidecar_of(html)
        page = render_html(
            results, traces=traces, plugins=plugins, secrets=secrets, sidecar_href=sidecar.name,
            baseline=baseline, baseline_traces=base_traces,
        )
        written.append(_write(html, page.html))
        if page.sidecar is not None:
            written.append(_write(sidecar, page.sidecar))
    if junit is not None:

        written.append(
            _write(junit, render_junit(results, secrets=secrets, plugins=plugins, inconclusive=junit_inconclusive))
        )
    if markdown is not None:

        written.append(_write(markdown, render_pr_comment(results, secrets=secrets, plugins=plugins)))
    return written


def _write(path: Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path
