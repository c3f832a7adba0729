"""Metamorphic relations (issue 15; docs/metamorphic.md): suite errors, transformations, paired trials,
the gate's evidence (Prop. 6.1) and the offline example: v1 recorded, v2 checked, the files compared."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentassay._features.metamorphic import (
    NOISE,
    SHARE,
    Transform,
    TransformError,
    scenario_test,
    suite_relations,
)
from agentassay._integrations.cli import main
from agentassay._results import compare_results, load_results
from agentassay._spec import Settings, load_suite
from tests._support import metamorphic_agents

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "customer_service" / "agentassay.metamorphic.yml"
SEAT = "I'd like to change my seat to 14C. My confirmation number is ABC123."

SUITE = """\
name: mr-suite
agent: tests._support.metamorphic_agents:{agent}
config:
  trials: 12
  method: fixed
  concurrency: 4
  seed: 3
{config}
scenarios:
  - name: seat
    input: "{input}"
    evaluator:
      - contains: ok
    metamorphic:
{relations}
"""


def write(
    tmp_path: Path, relations: str, *, config: str = "", agent: str = "recorder", input: str = SEAT
) -> Path:
    path = tmp_path / "agentassay.yml"
    path.write_text(
        SUITE.format(
            agent=agent,
            config=config,
            input=input,
            relations=textwrap.indent(textwrap.dedent(relations), "      "),
        ),
        encoding="utf-8",
    )
    return path


# -- suite errors: exit 3, naming the key and the fix, before any trial ------------------------------------------

R = "scenarios[0].metamorphic[0]"
BAD = [
    ("- {family: perturbaton, transform: {noise: 1}}", "", f"{R}.family", "Did you mean 'perturbation'"),
    (
        "- {family: perturbation}",
        "",
        f"{R}.transform",
        "exactly one transformation: add `transform: {noise: 1}`",
    ),
    ("- {family: perturbation, transform: {}}", "", f"{R}.transform", "exactly one transformation"),
    (
        "- {family: perturbation, transform: {noise: 1, case: upper}}",
        "",
        f"{R}.transform",
        "this one has 2 (noise, case)",
    ),
    ("- {family: perturbation, transform: {nosie: 1}}", "", f"{R}.transform.nosie", "Did you mean 'noise'"),
    ("- {family: perturbation, transform: noise}", "", f"{R}.transform", "Write `transform: {noise: …}`"),
    (
        "- {family: oracle, transform: {case: upper}, check: same_verdit}",
        "",
        f"{R}.check",
        "Did you mean 'same_verdict'",
    ),
    (
        "- {family: oracle, transform: {case: upper}, check: {regx: a}}",
        "",
        f"{R}.check.regx",
        "Did you mean 'regex'",
    ),
    ("- {family: oracle, transform: {case: upper}, check: regex}", "", f"{R}.check", "needs a value"),
    (
        "- {family: oracle, transform: {case: upper}, check: {regex: '('}}",
        "",
        f"{R}.check.regex",
        "invalid regular expression",
    ),
    (
        "- {family: oracle, transform: {case: upper}, chek: same_tools}",
        "",
        f"{R}.chek",
        "Did you mean 'check'",
    ),
    ("- {family: oracle, transform: {case: shout}}", "", f"{R}.transform.case", "valid: upper, lower, title"),
    (
        "- {family: oracle, transform: {python: 'no_such_module_mr:f'}}",
        "",
        f"{R}.transform.python",
        "cannot import module",
    ),
    (
        "- {family: oracle, transform: {python: 'tests._support.metamorphic_agents:not_a_string'}}",
        "",
        f"{R}.transform.python",
        "returned a int",
    ),
    (
        "- {family: oracle, transform: {python: 'metamorphic_agents'}}",
        "",
        f"{R}.transform.python",
        "expected 'module:function'",
    ),
    (
        "- {family: oracle, transform: {case: upper}, check: {python: 'tests._support.metamorphic_agents:NOT_CALLABLE'}}",
        "",
        f"{R}.check.python",
        "is not callable",
    ),
    ("- {family: perturbation, transform: {noise: 0}}", "", f"{R}.transform.noise", "an integer from 1 to 8"),
    (
        "- {family: perturbation, transform: {noise: true}}",
        "",
        f"{R}.transform.noise",
        "an integer from 1 to 8",
    ),
    (
        "- {family: perturbation, transform: {paraphrase: 4}}",
        "",
        f"{R}.transform.paraphrase",
        "an integer from 1 to 3",
    ),
    (
        "- {family: perturbation, transform: {typos: 99}}",
        "",
        f"{R}.transform.typos",
        "typos: 99 needs 99 words",
    ),
    ("- {family: perturbation, transform: {typos: 0}}", "", f"{R}.transform.typos", "an integer >= 1"),
    (
        "- {family: permutation, transform: {permute: lines}}",
        "",
        f"{R}.transform.permute",
        "at least two different lines",
    ),
    (
        "- {family: oracle, transform: {constraint: ''}}",
        "",
        f"{R}.transform.constraint",
        "a non-empty string",
    ),
    (
        "- {family: oracle, transform: {case: upper}, check: {max_words: 0}}",
        "",
        f"{R}.check.max_words",
        "an integer >= 1",
    ),
    (
        "- {family: oracle, transform: {case: upper}, check: {max_words: 2.5}}",
        "",
        f"{R}.check.max_words",
        "an integer >= 1",
    ),
    (
        "- {family: oracle, transform: {case: upper}}\n- {family: oracle, transform: {case: lower}, name: 'oracle:case'}",
        "",
        "scenarios[0].metamorphic[1].name",
        "are named 'oracle:case'",
    ),
    ("- {transform: {case: upper}}", "", R, "needs `family:`"),
    ("- oracle", "", R, "expected a mapping"),
    (
        "- {family: oracle, transform: {case: upper}}",
        "  metamorphic: {trials: 0}",
        "config.metamorphic.trials",
        "integer >= 1",
    ),
    (
        "- {family: oracle, transform: {case: upper}}",
        "  metamorphic: {trails: 5}",
        "config.metamorphic.trails",
        "Did you mean 'trials'",
    ),
    (
        "- {family: oracle, transform: {case: upper}}",
        "  metamorphic: 5",
        "config.metamorphic",
        "expected a mapping",
    ),
]


@pytest.mark.parametrize(
    ("relations", "config", "key", "words"), BAD, ids=[b[2] + ":" + b[3][:24] for b in BAD]
)
def test_bad_relations_are_exit_3_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], relations: str, config: str, key: str, words: str
) -> None:
    path = write(tmp_path, relations, config=config)
    before = len(metamorphic_agents.CALLS)
    assert main(["run", str(path), "--no-store", "-q"]) == 3
    err = capsys.readouterr().err
    assert f": {key}: " in err, err
    assert words in err, err
    assert len(metamorphic_agents.CALLS) == before  # refused before any trial


def test_a_nested_error_points_at_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "- name: noisy\n  family: perturbation\n  transform:\n    nosie: 1\n")
    assert main(["run", str(path), "--no-store", "-q"]) == 3
    err = capsys.readouterr().err
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "nosie" in text)
    assert f"{path}:{line}: {R}.transform.nosie: unknown transformation 'nosie'" in err


# -- transformations -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "transform",
    [
        Transform("paraphrase", 1),
        Transform("paraphrase", 3),
        Transform("typos", 2),
        Transform("case", "upper"),
        Transform("case", "title"),
        Transform("noise", 2),
        Transform("permute", "sentences"),
        Transform("constraint", "Answer in at most 40 words."),
    ],
    ids=lambda t: t.text,
)
def test_transformations_are_deterministic(transform: Transform) -> None:
    first = transform.apply(SEAT, seed=7, relation="r")
    assert first != SEAT
    assert all(transform.apply(SEAT, seed=7, relation="r") == first for _ in range(3))


def test_random_transformations_depend_on_seed_and_name_only() -> None:
    t = Transform("noise", 1)
    outs = {t.apply(SEAT, seed=s, relation=n) for s in range(6) for n in ("a", "b", "c")}
    assert len(outs) > 1  # the draws move with the seed and the name…
    assert t.apply(SEAT, seed=1, relation="a") == t.apply(SEAT, seed=1, relation="a")  # …and only with them


def test_typos_never_touch_codes_or_numbers() -> None:
    for name in map(str, range(60)):
        out = Transform("typos", 3).apply(SEAT, seed=7, relation=name)
        assert "14C" in out and "ABC123" in out
        assert sorted(out) == sorted(SEAT) and len(out) == len(SEAT)
        changed = [(a, b) for a, b in zip(SEAT.split(), out.split(), strict=True) if a != b]
        assert len(changed) == 3
        assert all(a[0] == b[0] and a[-1] == b[-1] for a, b in changed)  # first and last letters kept


def test_each_transformation_does_what_it_says() -> None:
    assert Transform("case", "upper").apply(SEAT, seed=0, relation="r") == SEAT.upper()
    assert (
        Transform("case", "title")
        .apply(SEAT, seed=0, relation="r")
        .startswith("I'd Like To Change My Seat To 14C.")
    )
    assert (
        Transform("constraint", "Answer briefly.").apply(SEAT, seed=0, relation="r")
        == SEAT + " Answer briefly."
    )
    noisy = Transform("noise", 2).apply(SEAT, seed=0, relation="r")
    assert noisy.startswith(SEAT) and sum(s in noisy for s in NOISE) == 2
    para = Transform("paraphrase", 2).apply(SEAT, seed=0, relation="r")
    assert SEAT in para and para != SEAT
    permuted = Transform("permute", "sentences").apply(SEAT, seed=0, relation="r")
    assert permuted == "My confirmation number is ABC123. I'd like to change my seat to 14C."
    assert Transform("permute", "lines").apply("a\nb\nc", seed=0, relation="r").count("\n") == 2
    with pytest.raises(TransformError, match="two different sentences"):
        Transform("permute", "sentences").apply("One sentence only.", seed=0, relation="r")


def test_noise_and_paraphrases_say_nothing_the_example_workflow_reacts_to() -> None:
    from agentassay._features.metamorphic import PARAPHRASES
    from examples.customer_service import airline as w

    texts = [*NOISE, *(t.format(input="") for slot in PARAPHRASES for t in slot)]
    for pattern in (
        w.SEAT_CHANGE,
        w.FAQ_TOPICS,
        w.SOMETHING_ELSE,
        r"\b(\d{1,2}[A-Fa-f])\b",
        r"\b([A-Z0-9]{6})\b",
    ):
        assert not [t for t in texts if re.search(pattern, t)], pattern


def test_the_followup_input_is_fixed_when_the_suite_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "- {name: n, family: perturbation, transform: {noise: 1}}\n- {family: oracle, transform: {python: 'tests._support.metamorphic_agents:shout'}}",
    )
    first, second = (suite_relations(load_suite(path), search=[tmp_path]) for _ in range(2))
    assert [r.followup for r in first["seat"]] == [r.followup for r in second["seat"]]
    noise, shout = first["seat"]
    assert noise.followup == Transform("noise", 1).apply(SEAT, seed=3, relation="n")
    assert (shout.name, shout.followup) == ("oracle:python", SEAT.upper() + "!")


# -- paired trials ---------------------------------------------------------------------------------------------


def test_followups_reuse_the_source_trials_seeds_and_are_stored_apart(tmp_path: Path) -> None:
    from agentassay._runner import run_suite, trial_seed
    from agentassay._traces import TraceStore

    path = write(
        tmp_path,
        "- {name: loud, family: perturbation, transform: {case: upper}}",
        config="  metamorphic: {trials: 5}",
    )
    metamorphic_agents.CALLS.clear()
    with TraceStore(tmp_path / "traces.db") as store:
        report = run_suite(load_suite(path), store=store, version="v1", progress=False, handle_signals=False)
        assert set(store.versions()) == {"v1", "v1+mr:loud"}
        followups = store.query("v1+mr:loud")
    calls = list(metamorphic_agents.CALLS)
    source = sorted(seed for text, seed in calls if text == SEAT)
    follow = sorted(seed for text, seed in calls if text == SEAT.upper())
    expected = sorted(trial_seed(3, "run", "seat", i) for i in range(5))
    assert len(source) == 12 and follow == expected and set(follow) <= set(source)
    assert {r.input for r in followups} == {SEAT.upper()} and sorted(r.trial for r in followups) == list(
        range(5)
    )
    entry = report.results.sections["metamorphic"]["scenarios"]["seat"]["relations"][0]
    # the agent's answer depends on the seed alone, so every pair agrees
    assert (entry["pairs"], entry["violations"], entry["planned"]) == (5, 0, 5)
    assert entry["input"] == SEAT.upper() and entry["ci"][0] == 0.0


def test_a_fragile_agent_violates_in_every_pair_whose_source_passed(tmp_path: Path) -> None:
    from agentassay._runner import run_suite

    path = write(
        tmp_path,
        "- {name: loud, family: perturbation, transform: {case: upper}}\n"
        "- {name: short, family: oracle, transform: {constraint: 'Be brief.'}, check: {max_words: 1}}\n"
        "- {name: same, family: composition, transform: {case: upper}, check: {python: 'tests._support.metamorphic_agents:same_answer'}}",
        agent="fragile",
    )
    report = run_suite(load_suite(path), progress=False, handle_signals=False)
    trials = report.results.scenario("seat").trials
    passed = sum(1 for t in trials if t.passed)
    loud, short, same = report.results.sections["metamorphic"]["scenarios"]["seat"]["relations"]
    assert loud["pairs"] == 12 and loud["violations"] == passed
    assert loud["examples"][0]["reason"].startswith(
        "verdict changed: the source passed, the follow-up failed"
    )
    assert len(loud["examples"]) == 3
    assert short["violations"] == 0  # "ok" / "no": one word
    assert same["violations"] == passed and same["examples"][0]["reason"] == "answers 'ok' and 'no'"
    assert loud["transform"] == {"case": "upper"} and short["check"] == {"max_words": 1}


def test_a_replay_runs_only_the_followups_that_were_recorded(tmp_path: Path) -> None:
    """``agentassay analyze`` never calls the agent: follow-ups without a recorded trace are not run."""
    from agentassay._integrations.adapters import CallableAdapter
    from agentassay._runner import run_suite, trial_seed

    class Replay(CallableAdapter):
        replay = True

        def has(self, input: str, seed: int) -> bool:
            return input == SEAT or seed in {trial_seed(3, "run", "seat", i) for i in (0, 1, 2, 4)}

    path = write(tmp_path, "- {name: loud, family: perturbation, transform: {case: upper}}")
    report = run_suite(
        load_suite(path), adapter=Replay(metamorphic_agents.recorder), progress=False, handle_signals=False
    )
    entry = report.results.sections["metamorphic"]["scenarios"]["seat"]["relations"][0]
    assert (entry["planned"], entry["pairs"]) == (
        3,
        3,
    )  # 0..2: the first index without a recording ends the pairs


# -- the gate's evidence ----------------------------------------------------------------------------------------


def _section(**relations: tuple[int, int]) -> dict[str, Any]:
    return {
        "scenarios": {
            "s": {
                "relations": [
                    {
                        "name": n,
                        "family": "perturbation",
                        "transform": {"noise": 1},
                        "check": "same_verdict",
                        "pairs": pairs,
                        "violations": v,
                    }
                    for n, (pairs, v) in relations.items()
                ]
            }
        }
    }


def test_evidence_is_the_regression_test_on_non_violating_pairs_bonferroni_within_a_scenario() -> None:
    from agentassay._stats import regression_verdict

    settings = Settings()
    one = scenario_test(_section(a=(30, 1)), _section(a=(30, 14)), settings)
    assert one is not None and one.kind == "metamorphic" and one.share == SHARE == 0.2
    p = regression_verdict(29, 30, 16, 30, alpha=0.05 * SHARE, delta=settings.margin).pvalue
    assert one.pvalues["s"] == pytest.approx(p)
    assert one.describe["s"] == "relation 'a' violated in 14/30 pairs (47%) against 1/30 (3%) in the baseline"
    two = scenario_test(_section(a=(30, 1), b=(30, 1)), _section(a=(30, 14), b=(30, 1)), settings)
    assert two is not None and two.pvalues["s"] == pytest.approx(
        min(1.0, 2 * regression_verdict(29, 30, 16, 30, alpha=0.005).pvalue)
    )
    # a relation the baseline lacks, or has with another transformation, is not tested
    assert scenario_test(_section(a=(30, 1)), _section(b=(30, 14)), settings) is None
    other = _section(a=(30, 14))
    other["scenarios"]["s"]["relations"][0]["transform"] = {"noise": 2}
    assert scenario_test(_section(a=(30, 1)), other, settings) is None
    assert scenario_test(_section(a=(30, 1)), _section(a=(30, 14)), settings, gated=lambda n: False) is None


# -- the offline example: record v1, check v2 and v1, compare ---------------------------------------------------


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("metamorphic")
    files = {k: d / f"{k}.json" for k in ("base", "v2", "v1", "compare")}
    rc = {
        "base": main(["run", str(EXAMPLE), "--full", "-o", str(files["base"]), "--no-store", "-q"]),
        "v2": main(
            [
                "check",
                str(EXAMPLE),
                "--baseline",
                str(files["base"]),
                "--agent",
                "examples.customer_service.v2:triage_agent",
                "-o",
                str(files["v2"]),
                "--no-store",
                "-q",
            ]
        ),
        "v1": main(
            [
                "check",
                str(EXAMPLE),
                "--baseline",
                str(files["base"]),
                "-o",
                str(files["v1"]),
                "--no-store",
                "-q",
            ]
        ),
    }
    rc["compare"] = main(["compare", str(files["base"]), str(files["v2"]), "-o", str(files["compare"]), "-q"])
    return {"rc": rc, **{k: load_results(p) for k, p in files.items()}}


def _relations(results: Any, scenario: str) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in results.sections["metamorphic"]["scenarios"][scenario]["relations"]}


def test_the_baseline_records_both_relations(example: dict[str, Any]) -> None:
    assert example["rc"]["base"] == 0
    base = example["base"]
    section = base.sections["metamorphic"]
    assert (section["share"], section["mode"], section["trials"], section["ci_method"]) == (
        0.2,
        "run",
        50,
        "clopper-pearson",
    )
    noise, fmt = (
        _relations(base, "seat_change")["noise_robust"],
        _relations(base, "out_of_scope")["one_sentence"],
    )
    assert (noise["family"], noise["transform"], noise["check"], noise["pairs"]) == (
        "perturbation",
        {"noise": 1},
        "same_verdict",
        50,
    )
    assert noise["input"].startswith(SEAT + " ") and noise["violations"] <= 10
    assert (fmt["family"], fmt["transform"], fmt["pairs"], fmt["violations"]) == (
        "oracle",
        {"constraint": "Answer in one sentence."},
        50,
        0,
    )
    assert fmt["check"] == {"regex": "^[^.!?\\n]*[.!?]$"}
    assert "pvalue" not in noise and noise["ci"][0] < noise["rate"] < noise["ci"][1]


def test_v2_breaks_the_noise_relation_and_the_check_fails_it(example: dict[str, Any]) -> None:
    assert example["rc"]["v2"] == 1
    v2, base = example["v2"], example["base"]
    noise = _relations(v2, "seat_change")["noise_robust"]
    assert noise["baseline"] == {
        "pairs": 50,
        "violations": _relations(base, "seat_change")["noise_robust"]["violations"],
    }
    assert noise["violations"] >= 2 * noise["baseline"]["violations"] and noise["violations"] >= 15
    assert noise["verdict"] == "fail" and noise["pvalue"] < 0.005
    seat = v2.scenario("seat_change").verdict
    assert seat.verdict.value == "fail" and seat.evidence["metamorphic"]["verdict"] == "fail"
    assert seat.explanation.startswith("FAIL")  # the pass-rate evidence first, then the relation
    assert "Metamorphic: relation 'noise_robust' violated in" in seat.explanation
    fmt = _relations(v2, "out_of_scope")["one_sentence"]
    assert (
        fmt["verdict"] != "fail"
        and v2.scenario("out_of_scope").verdict.evidence["metamorphic"]["verdict"] == "pass"
    )


def test_the_pr_comment_carries_the_relations_and_the_verdict(example: dict[str, Any]) -> None:
    from agentassay._reports import render_pr_comment

    comment = render_pr_comment(example["v2"]).replace("\\", "")
    noise = _relations(example["v2"], "seat_change")["noise_robust"]
    v, b = noise["violations"], noise["baseline"]["violations"]
    assert "#### Metamorphic relations" in comment
    assert (
        f"seat_change · noise_robust (perturbation, noise: 1, same_verdict): {b}/50 → {v}/50 violated"
        in comment
    )
    assert f"Metamorphic: relation 'noise_robust' violated in {v}/50 pairs" in comment  # the verdict's explanation
    assert "out_of_scope · one_sentence (oracle, constraint: Answer in one sentence., regex:" in comment
    assert "FAIL in seat_change." in comment


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "html"])
def test_every_report_format_gets_the_section(example: dict[str, Any], fmt: str) -> None:
    from agentassay._reports import ReportContext, collect_sections

    sections, warnings = collect_sections(example["v2"], ReportContext(format=fmt))
    mine = [s for s in sections if s.key == "metamorphic"]
    assert (
        not warnings
        and len(mine) == 1
        and mine[0].title == "Metamorphic relations"
        and len(mine[0].items) == 2
    )
    assert mine[0].extra_usd and mine[0].extra_usd[0][0] == "metamorphic"


def test_v1_checked_against_itself_fails_no_relation(example: dict[str, Any]) -> None:
    v1 = example["v1"]
    assert example["rc"]["v1"] in (0, 2)
    for s in v1.scenarios:
        assert s.verdict.evidence["metamorphic"]["verdict"] == "pass"
        assert s.verdict.verdict.value != "fail"
    assert all(
        e["verdict"] != "fail" for sc in ("seat_change", "out_of_scope") for e in _relations(v1, sc).values()
    )


def test_compare_reproduces_the_relation_verdicts(example: dict[str, Any]) -> None:
    assert example["rc"]["compare"] == 1
    again = compare_results(example["base"], example["v2"])
    for results in (again, example["compare"]):
        for s in results.scenarios:
            live = example["v2"].scenario(s.name).verdict
            assert s.verdict.verdict == live.verdict
            assert s.verdict.evidence["metamorphic"] == live.evidence["metamorphic"]


# -- the committed benchmark (benchmarks/metamorphic.py -> benchmarks/results/metamorphic.json) ----------------


def test_the_benchmark_holds_the_level_in_every_null_cell() -> None:
    import json

    data = json.loads((ROOT / "benchmarks" / "results" / "metamorphic.json").read_text())
    nulls = [r for r in data["rows"] if r["q1"] == r["q0"]]
    alts = [r for r in data["rows"] if r["q1"] != r["q0"]]
    assert not data["quick"] and data["level"] == pytest.approx(0.05 * SHARE)
    assert len(nulls) == len(alts) == 9 and all(r["reps"] >= 20_000 for r in data["rows"])
    assert all(r["rate"] <= data["level"] + 2 * r["se"] for r in nulls)
    assert all(
        abs(r["rate"] - r["exact"]) <= 4 * r["se"] + 1e-3 for r in data["rows"]
    )  # simulation agrees with exact
    for q0 in (0.02, 0.1, 0.2):  # power grows with the pairs
        power = [r["rate"] for n in (20, 30, 50) for r in alts if r["n"] == n and r["q0"] == q0]
        assert power == sorted(power) and len(power) == 3
    text = (ROOT / "docs" / "metamorphic.md").read_text()
    assert "## Figures" in text and "## Paired trials" in text  # figures written, prose kept
