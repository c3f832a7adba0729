"""JUnit XML (agentassay._reports.render_junit): valid against Maven Surefire's published schema, and
saying what the results file says.

The schema (surefire-test-report.xsd of Surefire 2.22.3) is not in the repository: .ci/surefire_xsd.sh
takes it from Debian's source tarball and .ci/run exports its path as AGENTASSAY_SUREFIRE_XSD.
Without it the validation tests are skipped; the semantic ones (parsing the XML) always run.
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from agentassay._gate import BaselineCounts, ScenarioVerdict, SuiteDecision
from agentassay._integrations.cli import main
from agentassay._reports import render_junit
from agentassay._results import Results, ScenarioResult, TrialOutcome, load_results
from agentassay._spec import Settings
from agentassay._stats import Verdict, deployment_decision, suite_verdict
from tests._support.golden_cases import load_golden

ROOT = Path(__file__).resolve().parents[2]
# The order Surefire's XSD requires inside a <testcase> (an xs:sequence).
ORDER = ["failure", "rerunFailure", "flakyFailure", "skipped", "error", "rerunError", "flakyError", "system-out", "system-err"]
SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")


# -- the schema ---------------------------------------------------------------------------------
def xsd_path() -> Path | None:
    for candidate in (os.environ.get("AGENTASSAY_SUREFIRE_XSD"), ROOT / ".ci" / "cache" / "surefire-test-report.xsd"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


@pytest.fixture(scope="module")
def xsd() -> Any:
    path = xsd_path()
    if path is None:
        pytest.skip("Surefire XSD not found (AGENTASSAY_SUREFIRE_XSD, .ci/cache/): run .ci/surefire_xsd.sh")
    xmlschema = pytest.importorskip("xmlschema")
    schema = xmlschema.XMLSchema10(str(path))
    assert "testsuite" in schema.elements  # the schema we meant, not some other file
    return schema


def assert_valid(schema: Any, text: str) -> None:
    errors = [f"{e.path}: {e.reason}" for e in schema.iter_errors(text)]
    assert not errors, "not valid against surefire-test-report.xsd:\n" + "\n".join(errors[:5])


# -- results ------------------------------------------------------------------------------------
def trial(i: int, passed: bool | None, *, failures: tuple[str, ...] = (), error: str | None = None,
          latency: float = 0.01, counted: bool = True) -> TrialOutcome:
    return TrialOutcome(i, passed, 1000 + i, error=error, failures=failures, input_tokens=100, output_tokens=20,
                        latency_s=latency, usd=1e-4, counted=counted)


def outcomes(passes: int, fails: int, reason: str = "wrong answer") -> tuple[TrialOutcome, ...]:
    """``passes`` passing trials, then ``fails`` failing ones (index order)."""
    return tuple(trial(i, i < passes, failures=() if i < passes else (reason,)) for i in range(passes + fails))


def scenario(name: str, verdict: Verdict, trials: tuple[TrialOutcome, ...], *, base: tuple[int, int] | None = (38, 40),
             explanation: str | None = None, pvalue: float | None = None, evidence: dict[str, Any] | None = None,
             fingerprint: dict[str, Any] | None = None, test: str = "sequential-regression",
             notes: tuple[str, ...] = ()) -> ScenarioResult:
    v = ScenarioVerdict(verdict, test, explanation or f"{verdict.value.upper()}: because.", evidence or {}, len(trials),
                        pvalue=pvalue, notes=notes, data={"fingerprint": fingerprint})
    return ScenarioResult(name, "hello", trials, v, None if base is None else BaselineCounts(*base))


def results_of(scenarios: list[ScenarioResult], *, kind: str = "check", suite: str = "synthetic", **kw: Any) -> Results:
    verdicts = [s.verdict.verdict for s in scenarios]
    overall = suite_verdict(verdicts) if verdicts else Verdict.INCONCLUSIVE
    counts = {v.value: verdicts.count(v) for v in Verdict}
    decision = SuiteDecision(overall, deployment_decision(overall), counts, "holm")
    return Results(kind, {"name": suite, "path": "agentassay.yml"}, {"entry": "m:agent", "version": "v9"}, Settings(),
                   tuple(scenarios), decision, "run-1", "t0", "t1", versions={"agentassay": "0.1.0"}, **kw)


FP_SHIFT = {"verdict": "fail", "shift": ["calls to x per run 0.1 → 0.5"], "adjusted_p": 0.001, "n_baseline": 40,
            "n_candidate": 20, "largest": None, "explanation": "fingerprints"}


def mixed() -> Results:
    """A check with one FAIL, one PASS with failed trials (flaky) and one INCONCLUSIVE scenario."""
    return results_of([
        scenario("regressed", Verdict.FAIL, outcomes(5, 15, "did not call tool 'refund'"), pvalue=0.0012,
                 explanation="FAIL: pass rate 95% -> 25%.", fingerprint=FP_SHIFT),
        scenario("flaky", Verdict.PASS, outcomes(18, 2, "output does not contain 'ok'"),
                 evidence={"pvalue": 0.42}, fingerprint={"verdict": None, "explanation": "too few"}),
        scenario("unsure", Verdict.INCONCLUSIVE, outcomes(15, 5), explanation="INCONCLUSIVE: more trials needed.",
                 notes=("a note",)),
    ])


# -- reading the XML ----------------------------------------------------------------------------
def parse(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    text.encode("utf-8")  # no lone surrogate survives
    root = ET.fromstring(text)
    assert root.tag == "testsuite"
    return root


def props(root: ET.Element) -> dict[str, str]:
    (properties,) = root.findall("properties")
    pairs = [(p.get("name"), p.get("value")) for p in properties.findall("property")]
    names = [n for n, _ in pairs]
    assert len(names) == len(set(names)), "duplicate property names"
    return {str(n): str(v) for n, v in pairs}


def case(root: ET.Element, name: str) -> ET.Element:
    (found,) = [c for c in root.findall("testcase") if c.get("name") == name]
    return found


def system_out(c: ET.Element) -> dict[str, str]:
    (out,) = c.findall("system-out")
    return dict(line.split("=", 1) for line in (out.text or "").splitlines() if "=" in line)


def assert_schema_order(root: ET.Element) -> None:
    for c in root.findall("testcase"):
        tags = [child.tag for child in c]
        assert all(t in ORDER for t in tags), tags
        assert tags == sorted(tags, key=ORDER.index), tags
        assert SUREFIRE_TIME.fullmatch(c.get("time", "")), c.get("time")


def wilson(k: int, n: int) -> tuple[float, float]:
    """An independent Wilson interval (z = 1.959964)."""
    z, p = 1.959963984540054, k / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


# -- validation against the published schema -----------------------------------------------------
RUN_SUITE = """\
name: junit-suite
agent: tests._support.fixture_agents:{agent}
config:
  trials: 40
  threshold: 0.8
  concurrency: 4
  seed: 3
scenarios:
  - name: greet
    input: "hello"
    evaluator:
      - contains: ok
  - name: refund
    input: "I want a refund"
    threshold: 0.95
    evaluator:
      - contains: ok
"""


def run_results(tmp_path: Path, agent: str) -> Results:
    suite, out = tmp_path / f"{agent}.yml", tmp_path / f"{agent}.json"
    suite.write_text(RUN_SUITE.format(agent=agent))
    main(["run", str(suite), "--no-store", "-q", "-o", str(out)])
    return load_results(out)


def test_a_run_validates_and_says_what_the_results_say(xsd: Any, tmp_path: Path) -> None:
    results = run_results(tmp_path, "coin")  # greet: PASS with failed trials; refund: INCONCLUSIVE at 0.95
    text = render_junit(results)
    assert_valid(xsd, text)
    root = parse(text)
    assert_schema_order(root)
    by_verdict = {s.verdict.verdict: s for s in results.scenarios}
    assert set(by_verdict) == {Verdict.PASS, Verdict.INCONCLUSIVE}
    assert root.attrib == {"name": "junit-suite", "time": f"{results.cost()['latency_s']:.3f}", "tests": "2",
                           "errors": "0", "skipped": "1", "failures": "0"}
    p = props(root)
    assert (p["kind"], p["decision"], p["verdict"], p["run_id"]) == ("run", "manual", "inconclusive", results.run_id)
    assert p["version.agentassay"] == results.versions["agentassay"]
    for s in results.scenarios:
        c = case(root, s.name)
        assert c.get("classname") == "junit-suite"
        assert c.get("time") == f"{s.cost()['latency_s']:.3f}"
        assert p[f"scenario.{s.name}.test"] == s.verdict.test == "sprt"
        assert p[f"scenario.{s.name}.passes"] == str(s.passes)
        failed = [t for t in s.trials if t.passed is False]
        assert len(c.findall("flakyFailure")) == len(failed) > 0
    assert case(root, by_verdict[Verdict.INCONCLUSIVE].name).find("skipped") is not None


def test_a_check_with_fail_flaky_pass_and_inconclusive_validates(xsd: Any) -> None:
    text = render_junit(mixed())
    assert_valid(xsd, text)
    assert_schema_order(parse(text))


def test_error_trials_validate_and_are_reported(xsd: Any, tmp_path: Path) -> None:
    real = run_results(tmp_path, "raises_on_refund")  # refund: every trial an error, FAIL
    text = render_junit(real)
    assert_valid(xsd, text)
    failure = case(parse(text), "refund").find("failure")
    assert failure is not None and "error: the agent raised RuntimeError: refund service down" in (failure.text or "")

    synthetic = results_of([
        scenario("pass_with_errors", Verdict.PASS, (*outcomes(9, 0), trial(9, None, error="TimeoutError: slow"),
                                                    trial(10, False, failures=("wrong",)))),
        scenario("unsure_with_errors", Verdict.INCONCLUSIVE, (trial(0, True), trial(1, False, error="boom", failures=("boom",)),
                                                              trial(2, False, failures=("nope",)))),
    ])
    text = render_junit(synthetic)
    assert_valid(xsd, text)
    root = parse(text)
    assert_schema_order(root)
    c = case(root, "pass_with_errors")
    (err,) = c.findall("flakyError")
    assert err.get("type") == "agentassay.trial-error"
    assert err.get("message") == "trial 9 (seed 1009) error: TimeoutError: slow"
    assert "error: TimeoutError: slow" in (err.findtext("stackTrace") or "")
    assert [f.get("message") for f in c.findall("flakyFailure")] == ["trial 10 (seed 1010) failed: wrong"]
    assert system_out(c)["errors"] == "1"
    tags = [child.tag for child in case(root, "unsure_with_errors")]
    assert tags == ["flakyFailure", "skipped", "flakyError", "system-out"]


HOSTILE = (
    "<script>alert(1)</script> ]]> <![CDATA[x]]> &amp; &#0; \"quoted\" 'single' "
    "ctl:\x00\x01\x08\x0b\x0c\x0e\x1b\x1f del:\x7f lone:\ud800\udfff nonchars:\ufffe\uffff "
    "emoji:🙂🧪 rtl:\u202e tab:\t crlf:\r\n end"
)
CLEAN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff\u202a-\u202e\u2066-\u2069]")


def hostile() -> Results:
    long_reason = "A" * 100_000
    return results_of([
        scenario(f"<b>fail</b> {HOSTILE}", Verdict.FAIL, outcomes(1, 3, HOSTILE), explanation=f"FAIL: {HOSTILE}",
                 notes=(HOSTILE,)),
        scenario("flaky 🙂", Verdict.PASS, (*outcomes(9, 0), trial(9, False, failures=(HOSTILE, long_reason)),
                                             trial(10, None, error=HOSTILE))),
        scenario("unsure ]]>", Verdict.INCONCLUSIVE, outcomes(2, 2, HOSTILE), explanation=HOSTILE),
    ], suite=f"suite {HOSTILE}")


def test_hostile_text_is_escaped_cleaned_and_clipped(xsd: Any) -> None:
    text = render_junit(hostile())
    assert_valid(xsd, text)
    root = parse(text)
    assert_schema_order(root)
    assert not root.findall(".//script") and not root.findall(".//b")
    assert "<script>" not in text and "]]>" not in text  # only ever as escaped text
    assert not CLEAN.search(text)
    everything = ET.tostring(root, encoding="unicode", method="text") + "".join(
        v for el in root.iter() for v in el.attrib.values())
    assert not CLEAN.search(everything)
    assert "<script>alert(1)</script>" in everything and "🙂🧪" in everything and "rtl: tab:" in everything
    names = [c.get("name") for c in root.findall("testcase")]
    assert names[0] == " ".join(CLEAN.sub("", f"<b>fail</b> {HOSTILE}").split())
    flaky = case(root, "flaky 🙂").find("flakyFailure")
    assert flaky is not None
    trace = flaky.findtext("stackTrace") or ""
    assert "<script>alert(1)</script>" in trace
    assert "A" * 2000 + "… [98000 more characters]" in trace  # one reason clipped at 2,000 characters
    assert len(text) < 200_000


def test_a_scenario_with_no_trials_and_a_suite_with_no_scenarios_validate(xsd: Any) -> None:
    text = render_junit(results_of([scenario("empty", Verdict.INCONCLUSIVE, (), base=None, explanation="no trials ran")]))
    assert_valid(xsd, text)
    root = parse(text)
    c = case(root, "empty")
    assert c.get("time") == "0.000"
    skipped = c.find("skipped")
    assert skipped is not None and skipped.get("message") == "INCONCLUSIVE: no trials ran"
    p = props(root)
    assert p["scenario.empty.trials"] == "0" and "scenario.empty.rate" not in p and "scenario.empty.interval" not in p
    assert_valid(xsd, render_junit(results_of([])))


@pytest.mark.parametrize("latency", [0.0, 1e-9, 0.0005, 1234.5678, 1e12, -3.0, math.nan, math.inf])
def test_any_latency_gives_a_surefire_time(xsd: Any, latency: float) -> None:
    results = results_of([scenario("s", Verdict.PASS, (trial(0, True, latency=latency), trial(1, True, latency=latency)))])
    text = render_junit(results)
    assert_valid(xsd, text)
    root = parse(text)
    for t in (root.get("time", ""), case(root, "s").get("time", "")):
        assert re.fullmatch(r"[0-9]+\.[0-9]{3}", t), t


@pytest.mark.parametrize("name", sorted(load_golden()))
def test_every_golden_results_file_validates(xsd: Any, name: str) -> None:
    """Every feature's results file (run, check, compare, warm start, proxy, shards, coverage, …)."""
    results = Results.from_dict(load_golden()[name]["results"])
    text = render_junit(results)
    assert_valid(xsd, text)
    root = parse(text)
    assert_schema_order(root)
    assert int(root.get("tests", "")) == len(results.scenarios)


def test_the_schema_rejects_what_we_avoid(xsd: Any) -> None:
    """The validator is not vacuous: testcase properties, a wrong order, an attribute the schema does
    not declare and a negative time are all refused by the published schema."""
    good = render_junit(mixed())
    assert_valid(xsd, good)
    bad = [
        good.replace("<system-out>", '<properties><property name="a" value="b" /></properties><system-out>', 1),
        re.sub(r"(<failure [^>]*>.*?</failure>)\s*(<system-out>.*?</system-out>)", r"\2\1", good, count=1, flags=re.S),
        good.replace('<testsuite name="synthetic"', '<testsuite timestamp="2024-01-01T00:00:00" name="synthetic"', 1),
        good.replace('time="0.200"', 'time="-0.200"', 1),
    ]
    for text in bad:
        assert text != good
        assert not xsd.is_valid(text), text[:300]


# -- what the XML says ---------------------------------------------------------------------------
def test_counts_and_suite_properties() -> None:
    root = parse(render_junit(mixed()))
    assert root.attrib == {"name": "synthetic", "time": "0.600", "tests": "3", "errors": "0", "skipped": "1", "failures": "1"}
    p = props(root)
    assert {k: p[k] for k in ("kind", "decision", "verdict", "exit_code", "run_id", "agent.entry", "agent.version",
                              "version.agentassay", "suite.path", "interrupted")} == {
        "kind": "check", "decision": "block", "verdict": "fail", "exit_code": "1", "run_id": "run-1",
        "agent.entry": "m:agent", "agent.version": "v9", "version.agentassay": "0.1.0", "suite.path": "agentassay.yml",
        "interrupted": "false"}
    assert p["trials_run"] == "60" and p["tokens"] == str(60 * 120) and p["cost_usd"] == "0.006000"
    assert list(p).index("cost_usd") < list(p).index("scenario.regressed.verdict")  # the run first, then scenarios


def test_scenario_figures_in_properties_and_system_out() -> None:
    root = parse(render_junit(mixed()))
    p = props(root)
    want = {
        "regressed": {"verdict": "fail", "trials": "20", "passes": "5", "pvalue": "0.0012", "fingerprint": "fail"},
        "flaky": {"verdict": "pass", "trials": "20", "passes": "18", "pvalue": "0.42", "fingerprint": "not tested"},
        "unsure": {"verdict": "inconclusive", "trials": "20", "passes": "15"},
    }
    for name, figures in want.items():
        out = system_out(case(root, name))
        k, n = int(figures["passes"]), int(figures["trials"])
        lo, hi = wilson(k, n)
        figures = {**figures, "test": "sequential-regression", "trials_run": "20", "rate": f"{k / n:.4f}",
                   "interval": f"[{lo:.4f}, {hi:.4f}]", "baseline": "38/40", "cost_usd": "0.002000", "tokens": "2400",
                   "errors": "0"}
        for key, value in figures.items():
            assert p[f"scenario.{name}.{key}"] == value, (name, key)
            assert out[key] == value, (name, key)
        assert "pvalue" in figures or f"scenario.{name}.pvalue" not in p
        assert "fingerprint" in figures or f"scenario.{name}.fingerprint" not in p
        assert out["explanation"] == case_explanation(name)
    assert system_out(case(root, "unsure"))["note"] == "a note"


def case_explanation(name: str) -> str:
    return next(s.verdict.explanation for s in mixed().scenarios if s.name == name)


def test_fail_is_a_failure_with_reasons_and_failed_trials() -> None:
    c = case(parse(render_junit(mixed())), "regressed")
    (failure,) = c.findall("failure")
    assert failure.attrib == {"message": "FAIL: pass rate 95% -> 25%.", "type": "agentassay.FAIL"}
    body = failure.text or ""
    assert "most common failure reasons:\n  15x did not call tool 'refund'" in body
    assert "failed trials (15 of 20 run):" in body
    assert "trial 5 (seed 1005)" in body and "trial 19 (seed 1019)" in body
    assert "fingerprints: SHIFTED" in body
    assert not c.findall("flakyFailure") and c.find("skipped") is None  # a FAIL lists its trials in the text


def test_pass_with_failed_trials_gets_flaky_failures() -> None:
    c = case(parse(render_junit(mixed())), "flaky")
    assert c.find("failure") is None and c.find("skipped") is None
    flaky = c.findall("flakyFailure")
    assert [f.get("message") for f in flaky] == [
        "trial 18 (seed 1018) failed: output does not contain 'ok'",
        "trial 19 (seed 1019) failed: output does not contain 'ok'",
    ]
    assert {f.get("type") for f in flaky} == {"agentassay.trial-failed"}
    assert [[child.tag for child in f] for f in flaky] == [["stackTrace"], ["stackTrace"]]
    assert flaky[0].findtext("stackTrace") == (
        "trial 18 (seed 1018), attempts 1, latency 0.010 s\n- output does not contain 'ok'")
    assert "flaky_left_out" not in system_out(c)


def test_inconclusive_is_skipped_never_a_failure() -> None:
    root = parse(render_junit(mixed()))
    c = case(root, "unsure")
    (skipped,) = c.findall("skipped")
    assert skipped.get("message") == "INCONCLUSIVE: more trials needed."
    assert "15/20 counted trials passed" in (skipped.text or "")
    assert c.find("failure") is None and c.find("error") is None
    assert len(c.findall("flakyFailure")) == 5  # its failed trials are visible too
    plain = results_of([scenario("u", Verdict.INCONCLUSIVE, outcomes(3, 1), explanation="too few trials")])
    assert case(parse(render_junit(plain)), "u").findall("skipped")[0].get("message") == "INCONCLUSIVE: too few trials"


def test_flaky_elements_are_capped_and_the_rest_counted() -> None:
    trials = (*outcomes(400, 0), *(trial(400 + i, False, failures=("no",)) for i in range(100)),
              *(trial(500 + i, None, error="down") for i in range(20)))
    root = parse(render_junit(results_of([scenario("big", Verdict.PASS, trials)])))
    c = case(root, "big")
    assert len(c.findall("flakyFailure")) == 50 and not c.findall("flakyError")  # the first 50 in trial order
    assert props(root)["scenario.big.flaky_left_out"] == system_out(c)["flaky_left_out"] == "70"
    fail = results_of([scenario("bigfail", Verdict.FAIL, trials)])
    failure = case(parse(render_junit(fail)), "bigfail").find("failure")
    assert failure is not None and "… 70 more failed trials" in (failure.text or "")


def test_output_is_deterministic_and_survives_a_round_trip() -> None:
    results = hostile()
    first = render_junit(results)
    assert render_junit(results) == first
    again = Results.from_dict(mixed().to_dict())
    assert render_junit(again) == render_junit(mixed())


def test_secrets_are_redacted() -> None:
    secret = "sk-live-0123456789abcdef"
    results = results_of([scenario("s", Verdict.FAIL, outcomes(1, 2, f"echoed {secret} back"),
                                   explanation=f"FAIL: token {secret}")])
    text = render_junit(results, secrets=[secret])
    assert secret not in text and "echoed [redacted: secret] back" in text
    assert 'message="FAIL: token [redacted: secret]"' in text
    # unasked, the token format is redacted all the same (agentassay/_boundary.py)
    assert secret not in render_junit(results) and "[redacted: openai-key]" in render_junit(results)
