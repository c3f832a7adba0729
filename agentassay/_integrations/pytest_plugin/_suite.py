"""``pytest agentassay.yml`` (or ``--agentassay-suite agentassay.yml``): each scenario of a suite as a pytest item.

The suite is run once, exactly as ``agentassay run`` runs it (same seeds, levels over all its
scenarios, Holm, the same stopping), the first time one of its items runs; each item then reports
its scenario's verdict. With ``--agentassay-baseline`` the run is ``agentassay check`` against it.
Under pytest-xdist a worker that gets any of a suite's items runs the whole suite (the verdicts are
the same on every worker); ``--dist loadgroup`` keeps them on one worker (they share a group).
"""

from __future__ import annotations

from typing import Any

import pytest

from ..._errors import AgentAssayError
from ..._plugins import PluginError
from ..._reports._summary import explanation_of
from ..._runner import run_suite
from ..._spec import SpecError, load_suite
from ..adapters import AgentLoadError
from . import STATE
from ._record import figures
from ._trials import _baseline

VERDICT = pytest.StashKey[dict[str, Any]]()


class ScenarioFailed(AgentAssayError):
    """The scenario's verdict is FAIL (or INCONCLUSIVE shown as a failure)."""


class SuiteFile(pytest.File):
    """A suite file named on the command line or with ``--agentassay-suite``; its items are its scenarios."""

    suite: Any = None

    def collect(self) -> list[ScenarioItem]:

        try:
            self.suite = load_suite(self.path)
        except SpecError as exc:
            raise self.CollectError(f"agentassay suite: {exc}") from None
        return [
            ScenarioItem.from_parent(self, name=s.name) for s in self.suite.scenarios
        ]

    def run_once(self) -> Any:
        """The suite's RunReport, made by the first of its items to run."""
        state = self.config.stash[STATE]
        key = str(self.path)
        if key not in state.suite_runs:

            try:
                state.suite_runs[key] = run_suite(
                    self.suite, baseline=_baseline(state), progress=False, handle_signals=False, store=None
                )
            except (AgentLoadError, SpecError, PluginError) as exc:  # every scenario fails with the same clear line
                state.suite_runs[key] = exc
        found = state.suite_runs[key]
        if isinstance(found, Exception):
            raise ScenarioFailed(f"the suite could not be run: {found}")
        return found


class ScenarioItem(pytest.Item):
    """One scenario of a suite: passes, fails or is inconclusive as the suite run decided."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_marker(pytest.mark.xdist_group(name="agentassay-suite"))

    def runtest(self) -> None:

        parent = self.parent
        assert isinstance(parent, SuiteFile)
        report = parent.run_once()
        if report.aborted:
            raise ScenarioFailed(f"the suite could not be run: {report.aborted}")
        s = report.results.scenario(self.name)
        assert s is not None
        f = figures(s)
        why = explanation_of(s)  # as every report words it (agentassay/_reports/_summary.py)
        self.stash[VERDICT] = {"summary": {"test": self.nodeid, **f}, "explanation": why}
        policy = self.config.getoption("agentassay_inconclusive")
        if f["verdict"] == "fail" or (f["verdict"] == "inconclusive" and policy == "fail"):
            raise ScenarioFailed(why)
        if f["verdict"] == "inconclusive" and policy in ("skip", "inconclusive"):  # JUnit: <skipped message=…>
            pytest.skip(why if why.startswith("INCONCLUSIVE") else f"INCONCLUSIVE: {why}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"scenario {self.name}"


def annotate(item: pytest.Item, report: pytest.TestReport) -> None:
    """Give a scenario item's call report what a marked test's carries (the summary, the inconclusive status)."""
    info = item.stash.get(VERDICT, None)
    if info is None or report.when != "call":
        return
    policy = item.config.getoption("agentassay_inconclusive")
    verdict = info["summary"]["verdict"]
    shown = "inconclusive" if verdict == "inconclusive" and policy == "inconclusive" else report.outcome
    report.agentassay = {"shown": shown, "summary": info["summary"], "scenario": None}  # type: ignore[attr-defined]
