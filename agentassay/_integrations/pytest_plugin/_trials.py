"""Running one marked test: its trials, the verdict, and the one pytest outcome it becomes.

Two ways to run the trials, both with the seeds, tests and stopping rule of ``agentassay run``:

* ``concurrency=1`` (the default): each trial is a full pytest protocol — setup, call, teardown of
  the test's function-scoped fixtures — so every trial gets fresh fixtures, as a rerun would.
  Module- and session-scoped fixtures are set up once, as pytest always does.
* ``concurrency>1``: pytest can hold one instance of a function-scoped fixture at a time, so the
  fixtures are set up once and the trials run concurrently through the runner's engine (async
  tests on its event loop, sync tests in daemon threads), fed to the test in trial order.

A trial that raises ``AssertionError`` (or calls ``pytest.fail``) failed; any other exception, a
failing fixture, or running past ``timeout`` is an error trial. ``pytest.skip`` skips the test.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.runner import call_and_report, runtestprotocol

from ..._errors import AgentAssayError
from ..._evaluators._checks import EvalResult
from ..._features.fingerprints import fingerprint_of
from ..._features.fingerprints._gate import recording_sample
from ..._features.fingerprints._records import TRIAL_KEY
from ..._gate import Candidate, GatePlan, decide, monitor_for
from ..._plugins import default_plugins
from ..._results import ResultsError, TrialOutcome, load_results
from ..._runner import Engine, ScenarioState, run_engine, trial_seed
from ..._spec import Scenario
from ..._traces import Trace
from ..adapters._threads import call_in_thread
from . import _EXC, MarkerSpec, SessionState, Trial, _current
from ._record import keep_interrupted, verdict_report

if TYPE_CHECKING:
    from ..._gate import GatePlan, Monitor, ScenarioVerdict
    from ..._plugins import Hooks
    from ..._results import TrialOutcome

REASON_WIDTH = 300


class TrialTimeout(AgentAssayError):
    """A trial ran past the marker's ``timeout``."""


class _Skip(AgentAssayError):
    """A trial called ``pytest.skip``: the whole test is skipped."""

    def __init__(self, report: pytest.TestReport) -> None:
        super().__init__("skipped")
        self.report = report


@dataclass
class _Gate:
    """The test of one marked test: its monitor, and in regression mode the plan and the plugins' evidence."""

    name: str
    settings: Any
    monitor: Monitor
    plan: GatePlan
    hooks: Hooks | None
    baseline: Any  # Results | None
    full: bool = False  # recording a baseline: every trial up to the cap (the verdict stays the decision's)

    @classmethod
    def make(cls, name: str, spec: MarkerSpec, baseline: Any, *, full: bool = False) -> _Gate:

        settings = spec.settings()
        plan = GatePlan(settings, (name,), baseline=baseline)
        hooks = None
        if baseline is not None:

            hooks = default_plugins().for_plan(plan)
            hooks.call("agentassay_plan", plan=plan)
        else:

            plan.require(name, "fingerprints", recording_sample(settings))
        counts = baseline.baseline_counts().get(name) if baseline is not None else None
        monitor = monitor_for(
            Scenario(name, ""), settings, scenarios=1, baseline=counts, regression=baseline is not None,
            share=plan.taken(name),
        )
        return cls(name, settings, monitor, plan, hooks, baseline, full)

    @property
    def role(self) -> str:
        return "check" if self.baseline is not None else "run"

    def seed(self, index: int) -> int:

        return trial_seed(self.settings.seed, self.role, self.name, index)

    def verdict(self, outcomes: tuple[TrialOutcome, ...]) -> ScenarioVerdict:
        """The monitor's verdict, with the plugins' evidence (fingerprints…) in regression mode."""

        verdict = self.monitor.finish()
        if self.hooks is None:
            return verdict
        candidate = Candidate({self.name: outcomes}, {})
        found = self.hooks.call("agentassay_scenario_evidence", plan=self.plan, candidate=candidate)
        final, _ = decide({self.name: verdict}, self.settings, evidence=[e for es in found for e in es])
        return final[self.name]


def _reason(excinfo: Any) -> str:
    """``Type: first line of the message``: the user's words, without the values pytest's assertion
    rewriting adds on later lines, so equal failures are counted together."""
    lines = str(excinfo.value).strip().splitlines()
    text = f"{excinfo.typename}: {lines[0]}" if lines else excinfo.typename
    text = " ".join(text.split())
    return text if len(text) <= REASON_WIDTH else text[: REASON_WIDTH - 1] + "…"


def _outcome(trial: Trial, index: int, *, passed: bool | None, error: str | None, failures: tuple[str, ...],
             latency: float, counted: bool = True) -> TrialOutcome:

    trace = trial.trace if isinstance(trial.trace, Trace) else None
    tokens_in = trial.input_tokens or (trace.cost.input_tokens if trace else 0)
    tokens_out = trial.output_tokens or (trace.cost.output_tokens if trace else 0)
    usd = trial.usd if trial.usd is not None else (trace.cost.usd if trace else None)
    return TrialOutcome(
        index=index, passed=passed, seed=trial.seed, error=error, failures=failures, input_tokens=tokens_in,
        output_tokens=tokens_out, latency_s=latency, usd=usd, counted=counted,
        data={} if trace is None else {TRIAL_KEY: fingerprint_of(trace)},
    )


class _Caller:
    """Replaces ``item.runtest`` during the trials: calls the test function with its fixtures, under the
    timeout, in a fresh event loop (async) or a daemon thread (sync), and keeps what it returned."""

    def __init__(self, item: pytest.Function, spec: MarkerSpec) -> None:
        self.item = item
        self.fn = item.obj
        self.timeout = spec.timeout

    def kwargs(self) -> dict[str, Any]:
        funcargs = self.item.funcargs
        return {name: funcargs[name] for name in self.item._fixtureinfo.argnames}

    def __call__(self) -> None:
        trial = _current.get()
        result = self.run(self.kwargs())
        if trial is not None and result is not None:
            trial.record(result)

    def run(self, kwargs: dict[str, Any]) -> Any:
        if inspect.iscoroutinefunction(self.fn):
            return asyncio.run(self._async(kwargs))
        if self.timeout is None:
            return self.fn(**kwargs)
        box: dict[str, Any] = {}
        context = contextvars.copy_context()

        def work() -> None:
            try:
                box["value"] = context.run(self.fn, **kwargs)
            except BaseException as exc:
                box["error"] = exc

        thread = threading.Thread(target=work, name="agentassay-pytest-trial", daemon=True)
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():  # abandoned: a daemon thread never holds the process at exit
            raise TrialTimeout(f"timed out after {self.timeout:g} s (the marker's timeout)")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    async def _async(self, kwargs: dict[str, Any]) -> Any:
        try:
            return await asyncio.wait_for(self.fn(**kwargs), self.timeout)
        except asyncio.TimeoutError:
            raise TrialTimeout(f"timed out after {self.timeout:g} s (the marker's timeout)") from None


def _classify(item: pytest.Item, reports: list[pytest.TestReport]) -> tuple[bool | None, str | None, tuple[str, ...]]:
    """(passed, error, failures) of one trial's reports."""
    setup = reports[0]
    call = next((r for r in reports if r.when == "call"), None)
    teardown = next((r for r in reports if r.when == "teardown"), None)
    if setup.skipped:
        raise _Skip(setup)
    if setup.failed:
        return False, f"fixture setup failed: {_crash(setup)}", ()
    assert call is not None
    if call.skipped:
        raise _Skip(call)
    if call.failed:
        excinfo = item.stash.get(_EXC, None)
        if excinfo is not None and (excinfo.errisinstance(AssertionError) or excinfo.errisinstance(pytest.fail.Exception)):
            return False, None, (_reason(excinfo),)
        if excinfo is not None and excinfo.errisinstance(TrialTimeout):
            return False, str(excinfo.value), ()
        return False, (f"the test raised {_reason(excinfo)}" if excinfo is not None else _crash(call)), ()
    if teardown is not None and teardown.failed:
        return False, f"fixture teardown failed: {_crash(teardown)}", ()
    return True, None, ()


def _crash(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    text = " ".join(text.split())
    return text if len(text) <= REASON_WIDTH else text[: REASON_WIDTH - 1] + "…"


def _serial(item: pytest.Function, spec: MarkerSpec, gate: _Gate, outcomes: list[TrialOutcome]) -> pytest.TestReport | None:
    """Trials one by one, each a full protocol (fresh fixtures). Returns a report that ends the test early
    (a fixture that fails on the first trial, a skip), else None.

    After the decision, trials go on only to complete a sample fixed in advance: the fingerprint sample
    when the trials record traces, or every trial up to the cap when recording a baseline (``gate.full``).
    """
    cap = gate.settings.trial_cap
    decided_at: int | None = None
    traced = gate.full
    original = item.runtest
    item.runtest = _Caller(item, spec)  # type: ignore[method-assign]
    try:
        for index in range(cap):
            if decided_at is not None and not gate.full and (not traced or index >= gate.plan.min_trials(gate.name)):
                break
            trial = Trial(index, gate.seed(index), gate.name)
            token = _current.set(trial)
            start = time.perf_counter()
            try:
                item.stash[_EXC] = None
                reports = runtestprotocol(item, log=False, nextitem=item.parent)
            finally:
                _current.reset(token)
            latency = time.perf_counter() - start
            if index == 0 and reports[0].failed:  # a fixture that cannot be set up: not an agent's failure
                return reports[0]
            try:
                passed, error, failures = _classify(item, reports)
            except _Skip as skip:
                return skip.report
            if error and spec.errors == "exclude":
                passed = None
            traced = traced or trial.trace is not None
            outcomes.append(_outcome(trial, index, passed=passed, error=error, failures=failures, latency=latency,
                                     counted=decided_at is None))
            if decided_at is None and passed is not None and gate.monitor.update(passed):
                decided_at = index + 1
    finally:
        item.runtest = original  # type: ignore[method-assign]
    return None


class _TestAdapter:
    """The test function as an agent adapter for the engine (``concurrency > 1``): one call per trial."""

    name = "pytest"

    def __init__(self, caller: _Caller, kwargs: dict[str, Any], gate: _Gate) -> None:
        self.caller = caller
        self.kwargs = kwargs
        self.gate = gate
        self.trials: dict[int, Trial] = {}
        # The engine passes each trial's seed, not its index; seeds are distinct per index.
        self.index_of = {gate.seed(i): i for i in range(gate.settings.trial_cap * 2)}

    async def run(self, input: str, *, seed: int) -> Any:

        index = self.index_of[seed]
        trial = self.trials[index] = Trial(index, seed, self.gate.name)
        token = _current.set(trial)
        try:
            fn = self.caller.fn
            try:
                if inspect.iscoroutinefunction(fn):
                    result = await fn(**self.kwargs)
                else:
                    result = await call_in_thread(contextvars.copy_context().run, fn, **self.kwargs)
            except (AssertionError, pytest.fail.Exception) as exc:
                return Trace(output={"failed": _reason(pytest.ExceptionInfo.from_exception(exc))})
        finally:
            _current.reset(token)
        if result is not None:
            trial.record(result)
        return Trace(output={"failed": None})

    def tools(self) -> list[Any]:
        return []

    def config(self) -> dict[str, Any]:
        return {"test": self.gate.name}


def _evaluate(input: str, trace: Any) -> Any:

    if trace.error:  # the test raised something other than an assertion, or ran past its timeout
        return EvalResult(False, (trace.error,))
    failed = trace.output.get("failed") if isinstance(trace.output, dict) else None
    return EvalResult(failed is None, () if failed is None else (failed,))


def _concurrent(item: pytest.Function, spec: MarkerSpec, gate: _Gate, outcomes: list[TrialOutcome]) -> pytest.TestReport | None:
    """Fixtures once, trials concurrently through the engine (trial order kept for the test)."""

    setup = call_and_report(item, "setup", log=False)
    if not setup.passed:
        return setup
    caller = _Caller(item, spec)
    adapter = _TestAdapter(caller, caller.kwargs(), gate)
    settings = replace(gate.settings, timeout=spec.timeout or 1e9, retries=0)
    cap = settings.trial_cap
    state = ScenarioState(Scenario(gate.name, ""), _evaluate, gate.monitor, cap if spec.errors == "fail" else 2 * cap)
    engine = Engine(
        suite_name="pytest", adapter=adapter, settings=settings, states={gate.name: state}, role=gate.role,
        agent_version="pytest", run_id="pytest", progress=None, full=gate.full,
    )
    try:
        run_engine(engine, handle_signals=False)
    finally:
        for o in state.outcomes():
            t = adapter.trials.get(o.index) or Trial(o.index, o.seed, gate.name)
            outcomes.append(_outcome(t, o.index, passed=o.passed, error=o.error, failures=o.failures,
                                     latency=o.latency_s, counted=o.counted))
    return None


def run_marked(item: pytest.Item, nextitem: pytest.Item | None, spec: MarkerSpec, state: SessionState) -> None:
    """The whole protocol of one marked test: trials, verdict, one logged outcome."""
    assert isinstance(item, pytest.Function)
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    start = time.time()
    recording = bool(state.config.getoption("agentassay_record"))
    gate = _Gate.make(item.nodeid, spec, _baseline(state), full=recording)
    outcomes: list[TrialOutcome] = []
    ended: pytest.TestReport | None = None
    try:
        run = _serial if spec.concurrency == 1 else _concurrent
        ended = run(item, spec, gate, outcomes)
    except KeyboardInterrupt:

        keep_interrupted(state, item, gate, spec, tuple(outcomes))
        raise
    teardown = _teardown(item, nextitem)
    if ended is not None:  # a fixture failed on the first trial, or the test skipped itself: as pytest says
        for report in (ended, teardown):
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return

    trials = tuple(outcomes)
    verdict = gate.verdict(trials)
    setup = pytest.TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, "passed", None, "setup")
    call, properties = verdict_report(item, gate, spec, verdict, trials, start, state)
    item.user_properties.extend(properties)
    teardown.user_properties = list(item.user_properties)
    for report in (setup, call, teardown):
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


def _teardown(item: pytest.Function, nextitem: pytest.Item | None) -> pytest.TestReport:
    """Tear down what the next test does not share (module, class, session fixtures when leaving them).

    Each trial already ran the teardown hooks for the test's own fixtures; this is the rest, as
    ``pytest_runtest_teardown`` would do it for the last trial.
    """
    call = pytest.CallInfo.from_call(lambda: item.session._setupstate.teardown_exact(nextitem), when="teardown",
                                     reraise=(KeyboardInterrupt,))
    outcome = "passed" if call.excinfo is None else "failed"
    longrepr = None if call.excinfo is None else item._repr_failure_py(call.excinfo)
    return pytest.TestReport(item.nodeid, item.location, {k: 1 for k in item.keywords}, outcome, longrepr, "teardown",
                             duration=call.duration, start=call.start, stop=call.stop)


def _baseline(state: SessionState) -> Any:
    path = state.config.getoption("agentassay_baseline")
    if path is None:
        return None
    if state.baseline is None:

        try:
            state.baseline = load_results(path)
        except ResultsError as exc:
            raise pytest.UsageError(f"--agentassay-baseline: {exc}") from None
    return state.baseline


__all__ = ["TrialTimeout", "run_marked"]
