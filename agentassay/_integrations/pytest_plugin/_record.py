"""A marked test's verdict as pytest sees it (one report, JUnit properties, a summary line) and the
``--agentassay-record`` results file of the session's marked tests."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import pytest

from ..._features.fingerprints._records import SAMPLE_KEY
from ..._gate import SuiteDecision, fixed_n_equivalent
from ..._reports._summary import explanation_of
from ..._results import Results, ScenarioResult, with_more_trials
from ..._runner._run import versions
from ..._spec import Scenario, Settings
from ..._stats import Verdict, deployment_decision, proportion_ci, suite_verdict

if TYPE_CHECKING:
    from ..._gate import ScenarioVerdict
    from ..._results import ScenarioResult, TrialOutcome
    from . import MarkerSpec, SessionState
    from ._trials import _Gate


def scenario_result(gate: _Gate, spec: MarkerSpec, verdict: ScenarioVerdict, trials: tuple[TrialOutcome, ...]) -> ScenarioResult:

    counts = gate.baseline.baseline_counts().get(gate.name) if gate.baseline is not None else None
    regression = gate.baseline is not None
    return ScenarioResult(
        name=gate.name,
        input="",
        trials=trials,
        verdict=verdict,
        baseline=counts,
        threshold=spec.threshold,
        fixed_n=fixed_n_equivalent(Scenario(gate.name, ""), gate.settings, scenarios=1, baseline=counts, regression=regression),
        data={SAMPLE_KEY: gate.plan.sample(gate.name, "fingerprints") or None},
    )


def figures(s: ScenarioResult, *, recording: bool = False) -> dict[str, Any]:
    """What the summary line, the failure message and the JUnit properties say, computed once. ``recording``:
    the trials go to ``--agentassay-record``'s file, which then holds more than the decision used."""

    # The trials the test used (those finished after its decision are kept in the results, not counted here).
    used = [t for t in s.trials if t.counted and t.passed is not None]
    n, k = len(used), sum(1 for t in used if t.passed)
    # Recording runs every trial to the cap (as `run --full`): the file holds more than the decision used, and
    # the summary says both (issue 25: it said "17/17 … stopped at 17" of a file holding 59/60).
    held = [t for t in s.trials if t.passed is not None]
    recorded = f"{sum(1 for t in held if t.passed)}/{len(held)}" if recording and len(held) > n else None
    lo, hi = proportion_ci(k, n, method="wilson") if n else (0.0, 1.0)
    pvalue = s.verdict.pvalue
    found = s.verdict.evidence.get("pvalue")
    if pvalue is None and isinstance(found, int | float) and not isinstance(found, bool):
        pvalue = float(found)
    return {
        "verdict": s.verdict.verdict.value,
        "trials": n,
        "trials_run": len(s.trials),
        "passes": k,
        "rate": k / n if n else None,
        "interval": [round(float(lo), 4), round(float(hi), 4)],
        "stopped_at": s.verdict.trials_used,
        "pvalue": pvalue,
        "cost_usd": s.cost()["usd"],
        "baseline": None if s.baseline is None else f"{s.baseline.passes}/{s.baseline.trials}",
        "recorded": recorded,
    }


def _stopped(f: dict[str, Any]) -> str:
    """``stopped at 17``, or for a recording that ran on: ``decided at 17, recorded 59/60``."""
    if f.get("recorded"):
        return f"decided at {f['stopped_at']}, recorded {f['recorded']}"
    return f"stopped at {f['stopped_at']}"


def _interval(f: dict[str, Any]) -> str:
    lo, hi = f["interval"]
    return f"[{lo:.2f}, {hi:.2f}]"


def verdict_report(
    item: pytest.Item, gate: _Gate, spec: MarkerSpec, verdict: ScenarioVerdict, trials: tuple[TrialOutcome, ...],
    start: float, state: SessionState,
) -> tuple[pytest.TestReport, list[tuple[str, Any]]]:
    """The one call report of a marked test, and its JUnit properties."""
    s = scenario_result(gate, spec, verdict, trials)
    f = figures(s, recording=bool(state.config.getoption("agentassay_record")))
    word = f["verdict"].upper()
    counts = f"{f['passes']}/{f['trials']} passed, 95% interval {_interval(f)}, {_stopped(f)} of {spec.trials} trials"
    against = f"; baseline {f['baseline']}" if f["baseline"] else ""
    why = explanation_of(s)
    lines = [why, f"{counts}{against}."]
    reasons = list(s.failure_reasons().items())
    if reasons:
        lines.append("most common failures:")
        lines += [f"  {count}x {reason}" for reason, count in reasons[:3]]
    text = "\n".join(lines)
    policy = state.config.getoption("agentassay_inconclusive")
    shown = {"pass": "passed", "fail": "failed"}.get(f["verdict"], "inconclusive")
    if f["verdict"] == "inconclusive":
        shown = {"inconclusive": "inconclusive", "fail": "failed", "pass": "passed", "skip": "skipped"}[policy]
    # INCONCLUSIVE shown as its own category is a skip underneath: JUnit writes <skipped message=…>, the
    # convention CI dashboards count apart (a plain pass would hide it); the terminal still says INCONCLUSIVE.
    outcome = "skipped" if shown == "inconclusive" else shown
    longrepr: Any = None
    if outcome == "failed":
        longrepr = f"{word}: {text}" if not text.startswith(word) else text
    elif outcome == "skipped":
        _, lineno, _ = item.location
        longrepr = (str(item.path), (lineno or 0) + 1, f"Skipped: INCONCLUSIVE: {counts}. {why}".rstrip())
    properties: list[tuple[str, Any]] = [
        ("verdict", f["verdict"]),
        ("trials", f["trials"]),
        ("passes", f["passes"]),
        ("rate", "" if f["rate"] is None else f"{f['rate']:.4f}"),
        ("interval", _interval(f)),
    ]
    # Written when the test has them (a sequential test has no p-value; cost needs priced trials), never empty.
    if f["pvalue"] is not None:
        properties.append(("pvalue", f"{f['pvalue']:.4g}"))
    if f["cost_usd"] is not None:
        properties.append(("cost_usd", f"{f['cost_usd']:.6f}"))
    now = time.time()
    report = pytest.TestReport(
        item.nodeid, item.location, {k: 1 for k in item.keywords}, outcome, longrepr, "call",
        duration=now - start, start=start, stop=now,
        user_properties=[*item.user_properties, *properties],
    )
    report.agentassay = {  # type: ignore[attr-defined]  # JSON: travels from an xdist worker to the controller
        "shown": shown,
        "summary": {"test": item.nodeid, **f},
        "scenario": s.to_dict(),
        "settings": gate.settings.to_dict(),
    }
    return report, properties


def summary_lines(summaries: list[dict[str, Any]]) -> list[str]:
    """``test_refund  PASS  47/50 [0.84, 0.98]  stopped at 50  $0.012`` per marked test, aligned; a recorded
    test reads ``decided at 17, recorded 59/60`` (what the file holds)."""
    rows = []
    for f in summaries:
        cost = "" if f.get("cost_usd") is None else f"${f['cost_usd']:.3f}"
        base = f"  vs baseline {f['baseline']}" if f.get("baseline") else ""
        rows.append((f["test"], f["verdict"].upper(), f"{f['passes']}/{f['trials']}", _interval(f),
                     f"{_stopped(f)}{base}", cost))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))] if rows else []
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def save_record(state: SessionState) -> None:
    """Write ``--agentassay-record`` now (atomically), so an interrupted session keeps every finished trial."""
    path = state.config.getoption("agentassay_record")
    if not path or not state.scenarios:
        return
    from datetime import datetime, timezone


    scenarios = tuple(ScenarioResult.from_dict(info["scenario"]) for info in state.scenarios.values())
    # each test is decided on its own, at its marker's levels: what an INCONCLUSIVE one would take (issue 21)
    scenarios = with_more_trials(scenarios, Settings(correction="none"))
    verdicts = [s.verdict.verdict for s in scenarios]
    overall = suite_verdict(verdicts) if verdicts else Verdict.INCONCLUSIVE
    counts = {v.value: verdicts.count(v) for v in Verdict}
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    kind = "check" if state.config.getoption("agentassay_baseline") else "run"
    results = Results(
        kind=kind,
        suite={"name": "pytest", "path": None, "sha256": None},
        agent={"entry": "pytest", "version": "pytest", "adapter": "pytest"},
        settings=Settings(),
        scenarios=scenarios,
        decision=SuiteDecision(overall, deployment_decision(overall), counts, "none"),
        run_id=f"pytest-{int(time.time())}",
        started_at=now,
        finished_at=now,
        interrupted=state.interrupted,
        # An interrupted session reached no suite decision (issue 22, defect 11): pytest exits 2 (interrupted).
        aborted=None if not state.interrupted else {
            "reason": "the pytest session was interrupted (KeyboardInterrupt): the trials that finished are kept; "
            "no suite decision",
            "exit_code": int(pytest.ExitCode.INTERRUPTED),
            "cause": "signal",
        },
        versions=versions(),
        notes=(
            "recorded by pytest --agentassay-record: one scenario per marked test (named by its node id), each "
            "decided on its own at its marker's levels (in its verdict's evidence)",
            *(("interrupted: the results cover the trials finished before it",) if state.interrupted else ()),
        ),
    )
    results.save(path)


def keep_interrupted(state: SessionState, item: pytest.Item, gate: _Gate, spec: MarkerSpec, trials: tuple[TrialOutcome, ...]) -> None:
    """Ctrl-C during a marked test: its finished trials go into the record file, marked interrupted."""
    state.interrupted = True
    if trials:
        s = scenario_result(gate, spec, gate.monitor.finish(), trials)
        f = figures(s, recording=True)
        state.scenarios[item.nodeid] = {"scenario": s.to_dict(), "summary": {"test": item.nodeid, **f}}
    save_record(state)
