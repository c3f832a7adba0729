"""The hooks of a run, in the order they are called (docs/architecture.md, "Hooks").

A plugin is a module or object with functions named after these specifications and marked with
:data:`agentassay._plugins.hookimpl`; it may take any subset of a hook's arguments, as in pytest.
Every hook of a run is called once per plugin by pluggy, in registration order reversed (``tryfirst`` /
``trylast`` move an implementation; ``@hookimpl(wrapper=True)`` wraps the others, as in pytest), and each
implementation is isolated: one that raises (a hook wrapper too) is named in a note and disabled for the
rest of the run, and the trials measured so far are kept.
Only input errors (``SpecError``, ``ManifestError``, ``ResultsError``) raised before the first
trial stop the run, with exit code 3, as a bad suite does.

A hook that changes the run says so in what it returns (``configure``: the scenarios; ``prepare``: a
:class:`agentassay._runner.Prepared`), which the runner applies after every implementation has run; what a
plugin keeps for itself goes in ``run.stash`` under a :class:`agentassay._plugins.StashKey` of its own.
Payloads a plugin only reads are frozen (``TrialOutcome``, ``Trace``, ``Phase``, ``Results``, ``ReportContext``,
the evidence hook's ``Candidate``).

``run`` is the :class:`agentassay._runner.Run` of this invocation, ``plan`` the
:class:`agentassay._gate.GatePlan` of its tests; report hooks see only a results file, so every
report can be rendered again from ``results.json`` alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .._gate import Candidate, Evidence, GatePlan, SuiteDecision
    from .._reports import ReportContext, ScenarioPart, Section
    from .._results import Results, TrialOutcome
    from .._runner import Phase, Prepared, Run, ScenarioState
    from .._spec import Scenario
    from .._traces import Trace

PROJECT = "agentassay"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def agentassay_suite_keys() -> Iterable[tuple[str, str]]:
    """Keys of ``agentassay.yml`` this plugin owns, as ``(where, key)`` with ``where`` one of
    ``"suite"`` (top level), ``"config"`` or ``"scenario"``.

    The loader accepts them and keeps their raw values in ``Suite.extensions`` /
    ``Scenario.extensions``; the plugin validates them in :func:`agentassay_configure`.
    Called before the suite is read, so only plugins loaded up front (entry points, ``-p``) can own keys.
    """


@hookspec
def agentassay_configure(run: Run) -> Sequence[Scenario] | None:
    """The suite is read, no agent is loaded yet: validate this plugin's keys and the run's options
    (raise ``SpecError`` naming the key). Return the scenarios this process runs to narrow ``run.scenarios``
    (a slice of the suite; None: all): the runner keeps those every returned sequence holds, in suite
    order, after the last implementation."""


@hookspec
def agentassay_plan(plan: GatePlan) -> None:
    """Fix the statistical plan before any candidate trial: each scenario's extra tests and their
    share of alpha (``plan.share``), samples fixed in advance (``plan.sample``).

    Called by ``run`` and ``check`` and again by ``compare`` / ``merge`` from the files alone, so it
    must depend only on ``plan.settings``, ``plan.baseline`` and ``plan.names``.
    """


@hookspec
def agentassay_prepare(run: Run) -> Prepared | None:
    """The agent is loaded, no trial has run: plans that need it (an allocation of trials, a manifest,
    a probe installed on the adapter, priors in ``run.priors``). Return a
    :class:`~agentassay._runner.Prepared` to change what the target's trials run with (``target_settings``:
    fewer trials) or their seed stream (``seed_role``: a pooled recording's); the runner applies
    it after the last implementation (two plugins changing one field: the first wins, and a note says so)."""


@hookspec
def agentassay_start(run: Run) -> None:
    """Every plan is applied (``agentassay_prepare``'s changes too) and each scenario's test is built
    (``run.states``); no trial has started. Say what the run is about to do (``run.say``): a check's cost
    estimate. A failure here disables the plugin and is a note; the run goes on."""


@hookspec
def agentassay_trial_checks(run: Run, phase: Phase, state: ScenarioState, index: int, trace: Trace) -> None:
    """A trial's agent call returned and the scenario's evaluator graded it: run per-trial checks of what the
    suite supplies (a plugin's expressions over the trace). Called in the trial's check thread,
    under what is left of the trial's ``config.timeout`` (``agentassay._limits.remaining()``), so keep the
    result in a per-trial slot (``(phase.name, state.scenario.name, index)``) for
    :func:`agentassay_trial_finished` and touch nothing shared: with ``concurrency > 1`` several trials' checks
    run at once. Checks that outlast the limit are abandoned, and the trial is an error."""


@hookspec
def agentassay_trial_finished(run: Run, phase: Phase, state: ScenarioState, outcome: TrialOutcome, trace: Trace) -> None:
    """One trial finished (as it finishes: the order of completion, which with ``concurrency: 1`` is
    trial order; ``outcome.index`` gives the trial's place). Writers flush here, so nothing measured is
    lost. ``run.hold(reason)`` stops new trials from starting (a spending cap)."""


@hookspec
def agentassay_trial_data(trace: Trace) -> Mapping[str, Any] | None:
    """A trial finished: what of its trace the plugin keeps in the trial's record (``TrialOutcome.data``,
    written flat into the trial's JSON; a key a built-in owns is declared in its ``FeatureRecords``). Called
    once per trial of every phase, in the runner's loop: keep it cheap (the whole per-trial overhead is < 2 ms)."""


@hookspec
def agentassay_scenario_data(plan: GatePlan, scenario: str) -> Mapping[str, Any] | None:
    """The run's results are assembled: what the plugin keeps in the scenario's record (``ScenarioResult.data``,
    written flat beside ``fixed_n``), e.g. the size of a sample it fixed in advance."""


@hookspec
def agentassay_after_trials(run: Run) -> None:
    """The target's trials are finished (or interrupted): run further phases of trials
    (``run.phase(...)``: a second model's) or anything that needs every trial."""


@hookspec
def agentassay_results_sections(run: Run) -> Mapping[str, Any] | None:
    """Sections this plugin adds to the results file, ``{key: JSON value}``, each a top-level key of its own.
    Called before the gate, which can read them."""


@hookspec
def agentassay_scenario_evidence(plan: GatePlan, candidate: Candidate) -> Sequence[Evidence] | None:
    """Evidence for the gate beyond each scenario's pass-rate test, from ``candidate.trials``
    (``{scenario: trial outcomes}``) and ``candidate.sections`` (the results sections, read-only in a run;
    the candidate is frozen). Called by
    ``check`` and again by ``compare`` / ``merge`` from the files. The gate alone turns evidence
    into verdicts, with multiplicity across all scenarios and evidence kinds."""


@hookspec
def agentassay_decide(run: Run, decision: SuiteDecision) -> SuiteDecision | None:
    """Adjust the suite decision (a gate of a plugin's own turns a deploy into manual review); return the
    new decision or None to keep it. Implementations are chained."""


@hookspec
def agentassay_decide_files(
    plan: GatePlan, candidate: Candidate, decision: SuiteDecision, notes: list[str]
) -> SuiteDecision | None:
    """``compare`` / ``merge``: what :func:`agentassay_decide` does in a run, for a decision re-derived
    from files (``candidate.sections``: the candidate's results sections). Return the new decision or
    None to keep it; append a note for a change to ``notes``. Implementations are chained."""


@hookspec
def agentassay_compare_sections(baseline: Results, candidate: Results) -> Mapping[str, Any] | None:
    """``compare`` / ``merge --baseline``: sections this plugin derives from the two files alone, ``{key: JSON
    value}``; a key whose value is None is removed from the compared file. Called after the verdicts."""


@hookspec
def agentassay_report_sections(results: Results, report: ReportContext) -> Sequence[Section | ScenarioPart] | None:
    """Sections (and :class:`~agentassay._reports.ScenarioPart` s, what it says about one scenario) this
    plugin adds to a report of ``results`` (``report.format``: ``"terminal"``, ``"markdown"``, ``"html"`` or
    ``"junit"``). Rendered from the results file alone."""
