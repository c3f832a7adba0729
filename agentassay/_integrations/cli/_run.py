"""``agentassay run / check / compare / merge / demo``: run agents as stochastic trials and decide.

This module loads when one of its commands runs (the CLI's LazyGroup); the agent's framework loads with the agent.
"""

from __future__ import annotations

import functools
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from ..._boundary import FIELD_LIMIT, redact, scrub_document
from ..._errors import AgentAssayError, ExitCode
from ..._features.budget._settings import BudgetSettings
from ..._features.shards import merge_results
from ..._plugins import Plugins
from ..._reports import render_table
from ..._reports._files import write_report_files
from ..._reports._junit import INCONCLUSIVE_AS
from ..._results import (
    ResultsError,
    check_writable,
    compare_results,
    keep_elsewhere,
    load_results,
    refuse_aborted,
)
from ..._runner import RunReport, run_suite
from ..._runner._run import suite_info
from ..._spec import SpecError, load_suite
from ..._traces import TraceStore
from ..._visible import visible

DEFAULT_STORE = Path(".agentassay") / "traces.db"


def _handle_errors(fn: Callable[..., int]) -> Callable[..., int]:
    """Map our exceptions to documented exit codes with one clear line each."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return fn(*args, **kwargs)
        except AgentAssayError as exc:  # each error says its exit code (agentassay/_errors.py)
            # A message may quote a scenario name (visible) or an agent's own exception (redact).
            click.echo(f"error: {visible(redact(str(exc)), lines=True)}", err=True)
            return exc.exit_code

    return wrapper


def _overrides(suite: Any, **values: Any) -> Any:
    changes = {k: v for k, v in values.items() if v is not None}
    if not changes:
        return suite

    settings = replace(suite.settings, **changes)
    if settings.max_trials is not None and settings.max_trials < settings.trials:
        raise SpecError(f"--trials {settings.trials} exceeds config.max_trials {settings.max_trials}")
    return replace(suite, settings=settings)


def _emit(
    report: Any, output: Path | None, as_json: bool, quiet: bool, plugins: Any = None, *, html: Path | None = None,
    junit: Path | None = None, store: Path | None = None, junit_inconclusive: str = INCONCLUSIVE_AS[0],
    baseline: Any = None,
) -> int:
    results = report.results
    lost: str | None = None  # -o failed after the run: where the results were kept instead
    if output is not None:
        try:
            results.save(output)
        except OSError as exc:
            kept, lost = keep_elsewhere(results, output, exc)
            if kept is None and not as_json:  # --json prints it below anyway
                click.echo(results.to_json(), nl=False)
    if html is not None or junit is not None:
        for path in write_report_files(
            results, html=html, junit=junit, store=store, plugins=plugins, junit_inconclusive=junit_inconclusive,
            baseline=baseline,
        ):
            if not quiet:
                click.echo(f"report written to {path}", err=True)
    if as_json:
        click.echo(json.dumps(scrub_document(results.to_dict(), limit=FIELD_LIMIT, to_text=True), indent=1))  # as -o writes
    elif not quiet:
        click.echo(render_table(results, plugins=plugins))
    if output is not None and not quiet and lost is None:
        click.echo(f"results written to {output}", err=True)
    if report.aborted:
        click.echo(f"error: {report.aborted}", err=True)
    elif report.interrupted and not any(s.trials for s in results.scenarios):
        kept = f"; {output} records zero trials, marked interrupted" if output is not None else ""
        click.echo(f"interrupted by {report.interrupted} before the first trial: nothing ran{kept}", err=True)
    elif report.interrupted:
        click.echo(f"interrupted by {report.interrupted}: results so far were kept", err=True)
    if lost is not None:
        # Exit 3, not the verdict's code: a job that goes on to read -o would not find it (docs/cli.md).
        decision = results.decision.decision.value.upper()
        click.echo(f"error: {lost}. The run's decision was {decision} (exit code {int(report.exit_code)}).", err=True)
        return ExitCode.USAGE
    return int(report.exit_code)


def junit_inconclusive_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--junit-inconclusive``: how JUnit XML writes an INCONCLUSIVE scenario (docs/reports.md, "JUnit XML")."""
    return click.option(
        "--junit-inconclusive", "junit_inconclusive", type=click.Choice(INCONCLUSIVE_AS), default=INCONCLUSIVE_AS[0],
        show_default=True,
        help="An INCONCLUSIVE scenario in the JUnit XML: skipped (with its message; no dashboard fails on it), "
        "pass (a plain passing testcase) or failure (fails the test tab).",
    )(fn)


class ShardType(click.ParamType):
    """``I/N``: run shard I of N (1 <= I <= N) of the suite's scenarios, e.g. a CI matrix entry."""

    name = "I/N"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        index, sep, count = str(value).strip().partition("/")
        try:
            i, n = int(index), int(count)
        except ValueError:
            i = n = None
        if not sep or i is None or n is None:
            self.fail(f"{value!r} is not I/N with whole numbers I and N (e.g. --shard 2/4)", param, ctx)
        if n < 1:
            self.fail(f"{value!r}: the shard count N must be at least 1", param, ctx)
        if not 1 <= i <= n:
            self.fail(f"{value!r}: the shard index I must be between 1 and N = {n}", param, ctx)
        return i, n


def _not_a_shard(results: Any, path: Path, role: str) -> None:
    """A shard's file is never a whole baseline or candidate: its levels and Holm assume the others."""
    if results.sections.get("shard") is not None:
        s = results.sections["shard"]
        raise ResultsError(
            f"{path}: shard {s.get('index')}/{s.get('count')} of a suite, not a whole {role}; combine the shards "
            "first with `agentassay merge SHARD_FILE... -o FILE`"
        )


def _same_suite(names: list[str], suite: dict[str, Any], baseline: Any, path: Path) -> None:
    """A baseline that shares no scenario with the suite is another suite's (or empty): exit 3, never a silent
    fall-back to threshold tests and a DEPLOY (issue 22, defect 4). A renamed or added scenario keeps the
    per-scenario note."""
    have = [s.name for s in baseline.scenarios]
    if set(names) & set(have):
        return

    def who(info: dict[str, Any]) -> str:
        digest = info.get("sha256")
        return f"'{info.get('name')}'" + (f" (sha256 {str(digest)[:12]})" if digest else "")

    theirs = ", ".join(have[:8]) + (f" and {len(have) - 8} more" if len(have) > 8 else "") if have else "none"
    raise ResultsError(
        f"{path}: this baseline shares no scenario with the suite: it was recorded for suite "
        f"{who(baseline.suite or {})} with scenarios {theirs}; the suite {who(suite)} has "
        f"{', '.join(names[:8])}{' and more' if len(names) > 8 else ''}. Record a baseline of this suite with "
        "`agentassay run SUITE --full -o FILE`, or pass the baseline that suite recorded."
    )


def load_baseline(path: Path, suite: Any) -> Any:
    """The baseline results file a check of ``suite`` compares with: refused when it reached no decision (issue 22,
    defect 11), is one shard, or shares no scenario with the suite (exit 3)."""
    baseline = load_results(path)
    refuse_aborted(baseline, path, "baseline")
    _not_a_shard(baseline, path, "baseline")
    _same_suite([s.name for s in suite.scenarios], suite_info(suite), baseline, path)
    return baseline


def plugin_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``-p MODULE`` (repeatable): load a plugin module; ``-p no:NAME`` blocks one, built-ins included."""
    return click.option(
        "-p", "--plugin", "plugin_specs", multiple=True, metavar="MODULE",
        help="Load the plugin module MODULE (repeatable); `-p no:NAME` blocks a plugin by name. Installed plugins "
        "(entry-point group 'agentassay') and AGENTASSAY_PLUGINS load too (docs/architecture.md).",
    )(fn)


def _plugins(specs: tuple[str, ...]) -> Any:
    return Plugins(specs)


def _run_common(fn: Callable[..., Any]) -> Callable[..., Any]:
    options = [
        click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the results file here."),
        click.option("--agent", "agent_entry", metavar="MODULE:ATTR", help="Run this agent instead of the suite's."),
        click.option("--agent-version", metavar="LABEL", help="Version label for the trace store (default: entry@git-commit)."),
        click.option("--trials", type=click.IntRange(min=1), help="Override config.trials."),
        click.option("--concurrency", type=click.IntRange(min=1), help="Override config.concurrency."),
        click.option("--seed", type=int, help="Override config.seed."),
        click.option("--method", type=click.Choice(["sprt", "fixed"]), help="Override config.method."),
        click.option(
            "--budget-usd", "budget_usd", type=click.FloatRange(min=0, min_open=True), default=None, metavar="USD",
            help="Override config.budget_usd: start no trial once the finished ones cost USD (priced by "
            "config.prices, else the built-in price table).",
        ),
        click.option("--full", is_flag=True, help="Run every scenario to its trial cap even after it is decided (for baselines)."),
        click.option(
            "--shard", type=ShardType(), default=None,
            help="Run only shard I of N (scenario k, 0-based, is in shard k mod N + 1) at the levels of the "
            "whole suite; combine the N results files with `agentassay merge`.",
        ),
        click.option(
            "--store", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_STORE, show_default=True,
            help="SQLite trace store receiving every trial as it finishes.",
        ),
        click.option("--no-store", is_flag=True, help="Do not keep traces."),
        click.option("-q", "--quiet", is_flag=True, help="No progress and no table."),
        click.option("--json", "as_json", is_flag=True, help="Print the results file to stdout instead of the table."),
        click.option(
            "--html", "html", type=click.Path(dir_okay=False, path_type=Path), default=None,
            help="Also write the HTML report (self-contained; traces from the store) here.",
        ),
        click.option(
            "--junit", "junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
            help="Also write JUnit XML (one testcase per scenario, Surefire conventions) here.",
        ),
        junit_inconclusive_option,
        plugin_option,
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _execute(
    suite_path: Path,
    baseline_path: Path | None,
    *,
    regression: bool = False,
    warm_start: Path | None = None,
    pool: Path | None = None,
    **opts: Any,
) -> int:
    if pool is not None and not opts["full"]:
        click.echo(
            f"error: --pool {pool} needs --full: pooling adds a new recording's trials to an earlier baseline, and "
            f"only full recordings pool. Record with `agentassay run {suite_path} --full --pool {pool} -o FILE`",
            err=True,
        )
        return ExitCode.USAGE
    if pool is not None and opts["shard"] is not None:
        click.echo(
            "error: --pool cannot be combined with --shard: record the shards without --pool and merge them "
            "(`agentassay merge`); a whole-suite recording can then pool against the merged file",
            err=True,
        )
        return ExitCode.USAGE
    plugins = _plugins(opts["plugin_specs"])
    suite = load_suite(suite_path, plugin_keys=plugins.suite_keys())
    suite = _overrides(
        suite, trials=opts["trials"], concurrency=opts["concurrency"], seed=opts["seed"], method=opts["method"]
    )
    if opts["budget_usd"] is not None:
        suite = replace(suite, settings=suite.settings.with_parts(BudgetSettings(opts["budget_usd"])))
    if regression and baseline_path is None:
        if suite.settings.baseline is None:
            click.echo(
                f"error: no baseline: pass --baseline FILE or set config.regression.baseline in {suite_path}",
                err=True,
            )
            return ExitCode.USAGE
        baseline_path = Path(suite.settings.baseline)
    baseline = load_baseline(baseline_path, suite) if baseline_path is not None else None
    if opts["output"] is not None:
        check_writable(opts["output"])  # before the first trial: an unwritable -o would lose the verdict
    prior = load_results(warm_start) if warm_start is not None else None
    previous = load_results(pool) if pool is not None else None
    if previous is not None and pool is not None:
        _not_a_shard(previous, pool, "baseline to pool")
    store = None if opts["no_store"] else TraceStore(opts["store"])
    try:
        report = run_suite(
            suite,
            entry=opts["agent_entry"],
            baseline=baseline,
            warm_from=prior,
            store=store,
            version=opts["agent_version"],
            full=opts["full"],
            progress=not opts["quiet"] and not opts["as_json"],
            shard=opts["shard"],
            plugins=plugins,
            pool=previous,
            pool_from=None if pool is None else str(pool),
        )
    finally:
        if store is not None:
            store.close()
    return _emit(
        report, opts["output"], opts["as_json"], opts["quiet"], plugins, html=opts["html"], junit=opts["junit"],
        store=None if opts["no_store"] else opts["store"], junit_inconclusive=opts["junit_inconclusive"],
        baseline=baseline,
    )


@click.command()
@click.argument("suite", type=click.Path(path_type=Path))
@click.option(
    "--warm-start", "warm_start", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Results file of earlier trials (e.g. the previous baseline) to warm-start the SPRTs; "
    "any version is safe: the miss rate stays <= config.warm_start.inflation x beta.",
)
@click.option(
    "--pool", "pool", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="PREVIOUS.json",
    help="With --full: pool this previous baseline's trials into the new one when the suite, model, trial "
    "settings, agent source and versions are all unchanged (at most 2 x the recorded trials per scenario, the "
    "most recent kept); when anything differs nothing is pooled and a note says what differed.",
)
@_run_common
@_handle_errors
def run(suite: Path, warm_start: Path | None, pool: Path | None, **opts: Any) -> int:
    """Run every scenario of SUITE and give threshold verdicts.

    Record a baseline with --full (-o FILE); add --pool PREVIOUS.json to pool the previous baseline's
    trials when nothing that could change behaviour changed. Exit 0 pass, 1 fail, 2 inconclusive, 3 bad
    suite or arguments, 4 the agent could not be run.
    """
    return _execute(suite, None, warm_start=warm_start, pool=pool, **opts)


@click.command()
@click.argument("suite", type=click.Path(path_type=Path))
@click.option(
    "--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Results file of the baseline (from `agentassay run -o`); default: config.regression.baseline.",
)
@_run_common
@_handle_errors
def check(suite: Path, baseline: Path | None, **opts: Any) -> int:
    """Run the candidate agent of SUITE and test each scenario for regression against BASELINE.

    Exit 0 deploy, 1 block (a scenario regressed), 2 manual (not enough evidence), 3 bad input,
    4 the agent could not be run.
    """
    return _execute(suite, baseline, regression=True, **opts)


@click.command()
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("cand", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the comparison here.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="No table.")
@plugin_option
@_handle_errors
def compare(base: Path, cand: Path, output: Path | None, as_json: bool, quiet: bool, plugin_specs: tuple[str, ...]) -> int:
    """Regression verdicts from two results files, with no agent calls.

    CAND's outcomes are replayed in trial order through the test `check` uses, with CAND's
    settings, so comparing the files a check used reproduces its verdicts. Exit codes as `check`.
    """

    plugins = _plugins(plugin_specs)
    base_results, cand_results = load_results(base), load_results(cand)
    refuse_aborted(base_results, base, "baseline")  # neither reached a decision to compare (issue 22, defect 11)
    refuse_aborted(cand_results, cand, "candidate")
    _not_a_shard(base_results, base, "baseline")
    _not_a_shard(cand_results, cand, "candidate")
    _same_suite([s.name for s in cand_results.scenarios], cand_results.suite or {}, base_results, base)
    results = compare_results(base_results, cand_results, plugins=plugins)
    return _emit(RunReport(results), output, as_json, quiet, plugins)


@click.command()
@click.argument("shards", nargs=-1, required=True, metavar="SHARD_FILE...", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="The baseline results file the shards of `check` were checked against (required for them).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
    help="Write the merged results file here.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the merged results file instead of the table.")
@click.option("-q", "--quiet", is_flag=True, help="No table.")
@plugin_option
@_handle_errors
def merge(
    shards: tuple[Path, ...], baseline: Path | None, output: Path, as_json: bool, quiet: bool, plugin_specs: tuple[str, ...]
) -> int:
    """Combine the results files of all N shards (`run`/`check --shard I/N`) into one, and decide.

    Every verdict is re-derived from the trials over all scenarios (Holm and the decision span the
    whole suite), so the result is what one unsharded run would have decided. Exit codes as `check`
    (0 deploy, 1 block, 2 manual); 3 when a shard is missing, repeated or from another suite.
    """

    plugins = _plugins(plugin_specs)

    loaded = [load_results(p) for p in shards]
    for shard, path in zip(loaded, shards, strict=True):
        refuse_aborted(shard, path, "shard to merge")  # its part of the decision was never reached
    base = load_results(baseline) if baseline is not None else None
    if base is not None and baseline is not None:
        refuse_aborted(base, baseline, "baseline")
    results = merge_results(
        loaded, baseline=base, sources=[str(p) for p in shards], baseline_source=str(baseline), plugins=plugins
    )
    return _emit(RunReport(results), output, as_json, quiet, plugins)


@click.command()
@click.argument("results_file", metavar="RESULTS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--html", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the HTML report here (one self-contained file; a .traces.html sidecar when traces are many).")
@click.option("--junit", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write JUnit XML here: one testcase per scenario, flaky trials as <flakyFailure> (Surefire).")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the PR comment the GitHub Action would post here (a preview).")
@junit_inconclusive_option
@click.option(
    "--store", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_STORE, show_default=True,
    help="Trace store whose traces of this run the HTML trace viewer shows (skipped when absent).",
)
@click.option(
    "--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="The baseline results file RESULTS was checked against: the HTML report shows it beside the candidate "
    "(its traces from --baseline-store, default --store).",
)
@click.option(
    "--baseline-store", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Trace store holding the baseline's run (default: --store).",
)
@plugin_option
@_handle_errors
def report(
    results_file: Path, html: Path | None, junit: Path | None, markdown: Path | None, junit_inconclusive: str,
    store: Path, baseline: Path | None, baseline_store: Path | None, plugin_specs: tuple[str, ...],
) -> int:
    """Render a results file: HTML, JUnit XML, the PR comment's Markdown; the terminal table without options.

    No agent is called. Exits with the file's decision, as `compare` and `check` do: 0 deploy, 1 block,
    2 manual; an aborted run's file with the code it recorded (4, 130, 143); 3 when RESULTS is not a
    results file (the message names it).
    """

    plugins = _plugins(plugin_specs)
    results = load_results(results_file)
    if html is None and junit is None and markdown is None:
        click.echo(render_table(results, plugins=plugins))
    else:
        base = load_results(baseline) if baseline is not None else None
        for path in write_report_files(
            results, html=html, junit=junit, markdown=markdown, store=store, plugins=plugins,
            junit_inconclusive=junit_inconclusive, baseline=base, baseline_store=baseline_store,
        ):
            click.echo(f"wrote {path}")
    return RunReport(results).exit_code


def _examples_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "examples"


@click.command()
@click.option(
    "--workdir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Keep the baseline, results and trace store here (default: a temporary folder).",
)
@click.option("-q", "--quiet", is_flag=True, help="Only the final tables.")
@_handle_errors
def demo(workdir: Path | None, quiet: bool) -> int:
    """The offline example end to end: record a baseline of v1, check the regressed v2.

    Uses the bundled customer-service workflow (OpenAI Agents SDK, run by the seeded offline
    model: no network, no API key). Exit 0 when the check blocks v2 as it should, 1 otherwise.
    """

    examples = _examples_dir()
    suite_file = examples / "customer_service" / "agentassay.yml"
    if not suite_file.is_file():
        click.echo(
            f"error: the demo needs the repository's examples/ folder ({suite_file} not found); run it from a "
            "checkout installed with `pip install -e .`",
            err=True,
        )
        return ExitCode.USAGE
    if str(examples.parent) not in sys.path:
        sys.path.insert(0, str(examples.parent))
    folder = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="agentassay-demo-"))
    folder.mkdir(parents=True, exist_ok=True)
    suite = load_suite(suite_file)
    with TraceStore(folder / "traces.db") as store:
        click.echo("1/2  recording the baseline: v1, every scenario run to its trial cap", err=True)
        base = run_suite(suite, store=store, full=True, progress=not quiet)
        base.results.save(folder / "baseline.json")
        click.echo(render_table(base.results))
        click.echo("\n2/2  checking the candidate: v2 (a prompt change that mis-routes seat requests)", err=True)
        cand = run_suite(
            suite,
            entry="examples.customer_service.v2:triage_agent",
            baseline=load_results(folder / "baseline.json"),
            store=store,
            progress=not quiet,
        )
        cand.results.save(folder / "candidate.json")
        click.echo(render_table(cand.results))

    reports = write_report_files(
        cand.results, html=folder / "report.html", junit=folder / "junit.xml", store=folder / "traces.db",
        baseline=base.results,
    )
    names = ", ".join(str(p) for p in [folder / "baseline.json", folder / "candidate.json", folder / "traces.db", *reports])
    click.echo(f"\nfiles: {names}", err=True)
    if base.exit_code == ExitCode.AGENT or cand.exit_code == ExitCode.AGENT:
        return ExitCode.AGENT
    seat = cand.results.scenario("seat_change")
    caught = cand.results.decision.decision.value == "block" and seat is not None and seat.verdict.verdict.value == "fail"
    if caught:
        click.echo("demo: the regression in v2 was caught (decision BLOCK, seat_change FAIL).")
        return ExitCode.OK
    click.echo("demo: the check did NOT block v2; this is a defect, please report it.", err=True)
    return ExitCode.BLOCK

