"""Change alerts (docs/reports.md, "Change alerts"): the baseline and the candidate ran in different
conditions — model, provider, Agents SDK or agentassay version, suite file, age, cost or latency per
trial — and the reader is told so before the verdicts.

In ``check`` this plugin writes the results file's ``alerts`` section (``agentassay_results_sections``);
in every report it shows the alerts as warning lines before the verdict table
(``agentassay_report_sections``, place ``"warnings"``). The comparison itself is the pure
:func:`change_alerts`, which ``compare`` and ``merge --baseline`` call on the files (``agentassay_compare_sections``),
so all three agree. Alerts never reach the gate: this plugin implements no evidence or decision hook,
and it never raises in a run (a failing plugin would turn a deploy into manual review).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookimpl
from ..._reports import Section
from ..._runner._run import versions
from ._alerts import SECTION, Conditions, alerts_of, change_alerts
from ._settings import AlertsConfig

if TYPE_CHECKING:
    from ..._reports import ReportContext, Section
    from ..._results import Results
    from ..._runner import Run


def _agent(run: Run) -> dict[str, Any]:
    """The candidate's ``agent`` as its results file will record it (only ``config`` is read)."""
    try:
        return {"config": run.adapter.config() if run.adapter is not None else {}}
    except Exception:  # the results file then records the error; no model to compare
        return {}


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    if run.baseline is None:
        return None

    try:
        cand = Conditions(
            run.suite_info,
            _agent(run),
            versions(),
            run.target.started_at if run.target is not None else "",
            run.trials,
        )
        alerts = change_alerts(Conditions.of(run.baseline), cand, run.settings.of(AlertsConfig))
    except Exception as exc:  # evidence for the reader only: never let it cost the run its verdicts
        run.note(f"change alerts were not computed ({type(exc).__name__}: {exc}); the verdicts are unaffected")
        return None
    return {SECTION: alerts} if alerts else None


@hookimpl
def agentassay_compare_sections(baseline: Results, candidate: Results) -> dict[str, Any]:
    """``compare`` / ``merge --baseline``: the alerts from the files as recorded (the candidate's own start, not
    now); None drops a stale section the candidate carried."""

    alerts = change_alerts(Conditions.of(baseline), Conditions.of(candidate), candidate.settings.of(AlertsConfig))
    return {SECTION: alerts or None}


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section] | None:

    alerts = alerts_of(results)
    if not alerts:
        return None
    prefix = "warning: " if report.format == "terminal" else "⚠ "
    return [
        Section(
            key="alerts",
            place="warnings",
            items=tuple(prefix + str(a["message"]) for a in alerts),
            noun="alerts",
        )
    ]
