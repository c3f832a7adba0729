"""JUnit XML from a results file, in the Maven Surefire convention CI test tabs read.

GitHub test-report actions (action-junit-report, dorny/test-reporter), Jenkins and GitLab all read
Surefire's ``TEST-*.xml`` shape, and its published schema (``surefire-test-report.xsd``) is the one
format they share, so the output is valid against it (tests/reports/test_junit.py validates it):

- one ``<testsuite>`` (the suite; ``tests``/``failures``/``skipped`` count the scenario verdicts,
  ``errors`` is 0, ``time`` sums every trial's latency) whose ``<properties>`` carry the run
  (decision, verdict, kind, run id, agent and software versions) and each scenario's figures as
  ``scenario.<name>.<figure>``;
- one ``<testcase>`` per scenario (``classname`` = the suite's name, ``time`` = its trials' summed
  latency), the figures again as ``figure=value`` lines in ``<system-out>``.

Per-testcase ``<properties>`` (which pytest's junitxml writes) are not in the Surefire schema: a
testcase holds only failure, rerunFailure, flakyFailure, skipped, error, rerunError, flakyError,
system-out and system-err, in that order. The figures therefore go where the schema allows and
renderers show them: the suite's properties (machine-readable) and the testcase's standard output
(shown next to the test by Jenkins, GitLab and the test-report actions).

Verdicts map as: FAIL -> ``<failure type="agentassay.FAIL">`` (message: the verdict's explanation;
text: the figures, the most common failure reasons, the failed trials). INCONCLUSIVE ->
``<skipped message="INCONCLUSIVE: …">``. PASS -> a passing testcase. A PASS or INCONCLUSIVE
scenario some of whose trials failed gets a ``<flakyFailure>`` per failed trial and a
``<flakyError>`` per error trial: Surefire's own words for "passed, but not every run did", which
renderers show without failing the test. At most :data:`FLAKY_CAP` per testcase; the number left
out is the ``flaky_left_out`` figure.

Why INCONCLUSIVE is ``<skipped>``: it means "too few trials to tell", neither a regression nor a
broken test. ``<failure>``/``<error>`` would fail the build in every renderer (blocking a pull
request for want of data); a plain pass would hide it. ``<skipped>`` is the one outcome every
renderer counts and colours apart and none fails a build on, and its message says why; the suite's
``decision`` property (``manual``) and the exit code (2) still ask for a person. A team that wants
otherwise chooses (``render_junit(inconclusive=…)``, ``--junit-inconclusive``): ``pass`` (a passing
testcase; the ``verdict`` figure still says ``inconclusive``) or ``failure`` (``<failure
type="agentassay.INCONCLUSIVE">``, counted in ``failures``). ``errors`` stays 0
because an error trial (the agent raised, timed out) is evidence about the agent that the verdict
already weighs, not a failure of the test harness.

Every string from the results file may quote agent output (failure reasons, errors) or come from a
pull request (scenario names): it is escaped by ElementTree, never formatted into markup, after the
characters XML 1.0 forbids are dropped and long texts clipped. Same results, same bytes.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._results import Results, ScenarioResult, TrialOutcome, more_trials_text
from .._stats import Verdict, proportion_ci
from ._markdown import _redactor
from ._sections import ReportContext, ScenarioPart, collect
from ._summary import explanation_of

if TYPE_CHECKING:
    from .._plugins import Plugins

FLAKY_CAP = 50  # flakyFailure + flakyError elements per testcase (and failed trials listed for a FAIL)
REASONS_SHOWN = 10  # most common failure reasons in a failure / skipped text
FAILURE_TYPE = "agentassay.FAIL"
INCONCLUSIVE_TYPE = "agentassay.INCONCLUSIVE"  # the failure type of an INCONCLUSIVE written as a failure
# How an INCONCLUSIVE verdict may be written (``--junit-inconclusive``): the first is the default.
INCONCLUSIVE_AS = ("skipped", "pass", "failure")
TRIAL_FAILED_TYPE = "agentassay.trial-failed"
TRIAL_ERROR_TYPE = "agentassay.trial-error"

_MESSAGE = 1_000  # characters in a message attribute or a property value
_LINE = 2_000  # one failure reason or error inside a text
_TEXT = 32_000  # a failure, skipped or stackTrace text, a system-out

# XML 1.0 (section 2.2) admits only #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF];
# bidirectional overrides and isolates are valid XML but would let a name display as something else.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")


def _clean(text: str) -> str:
    """Characters XML 1.0 cannot hold dropped (no parser would read the file), and bidirectional
    controls (the other reports drop them too); line ends made ``\\n``."""
    return _FORBIDDEN.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def _cut(text: str, limit: int) -> str:
    """At most about ``limit`` characters, saying how many were cut (a renderer may choke on megabytes)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


@dataclass(frozen=True)
class _Text:
    """Untrusted text made safe to hand to ElementTree: redacted, cleaned, clipped (in that order,
    so a clip never cuts a secret in half and the count of cut characters is of kept ones)."""

    redact: Callable[[str], str]

    def block(self, value: Any, limit: int = _TEXT) -> str:
        return _cut(_clean(self.redact(str(value))), limit)

    def line(self, value: Any, limit: int = _MESSAGE) -> str:
        """One line: attribute values and ``figure=value`` lines (a newline in an attribute is
        written as ``&#10;``, which some renderers print literally)."""
        return _cut(" ".join(_clean(self.redact(str(value))).split()), limit)


def _time(seconds: float) -> str:
    """Seconds as Surefire's ``SUREFIRE_TIME`` pattern allows: digits, a point, three decimals (no
    exponent, no sign; a negative or non-finite latency from a damaged file counts as 0)."""
    return f"{seconds:.3f}" if math.isfinite(seconds) and seconds > 0 else "0.000"


def _pvalue(s: ScenarioResult) -> float | None:
    """The verdict's p-value, else the one its evidence states (regression tests keep it there)."""
    if s.verdict.pvalue is not None:
        return float(s.verdict.pvalue)
    value = s.verdict.evidence.get("pvalue")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _figures(s: ScenarioResult, said: Sequence[ScenarioPart] = ()) -> dict[str, str]:
    """A scenario's figures, under the names the pytest plugin's JUnit properties use.

    ``trials`` and ``passes`` are the counted trials (error trials excluded by policy are not), the
    same counts the terminal table and the PR comment show; ``interval`` is their 95% Wilson interval.
    """
    n, k = s.counted_trials, s.passes
    out = {
        "verdict": s.verdict.verdict.value,
        "test": s.verdict.test,
        "trials": str(n),
        "trials_run": str(len(s.trials)),
        "stopped_at": str(s.verdict.trials_used),
        "passes": str(k),
        "errors": str(s.errors),
    }
    if n > 0:
        lo, hi = proportion_ci(k, n, method="wilson")
        out["rate"] = f"{k / n:.4f}"
        out["interval"] = f"[{float(lo):.4f}, {float(hi):.4f}]"
    if s.baseline is not None:
        out["baseline"] = f"{s.baseline.passes}/{s.baseline.trials}"
    p = _pvalue(s)
    if p is not None:
        out["pvalue"] = f"{p:.4g}"
    out.update((key, str(value)) for p in said for key, value in p.properties)  # the plugins' figures
    cost = s.cost()
    if cost["usd"] is not None:
        out["cost_usd"] = f"{cost['usd']:.6f}"
    out["tokens"] = str(cost["input_tokens"] + cost["output_tokens"])
    more = s.more_trials
    if more:  # an INCONCLUSIVE regression: the candidate trials a check would need to decide it
        out["more_trials_total"] = str(more.get("total"))
        out["more_trials_additional"] = str(more.get("additional"))
        out["more_trials_probability"] = f"{float(more.get('probability') or 0.0):.4f}"
        out["more_trials_capped"] = "true" if more.get("capped") else "false"
        if more.get("usd") is not None:
            out["more_trials_usd"] = f"{float(more['usd']):.6f}"
    return out


def _counts_line(f: dict[str, str]) -> str:
    rate = f" (rate {f['rate']}, 95% interval {f['interval']})" if "rate" in f else ""
    parts = [f"{f['passes']}/{f['trials']} counted trials passed{rate}"]
    if f["trials_run"] != f["trials"]:
        parts.append(f"{f['trials_run']} run")
    if "baseline" in f:
        parts.append(f"baseline {f['baseline']}")
    if "pvalue" in f:
        parts.append(f"p-value {f['pvalue']}")
    return "; ".join(parts)


def _failed(s: ScenarioResult) -> tuple[list[TrialOutcome], list[TrialOutcome]]:
    """Failed trials and error trials, in trial order (an error trial is never both)."""
    ordered = sorted(s.trials, key=lambda t: t.index)
    return [t for t in ordered if not t.error and t.passed is False], [t for t in ordered if t.error]


def _trial_head(t: TrialOutcome) -> str:
    return f"trial {t.index} (seed {t.seed})"


def _trial_lines(t: TrialOutcome, text: _Text) -> list[str]:
    lines = [f"{_trial_head(t)}, attempts {t.attempts}, latency {_time(t.latency_s)} s"]
    if t.pooled is not None:
        lines.append(f"pooled: recorded by baseline run {t.pooled}")
    elif not t.counted:
        lines.append("not counted: finished after the scenario was decided")
    if t.error:
        lines.append(f"error: {text.block(t.error, _LINE)}")
    reasons = [r for r in t.failures if r != t.error]  # an error trial's failures repeat its error
    lines += [f"- {text.block(r, _LINE)}" for r in reasons] or ([] if t.error else ["- failed (no reason recorded)"])
    return lines


def _summary(
    s: ScenarioResult, f: dict[str, str], text: _Text, more: str | None = None, said: Sequence[ScenarioPart] = ()
) -> list[str]:
    """The explanation, the counts, what more trials would take, the plugins' lines, notes and the most
    common failure reasons."""
    lines = [text.block(explanation_of(s), _LINE), _counts_line(f)]
    if more:
        lines.append(f"more trials: {text.block(more, _LINE)}")
    lines += [f"{key}: {text.block(value, _LINE)}" for p in said for key, value in p.lines if value]
    lines += [f"note: {text.block(n, _LINE)}" for n in s.verdict.notes]
    reasons = list(s.failure_reasons().items())
    if reasons:
        lines.append("most common failure reasons:")
        lines += [f"  {count}x {text.block(reason, _LINE)}" for reason, count in reasons[:REASONS_SHOWN]]
        if len(reasons) > REASONS_SHOWN:
            lines.append(f"  … {len(reasons) - REASONS_SHOWN} other reasons")
    return lines


def _failure_text(s: ScenarioResult, f: dict[str, str], text: _Text, said: Sequence[ScenarioPart] = ()) -> str:
    failed = sorted((t for t in s.trials if t.error or t.passed is False), key=lambda t: t.index)
    lines = _summary(s, f, text, said=said)
    if failed:
        lines.append(f"failed trials ({len(failed)} of {len(s.trials)} run):")
        for t in failed[:FLAKY_CAP]:
            first, *rest = _trial_lines(t, text)
            lines += [f"  {first}", *(f"    {line}" for line in rest)]
        if len(failed) > FLAKY_CAP:
            lines.append(f"  … {len(failed) - FLAKY_CAP} more failed trials")
    return text.block("\n".join(lines))


def _flaky(case: ET.Element, tag: str, kind: str, t: TrialOutcome, text: _Text) -> None:
    """``<flakyFailure>``/``<flakyError>``: one trial that did not pass, in a scenario that was not a FAIL."""
    what = f"error: {t.error}" if t.error else f"failed: {t.failures[0] if t.failures else 'no reason recorded'}"
    el = ET.SubElement(case, tag, {"message": text.line(f"{_trial_head(t)} {what}"), "type": kind})
    ET.SubElement(el, "stackTrace").text = text.block("\n".join(_trial_lines(t, text)))


def _testcase(
    suite: ET.Element,
    name: str,
    s: ScenarioResult,
    f: dict[str, str],
    text: _Text,
    more: str | None = None,
    said: Sequence[ScenarioPart] = (),
    inconclusive: str = "skipped",
) -> dict[str, str]:
    """One scenario's testcase, its children in the schema's order; returns the figures with
    ``flaky_left_out`` added when the cap dropped some. ``more``: what more trials would take, in words;
    ``inconclusive``: how an INCONCLUSIVE verdict is written (:data:`INCONCLUSIVE_AS`)."""
    case = ET.SubElement(suite, "testcase", {"name": text.line(s.name), "classname": name, "time": _time(s.cost()["latency_s"])})
    verdict = s.verdict.verdict
    explanation = explanation_of(s)
    failed, errored = _failed(s)
    as_failure = verdict is Verdict.INCONCLUSIVE and inconclusive == "failure"
    flaky_failed: list[TrialOutcome] = []
    flaky_errored: list[TrialOutcome] = []
    if verdict is not Verdict.FAIL and not as_failure:
        shown = {id(t) for t in sorted(failed + errored, key=lambda t: t.index)[:FLAKY_CAP]}
        flaky_failed = [t for t in failed if id(t) in shown]
        flaky_errored = [t for t in errored if id(t) in shown]
        left_out = len(failed) + len(errored) - len(shown)
        if left_out:
            f = {**f, "flaky_left_out": str(left_out)}
    message = explanation if explanation.upper().startswith("INCONCLUSIVE") else f"INCONCLUSIVE: {explanation}"
    if more:
        message = f"{message} Estimate: {more}."
    if verdict is Verdict.FAIL:
        ET.SubElement(case, "failure", {"message": text.line(explanation), "type": FAILURE_TYPE}).text = _failure_text(s, f, text, said)
    elif as_failure:
        ET.SubElement(case, "failure", {"message": text.line(message), "type": INCONCLUSIVE_TYPE}).text = _failure_text(
            s, f, text, said
        )
    for t in flaky_failed:
        _flaky(case, "flakyFailure", TRIAL_FAILED_TYPE, t, text)
    if verdict is Verdict.INCONCLUSIVE and inconclusive == "skipped":
        ET.SubElement(case, "skipped", {"message": text.line(message)}).text = text.block(
            "\n".join(_summary(s, f, text, more, said))
        )
    for t in flaky_errored:
        _flaky(case, "flakyError", TRIAL_ERROR_TYPE, t, text)
    out = [f"{key}={text.line(value)}" for key, value in f.items()]
    out.append(f"explanation={text.line(explanation, _LINE)}")
    if more:
        out.append(f"more_trials={text.line(more, _LINE)}")
    out += [f"{key}={text.line(value, _LINE)}" for p in said for key, value in p.lines if value]
    out += [f"note={text.line(n, _LINE)}" for n in s.verdict.notes]
    ET.SubElement(case, "system-out").text = text.block("\n".join(out) + "\n")
    return f


def _suite_properties(results: Results) -> list[tuple[str, Any]]:
    """The run's properties, before the per-scenario ones (values may be None: left out)."""
    suite, agent, cost = results.suite, results.agent, results.cost()
    props: list[tuple[str, Any]] = [
        ("kind", results.kind),
        ("decision", results.decision.decision.value),
        # an aborted run: no verdict, and the process's exit code (issue 22, defect 11)
        ("verdict", None if results.aborted is not None else results.decision.verdict.value),
        ("exit_code", results.aborted["exit_code"] if results.aborted is not None else results.decision.exit_code),
        ("aborted", None if results.aborted is None else results.aborted.get("reason")),
        ("correction", results.decision.correction),
        ("run_id", results.run_id),
        ("started_at", results.started_at),
        ("finished_at", results.finished_at),
        ("interrupted", "true" if results.interrupted else "false"),
        ("suite.path", suite.get("path")),
        ("suite.sha256", suite.get("sha256")),
        ("agent.adapter", agent.get("adapter")),
        ("agent.entry", agent.get("entry")),
        ("agent.version", agent.get("version")),
    ]
    props += [(f"version.{k}", v) for k, v in sorted(results.versions.items())]
    usd = cost["usd"]
    props += [
        ("trials_run", cost["trials"]),
        ("tokens", cost["input_tokens"] + cost["output_tokens"]),
        ("cost_usd", None if usd is None else f"{usd:.6f}"),
    ]
    props += [(f"note.{i}", n) for i, n in enumerate(results.notes, 1)]
    return props


def render_junit(
    results: Results, *, secrets: Sequence[str] = (), plugins: Plugins | None = None, inconclusive: str = "skipped"
) -> str:
    """The results file as one Surefire ``<testsuite>`` document (UTF-8 text, trailing newline).

    Every text is redacted (agentassay/_boundary.py: the environment's secrets, token formats) and so
    are ``secrets``, extra values to hide (as in the PR comment and HTML report). What the plugins say
    about a scenario (``plugins``: default, the installed ones) adds figures and lines to its testcase.
    ``inconclusive``: an INCONCLUSIVE scenario as ``skipped`` (default, with its message), ``pass`` or
    ``failure`` (module docstring).
    """
    if inconclusive not in INCONCLUSIVE_AS:
        raise ValueError(f"inconclusive must be one of {', '.join(INCONCLUSIVE_AS)}; got {inconclusive!r}")

    text = _Text(_redactor(secrets))
    said = collect(results, ReportContext("junit", tuple(secrets), escape=text.line, clean=text.line), plugins).parts
    name = text.line(results.suite.get("name") or "agentassay") or "agentassay"
    verdicts = [s.verdict.verdict for s in results.scenarios]
    unsure = verdicts.count(Verdict.INCONCLUSIVE)
    root = ET.Element(
        "testsuite",
        {
            "name": name,
            "time": _time(float(results.cost()["latency_s"])),
            "tests": str(len(results.scenarios)),
            "errors": "0",  # an error trial is evidence about the agent, not an error of the test
            "skipped": str(unsure if inconclusive == "skipped" else 0),
            "failures": str(verdicts.count(Verdict.FAIL) + (unsure if inconclusive == "failure" else 0)),
        },
    )
    properties = ET.SubElement(root, "properties")
    scenario_props: list[tuple[str, Any]] = []
    for s in results.scenarios:
        mine = said.get(s.name, ())
        figures = _testcase(
            root, name, s, _figures(s, mine), text, more_trials_text(s, results.settings), mine, inconclusive
        )
        scenario_props += [(f"scenario.{s.name}.{key}", value) for key, value in figures.items()]
    for key, value in [*_suite_properties(results), *scenario_props]:
        if value is not None:
            ET.SubElement(properties, "property", {"name": text.line(key), "value": text.line(value)})
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
