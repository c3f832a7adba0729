"""The trial engine: many trials in flight, sequential tests fed in trial order, flushed as they finish.

Scheduling: at most ``concurrency`` trials run at once; new trials are started round-robin
over the scenarios that are still undecided, so every scenario progresses. A trial's outcome
is fed to its scenario's test only once every lower-numbered trial of that scenario has been
fed, so the test sees exactly the sequence it would see if trials ran one by one: the
decision depends on the outcomes of trials 0..k in index order, never on which finished
first (docs/runner.md explains why that keeps the error guarantees). Once a scenario is
decided no new trial of it starts; trials already running finish, are stored and reported
as ``counted: false``, and do not change the verdict.
"""

from __future__ import annotations

import asyncio
import hashlib
import signal
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from .._boundary import clean_trace, scrub_text
from .._evaluators import Evaluator
from .._gate import Monitor
from .._integrations.adapters import AgentAdapter, AgentRunError
from .._integrations.adapters._base import UserExit
from .._integrations.adapters._base import describe_exception as _describe
from .._integrations.adapters._threads import call_in_thread
from .._integrations.adapters._transient import credentials_rejected
from .._limits import Deadline
from .._results import TrialOutcome
from .._spec import Scenario, Settings
from .._traces import Trace
from ._cost import price_usd
from ._progress import Progress
from ._retry import backoff, is_transient

HEALTH_CHECK_TRIALS = 10
# A trial's checks (its evaluator, then the plugins' per-trial checks) get what is left of its
# config.timeout, but at least this, so a trial whose agent finished just in time is not failed by its checks.
CHECK_FLOOR_S = 1.0
# The checks bound themselves (a regex's timeout, a plugin interpreter's deadline) to that time; the
# engine abandons them this much later, so a bounded check reports its own reason before the hard limit hits.
CHECK_GRACE_S = 1.0


def trial_seed(seed: int, role: str, scenario: str, index: int) -> int:
    """Seed of one trial: reproducible, and disjoint between roles.

    ``check`` draws from a different stream than ``run`` so that a candidate identical to its
    baseline is compared with fresh trials, not with a replay of the baseline's own trials
    (which would make the two samples dependent and the tests invalid).
    """
    digest = hashlib.blake2b(f"{seed}|{role}|{scenario}|{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


@dataclass
class ScenarioState:
    scenario: Scenario
    evaluator: Evaluator
    monitor: Monitor
    limit: int
    started: int = 0
    finished: dict[int, TrialOutcome] = field(default_factory=dict)
    next_feed: int = 0
    decided_at: int | None = None
    min_trials: int = 0  # samples fixed in advance (GatePlan.require): trials 0..min_trials-1 run whatever the test decided

    def wants_more(self, full: bool) -> bool:
        if self.started >= self.limit:
            return False
        return full or not self.monitor.decided or self.started < self.min_trials

    def outcomes(self) -> tuple[TrialOutcome, ...]:
        """Finished trials in index order; those past the decision are marked ``counted=False``."""
        cut = self.decided_at
        return tuple(
            self.finished[i] if cut is None or i < cut else replace(self.finished[i], counted=False)
            for i in sorted(self.finished)
        )

    def feed(self) -> bool:
        """Feed finished outcomes in index order; True when this call decided the scenario."""
        became = False
        while self.next_feed in self.finished and not self.monitor.decided:
            outcome = self.finished[self.next_feed]
            self.next_feed += 1
            if outcome.passed is None:  # excluded error trial
                continue
            if self.monitor.update(outcome.passed):
                self.decided_at = self.next_feed
                became = True
        return became


@dataclass
class EngineOutcome:
    states: dict[str, ScenarioState]
    started_at: str
    finished_at: str
    interrupted: str | None = None  # "SIGINT" / "SIGTERM" when stopped by a signal
    aborted: str | None = None  # why the run was abandoned (the agent could not be run)
    wall_s: float = 0.0


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Engine:
    def __init__(
        self,
        *,
        suite_name: str,
        adapter: AgentAdapter,
        settings: Settings,
        states: dict[str, ScenarioState],
        role: str,
        agent_version: str,
        run_id: str,
        progress: Progress | None = None,
        full: bool = False,
        on_trial: Callable[[ScenarioState, TrialOutcome, Trace], None] | None = None,
        seed_role: str | None = None,
        may_start: Callable[[], bool] | None = None,
        checks: Callable[[ScenarioState, int, Trace], None] | None = None,
        trial_data: Callable[[Trace], Mapping[str, Any]] | None = None,
        provider: str | None = None,
    ) -> None:
        self.suite_name = suite_name
        self.adapter = adapter
        self.settings = settings
        self.states = states
        self.role = role
        # The seed stream: the role's own, except for paired runs (a second model replaying the
        # target's seeds of `run`, so that row i of both is the same input and seed).
        self.seed_role = seed_role or role
        self.agent_version = agent_version
        self.run_id = run_id
        self.progress = progress
        self.full = full
        # Called with each finished trial (the run's agentassay_trial_finished hook: writers, spending caps, …).
        self.on_trial = on_trial
        # Asked before each trial starts; False holds new trials (a plugin's hold), in-flight ones finish.
        self.may_start = may_start or (lambda: True)
        # Per-trial checks beyond the evaluator (the run's agentassay_trial_checks hook), run in the
        # trial's check thread under its time limit.
        self.checks = checks
        # What plugins keep of each finished trial's trace (the run's agentassay_trial_data hook).
        self.trial_data = trial_data
        # The adapter's model.provider: prices come from config.prices, else the table by provider and model.
        self.provider = provider
        self._stop: str | None = None
        self.signals_held = False  # run_engine installed our SIGINT/SIGTERM handlers (see user_interrupts)
        self._ok = 0
        self._errored = 0
        # Trials whose agent call completed but whose checks were abandoned at the time limit: errors, but no
        # sign that the agent cannot be run (the health check counts them as run).
        self._checks_abandoned: set[tuple[str, int]] = set()
        self._first_error: str | None = None
        self._rejected: str | None = None  # the provider refused the API key: the run stops at once
        # Trials whose agent call has returned (their checks and recording remain): an abort lets them finish,
        # so nothing already measured is lost — the trial that met the rejected key among them. (A signal
        # stops at once: a check may hang until the trial's time limit.)
        self._finishing: set[asyncio.Task[Any]] = set()

    # -- one trial -----------------------------------------------------------------------------
    def user_interrupts(self, exc: BaseException) -> bool:
        """Whether a ``BaseException`` met inside a trial came from user code (so it is the trial's error).

        ``SystemExit``, ``GeneratorExit`` and custom ``BaseException`` subclasses always do: the engine raises
        none of them. ``KeyboardInterrupt`` does when our signal handlers hold SIGINT (then Ctrl-C sets the
        latch and never raises), not in library use without them, where it is the user's Ctrl-C.
        """
        return not isinstance(exc, KeyboardInterrupt) or self.signals_held

    async def _guarded(self, text: str, seed: int) -> Trace:
        """The agent's run, with a ``BaseException`` from user code turned into :class:`UserExit`.

        It must happen inside the coroutine ``wait_for`` wraps in a task of its own: asyncio re-raises a
        ``SystemExit`` or ``KeyboardInterrupt`` that escapes a task out of the event loop, ending the process
        (``sys.exit(0)`` in an async agent or tool read as a pass).
        """
        try:
            return await self.adapter.run(text, seed=seed)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            if isinstance(exc, Exception) or not self.user_interrupts(exc):
                raise
            raise UserExit(exc) from None

    async def _attempt(self, state: ScenarioState, index: int, seed: int) -> tuple[Trace, int]:
        s = self.settings
        attempt = 0
        while True:
            attempt += 1
            try:
                trace = await asyncio.wait_for(self._guarded(state.scenario.input, seed), s.timeout)
                return trace, attempt
            except asyncio.TimeoutError:
                return Trace(error=f"timed out after {s.timeout:g} s (config.timeout)"), attempt
            except AgentRunError as exc:
                self._check_credentials(exc, state, index)
                partial = exc.trace or Trace()
                return Trace(partial.steps, partial.output, partial.cost, partial.metadata, str(exc)), attempt
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a user's SystemExit & co. arrive as UserExit (_guarded)
                self._check_credentials(exc, state, index)
                if is_transient(exc) and attempt <= s.retries:
                    await asyncio.sleep(backoff(attempt, exc))
                    continue
                raised = exc.original if isinstance(exc, UserExit) else exc  # where the user's code raised it
                where = traceback.extract_tb(raised.__traceback__)[-1] if raised.__traceback__ else None
                at = f" (at {where.filename}:{where.lineno})" if where else ""
                suffix = f" after {attempt} attempts" if attempt > 1 else ""
                return Trace(error=f"the agent raised {_describe(exc)}{at}{suffix}"), attempt

    def _check_credentials(self, exc: BaseException, state: ScenarioState, index: int) -> None:
        """A provider that rejects the API key (HTTP 401/403) mid-run stops the run after this trial (exit 4):
        every later trial would fail the same way, and read as a FAIL of the agent (issue 22, defect 11)."""
        rejected = credentials_rejected(exc)
        if rejected is None or self._rejected is not None:
            return
        hint = getattr(self.adapter, "credentials_hint", None) or "check the API key the agent's client uses"
        self._rejected = (
            f"the agent could not be run: the provider rejected the credentials in trial {index} of scenario "
            f"'{state.scenario.name}' ({_describe(rejected)}), so no further trial was started; {hint}"
        )

    async def _trial(self, state: ScenarioState, index: int) -> tuple[ScenarioState, TrialOutcome, Trace]:
        seed = trial_seed(self.settings.seed, self.seed_role, state.scenario.name, index)
        start = time.perf_counter()
        trace, attempts = await self._attempt(state, index, seed)
        wall = time.perf_counter() - start
        task = asyncio.current_task()
        if task is not None:
            self._finishing.add(task)
        # The boundary (agentassay/_boundary.py): from here on, checks, hooks, the store and the results
        # see the agent's text repaired (no lone surrogates) and redacted (no secrets), uncapped.
        trace = clean_trace(trace)
        cost = trace.cost if trace.cost.latency_s else replace(trace.cost, latency_s=wall)
        if cost.usd is None:
            cost = replace(cost, usd=price_usd(cost, trace.metadata.model, self.settings.prices, self.provider))
        trace = replace(trace, cost=cost).with_metadata(
            scenario=state.scenario.name,
            trial=index,
            seed=seed,
            agent_version=self.agent_version,
            adapter=self.adapter.name,
            timestamp=_now(),
        )
        # Issue 22, defect 8: the checks run off the event loop, under what is left of the trial's time limit, so
        # a check that never ends (a backtracking regex, a slow python check) costs this trial, never the run,
        # and SIGINT / SIGTERM are still handled by the loop meanwhile.
        limit = Deadline(max(self.settings.timeout - wall, CHECK_FLOOR_S))
        try:
            result = await asyncio.wait_for(
                call_in_thread(self._checks, state, index, trace, limit), limit.seconds + CHECK_GRACE_S
            )
            passed: bool | None = result.passed
            failures = tuple(result.failures)
        except asyncio.TimeoutError:
            running = f" ({limit.doing} was running)" if limit.doing else ""
            error = (
                f"the checks did not finish within the trial's time limit: {limit.seconds:.3g} s left of "
                f"config.timeout {self.settings.timeout:g} s{running}; they were abandoned"
            )
            if not trace.error:
                self._checks_abandoned.add((state.scenario.name, index))
            trace = replace(trace, error=f"{trace.error}; {error}" if trace.error else error)
            passed, failures = False, (error,)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # a broken user check fails the trial, loudly (sys.exit() in it too)
            if not isinstance(exc, Exception) and not self.user_interrupts(exc):
                raise
            passed, failures = False, (f"evaluator raised {_describe(exc)}",)
        failures = tuple(scrub_text(str(f)) for f in failures)  # a check's message may quote anything
        if trace.error and self.settings.errors == "exclude":
            passed = None
        data = self.trial_data(trace) if self.trial_data is not None else {}
        outcome = TrialOutcome(
            index=index,
            passed=passed,
            seed=seed,
            error=trace.error,
            failures=failures,
            input_tokens=trace.cost.input_tokens,
            output_tokens=trace.cost.output_tokens,
            latency_s=trace.cost.latency_s,
            usd=trace.cost.usd,
            attempts=attempts,
            data=data,
        )
        return state, outcome, trace

    def _checks(self, state: ScenarioState, index: int, trace: Trace, limit: Deadline) -> Any:
        """In the trial's check thread: the evaluator's verdict, then the per-trial checks, within ``limit``."""
        with limit.active():
            try:
                return state.evaluator(state.scenario.input, trace)
            finally:  # also when the evaluator raised: the plugins' checks still see the trace
                if self.checks is not None:
                    self.checks(state, index, trace)

    # -- bookkeeping ---------------------------------------------------------------------------
    def _record(self, state: ScenarioState, outcome: TrialOutcome, trace: Trace) -> None:
        state.finished[outcome.index] = outcome
        if outcome.error and (state.scenario.name, outcome.index) not in self._checks_abandoned:
            self._errored += 1
            self._first_error = self._first_error or outcome.error
        else:
            self._ok += 1
        if state.feed() and self.progress is not None:
            self.progress.scenario_decided(
                state.scenario.name, state.monitor.finish().verdict.value, state.decided_at or 0
            )
        if self.progress is not None:
            self.progress.trial()
        if self.on_trial is not None:
            self.on_trial(state, outcome, trace)

    def _health(self, *, final: bool = False) -> str | None:
        """Abandon the run when the agent evidently cannot run at all (hypothesis-style health check).

        During the run: the first ``HEALTH_CHECK_TRIALS`` trials all errored. At the end: no
        trial completed (the tests may have stopped on the failures before ten trials).
        """
        planned = sum(s.limit for s in self.states.values())
        threshold = 1 if final else min(HEALTH_CHECK_TRIALS, planned)
        if self._ok == 0 and self._errored >= threshold:
            return (
                f"the agent could not be run: the first {self._errored} trials all ended in an error and none "
                f"completed. First error: {self._first_error}"
            )
        return None

    def _next(self, order: list[ScenarioState], cursor: int) -> tuple[ScenarioState | None, int]:
        n = len(order)
        for step in range(n):
            state = order[(cursor + step) % n]
            if state.wants_more(self.full):
                return state, (cursor + step + 1) % n
        return None, cursor

    def stop(self, reason: str) -> None:
        self._stop = reason

    # -- the loop ------------------------------------------------------------------------------
    async def run(self) -> EngineOutcome:
        started = _now()
        t0 = time.perf_counter()
        order = list(self.states.values())
        cursor = 0
        pending: set[asyncio.Task[tuple[ScenarioState, TrialOutcome, Trace]]] = set()
        aborted: str | None = None
        try:
            while True:
                while (
                    self._stop is None
                    and aborted is None
                    and self.may_start()
                    and len(pending) < self.settings.concurrency
                ):
                    state, cursor = self._next(order, cursor)
                    if state is None:
                        break
                    index = state.started
                    state.started += 1
                    pending.add(asyncio.ensure_future(self._trial(state, index)))
                if not pending or self._stop is not None or aborted is not None:
                    break
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED, timeout=0.5)
                for task in done:
                    self._finishing.discard(task)
                    state, outcome, trace = task.result()
                    self._record(state, outcome, trace)
                aborted = self._rejected or self._health()
            if aborted is None and self._stop is None:
                aborted = self._health(final=True)
        finally:
            keep = self._stop is None  # an abort (a rejected key) keeps what was measured; a signal stops now
            for task in pending:
                if not (keep and task in self._finishing):  # still in the agent call (or a signal): cancelled
                    task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
                for task in pending:  # measured before the abort: kept
                    if keep and task in self._finishing and not task.cancelled() and task.exception() is None:
                        self._record(*task.result())
            self._finishing.clear()
            if self.progress is not None:
                self.progress.close()
        return EngineOutcome(
            self.states, started, _now(), self._stop, aborted, wall_s=time.perf_counter() - t0
        )


def run_engine(engine: Engine, *, handle_signals: bool = True) -> EngineOutcome:
    """Run the engine in a fresh event loop; SIGINT / SIGTERM stop it cleanly with results so far."""

    async def main() -> EngineOutcome:
        loop = asyncio.get_running_loop()
        installed: list[tuple[signal.Signals, Any]] = []
        if handle_signals:
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    previous = signal.getsignal(sig)
                    loop.add_signal_handler(sig, engine.stop, sig.name)
                    installed.append((sig, previous))
                    engine.signals_held = engine.signals_held or sig is signal.SIGINT
                except (NotImplementedError, RuntimeError, ValueError):  # not the main thread / Windows
                    pass
        try:
            return await engine.run()
        finally:
            for sig, previous in installed:
                loop.remove_signal_handler(sig)
                if previous is not None:  # asyncio resets to the default; the run's latch comes back
                    signal.signal(sig, previous)

    return asyncio.run(main())
