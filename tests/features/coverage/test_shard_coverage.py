"""Coverage survives `merge` and `compare` (issue 17): shards carry sufficient statistics, merge makes the section
an unsharded run writes, exactly, and the Eq. 26 gate is decided again on the merged overall."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from agentassay._features.coverage import (
    behavioural_accumulator,
    behavioural_coverage,
    behavioural_statistics,
    finish_behavioural,
    merge_behavioural_statistics,
)
from agentassay._features.coverage._gate import coverage_gate
from agentassay._features.coverage._plugin import GATE_NOTE
from agentassay._features.structure._model import RESTRICTED_CALL
from agentassay._gate import SuiteDecision
from agentassay._integrations.adapters import ToolInfo
from agentassay._integrations.cli import main
from agentassay._results import load_results
from agentassay._stats import Decision, Verdict
from agentassay._traces import Action, Step, Trace, TraceMetadata

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = str(ROOT / "examples" / "customer_service" / "agentassay.yml")


# -- a plain-callable agent whose traces exercise every part of the section --------------------------
def desk(text: str, seed: int) -> Trace:
    """Restricted-call attempts (one by an agent the entry cannot reach), an ambiguous agent name, tools the
    inventory does not know, traces with and without a model, and a spread of paths: all of it per seed."""
    rng = random.Random(seed)
    steps = [Step(Action.HANDOFF, agent="Triage", target="FAQ")]
    if rng.random() < 0.15:
        steps.insert(0, Step(Action.CALL_TOOL, agent="Triage", tool="book", error=RESTRICTED_CALL))
    if "orphan" in text and rng.random() < 0.3:
        steps.append(Step(Action.CALL_TOOL, agent="Orphan", tool="lookup", error=RESTRICTED_CALL))
    for _ in range(rng.randrange(3)):
        steps.append(Step(Action.CALL_TOOL, agent="FAQ", tool="lookup", arguments={"q": text}))
    if rng.random() < 0.2:
        steps.append(Step(Action.CALL_TOOL, agent="FAQ", tool=f"mystery_{rng.randrange(3)}"))
    if rng.random() < 0.1:
        steps.append(Step(Action.RESPOND, agent="Helper", output="?"))
    steps.append(Step(Action.RESPOND, agent="FAQ", output="ok"))
    model = rng.choice(["m1", "m2", None])
    return Trace(steps=tuple(steps), output="ok", metadata=TraceMetadata(model=model))


MANIFEST = """\
system: {id: desk, entry_agent: triage}
agents:
  - {id: triage, name: Triage}
  - {id: faq, name: FAQ}
  - {id: helper_a, name: Helper}
  - {id: helper_b, name: Helper}
  - {id: orphan, name: Orphan}
tools:
  - {id: lookup}
  - {id: book}
permissions:
  allow: [[faq, lookup], [helper_a, book], [helper_b, book]]
  restrict: [[triage, lookup], [triage, book], [orphan, lookup], [faq, book]]
delegations:
  - {from: triage, to: faq, trigger: delegate}
  - {from: triage, to: helper_a, trigger: delegate}
  - {from: triage, to: helper_b, trigger: delegate}
"""

SUITE = """\
name: desk
agent: tests.features.coverage.test_shard_coverage:desk
config:
  trials: 20
  threshold: 0.5
  method: fixed
  concurrency: 1
  seed: 5
  regression: {{delta: 0.45}}
  coverage:
    manifest: {manifest}
    min: 0.99
scenarios:
  - {{name: a, input: "alpha", evaluator: [{{contains: ok}}], witness: ["RestrictTool(triage, book)"]}}
  - {{name: b, input: "beta orphan", evaluator: [{{contains: ok}}]}}
  - {{name: c, input: "gamma", evaluator: [{{contains: ok}}]}}
  - {{name: d, input: "delta orphan", evaluator: [{{contains: ok}}]}}
  - {{name: e, input: "epsilon", evaluator: [{{contains: ok}}]}}
"""


def cli(args: list[Any]) -> int:
    return main([str(a) for a in args])


@pytest.fixture(scope="module")
def desk_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The suite run whole, in 2 and in 3 shards (each merged), and checked against the whole run."""
    folder = tmp_path_factory.mktemp("desk")
    (folder / "manifest.yml").write_text(MANIFEST)
    suite = folder / "suite.yml"
    suite.write_text(SUITE.format(manifest=folder / "manifest.yml"))
    out = {"suite": suite, "whole": folder / "whole.json", "check": folder / "check.json"}
    assert cli(["run", suite, "-o", out["whole"], "--no-store", "-q"]) == 2  # PASS, but the gate: MANUAL
    for n in (2, 3):
        shards = [folder / f"run-{i}of{n}.json" for i in range(1, n + 1)]
        for i, path in enumerate(shards, 1):
            assert cli(["run", suite, "--shard", f"{i}/{n}", "-o", path, "--no-store", "-q"]) == 2
            out[f"run-{i}of{n}"] = path
        out[f"merged{n}"] = folder / f"merged{n}.json"
        assert cli(["merge", *shards, "-o", out[f"merged{n}"], "-q"]) == 2
    check = ["check", suite, "--baseline", out["whole"], "--no-store", "-q"]
    assert cli([*check, "-o", out["check"]]) == 2
    for i in (1, 2):
        out[f"check-{i}"] = folder / f"check-{i}.json"
        assert cli([*check, "--shard", f"{i}/2", "-o", out[f"check-{i}"]]) == 2
    out["check-merged"] = folder / "check-merged.json"
    assert cli(["merge", out["check-1"], out["check-2"], "--baseline", out["whole"], "-o", out["check-merged"], "-q"]) == 2
    return out


def raw(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def gate_notes(path: Path) -> list[str]:
    return [n for n in load_results(path).notes if n.startswith(GATE_NOTE)]


@pytest.mark.parametrize("n", [2, 3])
def test_merged_coverage_is_the_unsharded_runs_exactly(n: int, desk_files: dict[str, Path]) -> None:
    whole, merged = raw(desk_files["whole"]), raw(desk_files[f"merged{n}"])
    assert "merge" not in whole["coverage"] and "merge" not in merged["coverage"]  # statistics: shards only
    assert merged["coverage"] == whole["coverage"]  # C1-C4, witnesses, findings, the tuple, its notes: all of it
    structural = whole["coverage"]["structural"]
    assert structural["criteria"]["C3"]["elicited"] == [["triage", "book"], ["orphan", "lookup"]]
    assert any("not reachable from triage" in f for f in structural["findings"])
    assert structural["ambiguous"] == ["Helper"]
    assert whole["coverage"]["behavioural"]["details"]["tools_unknown"][2:] == ["mystery_1", "mystery_2", "mystery_0"]
    for i in range(1, n + 1):  # every shard measured only part of it, and says so in its statistics
        shard = raw(desk_files[f"run-{i}of{n}"])["coverage"]
        assert shard["merge"]["schema"] == "agentassay.coverage-merge/1"
        assert shard["behavioural"]["traces"] < whole["coverage"]["behavioural"]["traces"]


@pytest.mark.parametrize("n", [2, 3])
def test_path_counts_merge_by_sum_so_chao1_sees_the_merged_f1_and_f2(n: int, desk_files: dict[str, Path]) -> None:
    stats = [raw(desk_files[f"run-{i}of{n}"])["coverage"]["merge"]["behavioural"] for i in range(1, n + 1)]
    acc = merge_behavioural_statistics(stats, ["a", "b", "c", "d", "e"])
    summed: dict[Any, int] = {}
    for s in stats:
        for path, count in s["paths"]:
            key = tuple(tuple(step) for step in path)
            summed[key] = summed.get(key, 0) + count
    assert acc.paths == summed and acc.n == sum(s["n"] for s in stats) == 100
    whole = raw(desk_files["whole"])["coverage"]["behavioural"]["details"]
    shards = [raw(desk_files[f"run-{i}of{n}"])["coverage"]["behavioural"]["details"] for i in range(1, n + 1)]
    assert (whole["f1"], whole["f2"]) == (sum(v == 1 for v in summed.values()), sum(v == 2 for v in summed.values()))
    assert whole["f1"] != sum(d["f1"] for d in shards)  # adding the shards' f1 would be wrong


def test_merge_decides_the_coverage_gate_again_on_the_merged_overall(desk_files: dict[str, Path]) -> None:
    whole = load_results(desk_files["whole"])
    assert whole.decision.verdict is Verdict.PASS and whole.decision.decision is Decision.MANUAL
    shard_notes = gate_notes(desk_files["run-1of3"])
    assert shard_notes and shard_notes != gate_notes(desk_files["whole"])  # the shard's own, lower overall
    for key in ("merged2", "merged3"):
        merged = load_results(desk_files[key])
        assert merged.decision == whole.decision
        assert gate_notes(desk_files[key]) == gate_notes(desk_files["whole"])  # one note: the merged overall


def test_compare_and_a_merged_check_keep_coverage_and_its_gate(desk_files: dict[str, Path], tmp_path: Path) -> None:
    check = load_results(desk_files["check"])
    assert check.decision.verdict is Verdict.PASS and check.decision.decision is Decision.MANUAL
    merged = raw(desk_files["check-merged"])
    assert merged["coverage"] == raw(desk_files["check"])["coverage"]
    assert load_results(desk_files["check-merged"]).decision == check.decision
    assert gate_notes(desk_files["check-merged"]) == gate_notes(desk_files["check"])
    for candidate in (desk_files["check"], desk_files["check-merged"]):
        out = tmp_path / f"compare-{candidate.stem}.json"
        assert cli(["compare", desk_files["whole"], candidate, "-o", out, "-q"]) == 2  # as `check` decided
        compared = load_results(out)
        assert compared.sections.get("coverage") == load_results(candidate).sections.get("coverage")
        assert compared.decision == check.decision and len(gate_notes(out)) == 1


def test_without_statistics_or_with_another_manifest_the_part_is_left_out_with_a_note(
    desk_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = raw(desk_files["run-2of2"])
    del old["coverage"]["merge"]  # a shard written before coverage statistics existed
    (tmp_path / "old.json").write_text(json.dumps(old))
    out = tmp_path / "m.json"
    # no coverage, no gate: as in a run whose coverage could not be computed, the PASS deploys
    assert cli(["merge", desk_files["run-1of2"], tmp_path / "old.json", "-o", out, "-q"]) == 0
    got = load_results(out)
    assert got.sections.get("coverage") is None
    assert any("old.json has no coverage statistics" in n and "run the shards again" in n for n in got.notes)
    other = raw(desk_files["run-2of2"])
    other["coverage"]["merge"]["structural"]["manifest"]["agents"][0]["name"] = "Front Desk"
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert cli(["merge", desk_files["run-1of2"], tmp_path / "other.json", "-o", out, "-q"]) == 2
    got = load_results(out)
    assert got.sections.get("coverage") is not None and got.sections.get("coverage")["structural"] is None
    assert got.sections.get("coverage")["behavioural"] == raw(desk_files["whole"])["coverage"]["behavioural"]
    assert any("other.json was measured against another workflow manifest" in n for n in got.notes)


def test_the_gate_note_prefix_is_what_coverage_gate_writes() -> None:
    decision = SuiteDecision(Verdict.PASS, Decision.DEPLOY, {"pass": 1, "fail": 0, "inconclusive": 0}, "holm")
    _, note = coverage_gate(decision, 0.2, 0.5)
    assert note is not None and note.startswith(GATE_NOTE)


# -- the behavioural statistics on their own -------------------------------------------------------
TOOLS = [
    ToolInfo("search", parameters={"type": "object", "properties": {"k": {"type": "integer", "minimum": 1, "maximum": 9}}}, agent="A"),
    ToolInfo(
        "book",
        parameters={
            "type": "object",
            "properties": {"seat": {"type": "string"}, "row": {"type": "integer", "minimum": 1, "maximum": 40}},
        },
        agent="B",
    ),
]


def synthetic(scenario: str, trial: int) -> Trace:
    rng = random.Random(f"{scenario}|{trial}")
    steps = [Step(Action.CALL_TOOL, agent="A", tool="search", arguments={"k": rng.choice([1, 5, 9, 10])})]
    while rng.random() < 0.45:  # a long tail of rare paths: Chao1 has singletons to extrapolate from
        steps.append(Step(Action.CALL_TOOL, agent="A", tool="search", arguments={"k": 5}))
    if rng.random() < 0.4:
        steps.append(Step(Action.HANDOFF, agent="A", target="B"))
        seat = {"seat": rng.choice(["", "3A"]), "row": rng.choice([1, 12])}
        steps.append(Step(Action.CALL_TOOL, agent="B", tool="book", arguments=seat))
    if rng.random() < 0.2:
        steps.append(Step(Action.CALL_TOOL, agent="A", tool=f"ghost_{rng.randrange(4)}"))
    steps += [Step(Action.REASON, agent="A")] * rng.randrange(4) + [Step(Action.RESPOND, agent="A", output="x")]
    meta = TraceMetadata(scenario=scenario, trial=trial, model=rng.choice(["m1", None]))
    return Trace(steps=tuple(steps), output="x", metadata=meta)


class Opaque:
    """A state no JSON can hold, with a repr that is the same in every process."""

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Opaque{self.key!r}"


def opaque_states(steps: Any, index: int) -> Opaque:
    s = steps[index]
    return Opaque((s.agent, s.action.value, s.tool, min(index, 3)))


@pytest.mark.parametrize("abstraction", [None, opaque_states], ids=["default states", "custom states"])
@pytest.mark.parametrize("n", [2, 3, 5])
def test_statistics_of_shards_merge_to_the_tuple_of_all_traces(abstraction: Any, n: int) -> None:
    names = ["s0", "s1", "s2", "s3", "s4"]
    order = [(t, s) for t in range(30) for s in names]  # round-robin, the order one unsharded run meets them
    whole = behavioural_coverage([synthetic(s, t) for t, s in order], tools=TOOLS, state_abstraction=abstraction)
    stats = []
    for i in range(n):
        acc = behavioural_accumulator(TOOLS, state_abstraction=abstraction)
        for t, s in order:
            if names.index(s) % n == i:
                acc.add(synthetic(s, t))
        stats.append(json.loads(json.dumps(behavioural_statistics(acc))))  # through a results file
    merged = finish_behavioural(merge_behavioural_statistics(stats, names))
    assert merged.to_dict() == whole.to_dict()
    assert merged.details.tools_unknown == whole.details.tools_unknown and len(whole.details.tools_unknown) == 4
    assert 0 < whole.boundary < 1 and whole.details.f1 > 0


def test_statistics_are_sorted_so_the_same_traces_give_the_same_file() -> None:
    traces = [synthetic(s, t) for t in range(10) for s in ("x", "y")]
    one, two = behavioural_accumulator(TOOLS), behavioural_accumulator(TOOLS)
    for tr in traces:
        one.add(tr)
    for tr in reversed(traces):
        two.add(tr)
    a, b = behavioural_statistics(one), behavioural_statistics(two)
    a.pop("unknown"), b.pop("unknown")  # first-seen order, with the trial that showed each
    assert a == b


def test_statistics_of_other_tools_or_abstractions_are_refused() -> None:
    acc = behavioural_accumulator(TOOLS)
    acc.add(synthetic("s", 0))
    base = behavioural_statistics(acc)
    other = behavioural_statistics(behavioural_accumulator(TOOLS[:1]))
    with pytest.raises(ValueError, match="statistics 2 was measured with another tool inventory than statistics 1"):
        merge_behavioural_statistics([base, other])
    custom = behavioural_statistics(behavioural_accumulator(TOOLS, state_abstraction=opaque_states))
    with pytest.raises(ValueError, match=r"b\.json was measured with another state abstraction than a\.json"):
        merge_behavioural_statistics([base, custom], labels=["a.json", "b.json"])
    with pytest.raises(ValueError, match="schema"):
        merge_behavioural_statistics([{**base, "schema": "x"}])


# -- the customer-service example ------------------------------------------------------------------
def test_shards_of_the_customer_service_example_merge_to_the_unsharded_coverage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trial seeds depend on the scenario and the trial index, not the shard, so with ``--concurrency 1``
    the shards run the unsharded run's trials: the merged section must be the unsharded one."""
    pytest.importorskip("agents")
    monkeypatch.chdir(ROOT)
    common = ["--trials", "12", "--method", "fixed", "--concurrency", "1", "--no-store", "-q"]
    whole = tmp_path / "whole.json"
    assert cli(["run", EXAMPLE, *common, "-o", whole]) in (0, 2)
    shards = [tmp_path / f"shard-{i}.json" for i in (1, 2)]
    for i, path in enumerate(shards, 1):
        assert cli(["run", EXAMPLE, *common, "--shard", f"{i}/2", "-o", path]) in (0, 2)
    merged = tmp_path / "merged.json"
    assert cli(["merge", *shards, "-o", merged, "-q"]) in (0, 2)
    want, got = raw(whole)["coverage"], raw(merged)["coverage"]
    assert want["structural"] and want["behavioural"]["traces"] == 48
    assert got == want
    stats = [raw(p)["coverage"]["merge"]["behavioural"] for p in shards]
    counts = sorted(c for p, c in merge_behavioural_statistics(stats).paths.items())
    assert sum(counts) == 48 and want["behavioural"]["details"]["paths_observed"] == len(counts)


def test_the_golden_merged_check_carries_the_unsharded_checks_coverage() -> None:
    """tests/golden: `shard_merged` merges `shard_check_1` and `_2`, which ran the trials of `cs_check_v2`."""
    from tests._support.golden_cases import load_golden

    golden = load_golden()
    merged, whole = golden["shard_merged"]["results"], golden["cs_check_v2"]["results"]
    assert merged["coverage"] == whole["coverage"] and merged["coverage"]["structural"]
    assert all("merge" in golden[f"shard_check_{i}"]["results"]["coverage"] for i in (1, 2))
    assert "merge" not in whole["coverage"]
