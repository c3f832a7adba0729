"""Run a whole suite: load the agent, plan each scenario's test, run the engine, build the results."""

from __future__ import annotations

import contextlib
import hashlib
import platform
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import __version__
from ..adapters import AgentAdapter, load_adapter
from ..evaluators import build_evaluator
from ..gate import coverage_gate, decide, fixed_n_equivalent, monitor_for, recording_sample
from ..results import (
    Results,
    ScenarioResult,
    TrialOutcome,
    baseline_notes,
    fingerprint_outcomes,
    fingerprint_plans,
    shard_note,
    shard_slice,
)
from ..spec import ModelConfig, Scenario, SpecError, Suite
from ..traces import Trace, TraceStore
from ._coverage import measure_coverage, prepare_coverage
from ._engine import Engine, ScenarioState, run_engine
from ._progress import Progress
from ._proxy import check_adapter, plan_from_baseline, run_proxy

EXIT_AGENT = 4
EXIT_SIGNAL = {"SIGINT": 130, "SIGTERM": 143}


@dataclass(frozen=True)
class RunReport:
    """What a run produced and how the process should exit."""

    results: Results
    aborted: str | None = None
    interrupted: str | None = None
    wall_s: float = 0.0

    @property
    def exit_code(self) -> int:
        if self.aborted:
            return EXIT_AGENT
        if self.interrupted:
            return EXIT_SIGNAL.get(self.interrupted, 130)
        return self.results.decision.exit_code


def git_commit(folder: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
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


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"agentassay": __version__, "python": platform.python_version()}
    for dist, module in (("openai-agents", "agents"), ("openai", "openai")):
        if module in sys.modules:  # only what this run actually used
            with contextlib.suppress(metadata.PackageNotFoundError):
                out[dist] = metadata.version(dist)
    return out


def _suite_info(suite: Suite) -> dict[str, Any]:
    info: dict[str, Any] = {"name": suite.name, "path": None, "sha256": None}
    if suite.path is not None:
        try:
            info["path"] = str(suite.path.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            info["path"] = str(suite.path)
        with contextlib.suppress(OSError):
            info["sha256"] = hashlib.sha256(suite.path.read_bytes()).hexdigest()
    return info


def _shard_scenarios(suite: Suite, shard: tuple[int, int] | None, *, recording: bool) -> tuple[Scenario, ...]:
    """The scenarios this process runs: all of them, or shard ``i`` of ``n`` (round-robin in suite order)."""
    if shard is None:
        return suite.scenarios
    index, count = shard
    chosen = tuple(shard_slice(suite.scenarios, index, count))
    file = str(suite.path) if suite.path else None
    m = len(suite.scenarios)
    if count > m:  # refused in every shard, not only the empty ones: the matrix itself is wrong
        raise SpecError(
            f"--shard {index}/{count}: the suite has {m} scenario{'s' * (m != 1)}, fewer than the {count} shards, "
            f"so {count - m} shard{'s' * (count - m != 1)} would have none; use at most {m} shards (--shard i/{m})",
            file=file,
        )
    if recording and suite.settings.proxy is not None:
        # `check` may shard with a proxy: its plan comes from the baseline, its evidence is per scenario.
        raise SpecError(
            "a baseline with config.proxy cannot be recorded in shards: the proxy's rho and allocation are "
            "measured from paired runs pooled over the whole suite, so every shard would plan its own. "
            "Record the baseline without --shard (`check --shard` works with a proxy).",
            file=file,
            key="config.proxy",
        )
    return chosen


def run_suite(
    suite: Suite,
    *,
    adapter: AgentAdapter | None = None,
    entry: str | None = None,
    baseline: Results | None = None,
    warm_from: Results | None = None,
    store: TraceStore | None = None,
    version: str | None = None,
    full: bool = False,
    progress: bool = True,
    handle_signals: bool = True,
    on_trial: Callable[[ScenarioState, TrialOutcome, Trace], None] | None = None,
    shard: tuple[int, int] | None = None,
) -> RunReport:
    """Run every scenario of ``suite``; with ``baseline``, test each for regression against it.

    Raises ``SpecError`` (a check cannot be built) and ``AgentLoadError`` (the entry point
    cannot be imported) before any trial runs. ``full`` keeps running each scenario to its trial
    cap after its test has decided (for recording a strong baseline); the verdict is still the
    one reached at the decision. ``warm_from``: recorded results whose trials warm-start the
    threshold SPRTs (``config.warm_start``; a prior from any version keeps the stated error bounds).
    ``shard=(i, n)`` runs only the scenarios at positions ``k`` with ``k mod n == i - 1``, at the levels
    of the whole suite (m = all its scenarios), so that ``merge_results`` of all ``n`` shards equals the
    unsharded run; trial seeds depend on the scenario only, so any shard runs the same trials.
    """
    entry = entry or suite.agent.entry
    search = [Path.cwd(), suite.root]
    chosen = _shard_scenarios(suite, shard, recording=baseline is None)
    evaluators = {s.name: build_evaluator(s, file=suite.path, search=search) for s in chosen}

    def load(model: ModelConfig) -> AgentAdapter:
        factory = suite.agent.factory and entry == suite.agent.entry
        return load_adapter(entry, factory=factory, model=model, search=search, root=suite.root)

    if adapter is None:
        adapter = load(suite.model)
    settings = suite.settings
    covering = prepare_coverage(suite, adapter, entry)
    if covering is not None:
        user_on_trial = on_trial

        def on_trial(state: ScenarioState, trial: TrialOutcome, trace: Trace) -> None:
            covering.add(trace)
            if user_on_trial is not None:
                user_on_trial(state, trial, trace)

    proxy_adapter = None
    proxy_notes: list[str] = []
    allocation = None
    if settings.proxy is not None:
        check_adapter(suite, adapter)
        proxy_adapter = load(settings.proxy)
        if baseline is not None:
            allocation, proxy_notes = plan_from_baseline(baseline, settings)
    # With a proxy allocation the target runs only its share; the proxy's trials make up the rest.
    target_settings = settings if allocation is None else replace(settings, trials=allocation.n_target, max_trials=None)
    role = "check" if baseline is not None else "run"
    counts = baseline.baseline_counts() if baseline is not None else {}
    priors = warm_from.baseline_counts() if warm_from is not None else {}
    # Every multiplicity-dependent level uses m = the whole suite's scenarios, also in a shard:
    # the shards' tests must be the unsharded run's tests for the merged decision to hold alpha.
    m = len(suite.scenarios)
    names = [s.name for s in chosen]
    plans = fingerprint_plans(baseline, [s.name for s in suite.scenarios], settings) if baseline is not None else {}
    plans = {n: plans[n] for n in names if n in plans}
    if baseline is not None:
        sample = {n: p.trials for n, (_, p) in plans.items()}
    else:
        sample = dict.fromkeys(names, recording_sample(settings, full=full))
    limit = target_settings.trial_cap if settings.errors == "fail" else 2 * target_settings.trial_cap
    states = {
        s.name: ScenarioState(
            s,
            evaluators[s.name],
            monitor_for(
                s,
                target_settings,
                scenarios=m,
                baseline=counts.get(s.name),
                regression=baseline is not None,
                fingerprints=s.name in plans,
                prior=priors.get(s.name),
            ),
            limit,
            min_trials=sample.get(s.name, 0),
        )
        for s in chosen
    }
    run_id = uuid.uuid4().hex[:16]
    version_key = agent_version(suite, entry, version)
    engine = Engine(
        suite_name=suite.name,
        adapter=adapter,
        settings=settings,
        states=states,
        role=role,
        agent_version=version_key,
        run_id=run_id,
        store=store,
        progress=Progress(len(chosen) * settings.trial_cap, len(chosen), enabled=progress),
        full=full,
        on_trial=on_trial,
    )
    outcome = run_engine(engine, handle_signals=handle_signals)
    proxy = None
    ready = baseline is None or allocation is not None
    if proxy_adapter is not None and ready and not (outcome.aborted or outcome.interrupted):
        proxy = run_proxy(
            suite, proxy_adapter, evaluators, {n: st.outcomes() for n, st in states.items()},
            baseline=baseline, allocation=allocation, version=version_key, run_id=run_id, store=store,
            progress=progress, handle_signals=handle_signals,
        )
        outcome = replace(
            outcome,
            interrupted=outcome.interrupted or proxy.interrupted,
            aborted=outcome.aborted or (proxy.aborted and f"proxy model: {proxy.aborted}"),
        )

    verdicts = {name: st.monitor.finish() for name, st in states.items()}
    fps = fingerprint_outcomes(plans, {n: st.outcomes() for n, st in states.items()}, settings)
    final, decision = decide(verdicts, settings, fps, proxy.evidence if proxy else None)
    notes: list[str] = list(proxy_notes)
    if outcome.interrupted:
        notes.append(f"interrupted by {outcome.interrupted}: results cover the trials finished before it")
    if outcome.aborted:
        notes.append(outcome.aborted)
    if outcome.budget:
        notes.append(outcome.budget)
    if baseline is not None:
        notes += baseline_notes(baseline, names, suite.name)
    coverage = None
    if covering is not None:
        try:
            coverage = measure_coverage(covering, suite, adapter)
        except Exception as exc:  # coverage is an analysis: it must never lose the measured trials
            notes.append(f"coverage could not be computed: {type(exc).__name__}: {exc}")
        else:
            decision, gate_note = coverage_gate(decision, coverage["gate"]["overall"], settings.coverage.min)
            if gate_note:
                notes.append(gate_note)
    scenarios = tuple(
        ScenarioResult(
            name=name,
            input=st.scenario.input,
            trials=st.outcomes(),
            verdict=final[name],
            baseline=counts.get(name),
            threshold=st.scenario.threshold,
            fixed_n=fixed_n_equivalent(
                st.scenario, settings, scenarios=m, baseline=counts.get(name), regression=baseline is not None
            ),
            fingerprint_trials=sample.get(name) or None,
        )
        for name, st in states.items()
    )
    agent_info = {"entry": entry, "version": version_key, "adapter": adapter.name}
    try:
        agent_info["config"] = adapter.config()
    except Exception as exc:  # describing the agent must never lose the results
        agent_info["config"] = {"error": str(exc)}
    info = _suite_info(suite)
    shard_info = None
    if shard is not None:
        shard_info = {"index": shard[0], "count": shard[1], "scenarios_total": m, "suite_sha256": info["sha256"]}
        notes.append(shard_note(shard[0], shard[1], len(chosen), m))
    results = Results(
        kind=role,
        suite=info,
        agent=agent_info,
        settings=settings,
        scenarios=scenarios,
        decision=decision,
        run_id=run_id,
        started_at=outcome.started_at,
        finished_at=outcome.finished_at,
        interrupted=bool(outcome.interrupted),
        versions=_versions(),
        notes=tuple(notes),
        proxy=proxy.info if proxy else None,
        shard=shard_info,
        coverage=coverage,
    )
    return RunReport(results, outcome.aborted, outcome.interrupted, outcome.wall_s)
