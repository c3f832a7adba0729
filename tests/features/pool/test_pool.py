"""Pooled baselines (`run --full --pool PREVIOUS.json`, plugins/pool.py, _runner/_identity.py).

A new recording pools the previous baseline's trials only when the suite, model, trial settings, agent
source and versions are all unchanged; its own trials come from a fresh seed stream, so no seed repeats;
at most 2 x record_cap trials per scenario, the most recent kept. Everything runs the offline
customer-service example (seeded simulator) with 10 trials per check and 12 per recording, so a
recording is 24 trials and no assertion depends on timing.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agentassay._integrations.cli import main
from agentassay._results import Results, load_results
from agentassay._runner._identity import differences, source_digest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "customer_service"
RECORD_CAP, CAP = 12, 24
RAN = (0, 2)  # exit codes of a recording that ran: at 10 trials a scenario is often INCONCLUSIVE (2)

SUITE = """\
name: customer-service
agent: {entry}
model:
  provider: offline
config:
  trials: 10
  baseline_trials: 12
  concurrency: 8
  timeout: 30
  seed: 7
  prices:
    "*": {{input: 0.40, output: 1.60}}
scenarios:
  - name: seat_change
    input: "I'd like to change my seat to 14C. My confirmation number is ABC123."
    evaluator:
      - contains: "14C"
  - name: baggage
    input: "How much baggage can I bring?"
    evaluator:
      - contains: "bag"
"""


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)  # the example agent imports as examples.customer_service.v1
    return tmp_path


def suite_file(folder: Path, entry: str = "examples.customer_service.v1:triage_agent", extra: str = "") -> Path:
    path = folder / "agentassay.yml"
    path.write_text(SUITE.format(entry=entry) + extra)
    return path


def record(suite: Path, out: Path, *args: str, capsys: pytest.CaptureFixture[str] | None = None) -> tuple[int, str]:
    code = main(["run", str(suite), "--full", "--no-store", "-o", str(out), *args])
    text = ""
    if capsys is not None:
        captured = capsys.readouterr()
        text = captured.out + captured.err
    return code, text


def seeds(r: Results) -> list[int]:
    return [t.seed for s in r.scenarios for t in s.trials]


def rewrite(src: Path, dest: Path, change: Any) -> Path:
    data = json.loads(src.read_text())
    change(data)
    dest.write_text(json.dumps(data))
    return dest


# -- the same identity pools ------------------------------------------------------------------------


def test_same_identity_pools_counts_add_up_and_the_file_says_from_where(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = suite_file(here)
    assert record(suite, here / "b1.json")[0] in RAN
    code, text = record(suite, here / "b2.json", "--pool", str(here / "b1.json"), capsys=capsys)
    assert code in RAN
    b1, b2 = load_results(here / "b1.json"), load_results(here / "b2.json")
    assert all(len(s.trials) == RECORD_CAP for s in b1.scenarios)

    section = b2.sections["pool"]
    assert section["pooled"] is True and section["run_id"] == b1.run_id and section["source"] == str(here / "b1.json")
    assert section["recorded_at"] == b1.finished_at and section["generation"] == 1 and section["seed_stream"] == "run~1"
    for s in b2.scenarios:
        per = section["scenarios"][s.name]
        assert per == {
            "new": RECORD_CAP, "pooled": RECORD_CAP, "trials": 2 * RECORD_CAP, "left_out": 0,
            "from": [{"run_id": b1.run_id, "recorded_at": b1.finished_at, "source": str(here / "b1.json"),
                      "trials": RECORD_CAP, "indices": [RECORD_CAP, 2 * RECORD_CAP - 1]}],
        }
        # The counts a check uses are both recordings' trials.
        old = b1.scenario(s.name)
        assert old is not None
        counts = b2.baseline_counts()[s.name]
        assert counts.trials == 2 * RECORD_CAP
        assert counts.passes == old.passes + sum(1 for t in s.trials if t.pooled is None and t.passed)
        # This run's own trials keep indices 0..n-1; the carried ones follow, as recorded, marked.
        own = [t for t in s.trials if t.pooled is None]
        carried = [t for t in s.trials if t.pooled is not None]
        assert [t.index for t in own] == list(range(RECORD_CAP))
        assert [t.index for t in carried] == list(range(RECORD_CAP, 2 * RECORD_CAP))
        assert all(t.pooled == b1.run_id and not t.counted for t in carried)
        assert [(t.seed, t.passed, t.failures, t.data) for t in carried] == [
            (t.seed, t.passed, t.failures, t.data) for t in old.trials
        ]
        assert s.cost()["trials"] == RECORD_CAP  # what this run paid for
        assert s.to_dict()["pooled_trials"] == RECORD_CAP
    assert b2.cost()["trials"] == 2 * RECORD_CAP
    # The note (results file and terminal) says how many and from where.
    note = next(n for n in b2.notes if n.startswith("pooled"))
    assert f"pooled {2 * RECORD_CAP} earlier trials" in note and b1.run_id in note and str(here / "b1.json") in note
    assert b1.run_id in text and "pooled" in text
    # A file that pooled nothing has its own trials only; an unpooled file never says "pooled".
    assert "pool" not in b1.sections and all(t.pooled is None for s in b1.scenarios for t in s.trials)
    assert "pooled" not in (here / "b1.json").read_text().split('"scenarios"')[1]


def test_no_seed_repeats_in_a_pooled_chain_and_the_cap_keeps_the_most_recent(here: Path) -> None:
    suite = suite_file(here)
    assert record(suite, here / "b1.json")[0] in RAN
    # The sampler is deterministic per seed: recording again plainly repeats every seed (what pooling must avoid).
    assert record(suite, here / "again.json")[0] in RAN
    assert seeds(load_results(here / "again.json")) == seeds(load_results(here / "b1.json"))
    for i in (2, 3, 4):
        assert record(suite, here / f"b{i}.json", "--pool", str(here / f"b{i - 1}.json"))[0] in RAN
    b = {i: load_results(here / f"b{i}.json") for i in (1, 2, 3, 4)}
    for i in (2, 3, 4):
        assert len(seeds(b[i])) == len(set(seeds(b[i]))), f"b{i} repeats a seed"
        assert b[i].sections["pool"]["generation"] == i - 1
        for s in b[i].scenarios:
            assert len(s.trials) == CAP  # 12 new + 12 earlier: at most 2 x record_cap
            assert len({t.index for t in s.trials}) == CAP
    # Every trial ever recorded in the chain has its own seed.
    every = [t.seed for r in b.values() for s in r.scenarios for t in s.trials if t.pooled is None]
    assert len(every) == len(set(every)) == 4 * 2 * RECORD_CAP
    # b3 keeps b2's own trials (the most recent) and leaves out the ones b2 had pooled from b1.
    section = b[3].sections["pool"]
    for s in b[3].scenarios:
        per = section["scenarios"][s.name]
        assert per["pooled"] == RECORD_CAP and per["left_out"] == RECORD_CAP
        assert {t.pooled for t in s.trials if t.pooled} == {b[2].run_id}
        prev = b[2].scenario(s.name)
        assert prev is not None
        assert [t.seed for t in s.trials if t.pooled] == [t.seed for t in prev.trials if t.pooled is None]
    assert f"{2 * RECORD_CAP} older trials left out" in next(n for n in b[3].notes if n.startswith("pooled"))


def test_a_larger_recording_keeps_the_earlier_origins_of_what_it_pools(here: Path) -> None:
    """--trials only sets how many trials run (not what one does), so it pools: b1 and b2 record 12 (1.5 x 8),
    b3 records 24 (1.5 x 16) and has room for 24 earlier ones: b2's own 12 and the 12 b2 pooled from b1."""
    suite = suite_file(here)
    suite.write_text(suite.read_text().replace("  baseline_trials: 12\n", ""))
    record(suite, here / "b1.json", "--trials", "8")
    record(suite, here / "b2.json", "--trials", "8", "--pool", str(here / "b1.json"))
    record(suite, here / "b3.json", "--trials", "16", "--pool", str(here / "b2.json"))
    b1, b2, b3 = (load_results(here / f"b{i}.json") for i in (1, 2, 3))
    for s in b3.scenarios:
        per = b3.sections["pool"]["scenarios"][s.name]
        assert (per["new"], per["pooled"], per["left_out"]) == (24, 24, 0)
        assert per["from"] == [
            {"run_id": b2.run_id, "recorded_at": b2.finished_at, "source": str(here / "b2.json"), "trials": 12,
             "indices": [24, 35]},
            {"run_id": b1.run_id, "recorded_at": b1.finished_at, "source": str(here / "b1.json"), "trials": 12,
             "indices": [36, 47]},
        ]
        assert [t.pooled for t in s.trials[24:]] == [b2.run_id] * 12 + [b1.run_id] * 12
    assert len(seeds(b3)) == len(set(seeds(b3))) == 2 * 48
    assert b3.sections["pool"]["seed_stream"] == "run~2"


# -- anything different pools nothing -----------------------------------------------------------------


def _refused(path: Path, field: str, *words: str) -> None:
    r = load_results(path)
    section = r.sections["pool"]
    assert section["pooled"] is False and field in section["differs"], section
    assert all(t.pooled is None for s in r.scenarios for t in s.trials)
    assert all(len(s.trials) == RECORD_CAP for s in r.scenarios)
    assert section["seed_stream"] == "run"  # a plain recording
    note = next(n for n in r.notes if n.startswith("nothing pooled"))
    for w in words:
        assert w in note, note


def test_a_different_suite_never_pools(here: Path) -> None:
    suite = suite_file(here)
    record(suite, here / "b1.json")
    suite.write_text(suite.read_text() + "# an edit\n")
    record(suite, here / "b2.json", "--pool", str(here / "b1.json"))
    _refused(here / "b2.json", "suite_sha256", "the suite file differs", str(here / "b1.json"))


def test_different_trial_settings_never_pool(here: Path) -> None:
    suite = suite_file(here)
    record(suite, here / "b1.json")
    record(suite, here / "b2.json", "--pool", str(here / "b1.json"), "--concurrency", "3")
    _refused(here / "b2.json", "settings", "the trial settings differ", "concurrency 8 then, 3 now")


def test_a_different_model_never_pools(here: Path) -> None:
    suite = suite_file(here)
    record(suite, here / "b1.json")

    def other_model(d: dict[str, Any]) -> None:
        d["agent"]["identity"]["model"]["resolved"]["name"] = "gpt-4.1-mini"

    rewrite(here / "b1.json", here / "b1m.json", other_model)
    record(suite, here / "b2.json", "--pool", str(here / "b1m.json"))
    _refused(here / "b2.json", "model", "the model differs", "resolved.name gpt-4.1-mini then, offline-simulator now")


def test_different_versions_never_pool(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = suite_file(here)
    record(suite, here / "b1.json")
    monkeypatch.setattr("agentassay._runner._run.__version__", "99.0.0")
    record(suite, here / "b2.json", "--pool", str(here / "b1.json"))
    _refused(here / "b2.json", "versions", "the software versions differ", "agentassay", "99.0.0 now")

    def other_sdk(d: dict[str, Any]) -> None:
        d["agent"]["identity"]["versions"]["openai-agents"] = "0.0.1"
        d["agent"]["identity"]["versions"]["agentassay"] = "99.0.0"

    rewrite(here / "b1.json", here / "b1v.json", other_sdk)
    record(suite, here / "b3.json", "--pool", str(here / "b1v.json"))
    _refused(here / "b3.json", "versions", "openai-agents 0.0.1 then")


def test_a_changed_agent_source_never_pools(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"poolagent_{uuid.uuid4().hex[:8]}"  # a fresh package: sys.modules must not hold an older copy
    pkg = here / name
    pkg.mkdir()
    for f in ("__init__.py", "_workflow.py", "airline.py", "v1.py"):
        shutil.copy(EXAMPLE / f, pkg / f)
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(here))
    suite = suite_file(here, entry=f"{name}.v1:triage_agent")
    assert record(suite, here / "b1.json")[0] in RAN
    b1 = load_results(here / "b1.json")
    source = b1.agent["identity"]["agent"]["source"]
    assert set(source["files"]) == {f"{name}/{f}" for f in ("__init__.py", "_workflow.py", "airline.py", "v1.py")}
    # Unchanged: pools.
    record(suite, here / "b2.json", "--pool", str(here / "b1.json"))
    assert load_results(here / "b2.json").sections["pool"]["pooled"] is True
    # A changed module (a comment is enough: conservative) and a new prompt file in the package: nothing pooled.
    (pkg / "_workflow.py").write_text((pkg / "_workflow.py").read_text() + "\n# tweak\n")
    (pkg / "prompt.txt").write_text("be terse")
    record(suite, here / "b3.json", "--pool", str(here / "b1.json"))
    _refused(here / "b3.json", "agent", "the agent's source differs", f"changed {name}/_workflow.py",
             f"added {name}/prompt.txt")


def test_an_old_results_file_without_identity_never_pools(here: Path) -> None:
    suite = suite_file(here)
    record(suite, here / "b1.json")
    rewrite(here / "b1.json", here / "old.json", lambda d: d["agent"].pop("identity"))
    assert load_results(here / "old.json").agent.get("identity") is None  # still a readable baseline
    record(suite, here / "b2.json", "--pool", str(here / "old.json"))
    _refused(here / "b2.json", "identity", "it has no identity")


def test_a_previous_file_that_is_no_full_recording_never_pools(here: Path) -> None:
    suite = suite_file(here)
    assert main(["run", str(suite), "--no-store", "-q", "-o", str(here / "plain.json")]) in RAN
    assert load_results(here / "plain.json").agent["identity"]["full"] is False
    record(suite, here / "b2.json", "--pool", str(here / "plain.json"))
    r = load_results(here / "b2.json")
    assert r.sections["pool"]["pooled"] is False and "not recorded with --full" in r.sections["pool"]["reasons"][0]
    record(suite, here / "b1.json")
    rewrite(here / "b1.json", here / "cut.json", lambda d: d.update(interrupted=True))
    record(suite, here / "b3.json", "--pool", str(here / "cut.json"))
    assert "interrupted" in load_results(here / "b3.json").sections["pool"]["reasons"][0]


# -- usage --------------------------------------------------------------------------------------------


def test_pool_without_full_is_a_usage_error(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = suite_file(here)
    record(suite, here / "b1.json")
    capsys.readouterr()
    code = main(["run", str(suite), "--no-store", "--pool", str(here / "b1.json"), "-o", str(here / "b2.json")])
    err = capsys.readouterr().err
    assert code == 3
    assert "--pool" in err and "needs --full" in err and f"agentassay run {suite} --full --pool" in err
    assert not (here / "b2.json").exists()
    code = main(["run", str(suite), "--full", "--shard", "1/2", "--no-store", "--pool", str(here / "b1.json")])
    assert code == 3 and "--pool cannot be combined with --shard" in capsys.readouterr().err
    code = main(["run", str(suite), "--full", "--no-store", "--pool", str(here / "missing.json")])
    assert code == 3 and "missing.json" in capsys.readouterr().err


def test_the_help_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--pool PREVIOUS.json" in out and "--full" in out


# -- reports and checks on a pooled baseline -----------------------------------------------------------


def test_a_check_uses_every_pooled_trial_and_reports_show_pooled_traces(here: Path) -> None:
    from agentassay._reports._files import write_report_files

    suite = suite_file(here)
    store = here / "traces.db"
    assert main(["run", str(suite), "--full", "-q", "--store", str(store), "-o", str(here / "b1.json")]) in RAN
    assert main(["run", str(suite), "--full", "-q", "--store", str(store), "--pool", str(here / "b1.json"),
                 "-o", str(here / "b2.json")]) in RAN
    b1, b2 = load_results(here / "b1.json"), load_results(here / "b2.json")
    # The HTML shows the pooled trials' traces from the earlier run (same store), labelled as pooled.
    html = write_report_files(b2, html=here / "r.html", store=store)[0].read_text()
    assert f"pooled from run {b1.run_id}" in html and "have no stored trace" not in html
    # A store without the earlier run: the pooled trials have no trace, and the page still renders.
    other = here / "other.db"
    assert main(["run", str(suite), "--full", "-q", "--store", str(other), "--pool", str(here / "b1.json"),
                 "-o", str(here / "b3.json")]) in RAN
    html = write_report_files(load_results(here / "b3.json"), html=here / "r3.html", store=other)[0].read_text()
    assert f"{RECORD_CAP} trials of this scenario have no stored trace" in html
    # A check counts every trial of the pooled baseline.
    main(["check", str(suite), "--baseline", str(here / "b2.json"), "--no-store", "-q", "-o", str(here / "c.json")])
    c = load_results(here / "c.json")
    assert all(s.baseline is not None and s.baseline.trials == 2 * RECORD_CAP for s in c.scenarios)


# -- the identity itself ---------------------------------------------------------------------------------


def test_identity_fields_each_differ_alone() -> None:
    base = {
        "scheme": 1, "suite_sha256": "a" * 64, "model": {"config": {"provider": "offline"}, "resolved": {"name": "m"}},
        "settings": {"timeout": 30.0}, "versions": {"agentassay": "1", "python": "3.11.7"},
        "agent": {"entry": "x:y", "adapter": "callable", "config_sha256": "c" * 64,
                  "source": {"sha256": "s" * 64, "files": {"x.py": "1"}}},
        "full": True,
    }
    assert differences(base, base) == []
    cases = {
        "suite_sha256": lambda d: d.update(suite_sha256="b" * 64),
        "model": lambda d: d["model"]["config"].update(temperature=0.5),
        "settings": lambda d: d["settings"].update(timeout=31.0),
        "versions": lambda d: d["versions"].update(python="3.12.0"),
        "agent": lambda d: d["agent"].update(entry="x:z"),
    }
    for name, change in cases.items():
        other = json.loads(json.dumps(base))
        change(other)
        assert [f for f, _ in differences(base, other)] == [name], name
    # The source: a changed file is named; an unknown digest (None) never matches, not even another None.
    other = json.loads(json.dumps(base))
    other["agent"]["source"] = {"sha256": "t" * 64, "files": {"x.py": "2"}}
    assert differences(base, other) == [("agent", "the agent's source differs: changed x.py")]
    none = json.loads(json.dumps(base))
    none["agent"]["source"] = {"sha256": None, "problem": "too big"}
    assert differences(none, none) and differences(base, none)
    none = json.loads(json.dumps(base))
    none["suite_sha256"] = None
    assert [f for f, _ in differences(none, none)] == ["suite_sha256"]
    assert [f for f, _ in differences(None, base)] == ["identity"]
    assert [f for f, _ in differences({"error": "x"}, base)] == ["identity"]


def test_source_digest_covers_the_package_and_skips_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    name = f"digestpkg_{uuid.uuid4().hex[:8]}"
    pkg = tmp_path / name
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "agent.py").write_text("def run(x): return x\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "prompt.yaml").write_text("say: hi\n")
    (tmp_path / "notes.txt").write_text("outside the package")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(f"{name}.agent")
    first = source_digest([f"{name}.agent"])
    assert set(first["files"]) == {f"{name}/__init__.py", f"{name}/agent.py", f"{name}/sub/__init__.py",
                                   f"{name}/sub/prompt.yaml"}
    # Caches, compiled files and hidden files do not count; the package's data files and code do.
    (pkg / "__pycache__").mkdir(exist_ok=True)
    (pkg / "__pycache__" / "agent.cpython-311.pyc").write_bytes(b"x")
    (pkg / ".hidden").write_text("x")
    (tmp_path / "notes.txt").write_text("changed, still outside")
    assert source_digest([f"{name}.agent"])["sha256"] == first["sha256"]
    (pkg / "sub" / "prompt.yaml").write_text("say: hello\n")
    assert source_digest([f"{name}.agent"])["sha256"] != first["sha256"]
    # A module that is not loaded (or has no file) gives no digest: such a file never pools.
    assert source_digest(["no_such_module_anywhere"])["sha256"] is None


def test_a_top_level_module_digests_the_python_files_of_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    name = f"toplevel_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text("def run(x): return x\n")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "tools.py").write_text("X = 1\n")
    (tmp_path / "results.json").write_text("{}")  # results and reports beside the agent never count
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module(name)
    first = source_digest([name])
    assert set(first["files"]) == {f"{name}.py", "helpers/tools.py"}
    (tmp_path / "results.json").write_text('{"changed": 1}')
    assert source_digest([name])["sha256"] == first["sha256"]
    (tmp_path / "helpers" / "tools.py").write_text("X = 2\n")
    assert source_digest([name])["sha256"] != first["sha256"]
