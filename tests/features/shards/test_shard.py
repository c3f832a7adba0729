"""Sharding: `--shard i/n` runs a slice at the whole suite's levels; `merge` makes one decision again."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentassay._features.shards import merge_results, shard_slice
from agentassay._integrations.adapters import CallableAdapter
from agentassay._integrations.cli import main
from agentassay._results import Results, load_results
from agentassay._runner import run_suite
from agentassay._spec import AgentConfig, Check, Scenario, Settings, SpecError, Suite
from agentassay._stats import Verdict

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = str(ROOT / "examples" / "customer_service" / "agentassay.yml")
V2 = "examples.customer_service.v2:triage_agent"


# -- fast plain-callable suites ------------------------------------------------------------------
def graded(text: str, seed: int) -> str:
    """Passes with the probability the input ends with ('rate 0.9'), reproducibly per seed."""
    return "ok" if random.Random(seed).random() < float(text.split()[-1]) else "no"


def worse(text: str, seed: int) -> str:
    """``graded`` 0.12 lower: a regression in every scenario, of a size a few will show."""
    return "ok" if random.Random(seed).random() < float(text.split()[-1]) - 0.12 else "no"


def make_suite(rates: list[float], **settings: Any) -> Suite:
    base: dict[str, Any] = {"trials": 60, "concurrency": 8, "timeout": 5.0, "seed": 3, "threshold": 0.7}
    base.update(settings)
    return Suite(
        name="shards",
        agent=AgentConfig("x:y"),
        scenarios=tuple(
            Scenario(f"s{i}", f"rate {r}", checks=(Check("contains", "ok"),)) for i, r in enumerate(rates)
        ),
        settings=Settings(**base),
    )


def go(suite: Suite, fn: Any, **kw: Any) -> Results:
    return run_suite(suite, adapter=CallableAdapter(fn), progress=False, handle_signals=False, version="v", **kw).results


def verdicts(results: Results) -> dict[str, dict[str, Any]]:
    return {s.name: s.verdict.to_dict() for s in results.scenarios}


def shards_of(suite: Suite, fn: Any, n: int, **kw: Any) -> list[Results]:
    return [go(suite, fn, shard=(i, n), **kw) for i in range(1, n + 1)]


# -- the rule ------------------------------------------------------------------------------------
@pytest.mark.parametrize("total", [1, 2, 3, 4, 5, 7, 10])
def test_shards_partition_the_suite_round_robin(total: int) -> None:
    items = list(range(total))
    for n in range(1, total + 1):
        parts = [shard_slice(items, i, n) for i in range(1, n + 1)]
        assert sorted(k for part in parts for k in part) == items
        assert all(k % n == i - 1 for i, part in enumerate(parts, 1) for k in part)
        assert max(map(len, parts)) - min(map(len, parts)) <= 1


@pytest.mark.parametrize("bad", [(0, 2), (3, 2), (1, 0), (-1, 2)])
def test_shard_slice_refuses_an_impossible_shard(bad: tuple[int, int]) -> None:
    with pytest.raises(ValueError, match="between 1 and"):
        shard_slice([1, 2, 3], *bad)


# -- a shard: levels of the whole suite, the same trials -------------------------------------------
def test_a_shard_tests_at_the_whole_suites_level_with_the_same_trials() -> None:
    suite = make_suite([0.95, 0.9, 0.75, 0.85], method="sprt")
    whole = go(suite, graded)
    shard = go(suite, graded, shard=(2, 3))
    assert [s.name for s in shard.scenarios] == ["s1"]  # positions 1 (and 4, beyond the suite)
    assert shard.sections["shard"] == {"index": 2, "count": 3, "scenarios_total": 4, "suite_sha256": None}
    got, want = shard.scenarios[0], whole.scenario("s1")
    assert want is not None
    assert got.verdict.to_dict() == want.verdict.to_dict()
    assert got.verdict.evidence["alpha"] == pytest.approx(0.05 / 4)  # m = 4, not the shard's 1
    assert got.fixed_n == want.fixed_n
    counted = [(t.index, t.seed, t.passed) for t in got.trials if t.counted]
    assert counted == [(t.index, t.seed, t.passed) for t in want.trials if t.counted]
    alone = go(replace(suite, scenarios=(suite.scenarios[1],)), graded)  # a 1-scenario suite tests at alpha
    assert alone.scenarios[0].verdict.evidence["alpha"] == pytest.approx(0.05)
    assert any("agentassay merge" in n for n in shard.notes)


def test_results_round_trip_the_shard_and_old_files_have_none(tmp_path: Path) -> None:
    suite = make_suite([0.9, 0.9], method="fixed", trials=10)
    shard = go(suite, graded, shard=(1, 2))
    again = load_results(shard.save(tmp_path / "s.json"))
    assert again.sections["shard"] == shard.sections["shard"]
    data = json.loads((tmp_path / "s.json").read_text())
    data.pop("shard")
    assert Results.from_dict(data).sections.get("shard") is None


# -- merge equals the unsharded run ----------------------------------------------------------------
FIVE = [0.9] * 5  # with seed 3: raw fixed-n regression p-values from 0.013 to 0.41, none below alpha / 5


class FixedCheck:
    """A fixed-n check of ``worse`` against ``graded`` on five scenarios: whole, and its shards per n."""

    def __init__(self) -> None:
        self.suite = make_suite(FIVE, method="fixed")
        self.base = go(self.suite, graded)
        self.whole = go(self.suite, worse, baseline=self.base)
        self._shards: dict[int, list[Results]] = {}

    def shards(self, n: int) -> list[Results]:
        if n not in self._shards:
            self._shards[n] = shards_of(self.suite, worse, n, baseline=self.base)
        return self._shards[n]


@pytest.fixture(scope="module")
def fixed_check() -> FixedCheck:
    return FixedCheck()


@pytest.mark.parametrize("n", [2, 3, 5])
def test_merged_fixed_n_check_equals_the_unsharded_check(n: int, fixed_check: FixedCheck) -> None:
    whole = fixed_check.whole
    merged = merge_results(fixed_check.shards(n)[::-1], baseline=fixed_check.base)  # file order does not matter
    assert [s.name for s in merged.scenarios] == [s.name for s in whole.scenarios]
    assert verdicts(merged) == verdicts(whole)
    assert merged.decision == whole.decision
    assert (merged.kind, merged.sections.get("shard")) == ("check", None)
    assert [s.fixed_n for s in merged.scenarios] == [s.fixed_n for s in whole.scenarios]


def test_holm_inside_a_shard_covers_that_shard_only_so_merge_re_derives(fixed_check: FixedCheck) -> None:
    shards = fixed_check.shards(5)
    alone = shards[1].scenarios[0]  # s1: p = 0.013 is below alpha, but not below Holm's alpha / 5
    assert alone.name == "s1" and alone.verdict.verdict is Verdict.FAIL
    merged = merge_results(shards, baseline=fixed_check.base)
    s1 = merged.scenario("s1")
    assert s1 is not None and s1.verdict.verdict is Verdict.INCONCLUSIVE
    assert any("over 5 scenarios" in n for n in s1.verdict.notes)
    assert merged.decision.decision.value == "manual" == fixed_check.whole.decision.decision.value


def test_merged_run_equals_the_unsharded_run_with_a_warm_start() -> None:
    suite = make_suite([0.95, 0.9, 0.6, 0.85], method="sprt", threshold=0.8)
    prior = go(suite, graded, full=True)
    whole = go(suite, graded, warm_from=prior)
    assert any("warm_start" in s.verdict.evidence for s in whole.scenarios)
    for n in (2, 3):
        merged = merge_results(shards_of(suite, graded, n, warm_from=prior))
        assert merged.kind == "run" and verdicts(merged) == verdicts(whole)
        assert merged.decision == whole.decision


def test_merge_replays_rather_than_trusting_a_shards_verdicts() -> None:
    suite = make_suite([0.95, 0.6], method="sprt", threshold=0.8)
    shards = shards_of(suite, graded, 2)
    s = shards[1].scenarios[0]
    forged = replace(shards[1], scenarios=(replace(s, verdict=replace(s.verdict, verdict=Verdict.PASS)),))
    merged = merge_results([shards[0], forged])
    assert verdicts(merged) == verdicts(go(suite, graded))


# -- CLI: --shard and the usage errors -------------------------------------------------------------
CLI_SUITE = """\
name: cli-shards
agent: tests._support.fixture_agents:always_ok
config:
  trials: 30
  threshold: 0.8
  concurrency: 4
  seed: 1
  method: fixed
scenarios:
  - name: a
    input: "first"
    evaluator: [{contains: ok}]
  - name: b
    input: "second"
    evaluator: [{contains: ok}]
  - name: c
    input: "third"
    evaluator: [{contains: ok}]
"""


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A suite, its baseline, and the three shards of a check against it (and of a run); read only."""
    folder = tmp_path_factory.mktemp("cli")
    suite = folder / "agentassay.yml"
    suite.write_text(CLI_SUITE)
    out = {"suite": suite, "base": folder / "base.json"}
    assert main(["run", str(suite), "-o", str(out["base"]), "--no-store", "-q"]) == 0
    for i in (1, 2, 3):
        out[f"c{i}"], out[f"r{i}"] = folder / f"check-{i}.json", folder / f"run-{i}.json"
        check = ["check", str(suite), "--baseline", str(out["base"]), "--shard", f"{i}/3", "--no-store", "-q"]
        # 30/30 vs 30/30: PASS at alpha (two claims, two levels: PASS needs no multiplicity correction)
        assert main([*check, "-o", str(out[f"c{i}"])]) == 0
        assert main(["run", str(suite), "--shard", f"{i}/3", "-o", str(out[f"r{i}"]), "--no-store", "-q"]) == 0
    return out


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("0/2", "between 1 and N = 2"),
        ("5/4", "between 1 and N = 4"),
        ("a/b", "not I/N with whole numbers"),
        ("2", "not I/N with whole numbers"),
        ("1/0", "at least 1"),
    ],
)
def test_bad_shard_argument_is_a_usage_error(
    value: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "agentassay.yml"
    suite.write_text(CLI_SUITE)
    code, _, err = cli(["run", suite, "--shard", value, "--no-store", "-q", "-o", tmp_path / "r.json"], capsys)
    assert code == 3 and "--shard" in err and words in err, err
    assert not (tmp_path / "r.json").exists()


def test_more_shards_than_scenarios_is_an_error_naming_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "agentassay.yml"
    suite.write_text(CLI_SUITE)
    for value in ("4/4", "1/4"):  # every shard of the matrix is refused, not only the empty one
        code, _, err = cli(["run", suite, "--shard", value, "--no-store", "-q"], capsys)
        assert code == 3, err
        assert "3 scenarios" in err and "4 shards" in err and "at most 3 shards" in err and str(suite) in err
    with pytest.raises(SpecError, match="3 scenarios"):
        run_suite(make_suite([0.9] * 3), adapter=CallableAdapter(graded), shard=(1, 4), progress=False)


def test_merge_cli_writes_one_file_and_exits_with_the_decision(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    merged = tmp_path / "merged.json"
    whole = tmp_path / "whole.json"
    want, _, _ = cli(["check", files["suite"], "--baseline", files["base"], "-o", whole, "--no-store", "-q"], capsys)
    code, out, err = cli(["merge", files["c3"], files["c1"], files["c2"], "--baseline", files["base"], "-o", merged], capsys)
    assert code == want, err
    assert "decision:" in out and "baseline -> candidate" in out and "merged from 3 shards" in out
    assert verdicts(load_results(merged)) == verdicts(load_results(whole))
    run_merged = tmp_path / "run.json"
    code, _, err = cli(["merge", files["r1"], files["r2"], files["r3"], "-o", run_merged, "-q"], capsys)
    assert code == load_results(files["base"]).decision.exit_code, err
    assert verdicts(load_results(run_merged)) == verdicts(load_results(files["base"]))
    assert load_results(run_merged).kind == "run"


def _rewrite(src: Path, dst: Path, edit: Any) -> Path:
    data = json.loads(src.read_text())
    edit(data)
    dst.write_text(json.dumps(data))
    return dst


def _drop_last_trial(d: dict[str, Any]) -> None:
    """Another baseline: one trial fewer, its counts kept consistent (a results file is validated on load)."""
    s = d["scenarios"][0]
    dropped = s["trials"].pop()
    s["trials_run"] -= 1
    s["counted_trials"] -= dropped["passed"] is not None
    s["passes"] -= dropped["passed"] is True
    s["errors"] -= bool(dropped["error"])


MERGE_ERRORS: list[tuple[str, Any, list[str]]] = [
    ("missing shard", lambda f, t: [f["c1"], f["c3"], "--baseline", f["base"]], ["shard 2/3 missing", "pass all 3 shard files"]),
    (
        "duplicate shard",
        lambda f, t: [f["c1"], f["c2"], f["c2"], f["c3"], "--baseline", f["base"]],
        ["shard 2/3 given twice", "check-2.json"],
    ),
    ("check without --baseline", lambda f, t: [f["c1"], f["c2"], f["c3"]], ["shards of `check`", "--baseline"]),
    ("run with --baseline", lambda f, t: [f["r1"], f["r2"], f["r3"], "--baseline", f["base"]], ["shards of `run`", "without --baseline"]),
    ("mixed kinds", lambda f, t: [f["c1"], f["r2"], f["c3"], "--baseline", f["base"]], ["run-2.json", "shard of `run`"]),
    ("not a shard", lambda f, t: [f["base"], f["c2"], "--baseline", f["base"]], ["base.json", "not a shard"]),
    (
        "mixed suites",
        lambda f, t: [
            f["c1"],
            _rewrite(f["c2"], t / "other.json", lambda d: d["suite"].update(sha256="0" * 64)),
            f["c3"],
            "--baseline",
            f["base"],
        ],
        ["other.json", "same suite file"],
    ),
    (
        "different settings",
        lambda f, t: [
            f["c1"],
            f["c2"],
            _rewrite(f["c3"], t / "seed.json", lambda d: d["settings"].update(seed=99)),
            "--baseline",
            f["base"],
        ],
        ["seed.json", "settings differ", "seed: 99 vs 1"],
    ),
    (
        "different shard counts",
        lambda f, t: [
            f["c1"],
            f["c2"],
            _rewrite(f["c3"], t / "of2.json", lambda d: d["shard"].update(index=1, count=2)),
            "--baseline",
            f["base"],
        ],
        ["of2.json", "shard 1/2", "check-1.json: shard 1/3", "same N in --shard I/N"],
    ),
    (
        "a scenario twice",
        lambda f, t: [
            f["c1"],
            f["c2"],
            _rewrite(f["c3"], t / "twice.json", lambda d: d["scenarios"][0].update(name="a")),
            "--baseline",
            f["base"],
        ],
        ["scenario 'a' is in both", "twice.json"],
    ),
    (
        "another baseline",
        lambda f, t: [
            f["c1"],
            f["c2"],
            f["c3"],
            "--baseline",
            _rewrite(f["base"], t / "b2.json", _drop_last_trial),
        ],
        ["check-1.json", "scenario 'a'", "b2.json has 29/29", "the baseline file the shards were checked against"],
    ),
]


@pytest.mark.parametrize(("case", "args", "words"), MERGE_ERRORS, ids=[c[0] for c in MERGE_ERRORS])
def test_merge_errors_name_the_file_and_the_fix(
    case: str, args: Any, words: list[str], files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "merged.json"
    code, _, err = cli(["merge", *args(files, tmp_path), "-o", out], capsys)
    assert code == 3, err
    for w in words:
        assert w in err, (w, err)
    assert not out.exists()


def test_a_shard_is_never_a_whole_baseline_or_candidate(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(["compare", files["base"], files["c1"]], capsys)
    assert code == 3 and "shard 1/3" in err and "agentassay merge" in err
    code, _, err = cli(["check", files["suite"], "--baseline", files["r1"], "--no-store", "-q"], capsys)
    assert code == 3 and "run-1.json" in err and "agentassay merge" in err
    code, _, err = cli(["merge", files["c1"], files["c2"], files["c3"], "--baseline", files["r1"], "-o", tmp_path / "x.json"], capsys)
    assert code == 3 and "merge the baseline's shards first" in err
    code, _, err = cli(["merge", files["c1"], files["c2"], files["c3"], "--baseline", files["base"]], capsys)
    assert code == 3 and "--output" in err  # -o is required: the merged file is the point


# -- the offline example: sharded check == unsharded check ------------------------------------------
@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("agents")
    folder = tmp_path_factory.mktemp("example")
    base, whole = folder / "base.json", folder / "whole.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        assert main(["run", EXAMPLE, "--full", "-o", str(base), "--no-store", "-q"]) == 0
        code = main(["check", EXAMPLE, "--agent", V2, "--baseline", str(base), "-o", str(whole), "--no-store", "-q"])
    assert code == 1
    return {"folder": folder, "base": base, "whole": whole}


@pytest.mark.parametrize("n", [2, 3, 4])
def test_sharded_check_of_the_example_merges_to_the_unsharded_verdicts(
    n: int, example: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    folder = example["folder"] / f"n{n}"
    paths = [folder / f"shard-{i}.json" for i in range(1, n + 1)]
    for i, path in enumerate(paths, 1):
        args = ["check", EXAMPLE, "--agent", V2, "--baseline", example["base"], "--shard", f"{i}/{n}"]
        assert cli([*args, "-o", path, "--no-store", "-q"], capsys)[0] in (0, 1, 2)
        assert load_results(path).sections["shard"]["scenarios_total"] == 4  # type: ignore[index]
    merged = folder / "merged.json"
    code, out, err = cli(["merge", *paths, "--baseline", example["base"], "-o", merged], capsys)
    whole = load_results(example["whole"])
    assert code == whole.decision.exit_code == 1, err
    assert "seat_change   FAIL" in out and "decision: BLOCK" in out
    got = load_results(merged)
    assert [s.name for s in got.scenarios] == [s.name for s in whole.scenarios]
    assert verdicts(got) == verdicts(whole)  # test, evidence, Holm notes, fingerprint p-values: all of it
    assert got.decision == whole.decision and got.kind == "check"
    assert got.scenario("seat_change").verdict.verdict is Verdict.FAIL  # type: ignore[union-attr]


def test_a_sharded_baseline_recording_merges_to_the_unsharded_one(
    example: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    paths = [example["folder"] / f"run-{i}.json" for i in (1, 2)]
    for i, path in enumerate(paths, 1):
        assert cli(["run", EXAMPLE, "--full", "--shard", f"{i}/2", "-o", path, "--no-store", "-q"], capsys)[0] == 0
    merged = example["folder"] / "run-merged.json"
    assert cli(["merge", *paths, "-o", merged, "-q"], capsys)[0] == 0
    got, base = load_results(merged), load_results(example["base"])
    assert verdicts(got) == verdicts(base) and got.decision == base.decision
    assert {s.name: s.outcomes for s in got.scenarios} == {s.name: s.outcomes for s in base.scenarios}


# -- config.proxy: check shards merge their proxy arms; a proxy baseline is not recorded in shards ----
def test_proxy_check_shards_merge_and_proxy_recording_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("agents")
    from tests.features.proxy.test_proxy import SUITE as PROXY_SUITE

    monkeypatch.chdir(ROOT)
    suite = tmp_path / "proxy.yml"
    suite.write_text(PROXY_SUITE)
    base, whole = tmp_path / "base.json", tmp_path / "whole.json"
    code, _, err = cli(["run", suite, "--shard", "1/2", "--no-store", "-q"], capsys)
    assert code == 3 and "config.proxy" in err and "without --shard" in err
    assert cli(["run", suite, "-o", base, "--no-store", "-q"], capsys)[0] == 0
    check = ["check", suite, "--agent", V2, "--baseline", base, "--no-store", "-q"]
    want = cli([*check, "-o", whole], capsys)[0]
    paths = [tmp_path / f"shard-{i}.json" for i in (1, 2)]
    for i, path in enumerate(paths, 1):
        cli([*check, "--shard", f"{i}/2", "-o", path], capsys)
    merged = tmp_path / "merged.json"
    code, _, err = cli(["merge", *paths, "--baseline", base, "-o", merged, "-q"], capsys)
    assert code == want, err
    got, ref = load_results(merged), load_results(whole)
    assert verdicts(got) == verdicts(ref)
    assert got.sections.get("proxy") is not None and ref.sections.get("proxy") is not None
    assert got.sections.get("proxy")["scenarios"] == ref.sections.get("proxy")["scenarios"]
    assert got.sections.get("proxy")["usd"] == pytest.approx(ref.sections.get("proxy")["usd"])
    assert got.sections.get("proxy")["allocation"] == ref.sections.get("proxy")["allocation"]
