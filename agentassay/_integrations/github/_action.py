"""The action's job, start to end: baseline, trials, decision, one comment, one status, outputs.

Modes (input ``mode``): ``check`` (a pull request: test against the base branch's baseline),
``record`` (the default branch: record the baseline the next PRs compare against), ``publish``
(post the comment and status for results made elsewhere: the shards of a matrix, or a fork PR's
read-only run handed over by a ``workflow_run`` workflow), ``auto`` (check on PRs, record on a
push to the default branch).

Failure policy: what was measured is never lost. Results and the job summary are written before
anything talks to GitHub, and a GitHub write that fails (read-only fork token, missing
permission, outage) becomes a warning, never a crash. Exit codes: 0 deploy (or no baseline yet),
1 the decision named by ``fail-on``, 3 bad input, 4 the agent could not be run or installed.
Whatever stops the engine (those exits, or a crash, which keeps its traceback) still reaches the
pull request: a commit status ``error`` with the reason in one line, and the sticky comment and the
job summary saying so, so a required check never waits for a status that will not come.

Trust: results a ``workflow_run`` publish job is handed were made by the pull request's code (a
fork's, above all). They are re-derived from their trials against the base branch's baseline and
settings (_integrations/github/_untrusted.py), and the status and comment say whose they are.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from ... import _runner as runner
from ..._boundary import redactor
from ..._errors import AgentAssayError, ExitCode
from ..._features.budget._settings import BudgetSettings
from ..._features.shards import merge_results
from ..._plugins import default_plugins
from ..._reports import MARKER, escape_markdown, render_job_summary, render_pr_comment, secret_values
from ..._reports._files import write_report_files
from ..._results import ResultsError, load_results, refuse_aborted
from ..._spec import load_suite
from ..._traces import TraceStore
from ._artifacts import BaselineError, download, find_baseline, unpack
from ._client import ClientSettings, GitHubError, connect
from ._comments import DESCRIPTION_MAX, comment_author, pull_refs, set_status, upsert_comment
from ._context import ActionContext, ActionInputError
from ._untrusted import rederive_untrusted, rederive_without_baseline

PR_FILE = "pr.json"  # travels with the results so a workflow_run workflow knows the PR (forks)
TRUST_DOC = "docs/action.md, 'Fork pull requests and trust'"


@dataclass
class Outcome:
    """What the job produced, for outputs, the summary and the exit code."""

    results: Any = None  # Results
    mode: str = "check"  # check | record | record-only | publish
    warnings: list[str] = field(default_factory=list)
    baseline_info: str | None = None
    comment_url: str | None = None
    results_file: Path | None = None
    reports: list[str] = field(default_factory=list)  # report.html, junit.xml (relative to the workspace)
    exit_code: int = ExitCode.DEPLOY


def _escape_command(text: str) -> str:
    """Workflow-command data escaping (``::warning::``), so a message cannot end the command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


class Action:
    def __init__(
        self, ctx: ActionContext, *, stdout: TextIO | None = None, github_settings: ClientSettings | None = None
    ) -> None:
        self.ctx = ctx
        self.inputs = ctx.inputs
        self.out = stdout or sys.stdout
        self.outcome = Outcome()
        self.github_settings = github_settings  # None: production's retries, waits and pacing
        self._client: Any = None
        self.baseline_source: str | None = None  # where fetch_baseline found it (the pool section names it)
        # The baseline a check compared with, and the trace store that came with it (the artifact's traces.db),
        # for the HTML report's baseline-beside-candidate view; None when there is none.
        self.baseline_results: Any = None
        self.baseline_store: Path | None = None
        self.pr: dict[str, Any] | None = None  # publish: the verified PR from pr.json (where an error goes too)
        self.origin = ctx.results_origin if ctx.inputs.mode == "publish" else None  # whose results, if not ours

    # -- small helpers ----------------------------------------------------------------------------
    def warn(self, message: str) -> None:
        self.outcome.warnings.append(message)
        print(f"::warning title=agentassay::{_escape_command(message)}", file=self.out, flush=True)

    def log(self, message: str) -> None:
        """A plain line in the job's log (no annotation)."""
        print(f"agentassay: {message}", file=self.out, flush=True)

    def error(self, message: str) -> None:
        print(f"::error title=agentassay::{_escape_command(message)}", file=self.out, flush=True)

    @property
    def client(self) -> Any:
        """A lazy ``github.Github`` on ``GITHUB_API_URL`` (None without a token); PyGithub is imported here."""
        if self._client is None and self.inputs.token:

            self._client = connect(self.ctx.api_url, self.inputs.token, self.github_settings)
        return self._client

    def results_dir(self) -> Path:
        return (self.ctx.workspace / self.inputs.results_path).resolve()

    def secrets(self) -> list[str]:

        return secret_values(self.ctx.env)

    # -- the job ----------------------------------------------------------------------------------
    def run(self) -> int:

        try:
            mode = self.ctx.mode()
            self.outcome.mode = mode
            workdir = (self.ctx.workspace / self.inputs.working_directory).resolve()
            if not workdir.is_dir():
                raise ActionInputError(f"input 'working-directory': {workdir} is not a directory")
            os.chdir(workdir)
            if mode == "publish":
                return self.publish()
            if mode == "check":
                self.write_pr_file()  # first: a fork's publish job must find its PR even when this run fails
            if self.inputs.install:
                self.install()
            suite = self.load_suite()
            return self.record(suite) if mode == "record" else self.check(suite)
        except AgentAssayError as exc:  # each error says its exit code, as in the CLI (agentassay/_errors.py)
            self.fail(str(exc), exc.exit_code)
        except Exception as exc:  # a bug of ours: the PR still hears of it; the traceback and exit code stay
            self.fail(f"internal error: {type(exc).__name__}: {exc}", ExitCode.BLOCK)
            raise
        return self.outcome.exit_code

    def fail(self, reason: str, code: int) -> None:
        """The engine stopped before a verdict: the log, the job summary, then the PR (status ``error``, comment)."""
        self.outcome.exit_code = code
        self.error(reason)
        self.write_summary(failure=reason)
        try:
            self.post_error(reason)
        except Exception as exc:  # reporting must never mask the failure it reports
            self.warn(f"could not report the error to the pull request: {type(exc).__name__}: {exc}")

    def install(self) -> None:
        """The agent's own dependencies (``install`` input), before anything imports the agent."""
        print(f"::group::install: {self.inputs.install}", file=self.out, flush=True)
        try:
            done = subprocess.run(["sh", "-c", self.inputs.install], check=False)
        finally:
            print("::endgroup::", file=self.out, flush=True)
        if done.returncode != 0:
            raise _AgentFailure(f"input 'install': `{self.inputs.install}` exited with {done.returncode}")

    def load_suite(self) -> Any:
        """The suite, with the keys installed plugins own (entry points, ``AGENTASSAY_PLUGINS``)."""

        suite = load_suite(self.inputs.suite, plugin_keys=default_plugins().suite_keys())
        changes: dict[str, Any] = {}
        if self.inputs.concurrency is not None:
            changes["concurrency"] = self.inputs.concurrency
        if self.inputs.budget_usd is not None:  # priced by config.prices or the table (docs/prices.md)
            changes["features"] = {**suite.settings.features, "budget": BudgetSettings(self.inputs.budget_usd)}
        return replace(suite, settings=replace(suite.settings, **changes)) if changes else suite

    def shard(self) -> tuple[int, int] | None:
        raw = self.inputs.shard
        if not raw:
            return None
        try:
            i, n = (int(x) for x in raw.split("/"))
        except ValueError:
            i = n = 0
        if not (n >= 1 and 1 <= i <= n):
            raise ActionInputError(f"input 'shard': expected i/n with 1 <= i <= n (e.g. 2/4), got {raw!r}")
        return i, n

    def execute(
        self, suite: Any, *, baseline: Any = None, full: bool = False, pool: Any = None, pool_from: str | None = None
    ) -> Any:
        """Run the trials; traces go to a store kept next to the results (for warm starts later)."""

        out = self.results_dir()
        out.mkdir(parents=True, exist_ok=True)
        kwargs: dict[str, Any] = {"baseline": baseline, "full": full, "handle_signals": True}
        if pool is not None:
            kwargs |= {"pool": pool, "pool_from": pool_from}
        shard = self.shard()
        if shard is not None:
            kwargs["shard"] = shard
        with TraceStore(out / "traces.db") as store:
            report = runner.run_suite(suite, store=store, **kwargs)  # looked up per call: tests replace it
        self.outcome.results = report.results
        self.outcome.results_file = report.results.save(out / "results.json")
        self.write_reports(report.results, out)
        if report.aborted:
            raise _AgentFailure(f"the agent could not be run: {report.aborted}")
        if report.results.aborted is not None:  # a signal: no decision was reached, so none is published
            raise _AgentFailure(report.results.aborted["reason"], exit_code=report.exit_code)
        return report.results

    def write_reports(self, results: Any, out: Path) -> None:
        """report.html (traces from traces.db) and junit.xml beside results.json, for the artifact and test tabs.

        A report that cannot be written is a warning: it must never cost the verdict its comment and status.
        """

        try:
            written = write_report_files(
                results, html=out / "report.html", junit=out / "junit.xml", store=out / "traces.db",
                secrets=self.secrets(), baseline=self.baseline_results if results.kind != "run" else None,
                baseline_store=self.baseline_store,
            )
        except Exception as exc:
            self.warn(f"reports not written: {type(exc).__name__}: {exc}")
            return
        self.outcome.reports = [self.relative(p) for p in written]

    def record(self, suite: Any) -> int:
        """Record the baseline; when the default branch's previous baseline can be fetched, pool its trials
        into the new one if nothing that could change behaviour changed (_features/pool/_plugin.py)."""
        previous, why = None, "a shard records without pooling (merge the shards; docs/action.md)"
        if self.shard() is None:
            previous = self.fetch_baseline(pooling=True)
            why = self.outcome.baseline_info or "the previous baseline could not be fetched"
        results = self.execute(suite, full=True, pool=previous, pool_from=self.baseline_source)
        pooled = self.pooling_text(results, previous, why)
        self.log(pooled)
        self.outcome.baseline_info = (
            f"this run, recorded: upload `{self.inputs.results_path}` as the artifact "
            f"`{self.inputs.baseline_artifact}` (actions/upload-artifact); {pooled}"
        )
        self.write_summary()
        self.write_outputs()
        return ExitCode.DEPLOY

    @staticmethod
    def pooling_text(results: Any, previous: Any, why: str) -> str:
        """One line on what the recording pooled (the log and the summary)."""
        section = results.sections.get("pool") if results is not None else None
        if previous is None or not isinstance(section, dict):
            return f"nothing pooled: {why}"
        if not section.get("pooled"):
            return "nothing pooled: " + "; ".join(section.get("reasons") or ["the previous baseline differs"])
        per = section.get("scenarios") or {}
        new = sum(int(p.get("new", 0)) for p in per.values())
        return (
            f"pooled {int(section.get('trials') or 0):,} trials of the previous baseline ({section.get('source')}, "
            f"run {section.get('run_id')}, recorded {section.get('recorded_at')}) with this run's {new:,}"
        )

    def check(self, suite: Any) -> int:
        baseline = self.fetch_baseline()
        if baseline is None:
            self.outcome.mode = "record-only"
        results = self.execute(suite, baseline=baseline)
        return self.finish(results)

    def publish(self) -> int:
        """Comment and status for results made by other jobs (shards to merge, or a fork's run)."""

        folder = Path(self.inputs.shard_results or self.inputs.results_path)
        folder = folder if folder.is_absolute() else self.ctx.workspace / folder
        pr = self.read_pr_file(folder)
        if pr is not None and self.ctx.pr_number is None:
            pr = self.verify_pr(pr)
        self.pr = pr  # known before anything can fail, so that a failure is reported on that PR too
        files = sorted(folder.rglob("results.json")) if folder.is_dir() else []
        if not files:
            made = f"{self.origin} left" if self.origin else "the shard or check jobs left"
            raise ActionInputError(
                f"input 'shard-results': no results.json under {folder}: {made} none (its run failed before "
                "writing results: see its log), or the artifacts were not downloaded there"
            )
        loaded = [load_results(f) for f in files]
        for found, file in zip(loaded, files, strict=True):
            if found.aborted is not None:  # it reached no decision: there is none to publish
                raise _AgentFailure(
                    f"{self.relative(file)}: the run was aborted before its decision (exit "
                    f"{found.aborted.get('exit_code')}: {found.aborted.get('reason')})"
                )
        if self.origin is not None:
            results = self.judge_untrusted(loaded, pr)
            self.outcome.results = results
            return self.finish(results, pr=pr)
        if len(loaded) == 1 and loaded[0].sections.get("shard") is None:
            results = loaded[0]
            if results.kind == "run":
                self.outcome.mode = "record-only"
        else:

            checked = any(r.kind != "run" for r in loaded)
            baseline = self.fetch_baseline((pr or {}).get("base_branch")) if checked else None
            if checked and baseline is None:
                raise ActionInputError("merging checked shards needs the baseline artifact, which could not be fetched")
            results = merge_results(loaded, baseline=baseline)
            out = self.results_dir()
            out.mkdir(parents=True, exist_ok=True)
            self.outcome.results_file = results.save(out / "results.json")
            self.write_reports(results, out)
        self.outcome.results = results
        return self.finish(results, pr=pr)

    def judge_untrusted(self, loaded: list[Any], pr: dict[str, Any] | None) -> Any:
        """Results made by a pull request's code, judged again: their trials against the base branch's
        baseline and settings, nothing they conclude read (_integrations/github/_untrusted.py); saved beside the reports.

        The base branch is GitHub's record of the PR's (``verify_pr``), else the default branch: never
        one named by the artifact. A baseline that exists but cannot be fetched is an error, since
        without it nothing could be checked; with no baseline yet the run is record-only, as a check is.
        """

        origin = self.origin or "the pull request's workflow"
        self.warn(
            f"results produced by {origin}: that code could have written anything, so the verdicts below were "
            f"re-derived from its trials against the base branch's baseline; a required check should not rely on "
            f"them ({TRUST_DOC})"
        )
        branch = (pr or {}).get("base_branch") if pr is not None and pr.get("verified") else None
        baseline = self.fetch_baseline(branch or self.ctx.default_branch)
        if baseline is None and self.outcome.baseline_info is None:
            raise ActionInputError(
                f"results produced by {origin} cannot be checked: the base branch's baseline could not be fetched "
                "(the warnings say why); run the publish job again once it can be"
            )
        if len(loaded) > 1 or loaded[0].sections.get("shard") is not None:
            merged = merge_results(loaded, baseline=baseline if loaded[0].kind == "check" else None)
        else:
            merged = loaded[0]
        if baseline is None:
            self.outcome.mode = "record-only"
            results = rederive_without_baseline(merged, origin=origin)
        else:
            results = rederive_untrusted(baseline, merged, origin=origin)
        out = self.results_dir()
        out.mkdir(parents=True, exist_ok=True)
        self.outcome.results_file = results.save(out / "results.json")
        self.write_reports(results, out)
        return results

    # -- baseline ---------------------------------------------------------------------------------
    def fetch_baseline(self, branch: str | None = None, *, pooling: bool = False) -> Any:
        """The base branch's baseline results, or None (with the reason in the summary).

        ``pooling``: record mode fetching the previous baseline to pool with; a missing one is then a
        line in the log, not a warning, and the run records without pooling.
        """

        warn = self.log if pooling else self.warn
        without, without_it = ("recorded without pooling",) * 2 if pooling else ("ran without a baseline", "ran without it")
        if self.inputs.baseline_file:  # a results file at hand (a previous step, or committed)
            path = Path(self.inputs.baseline_file)
            found = path if path.is_absolute() else self.ctx.workspace / path
            baseline = load_results(found)
            refuse_aborted(baseline, path, "baseline")
            self.keep_baseline(baseline, found)
            self.outcome.baseline_info = f"file `{self.inputs.baseline_file}`"  # the comment prints "Baseline: "
            self.baseline_source = f"baseline-file {self.inputs.baseline_file}"
            return baseline
        # The PR event names the base; a publish job may know it only from the results' pr.json.
        branch = self.ctx.base_branch or branch or self.ctx.default_branch
        name = self.inputs.baseline_artifact
        if self.client is None:
            warn(f"no github-token input: cannot fetch the baseline artifact; {without}")
            return None
        if not branch:
            warn(f"cannot tell the base branch from the event; {without}")
            return None
        try:
            artifact = find_baseline(self.client, self.ctx.repository, name, branch, self.ctx.repository_id)
        except GitHubError as exc:
            hint = " (give the job `permissions: actions: read`)" if exc.forbidden else ""
            warn(f"could not list the baseline artifacts{hint}: {exc}; {without}")
            return None
        if artifact is None:
            self.outcome.baseline_info = (
                f"no baseline yet: no unexpired artifact `{name}` from branch `{branch}` of this repository. "
                f"It is made when a push to `{branch}` runs this action in record mode and uploads "
                f"`{self.inputs.results_path}` with actions/upload-artifact (README, 'Recording a baseline')."
            )
            return None
        dest = Path(self.ctx.env.get("RUNNER_TEMP") or self.results_dir().parent) / "agentassay-baseline"
        try:
            path = unpack(download(self.client, self.ctx.repository, artifact), dest)
            baseline = load_results(path)
            refuse_aborted(baseline, path, "baseline")
            self.keep_baseline(baseline, path)
        except (BaselineError, ResultsError, GitHubError) as exc:
            warn(f"the baseline artifact {artifact.id} ({artifact.created_at}) cannot be used: {exc}; {without_it}")
            return None
        self.outcome.baseline_info = (  # the comment prints "Baseline: " before it
            f"artifact `{name}` of `{branch}` at {(artifact.head_sha or '?')[:12]}, recorded {artifact.created_at}"
        )
        self.baseline_source = (
            f"artifact `{name}` {artifact.id} of `{branch}` at {(artifact.head_sha or '?')[:12]}, created {artifact.created_at}"
        )
        return baseline

    def keep_baseline(self, baseline: Any, path: Path) -> None:
        """Remember the baseline and the trace store recorded with it (``traces.db`` beside its results file)."""
        self.baseline_results = baseline
        store = path.parent / "traces.db"
        self.baseline_store = store if store.is_file() else None

    # -- reporting --------------------------------------------------------------------------------
    def report_url(self) -> str | None:
        """Where a reviewer finds report.html: the run's artifacts list (the workflow uploads the results folder
        after this step, so the artifact's own id is not known yet); None when no HTML report was written."""
        html = any(p.endswith(".html") for p in self.outcome.reports)
        return f"{self.ctx.run_url}#artifacts" if html and self.ctx.run_url else None

    def decision_exit(self, results: Any) -> int:
        if results.aborted is not None:  # no decision was reached: never a pass
            return int(results.aborted.get("exit_code") or ExitCode.AGENT)
        decision = results.decision.decision.value
        if self.outcome.mode == "record-only":
            return ExitCode.DEPLOY  # nothing to compare with: the gate cannot block yet
        if self.inputs.shard:
            return ExitCode.DEPLOY  # a shard's decision is provisional (Holm runs at the merge); publish gates
        if decision == "block" or (decision == "manual" and self.inputs.fail_on == "manual"):
            return ExitCode.BLOCK
        return ExitCode.DEPLOY

    def finish(self, results: Any, pr: dict[str, Any] | None = None) -> int:
        self.outcome.exit_code = self.decision_exit(results)
        self.write_summary()  # first: it survives whatever GitHub answers next
        self.post(results, pr)
        self.write_outputs()
        return self.outcome.exit_code

    def post(self, results: Any, pr: dict[str, Any] | None) -> None:

        number = self.ctx.pr_number or (pr or {}).get("number")
        sha = (pr or {}).get("head_sha") or self.ctx.head_sha
        if self.inputs.shard:
            return  # a shard's comment and status come from the publish job
        if self.ctx.is_fork:
            self.warn("pull request from a fork: the token is read-only, so no comment or status; see the job summary")
            return
        if self.client is None:
            return
        if self.inputs.comment and number:

            try:
                body = self.render(comment=True)
                author = comment_author(self.client, self.inputs.comment_author, self.warn)
                comment = upsert_comment(
                    self.client, self.ctx.repository, int(number), body, MARKER, author=author, warn=self.warn
                )
                self.outcome.comment_url = comment.html_url
            except GitHubError as exc:
                hint = " (give the job `permissions: pull-requests: write`)" if exc.forbidden else ""
                self.warn(f"could not post the PR comment{hint}: {exc}")
        if sha:
            state, description = self.status_of(results)
            try:
                set_status(
                    self.client, self.ctx.repository, sha, state, description=description,
                    context=self.inputs.status_context, target_url=self.ctx.run_url,
                )
            except GitHubError as exc:
                hint = " (give the job `permissions: statuses: write`)" if exc.forbidden else ""
                self.warn(f"could not set the commit status{hint}: {exc}")

    def status_of(self, results: Any) -> tuple[str, str]:
        d = results.decision
        counts = ", ".join(f"{n} {k}" for k, n in d.counts.items() if n)
        if results.aborted is not None:
            return "error", f"ABORTED: no decision (exit {results.aborted.get('exit_code')})"
        whose = f" - {self.whose()}" if self.origin else ""  # first in a description cut at 140 characters
        if self.outcome.mode == "record-only":
            return "success", f"no baseline yet, recorded only{whose} ({counts})"
        state = "failure" if self.outcome.exit_code == ExitCode.BLOCK else "success"
        return state, f"{d.decision.value.upper()}{whose}: {counts}"

    def whose(self) -> str:
        """Whose results a status describes, in a few words (``origin`` in full is in the comment)."""
        fork = (self.origin or "").startswith("the fork's")
        return "fork's results, re-derived" if fork else "PR workflow's results, re-derived"

    def post_error(self, reason: str) -> None:
        """Status ``error`` (one line, GitHub's 140 characters) and the sticky comment saying why.

        Wherever a verdict would have been posted (a pull request's check, a shard, a publish job),
        and on a fork's publish job also before its PR is verified (the status goes to the run's head
        commit, which GitHub itself reports); never from a fork's own read-only run.
        """

        if self.ctx.is_fork or self.client is None:
            return
        pr = self.pr or {}
        number = self.ctx.pr_number or pr.get("number")
        sha = pr.get("head_sha") or (self.ctx.head_sha if self.ctx.pull_request else self.ctx.workflow_run.get("head_sha"))
        if not sha and not number:
            return  # a push: no pull request waits on this run
        if self.inputs.comment and number:

            try:
                body = self.render(comment=True, error=reason)
                author = comment_author(self.client, self.inputs.comment_author, self.warn)
                comment = upsert_comment(
                    self.client, self.ctx.repository, int(number), body, MARKER, author=author, warn=self.warn
                )
                self.outcome.comment_url = comment.html_url
            except GitHubError as exc:
                self.warn(f"could not post the PR comment: {exc}")
        if sha:
            # Paths relative to the repository: the reason must fit GitHub's 140 characters.
            line = self.redact(" ".join(reason.replace(f"{self.ctx.workspace}/", "").split()))
            whose = f"{self.whose().split(',')[0]}: " if self.origin else ""
            description = f"error: {whose}{line}"
            if len(description) > DESCRIPTION_MAX:
                description = description[: DESCRIPTION_MAX - 1] + "…"
            try:
                set_status(
                    self.client, self.ctx.repository, str(sha), "error", description=description,
                    context=self.inputs.status_context, target_url=self.ctx.run_url,
                )
            except GitHubError as exc:
                self.warn(f"could not set the commit status: {exc}")

    def redact(self, text: str) -> str:
        """The one redactor (agentassay/_boundary.py) plus the Action's own secrets."""

        return redactor(self.secrets())(text)

    def render(self, *, comment: bool, error: str | None = None) -> str:
        """The comment or the job summary; the plugins that read the results add their sections (coverage gaps…).

        ``error``: the engine stopped before a verdict; the report says so, and shows no results.
        """

        fn = render_pr_comment if comment else render_job_summary
        return fn(
            None if error is not None else self.outcome.results,
            mode="record-only" if self.outcome.mode == "record-only" and error is None else "check",
            run_url=self.ctx.run_url,
            warnings=tuple(self.outcome.warnings),
            baseline_info=self.outcome.baseline_info,
            secrets=self.secrets(),
            error=error,
            report_url=None if error is not None else self.report_url(),
        )

    def write_summary(self, failure: str | None = None) -> None:
        path = self.ctx.summary_file
        if path is None:
            return
        if failure is not None or self.outcome.results is None:
            try:
                text = self.render(comment=False, error=failure or "no results")
            except Exception:  # the summary of a failure must not fail in turn

                text = self.redact(f"## agentassay: error\n\n{escape_markdown(failure or 'no results')}\n")
        else:
            text = self.render(comment=False)
        with contextlib.suppress(OSError), path.open("a", encoding="utf-8") as f:
            f.write(text.rstrip("\n") + "\n")

    def write_outputs(self) -> None:
        results = self.outcome.results
        values: dict[str, str] = {
            "decision": "" if results is None else results.decision.decision.value,
            "results-path": self.relative(self.outcome.results_file),
            "comment-url": self.outcome.comment_url or "",
            "mode": self.outcome.mode,
        }
        if results is not None:
            for k in ("pass", "fail", "inconclusive"):
                values[k] = str(results.decision.counts.get(k, 0))
            usd = results.cost().get("usd")
            proxy_usd = (results.sections.get("proxy") or {}).get("usd") or 0.0
            values["cost-usd"] = "" if usd is None else f"{usd + proxy_usd:.6f}"
        html = next((p for p in self.outcome.reports if p.endswith(".html") and ".traces." not in p), "")
        values["report-html"] = html
        values["junit-path"] = next((p for p in self.outcome.reports if p.endswith(".xml")), "")
        print(f"agentassay: {json.dumps(values)}", file=sys.stderr)
        path = self.ctx.output_file
        if path is None:
            return
        with contextlib.suppress(OSError), path.open("a", encoding="utf-8") as f:
            for k, v in values.items():
                f.write(f"{k}={v.replace(chr(10), ' ')}\n")

    def relative(self, path: Path | None) -> str:
        """A workspace-relative path: the container's /github/workspace is another path on the host."""
        if path is None:
            return ""
        try:
            return str(path.resolve().relative_to(self.ctx.workspace.resolve()))
        except ValueError:
            return str(path)

    def verify_pr(self, pr: dict[str, Any]) -> dict[str, Any] | None:
        """A PR number read from an artifact (fork runs) is used only if that PR's head is the commit tested.

        The artifact was made by code from the PR, so its number could point anywhere; GitHub's own
        record of the PR must agree with the head commit in the file.
        """

        if self.client is None or not pr.get("number"):
            return None
        try:
            live_head, live_base = pull_refs(self.client, self.ctx.repository, int(pr["number"]))
        except (GitHubError, ValueError, TypeError) as exc:
            self.warn(f"cannot verify pull request {pr.get('number')!r} from the results ({exc}); not posting")
            return None
        if live_head != pr.get("head_sha"):
            self.warn(f"pull request #{pr['number']} is not at the tested commit; not posting")
            return None
        return {**pr, "base_branch": live_base, "verified": True}  # the base as GitHub has it, not as written

    def write_pr_file(self) -> None:
        if self.ctx.pr_number is None:
            return
        info = {"number": self.ctx.pr_number, "head_sha": self.ctx.head_sha, "base_branch": self.ctx.base_branch}
        out = self.results_dir()
        with contextlib.suppress(OSError):  # a results folder that cannot be made fails later, with its reason
            out.mkdir(parents=True, exist_ok=True)
            (out / PR_FILE).write_text(json.dumps(info) + "\n", encoding="utf-8")

    def read_pr_file(self, folder: Path) -> dict[str, Any] | None:
        """The PR a fork's run was for; trusted only if its head matches the triggering run's."""
        files = sorted(folder.rglob(PR_FILE)) if folder.is_dir() else []
        if not files:
            return None
        try:
            info = json.loads(files[0].read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # a fork's file: nested too deep is "not valid" too
            self.warn(f"{files[0]} is not valid JSON; no PR to comment on")
            return None
        run = self.ctx.event.get("workflow_run") or {}
        if run.get("head_sha") and info.get("head_sha") != run.get("head_sha"):
            self.warn("the results' PR head does not match the triggering run's head commit; not posting")
            return None
        return info if isinstance(info, dict) else None


class _AgentFailure(AgentAssayError):
    """The agent's dependencies would not install or the agent could not be run (exit 4), or the run was aborted
    by a signal (``exit_code`` 130 / 143): no decision to publish."""

    exit_code = ExitCode.AGENT

    def __init__(self, message: str, *, exit_code: int = ExitCode.AGENT) -> None:
        super().__init__(message)
        self.exit_code = ExitCode(exit_code)


def run_action(
    env: dict[str, str] | None = None, *, stdout: TextIO | None = None, github_settings: ClientSettings | None = None
) -> int:
    """Entry point of the container: everything comes from the environment the runner sets.

    ``github_settings`` is for tests (short waits, no pacing); the container uses the defaults.
    """
    try:
        ctx = ActionContext.from_env(env)
    except ActionInputError as exc:
        print(f"::error title=agentassay::{_escape_command(str(exc))}", file=stdout or sys.stdout, flush=True)
        return ExitCode.USAGE
    return Action(ctx, stdout=stdout, github_settings=github_settings).run()


__all__ = ["Action", "Outcome", "run_action"]
