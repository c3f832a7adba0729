"""One invocation of ``run`` / ``check``: the object every hook of the lifecycle is given.

``run_suite`` (_runner/_suite.py) is only the order of the hooks; what a run *is* lives here: its
options, the scenarios it runs, the plan of its tests, the states of its scenarios, its phases of
trials, the notes and sections plugins add, and how it becomes a results file.
"""

from __future__ import annotations

import contextlib
import hashlib
import platform
import subprocess
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from .._evaluators import Evaluator
from .._gate import BaselineCounts, GatePlan, SuiteDecision, fixed_n_equivalent, monitor_for
from .._integrations.adapters import AgentAdapter, load_adapter
from .._plugins import Stash, default_plugins, hookimpl
from .._results import Results, ScenarioResult, TrialOutcome, aborted_record, baseline_notes
from .._spec import ModelConfig, Scenario, Settings, Suite
from .._stats import Decision
from .._traces import Trace, TraceStore
from ._cost import load_table
from ._engine import Engine, EngineOutcome, ScenarioState, run_engine
from ._identity import identity
from ._progress import Progress, announce
from ._signals import SignalLatch

if TYPE_CHECKING:
    from .._gate import ScenarioVerdict
    from .._plugins import Hooks, Plugins


def git_commit(folder: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def agent_version(suite: Suite, entry: str, override: str | None = None) -> str:
    """The version key traces are filed under: explicit, else ``entry@commit``, else the entry."""
    if override:
        return override
    if suite.agent.version:
        return suite.agent.version
    commit = git_commit(suite.root)
    return f"{entry}@{commit}" if commit else entry


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {"agentassay": __version__, "python": platform.python_version()}
    for dist, module in (("openai-agents", "agents"), ("openai", "openai")):
        if module in sys.modules:  # only what this run actually used
            with contextlib.suppress(metadata.PackageNotFoundError):
                out[dist] = metadata.version(dist)
    return out


def adapter_model(adapter: AgentAdapter) -> dict[str, Any]:
    """The adapter's model as its description gives it (``config()["model"]``: provider, name…), for prices;
    empty when it gives none."""
    try:
        model = adapter.config().get("model")
    except Exception:  # a description is only for prices: the price table then looks the model up by name
        return {}
    return model if isinstance(model, dict) else {}


def model_provider(adapter: AgentAdapter) -> str | None:
    """The provider the adapter's model runs on (its ``config()["model"]``), for prices; None: not known."""
    return adapter_model(adapter).get("provider")


def suite_info(suite: Suite) -> dict[str, Any]:
    info: dict[str, Any] = {"name": suite.name, "path": None, "sha256": None}
    if suite.path is not None:
        try:
            info["path"] = str(suite.path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            info["path"] = str(suite.path)
        with contextlib.suppress(OSError):
            info["sha256"] = hashlib.sha256(suite.path.read_bytes()).hexdigest()
    return info


@dataclass(frozen=True)
class RunOptions:
    """How ``run_suite`` was called (the CLI's flags): what plugins read besides the suite."""

    entry: str
    baseline: Results | None = None
    store: TraceStore | None = None
    version: str | None = None
    full: bool = False
    progress: bool = True
    handle_signals: bool = True
    # Trials per scenario at most, below the settings' cap: a replay of recorded traces has this many.
    limits: Mapping[str, int] | None = None
    # Options a feature reads, by name (``run_suite(**extra)``, the CLI's feature flags; docs/plugins.md lists
    # the built-ins'): the kernel passes them through without knowing them.
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Phase:
    """One batch of trials: the target's (``name="target"``) or a plugin's (a second model's paired runs…).

    ``role`` is the seed stream; ``agent_version`` what the traces are filed under.
    """

    name: str
    role: str
    agent_version: str
    adapter: AgentAdapter
    provider: str | None = None  # the adapter's model.provider (model_provider), asked once per phase


@dataclass(frozen=True)
class Prepared:
    """What an ``agentassay_prepare`` implementation changes in the run, returned rather than assigned: the
    runner applies every implementation's after the last one, so no prepare sees another's half-made change."""

    target_settings: Settings | None = None  # what the target's trials run with (a plugin's plan: fewer)
    seed_role: str | None = None  # the target's seed stream (a pooled recording's ``run~g``)


class Run:
    """What every hook of a run sees. Plugins read it and add to it (notes, sections, holds)."""

    def __init__(self, suite: Suite, options: RunOptions, hooks: Hooks, latch: SignalLatch | None = None) -> None:
        self.suite = suite
        self.latch = latch  # a signal that came while no trial ran: the next phase starts none
        self.options = options
        self.hooks = hooks
        self.settings = suite.settings
        # What the target's trials run with: a plugin's plan (``Prepared``) may give the target fewer trials.
        self.target_settings = suite.settings
        self.role = "check" if options.baseline is not None else "run"
        # The target's seed stream: the role, except in a pooled recording (``run~g``, _features/pool/_plugin.py),
        # so that no new trial repeats a seed of the trials it is pooled with.
        self.seed_role = self.role
        # Trials carried over from an earlier baseline (``run --pool``), by scenario: written after this
        # run's own trials, numbered after them, ``counted: false`` (they did not feed this run's tests).
        self.pooled: dict[str, tuple[TrialOutcome, ...]] = {}
        self.loaded = True  # the adapter was loaded from the entry (not passed in): its source can be digested
        self.scenarios: tuple[Scenario, ...] = suite.scenarios  # configure may narrow it (one process of several)
        self.search = [Path.cwd(), suite.root]
        self.adapter: AgentAdapter | None = None
        self.evaluators: dict[str, Evaluator] = {}
        self.plan = GatePlan(
            suite.settings,
            tuple(s.name for s in suite.scenarios),
            baseline=options.baseline,
            full=options.full,
        )
        self.priors: dict[str, BaselineCounts] = {}  # per-scenario priors a plugin supplies (``gate.Prior``)
        self.states: dict[str, ScenarioState] = {}
        self.run_id = uuid.uuid4().hex[:16]
        self.version = agent_version(suite, options.entry, options.version)
        self.sections: dict[str, Any] = {}  # results-file sections, by key
        # A plugin's own state for this run, under a module-level StashKey of its own type (docs/plugins.md).
        self.stash = Stash()
        self.notes: list[str] = []
        self.boundary: dict[str, int] = {}  # trials whose text was repaired / redacted (agentassay/_boundary.py)
        self.interrupted: str | None = None  # "SIGINT" / "SIGTERM"
        self.aborted: str | None = None  # why the run was abandoned (the agent could not be run)
        self.held: str | None = None  # why no new trial may start (a plugin's hold)
        self.target: EngineOutcome | None = None

    # -- what plugins use ------------------------------------------------------------------------
    @property
    def baseline(self) -> Results | None:
        return self.options.baseline

    @property
    def full(self) -> bool:
        return self.options.full

    @property
    def m(self) -> int:
        """Scenarios of the whole suite: every multiplicity-dependent level uses it, also when this process
        runs only some of them."""
        return len(self.suite.scenarios)

    @property
    def cap(self) -> int:
        """Target trials per scenario: a baseline (``run --full``) records ``record_cap``, larger than the
        test's own ``trial_cap`` (outcomes past its decision are kept, marked not counted, and weigh in a check)."""
        s = self.target_settings
        return s.record_cap if self.full and self.role == "run" else s.trial_cap

    @property
    def trials(self) -> dict[str, tuple[TrialOutcome, ...]]:
        """Each scenario's finished target trials, in index order."""
        return {name: st.outcomes() for name, st in self.states.items()}

    @cached_property
    def suite_info(self) -> dict[str, Any]:
        return suite_info(self.suite)

    @cached_property
    def identity(self) -> dict[str, Any]:
        """What this run measures (_runner/_identity.py): ``agent.identity`` of the results file."""

        assert self.adapter is not None
        return identity(
            suite=self.suite,
            suite_sha256=self.suite_info["sha256"],
            settings=self.settings,
            entry=self.options.entry,
            adapter=self.adapter,
            loaded=self.loaded,
            versions=versions(),
            full=self.full and self.role == "run",
        )

    def note(self, text: str) -> None:
        """A note in the results file (and the report) that a reviewer should read."""
        self.notes.append(text)

    def say(self, text: str) -> None:
        """A line for the person watching the run (stderr, as progress lines are; nothing with ``-q``): what a
        plugin wants read *before* the results exist, such as the cost estimate of a check."""
        if self.options.progress:
            announce(text)

    def hold(self, reason: str) -> None:
        """Start no new trial from now on (those in flight finish); not an interruption."""
        self.held = self.held or reason

    def load_adapter(self, model: ModelConfig, key: str = "model") -> AgentAdapter:
        """The run's agent entry point driven by ``model`` (a plugin may load the same agent on another model;
        ``key``: where the suite writes that model, for messages)."""
        entry, agent = self.options.entry, self.suite.agent
        given = model is not self.suite.model or self.suite.model_given  # None: the agent's own model
        adapter = load_adapter(
            entry,
            factory=agent.factory and entry == agent.entry,
            model=model if given else None,
            search=self.search,
            root=self.suite.root,
            framework=agent.framework if entry == agent.entry else None,
        )
        if model.provider == "offline" and getattr(adapter, "_behaviour_source", None) == "<none>":
            # Issue 22, defect 12: every trial would answer a fixed text and FAIL — a configuration error.
            from .._spec import SpecError

            where = str(self.suite.path) if self.suite.path is not None else "the suite"
            raise SpecError(
                f"{where}: model: the agent '{entry}' runs on the offline simulator (provider 'offline', the "
                "default) but no behaviour table is configured for it, so every trial would answer a fixed text "
                "and fail. Add `OFFLINE_BEHAVIOUR = {...}` to the agent's module or set `model.behaviour: "
                "module:attr` (docs/adapters.md), or choose a real provider, e.g. `model: {provider: openai, "
                "name: gpt-4.1-mini}`."
            )
        # Issue 22, defect 11: a real provider's key and server, before the first paid trial (exit 4).
        from .._integrations.adapters._preflight import preflight_adapter

        preflight_adapter(
            adapter,
            model,
            file=str(self.suite.path) if self.suite.path is not None else None,
            key=key,
        )
        return adapter

    def phase(
        self,
        name: str,
        states: dict[str, ScenarioState],
        *,
        adapter: AgentAdapter,
        role: str,
        version: str,
        seed_role: str | None = None,
        label: str | None = None,
        planned: int | None = None,
    ) -> EngineOutcome:
        """Run a batch of trials through the engine; every finished trial goes to ``agentassay_trial_finished``."""
        phase = Phase(name, seed_role or role, version, adapter, model_provider(adapter))
        total = planned if planned is not None else sum(st.limit for st in states.values())
        engine = Engine(
            suite_name=self.suite.name,
            adapter=adapter,
            settings=self.settings,
            states=states,
            role=role,
            seed_role=seed_role,
            agent_version=version,
            run_id=self.run_id,
            progress=Progress(total, len(states), enabled=self.options.progress, phase=label),
            full=self.options.full if name == "target" else False,
            on_trial=lambda st, outcome, trace: self._finished(phase, st, outcome, trace),
            may_start=lambda: self.held is None,
            checks=lambda st, index, trace: self._checks(phase, st, index, trace),
            trial_data=self._trial_data,
            provider=phase.provider,
        )
        if self.latch is not None and self.latch.name:
            engine.stop(self.latch.name)  # interrupted before this phase: it runs no trial, and says so
        load_table(phase.provider, self.settings.prices)  # here, not on the event loop mid-run
        return run_engine(engine, handle_signals=self.options.handle_signals)

    def _checks(self, phase: Phase, state: ScenarioState, index: int, trace: Trace) -> None:
        """In the trial's check thread, under its time limit (_runner/_engine.py): ``agentassay_trial_checks``."""
        self.hooks.call("agentassay_trial_checks", run=self, phase=phase, state=state, index=index, trace=trace)

    def _trial_data(self, trace: Trace) -> dict[str, Any]:
        """``agentassay_trial_data``: what the plugins keep of a finished trial (first plugin first; nulls absent)."""
        data: dict[str, Any] = {}
        for part in self.hooks.call("agentassay_trial_data", trace=trace):
            data.update((k, v) for k, v in part.items() if k not in data and v is not None)
        return data

    def _finished(self, phase: Phase, state: ScenarioState, outcome: TrialOutcome, trace: Trace) -> None:
        done = trace.metadata.extra.get("boundary") or {}
        for key in ("repaired", "redacted"):
            if done.get(key):
                self.boundary[key] = self.boundary.get(key, 0) + 1
        self.hooks.call(
            "agentassay_trial_finished", run=self, phase=phase, state=state, outcome=outcome, trace=trace
        )

    # -- what run_suite does, in order -----------------------------------------------------------
    def start(self) -> None:
        """The scenarios' states: each one's test, at the levels the plan left it."""
        s, target, counts = self.settings, self.target_settings, self.counts
        limit = self.cap if s.errors == "fail" else 2 * self.cap
        limits = self.options.limits or {}
        self.states = {
            sc.name: ScenarioState(
                sc,
                self.evaluators[sc.name],
                monitor_for(
                    sc,
                    target,
                    scenarios=self.m,
                    baseline=counts.get(sc.name),
                    regression=self.baseline is not None,
                    share=self.plan.taken(sc.name),
                    prior=self.priors.get(sc.name),
                ),
                min(limit, limits.get(sc.name, limit)),
                min_trials=self.plan.min_trials(sc.name),
            )
            for sc in self.scenarios
        }

    def run_target(self) -> None:
        assert self.adapter is not None
        self.target = out = self.phase(
            "target",
            self.states,
            adapter=self.adapter,
            role=self.role,
            seed_role=self.seed_role,
            version=self.version,
            planned=len(self.scenarios) * self.cap,
        )
        self.interrupted, self.aborted = out.interrupted, out.aborted

    def narrow(self, found: Sequence[Any]) -> None:
        """``agentassay_configure``'s results: this process runs the scenarios every returned list keeps
        (a plugin's slice of the suite), in suite order."""
        for kept in found:
            names = {s.name for s in kept}
            self.scenarios = tuple(s for s in self.scenarios if s.name in names)

    def prepared(self, found: Sequence[Any]) -> None:
        """``agentassay_prepare``'s :class:`Prepared` changes; two plugins changing the same field: the first wins."""
        changed: set[str] = set()
        for change in found:
            if not isinstance(change, Prepared):
                continue
            for key in ("target_settings", "seed_role"):
                value = getattr(change, key)
                if value is None:
                    continue
                if key in changed:
                    self.note(f"two plugins changed the run's {key} in agentassay_prepare; the first was kept")
                    continue
                changed.add(key)
                setattr(self, key, value)

    def absorb(self, outcome: Any, what: str) -> None:
        """A later phase's interruption or abort is the run's (``what`` says which phase failed)."""
        self.interrupted = self.interrupted or outcome.interrupted
        self.aborted = self.aborted or (outcome.aborted and f"{what}: {outcome.aborted}")

    def after_trials(self, hooks: Hooks) -> None:
        """``agentassay_after_trials``, then what the core says of the trials: interruption and the baseline."""
        mark = len(self.notes)
        hooks.call("agentassay_after_trials", run=self)
        core = []
        if self.interrupted:
            core.append(f"interrupted by {self.interrupted}: results cover the trials finished before it")
        if self.aborted:
            core.append(self.aborted)
        if self.boundary.get("repaired"):
            core.append(
                f"{self.boundary['repaired']} trials' text held invalid characters (lone surrogates), replaced "
                "by U+FFFD as recorded"
            )
        if self.boundary.get("redacted"):
            core.append(
                f"{self.boundary['redacted']} trials' text held secrets (environment values or token formats), "
                "replaced by [redacted: …] before the checks and the artifacts (docs/suite.md, Redaction)"
            )
        self.notes[mark:mark] = core
        if self.baseline is not None:

            self.notes += baseline_notes(self.baseline, [s.name for s in self.scenarios], self.suite.name)

    def add_sections(self, found: Sequence[Any]) -> None:
        for sections in found:
            for key, value in dict(sections).items():
                if key in self.sections:
                    self.note(f"two plugins wrote the results section '{key}'; the first was kept")
                    continue
                self.sections[key] = value

    def failures_gate(self, decision: SuiteDecision) -> SuiteDecision:
        """Plugins that raised are named in the notes; their evidence is missing, so a deploy needs a human."""
        failures = self.hooks.failures
        self.notes += [f.note() for f in failures]
        if failures and decision.decision.value == "deploy":
            from dataclasses import replace


            names = ", ".join(sorted({f.plugin for f in failures}))
            self.note(
                f"a plugin failed ({names}), so its evidence is missing: the deploy needs manual review"
            )
            return replace(decision, decision=Decision.MANUAL)
        return decision

    @property
    def counts(self) -> dict[str, BaselineCounts]:
        return self.baseline.baseline_counts() if self.baseline is not None else {}

    def _scenario_data(self, name: str) -> dict[str, Any]:
        """``agentassay_scenario_data``: what the plugins keep in a scenario's record (first plugin first; nulls absent)."""
        data: dict[str, Any] = {}
        for part in self.hooks.call("agentassay_scenario_data", plan=self.plan, scenario=name):
            data.update((k, v) for k, v in part.items() if k not in data and v is not None)
        return data

    def results(self, final: dict[str, ScenarioVerdict], decision: SuiteDecision) -> Results:
        s, counts, regression = self.settings, self.counts, self.baseline is not None
        scenarios = tuple(
            ScenarioResult(
                name=name,
                input=st.scenario.input,
                trials=st.outcomes() + self.pooled.get(name, ()),
                verdict=final[name],
                baseline=counts.get(name),
                threshold=st.scenario.threshold,
                fixed_n=fixed_n_equivalent(
                    st.scenario, s, scenarios=self.m, baseline=counts.get(name), regression=regression
                ),
                data=self._scenario_data(name),
            )
            for name, st in self.states.items()
        )
        from .._results import with_more_trials  # what an INCONCLUSIVE regression would take (issue 21)

        scenarios = with_more_trials(scenarios, s, m=self.m)
        assert self.adapter is not None and self.target is not None
        agent: dict[str, Any] = {
            "entry": self.options.entry,
            "version": self.version,
            "adapter": self.adapter.name,
        }
        try:
            agent["config"] = self.adapter.config()
        except Exception as exc:  # describing the agent must never lose the results
            agent["config"] = {"error": str(exc)}
        try:
            agent["identity"] = self.identity
        except Exception as exc:  # no identity: the file never pools, and is otherwise whole
            agent["identity"] = {"error": f"{type(exc).__name__}: {exc}"}
        sections = dict(self.sections)

        # A run that ended early (the agent could not be run, a signal) claims no suite decision (issue 22,
        # defect 11); the verdicts its scenarios reached, and every finished trial, stay.
        aborted = aborted_record(
            aborted=self.aborted,
            interrupted=self.interrupted,
            trials=sum(len(st.finished) for st in self.states.values()),
        )
        return Results(
            kind=self.role,
            suite=self.suite_info,
            agent=agent,
            settings=s,
            scenarios=scenarios,
            decision=decision,
            run_id=self.run_id,
            started_at=self.target.started_at,
            finished_at=self.target.finished_at,
            interrupted=bool(self.interrupted),
            versions=versions(),
            notes=tuple(self.notes),
            sections=sections,
            aborted=aborted,
        )


class OnTrial:
    """``run_suite(on_trial=...)`` as a plugin: the callback sees each of the target's finished trials."""

    def __init__(self, callback: Callable[[ScenarioState, TrialOutcome, Trace], None]) -> None:
        self.callback = callback

    @hookimpl
    def agentassay_trial_finished(
        self, phase: Phase, state: ScenarioState, outcome: TrialOutcome, trace: Trace
    ) -> None:
        if phase.name == "target":
            self.callback(state, outcome, trace)


def hooks_for(
    run_options: RunOptions, suite: Suite, plugins: Plugins | None, extra: list[tuple[str, Any]]
) -> Hooks:
    """The plugins a run needs: built-ins its suite and options call for, the installed ones, ``extra``."""

    probe = _Probe(suite, run_options)
    return (plugins or default_plugins()).for_run(probe, extra)


@dataclass(frozen=True)
class _Probe:
    """What the built-ins' ``for_run`` predicates read, before the run exists."""

    suite: Suite
    options: RunOptions
