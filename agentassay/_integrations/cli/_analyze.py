"""``agentassay analyze SOURCE... --suite FILE``: trace-first analysis, no agent call (docs/trace-first.md)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..._errors import ExitCode
from ..._features.tracefirst import AnalyzeError
from ..._features.tracefirst import analyze as run_analysis
from ..._spec import load_suite
from ._run import _emit, _handle_errors, _plugins, junit_inconclusive_option, plugin_option


def _analyze_errors(fn: Callable[..., int]) -> Callable[..., int]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return fn(*args, **kwargs)
        except AnalyzeError as exc:
            click.echo(f"error: {exc}", err=True)
            return ExitCode.USAGE
        except Exception as exc:
            if type(exc).__name__ == "TraceImportError":  # agentassay._integrations.importers, imported only when used
                click.echo(f"error: {exc}", err=True)
                return ExitCode.USAGE
            raise

    return wrapper


@click.command()
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...", type=click.Path(path_type=Path))
@click.option(
    "--suite",
    "suite_path",
    required=True,
    type=click.Path(path_type=Path),
    help="The suite whose checks, contracts, coverage and judge analyse the traces.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the results file (kind 'analyze'; usable as a baseline of `check`).",
)
@click.option(
    "--store",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Trace store: where a results file's traces are, and the judge's cache.",
)
@click.option("--run-id", default=None, help="Only this run's traces from a store.")
@click.option(
    "--agent-version", "version", default=None, help="Only this agent version's traces from a store."
)
@click.option(
    "--html",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the HTML report.",
)
@click.option(
    "--junit", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Also write JUnit XML."
)
@junit_inconclusive_option
@click.option(
    "--framework",
    default=None,
    metavar="NAME",
    help="Read OpenTelemetry files as this framework's spans (its fix-ups: agent names, handoffs); "
    "default: the suite agent's framework.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results file instead of the table.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no table.")
@plugin_option
@_handle_errors
@_analyze_errors
def analyze(
    sources: tuple[Path, ...],
    suite_path: Path,
    output: Path | None,
    store: Path | None,
    run_id: str | None,
    version: str | None,
    html: Path | None,
    junit: Path | None,
    junit_inconclusive: str,
    framework: str | None,
    as_json: bool,
    quiet: bool,
    plugin_specs: tuple[str, ...],
) -> int:
    """Analyse recorded traces with SUITE — our trace store, a results file (its run's traces), OpenTelemetry
    GenAI (OTLP/JSON), OpenInference, Agents SDK exports or JSONL spans — with no agent call.

    Exit codes as `run` (0 pass, 1 fail, 2 inconclusive); 3 an unreadable source, a bad suite, or no trace
    matching any scenario (the message names the file and the fix).
    """

    plugins = _plugins(plugin_specs)
    suite = load_suite(suite_path, plugin_keys=plugins.suite_keys())
    report = run_analysis(
        list(sources),
        suite,
        store=store,
        run_id=run_id,
        version=version,
        plugins=plugins,
        progress=not quiet and not as_json,
        framework=framework,
    )
    return _emit(
        report, output, as_json, quiet, plugins, html=html, junit=junit, store=store,
        junit_inconclusive=junit_inconclusive,
    )
