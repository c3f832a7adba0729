"""Run a whole suite: the order of the run's hooks, and nothing else (docs/architecture.md, "Hooks").

Every feature (agentassay/features, each a package) and any installed plugin is a plugin on these hooks (agentassay/plugins); what a run is
lives in _runner/_run.py, how evidence becomes verdicts in the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._errors import AgentAssayError, ExitCode
from .._evaluators import build_evaluator
from .._gate import Candidate, decide
from .._gate._evidence import ReadOnly
from .._integrations.adapters import AgentAdapter
from .._results import Results, TrialOutcome
from .._spec import Suite
from .._traces import Trace, TraceStore
from ._engine import ScenarioState
from ._run import OnTrial, Run, RunOptions, agent_version, git_commit, hooks_for
from ._signals import SignalLatch

if TYPE_CHECKING:
    from .._plugins import Plugins

__all__ = ["RunReport", "agent_version", "git_commit", "run_suite"]


@dataclass(frozen=True)
class RunReport:
    """What a run produced and how the process should exit."""

    results: Results
    aborted: str | None = None
    interrupted: str | None = None
    wall_s: float = 0.0

    @property
    def exit_code(self) -> int:
        """The process's: what the results file's ``aborted.exit_code`` records for a run that ended early."""
        if self.results.aborted is not None:
            return int(self.results.aborted["exit_code"])
        if self.aborted:
            return ExitCode.AGENT
        if self.interrupted:
            return ExitCode.for_signal(self.interrupted)
        return self.results.decision.exit_code


def run_suite(
    suite: Suite,
    *,
    adapter: AgentAdapter | None = None,
    entry: str | None = None,
    baseline: Results | None = None,
    store: TraceStore | None = None,
    version: str | None = None,
    full: bool = False,
    progress: bool = True,
    handle_signals: bool = True,
    on_trial: Callable[[ScenarioState, TrialOutcome, Trace], None] | None = None,
    plugins: Plugins | None = None,
    limits: Mapping[str, int] | None = None,
    **extra: Any,
) -> RunReport:
    """Run every scenario of ``suite``; with ``baseline``, test each for regression against it.

    Raises ``SpecError`` (a check cannot be built), ``AgentLoadError`` (the entry point cannot be
    imported) and ``PluginError`` before any trial runs. ``full`` runs each scenario to its cap after
    its test decided (recording a strong baseline; the verdict is the one at the decision); ``extra``
    are options features read by name (``run.options.extra``; docs/plugins.md lists the built-ins');
    ``plugins`` (default: the installed ones) add to the built-ins the
    suite and these options call for; ``limits`` caps a scenario's trials below the settings' cap (a
    replay of recorded traces, ``agentassay analyze``).
    """
    options = RunOptions(
        entry or suite.agent.entry,
        baseline,
        store,
        version,
        full,
        progress,
        handle_signals,
        limits,
        {k: v for k, v in extra.items() if v is not None},
    )
    extra = [("on_trial", OnTrial(on_trial))] if on_trial is not None else []
    with SignalLatch(handle_signals) as latch:  # a Ctrl-C before the first trial: zero trials, marked
        hooks = hooks_for(options, suite, plugins, extra)
        run = Run(suite, options, hooks, latch)
        before = _input_errors()
        run.narrow(hooks.call("agentassay_configure", run=run, propagate=before))
        run.evaluators = {s.name: build_evaluator(s, file=suite.path, search=run.search) for s in run.scenarios}
        run.adapter = adapter or run.load_adapter(suite.model)
        run.loaded = adapter is None
        hooks.call("agentassay_plan", plan=run.plan, propagate=before)
        run.prepared(hooks.call("agentassay_prepare", run=run, propagate=before))
        run.start()
        hooks.call("agentassay_start", run=run)
        run.run_target()
        run.after_trials(hooks)
        run.add_sections(hooks.call("agentassay_results_sections", run=run))
        verdicts = {name: st.monitor.finish() for name, st in run.states.items()}
        # What evidence reads, frozen: the trials and a read-only view of the sections (as compare gives it).
        candidate = Candidate(run.trials, ReadOnly(run.sections))
        found = hooks.call("agentassay_scenario_evidence", plan=run.plan, candidate=candidate)
        evidence = [e for each in found for e in each]
        final, decision = decide(verdicts, suite.settings, evidence=evidence)
        decision = run.failures_gate(hooks.chain("agentassay_decide", "decision", decision, run=run))
        wall_s = run.target.wall_s if run.target else 0.0
        return RunReport(run.results(final, decision), run.aborted, run.interrupted, wall_s)


def _input_errors() -> tuple[type[BaseException], ...]:
    """Errors in the user's input or set-up, raised by a hook before the first trial: every ``AgentAssayError``
    (a bad key, a manifest or results file that cannot be read, an agent or a provider that cannot be reached)
    stops the run with its own exit code (``ExitCode``), as a bad suite does; anything else only disables the
    plugin that raised it."""
    return (AgentAssayError,)
