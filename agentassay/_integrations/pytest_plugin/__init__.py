"""The pytest plugin (entry point ``pytest11``): a marked test is one trial, repeated until a verdict.

``@pytest.mark.agentassay(trials=50, threshold=0.8)`` turns a test function into a stochastic test:
the plugin calls it again and again (an ``AssertionError`` is a failed trial, any other exception
an error trial), feeds the outcomes to the same SPRT / fixed-n test as ``agentassay run`` with the
same seeds, and gives the test one pytest outcome — PASS passed, FAIL failed with the interval and
the most common failure reasons, INCONCLUSIVE an outcome of its own. ``pytest agentassay.yml`` runs a
suite's scenarios as tests (``--agentassay-suite FILE`` adds them to the tests pytest collects); ``--agentassay-record`` / ``--agentassay-baseline`` make
marked tests regression tests (docs/pytest.md).

Installed but unused it costs nothing: this module imports only pytest and the standard library;
the engine (NumPy, SciPy, the Agents SDK) is imported when a marked test or an option needs it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ._marker import ARGUMENTS, MarkerError, MarkerSpec, parse_marker

MARKER = "agentassay"
INCONCLUSIVE_CHOICES = ("inconclusive", "fail", "pass", "skip")
SPEC = pytest.StashKey[MarkerSpec]()
STATE = pytest.StashKey["SessionState"]()
_current: contextvars.ContextVar[Trial | None] = contextvars.ContextVar("agentassay_trial", default=None)


@dataclass
class Trial:
    """The ``trial`` fixture: which trial of a marked test this is, and what it cost.

    ``index`` counts from 0; ``seed`` is the one ``agentassay run`` gives the same trial (use it to
    seed your agent or model). ``record(trace, usd=…, input_tokens=…, output_tokens=…)`` attaches
    what the trial did: a trace gives behavioural fingerprints (regression tests compare them),
    costs add to the test's cost. Returning a Trace from the test does the same.
    """

    index: int
    seed: int
    test: str
    usd: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    trace: Any = None

    def record(
        self, trace: Any = None, *, usd: float | None = None, input_tokens: int = 0, output_tokens: int = 0
    ) -> None:
        if trace is not None:
            self.trace = trace
        if usd is not None:
            self.usd = (self.usd or 0.0) + float(usd)
        self.input_tokens += int(input_tokens)
        self.output_tokens += int(output_tokens)


class SessionState:
    """The session's plugin object (registered in ``pytest_configure``, as junitxml registers its own):
    each marked test's summary for the terminal, and its results for ``--agentassay-record``.

    Under pytest-xdist it lives in the controller and the workers alike; the reports it reads carry
    each test's results, so the controller's file has every worker's tests.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.summaries: list[dict[str, Any]] = []
        self.scenarios: dict[str, dict[str, Any]] = {}
        self.interrupted = False
        self.baseline: Any = None  # agentassay._results.Results, loaded on first use
        self.suite_runs: dict[str, Any] = {}  # --agentassay-suite path -> its RunReport, made once

    @property
    def worker(self) -> bool:
        return hasattr(self.config, "workerinput")

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.config.getoption("agentassay_baseline"):  # a bad file stops the session before any trial
            # lazy: a pytest session that marks nothing loads none of the engine
            from ._trials import _baseline

            _baseline(self)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        info = getattr(report, "agentassay", None)
        if info is None or report.when != "call":
            return
        self.summaries.append(info["summary"])
        if info.get("scenario") is not None and not self.worker:
            self.scenarios[report.nodeid] = info
            # lazy: a pytest session that marks nothing loads none of the engine
            from ._record import save_record

            save_record(self)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.summaries:
            return
        # lazy: a pytest session that marks nothing loads none of the engine
        from ._record import summary_lines

        terminalreporter.section("agentassay")
        for line in summary_lines(self.summaries):
            terminalreporter.write_line(line)
        record = self.config.getoption("agentassay_record")
        if record and self.scenarios:
            held = sum(len(info["scenario"].get("trials", ())) for info in self.scenarios.values())
            terminalreporter.write_line(
                f"results of {len(self.scenarios)} marked tests ({held} trials) written to "
                f"{record}"
            )


# -- options and marker ----------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentassay", "AgentAssay: stochastic tests of LLM agents")
    group.addoption(
        "--agentassay-inconclusive", choices=INCONCLUSIVE_CHOICES, default="inconclusive",
        help="outcome of an INCONCLUSIVE marked test: 'inconclusive' (default: does not break the build, is counted "
        "as 'inconclusive' in the summary and is <skipped> with its message in --junitxml), 'fail', 'pass' or 'skip'",
    )
    group.addoption(
        "--agentassay-suite", action="append", default=[], metavar="FILE",
        help="add the scenarios of an agentassay.yml suite to the collected tests (same verdicts as `agentassay "
        "run`); `pytest agentassay.yml` runs only the suite's",
    )
    group.addoption(
        "--agentassay-record", metavar="FILE", default=None,
        help="write the marked tests' trials and verdicts to FILE (an agentassay.results/1 file, a baseline)",
    )
    group.addoption(
        "--agentassay-baseline", metavar="FILE", default=None,
        help="test each marked test (and suite scenario) for regression against this results file",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}({', '.join(f'{a}=…' for a in ARGUMENTS)}): the test is one trial of a stochastic test, "
        "repeated until a verdict (AgentAssay; docs/pytest.md)",
    )
    state = config.stash[STATE] = SessionState(config)
    config.pluginmanager.register(state, "agentassay-session")


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> Generator[None, Any, Any]:
    """Validate each marked test's arguments at collection: a bad argument is a collection error naming it."""
    result = yield
    items = result if isinstance(result, list) else [result] if result is not None else []
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        marker = item.get_closest_marker(MARKER)
        if marker is None:
            continue
        try:
            item.stash[SPEC] = parse_marker(marker.args, dict(marker.kwargs))
        except MarkerError as exc:
            raise collector.CollectError(f"{item.nodeid}: @pytest.mark.{MARKER}: {exc}") from None
    return result


class _TrialView:
    """What the ``trial`` fixture returns: the trial running now, looked up on every access.

    With ``concurrency > 1`` one fixture value serves trials running at once (pytest sets a
    function-scoped fixture up once), so the view reads the trial from the running task's context.
    """

    __slots__ = ()

    def _trial(self) -> Trial:
        current = _current.get()
        if current is None:
            raise RuntimeError("the `trial` fixture is usable inside a trial of an @pytest.mark.agentassay test")
        return current

    def __getattr__(self, name: str) -> Any:
        return getattr(self._trial(), name)

    def __repr__(self) -> str:
        current = _current.get()
        return f"<trial {current.index} of {current.test}>" if current else "<trial: none running>"


@pytest.fixture
def trial(request: pytest.FixtureRequest) -> Any:
    """The current trial of an ``@pytest.mark.agentassay`` test: ``.index``, ``.seed``, ``.record(...)``."""
    if SPEC not in request.node.stash:
        raise pytest.UsageError(f"{request.node.nodeid}: the `trial` fixture is for tests marked @pytest.mark.{MARKER}")
    return _TrialView()


# -- running marked tests ----------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    if SPEC not in item.stash:
        return None
    # lazy: a pytest session that marks nothing loads none of the engine
    from ._trials import run_marked

    run_marked(item, nextitem, item.stash[SPEC], item.config.stash[STATE])
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Keep each trial's exception (its type decides failed vs error trial); annotate suite scenarios."""
    report = yield
    if SPEC in item.stash and call.when == "call":
        item.stash[_EXC] = call.excinfo
    elif type(item).__name__ == "ScenarioItem":
        # lazy: a pytest session that marks nothing loads none of the engine
        from ._suite import annotate

        annotate(item, report)
    return report


_EXC = pytest.StashKey[Any]()


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, Any] | None:
    info = getattr(report, "agentassay", None)
    if info is None or report.when != "call":
        return None
    if info.get("shown") == "inconclusive":
        return "inconclusive", "I", ("INCONCLUSIVE", {"yellow": True})
    return None


# -- --agentassay-suite: a suite's scenarios as tests -------------------------------------------------


def _suites(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in config.getoption("agentassay_suite")]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A suite file named on the command line (``pytest agentassay.yml``: only its scenarios run) is collected
    in place, as is one named with ``--agentassay-suite`` that pytest's own collection reaches.

    Issue 25: the docs said ``pytest --agentassay-suite S S`` (the second S kept pytest from collecting every
    test), which reads like a typo. A ``.yml`` / ``.yaml`` path given as an argument is a suite: pytest itself
    collects nothing from such a file.
    """
    named = file_path.suffix in (".yml", ".yaml") and parent.session.isinitpath(file_path)
    if named or file_path.resolve() in _suites(parent.config):
        # lazy: a pytest session that marks nothing loads none of the engine
        from ._suite import SuiteFile

        return SuiteFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Suites given only with ``--agentassay-suite`` are added after the tests pytest collected."""
    suites = _suites(config)
    if not suites:
        return
    # lazy: a pytest session that marks nothing loads none of the engine
    from ._suite import ScenarioItem, SuiteFile

    collected = {item.path.resolve() for item in items if isinstance(item, ScenarioItem)}
    for path in suites:
        if path not in collected:
            items.extend(SuiteFile.from_parent(session, path=path).collect())


__all__ = ["MARKER", "MarkerSpec", "Trial", "trial"]
