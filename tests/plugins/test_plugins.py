"""Third-party plugins: installed through the `agentassay` entry-point group (a temporary dist-info on
sys.path, exactly as pip would leave it) or named with `-p`, they add a results section, a piece of
gate evidence and a PR-comment section without touching the package; one that raises is named in a
note and every trial is kept; bad plugins are exit 3 naming them."""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path

import pytest

from agentassay._integrations.cli import main
from agentassay._plugins import Hooks, Plugins, Stash, StashKey, builtin_names, hookimpl, hookspec
from agentassay._reports import render_pr_comment, render_table
from agentassay._results import load_results

_ids = itertools.count()

SUITE = """\
name: plugin-suite
agent: tests._support.fixture_agents:always_ok
config:
  trials: 30
  method: fixed
  concurrency: 3
  seed: 3
{config}
scenarios:
  - name: greet
    input: "hello"
    evaluator:
      - contains: ok
  - name: refund
    input: "I want a refund"
    evaluator:
      - contains: ok
"""

# A plugin as a user would write it: the public hook marker, the gate's ready-made test, a report Section.
PLUGIN = """\
from agentassay._gate import ScenarioTest
from agentassay._plugins import hookimpl
from agentassay._reports import Section

KIND = "length"


@hookimpl
def agentassay_suite_keys():
    return [("config", "length_limit")]


@hookimpl
def agentassay_configure(run):
    ext = run.suite.extensions.get("config.length_limit")
    if ext is not None and not isinstance(ext.value, int):
        raise ext.error("expected an integer number of characters")


@hookimpl
def agentassay_plan(plan):
    if plan.baseline is not None:
        for name in plan.names:
            plan.share(name, KIND, 0.1)


@hookimpl
def agentassay_results_sections(run):
    return {"thirdparty": {"scenarios": sorted(run.states), "trials": sum(len(t) for t in run.trials.values())}}


@hookimpl
def agentassay_scenario_evidence(plan, candidate):
    if plan.baseline is None:
        return None
    # "refund" is flagged as changed (p = 0), "greet" not (p = 1): a stand-in for a real test.
    p = {name: (0.0 if name == "refund" else 1.0) for name in candidate.trials}
    words = {"refund": "answers grew longer"}
    return [ScenarioTest(KIND, 0.1, p, details={n: {"trials": len(t)} for n, t in candidate.trials.items()}, describe=words)]


@hookimpl
def agentassay_report_sections(results, report):
    section = results.sections.get("thirdparty")
    if section is None:
        return None
    return [Section(key="thirdparty", title="Third-party check", paragraphs=(f"{section['trials']} trials <b>seen</b>",))]
"""

BROKEN = """\
from agentassay._plugins import hookimpl

calls = []


@hookimpl
def agentassay_trial_finished(outcome):
    calls.append(outcome.index)
    if len(calls) == 3:
        raise RuntimeError("boom in the plugin")


@hookimpl
def agentassay_results_sections(run):
    return {"never": True}
"""


def install(root: Path, name: str, source: str, *, entry_point: bool = True) -> str:
    """A distribution as pip leaves it: the module and its .dist-info with an `agentassay` entry point."""
    module = f"{name}_{next(_ids)}"
    (root / f"{module}.py").write_text(source)
    if entry_point:
        info = root / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[agentassay]\n{name} = {module}\n")
    return module


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(tmp_path)
    return root


def suite_file(tmp_path: Path, config: str = "") -> Path:
    path = tmp_path / "agentassay.yml"
    path.write_text(SUITE.format(config=textwrap.indent(config, "  ") if config else ""))
    return path


def run_and_check(tmp_path: Path, *extra: str) -> tuple[int, Path, int, Path]:
    suite, base, cand = suite_file(tmp_path), tmp_path / "base.json", tmp_path / "cand.json"
    code_run = main(["run", str(suite), "-o", str(base), "--no-store", "-q", *extra])
    code_check = main(
        ["check", str(suite), "--baseline", str(base), "-o", str(cand), "--no-store", "-q", *extra]
    )
    return code_run, base, code_check, cand


def test_an_installed_plugin_adds_a_section_gate_evidence_and_a_comment_section(
    site: Path, tmp_path: Path
) -> None:
    install(site, "thirdparty", PLUGIN)
    code_run, base, code_check, cand = run_and_check(tmp_path)
    assert code_run == 0
    assert code_check == 1  # the plugin's evidence FAILs "refund"; the pass rate alone would not

    data = json.loads(cand.read_text())
    assert data["thirdparty"] == {"scenarios": ["greet", "refund"], "trials": 60}
    verdicts = {s["name"]: s["verdict"] for s in data["scenarios"]}
    refund, greet = verdicts["refund"], verdicts["greet"]
    assert refund["verdict"] == "fail" and refund["rate_verdict"] in ("pass", "inconclusive")
    assert refund["evidence"]["length"] | {"adjusted_p": 0.0} == {
        "trials": 30,
        "verdict": "fail",
        "pvalue": 0.0,
        "adjusted_p": 0.0,
        "alpha": 0.05 * 0.1,
        "correction": "holm",
    }
    assert refund["explanation"].startswith("FAIL. Pass rate: ")  # the pass-rate evidence first (it held)
    assert "Length: answers grew longer (p = 0)" in refund["explanation"]
    assert greet["evidence"]["length"]["verdict"] == "pass" and greet["verdict"] != "fail"
    # The pass-rate test kept what the fingerprint test (0.5) and the plugin's (0.1) left of alpha.
    assert greet["evidence"]["alpha"] == pytest.approx(0.05 * 0.4)

    # Reports render from the file alone: the plugin's section, escaped, in the comment and the terminal.
    results = load_results(cand)
    md = render_pr_comment(results)
    assert "#### Third-party check" in md and "60 trials &lt;b&gt;seen&lt;/b&gt;" in md
    assert "Third-party check:" in render_table(results)

    # `compare` re-derives the same verdicts, plugin evidence included, from the two files.
    again = tmp_path / "again.json"
    assert main(["compare", str(base), str(cand), "-o", str(again), "-q"]) == 1
    replayed = {s["name"]: s["verdict"]["verdict"] for s in json.loads(again.read_text())["scenarios"]}
    assert replayed == {n: v["verdict"] for n, v in verdicts.items()}


def test_without_the_plugin_the_same_check_does_not_fail(site: Path, tmp_path: Path) -> None:
    code_run, _, code_check, cand = run_and_check(tmp_path)
    assert (code_run, code_check) == (0, 0)  # unchanged: PASS at alpha (issue 21), never a block
    assert "thirdparty" not in json.loads(cand.read_text())


def test_dash_p_loads_a_local_plugin_and_no_blocks_it(site: Path, tmp_path: Path) -> None:
    module = install(site, "local", PLUGIN, entry_point=False)
    _, _, code_check, cand = run_and_check(tmp_path, "-p", module)
    assert code_check == 1 and "thirdparty" in json.loads(cand.read_text())
    _, _, code_check, cand = run_and_check(tmp_path, "-p", module, "-p", f"no:{module}")
    assert code_check == 0 and "thirdparty" not in json.loads(cand.read_text())


def test_a_plugin_that_raises_is_named_and_every_trial_is_kept(site: Path, tmp_path: Path) -> None:
    install(site, "broken", BROKEN)
    suite, out = suite_file(tmp_path), tmp_path / "r.json"
    code = main(["run", str(suite), "-o", str(out), "--no-store", "-q"])
    data = json.loads(out.read_text())
    assert sum(len(s["trials"]) for s in data["scenarios"]) == 60  # the run went on after the plugin broke
    note = next(n for n in data["notes"] if "plugin 'broken'" in n)
    assert "raised in agentassay_trial_finished: RuntimeError: boom in the plugin" in note
    assert "every trial measured is kept" in note
    assert "never" not in data  # disabled after the failure: its later hooks did not run
    # Its evidence may be missing, so a pass is not a deploy.
    assert code == 2 and data["decision"]["decision"] == "manual"
    assert any("needs manual review" in n for n in data["notes"])


SAYS = """\
from agentassay._plugins import hookimpl


@hookimpl
def agentassay_start(run):
    run.say(f"about to run {len(run.states)} scenarios")
    raise RuntimeError("boom before the first trial")
"""


def test_agentassay_start_says_before_the_first_trial_and_its_failure_is_a_note(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(site, "says", SAYS)
    suite, out = suite_file(tmp_path), tmp_path / "r.json"
    main(["run", str(suite), "-o", str(out), "--no-store"])
    err = capsys.readouterr().err.splitlines()
    said = err.index("[agentassay] about to run 2 scenarios")
    assert all(not line.startswith("[agentassay ") for line in err[:said])  # before any progress line
    data = json.loads(out.read_text())
    assert sum(len(s["trials"]) for s in data["scenarios"]) == 60  # the run went on
    assert any("raised in agentassay_start: RuntimeError: boom before the first trial" in n for n in data["notes"])


def test_a_plugin_owns_a_suite_key_and_validates_it(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = suite_file(tmp_path, "length_limit: lots")
    assert main(["run", str(suite), "--no-store", "-q"]) == 3
    assert "unknown key" in capsys.readouterr().err  # nobody owns it yet
    install(site, "thirdparty", PLUGIN)
    assert main(["run", str(suite), "--no-store", "-q"]) == 3
    err = capsys.readouterr().err
    assert f"{suite}:8: config.length_limit: expected an integer number of characters" in err
    suite_file(tmp_path, "length_limit: 200")
    assert main(["run", str(suite), "--no-store", "-q"]) == 0


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("raise ImportError('no module named shiny')\n", ["could not be loaded", "ImportError", "-p no:bad"]),
        (
            "from agentassay._plugins import hookimpl\n\n@hookimpl\ndef agentassay_trial_finishd(run):\n    pass\n",
            ["plugin 'bad'", "agentassay_trial_finishd", "unknown hook"],
        ),
        (
            "from agentassay._plugins import hookimpl\n\n@hookimpl\ndef agentassay_prepare(run, banana):\n    pass\n",
            ["plugin 'bad'", "banana"],
        ),
        (
            "from agentassay._plugins import hookimpl\n\n@hookimpl(hookwrapper=True)\ndef agentassay_prepare(run):\n"
            "    yield\n",
            ["plugin 'bad'", "old-style hook wrapper", "wrapper=True"],
        ),
    ],
)
def test_a_bad_plugin_is_exit_3_naming_it(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, words: list[str]
) -> None:
    install(site, "bad", source)
    assert main(["run", str(suite_file(tmp_path)), "--no-store", "-q"]) == 3
    err = capsys.readouterr().err
    assert all(w in err for w in words), err


def test_a_plain_run_loads_only_the_builtins_it_needs() -> None:
    from agentassay._runner._run import RunOptions, _Probe
    from agentassay._spec import parse_suite

    suite = parse_suite(SUITE.format(config=""))
    hooks = Plugins(entry_points=False).for_run(_Probe(suite, RunOptions("tests._support.fixture_agents:always_ok")))
    assert hooks.names == ["fingerprints", "coverage"]
    assert set(builtin_names()) == {
        "store",
        "budget",
        "warm_start",
        "pool",
        "fingerprints",
        "proxy",
        "coverage",
        "contracts",
        "judge",
        "metamorphic",
        "mutation",
        "alerts",
        "shards",
        "analyze",
        "plan",
    }


# A new-style hook wrapper (pluggy's wrapper=True): it sees every implementation's result and annotates it.
WRAPPER = """\
from agentassay._plugins import StashKey, hookimpl

SEEN = StashKey[list]()


@hookimpl(wrapper=True)
def agentassay_trial_finished(run, outcome):
    run.stash.setdefault(SEEN, []).append(outcome.index)
    return (yield)


@hookimpl(wrapper=True)
def agentassay_results_sections(run):
    sections = yield
    keys = sorted(k for s in sections for k in s)
    return [*sections, {"wrapped": {"trials_seen": len(run.stash[SEEN]), "sections_seen": keys}}]
"""

BROKEN_WRAPPER = """\
from agentassay._plugins import hookimpl


@hookimpl(wrapper=True)
def agentassay_results_sections(run):
    yield
    raise RuntimeError("boom after the yield")
"""


def test_a_hook_wrapper_sees_and_annotates_every_implementations_result(site: Path, tmp_path: Path) -> None:
    install(site, "wrapper", WRAPPER)
    suite, out = suite_file(tmp_path), tmp_path / "r.json"
    assert main(["run", str(suite), "-o", str(out), "--no-store", "-q", "--shard", "1/1"]) == 0
    data = json.loads(out.read_text())
    assert data["wrapped"] == {"trials_seen": 60, "sections_seen": ["coverage", "shard"]}


def test_a_hook_wrapper_that_raises_is_isolated_like_any_implementation(site: Path, tmp_path: Path) -> None:
    install(site, "brokenwrapper", BROKEN_WRAPPER)
    suite, out = suite_file(tmp_path), tmp_path / "r.json"
    assert main(["run", str(suite), "-o", str(out), "--no-store", "-q", "--shard", "1/1"]) == 2
    data = json.loads(out.read_text())
    assert data["shard"]["count"] == 1  # the other plugins' sections went on as if the wrapper were not there
    note = next(n for n in data["notes"] if "plugin 'brokenwrapper'" in n)
    assert "raised in agentassay_results_sections: RuntimeError: boom after the yield" in note


class _Spec:
    """A firstresult hook and a chained one, on the manager the run's hooks use."""

    @hookspec(firstresult=True)
    def agentassay_first(self, x: int) -> int | None:  # type: ignore[empty-body]
        ...


def _hooks(*plugins: object) -> Hooks:
    import pluggy

    from agentassay._plugins import _hookspecs

    pm = pluggy.PluginManager(_hookspecs.PROJECT)
    pm.add_hookspecs(_hookspecs)
    pm.add_hookspecs(_Spec)
    for i, plugin in enumerate(plugins):
        pm.register(plugin, name=f"p{i}")
    return Hooks(pm)


def test_pluggys_order_firstresult_and_the_chained_decision_go_through_the_guard() -> None:
    class Plain:
        def __init__(self, out: int | None, fail: bool = False) -> None:
            self.out, self.fail = out, fail

        @hookimpl
        def agentassay_first(self, x: int) -> int | None:
            if self.fail:
                raise ValueError("bad first")
            return None if self.out is None else x + self.out

        @hookimpl
        def agentassay_decide_files(self, decision: str, notes: list[str]) -> str | None:
            notes.append(decision)
            if self.fail:
                raise ValueError("bad decide")
            return None if self.out is None else f"{decision}+{self.out}"

    class Early:
        @hookimpl(tryfirst=True)
        def agentassay_first(self, x: int) -> int:
            return -x

    # Registered last is called first (pluggy's order); tryfirst goes before all; firstresult stops there.
    hooks = _hooks(Plain(1), Plain(2), Early())
    assert hooks.call("agentassay_first", x=10) == -10
    assert _hooks(Plain(1), Plain(None)).call("agentassay_first", x=10) == 11
    # A failing implementation is disabled and returns None: firstresult goes on to the next one.
    hooks = _hooks(Plain(1), Plain(5, fail=True))
    assert hooks.call("agentassay_first", x=10) == 11
    assert [f.note() for f in hooks.failures] == [
        "plugin 'p1' raised in agentassay_first: ValueError: bad first; it was disabled for the rest of the run "
        "and every trial measured is kept"
    ]
    # Chained: each gets what the previous returned (None keeps it); the disabled plugin is skipped.
    notes: list[str] = []
    assert hooks.chain("agentassay_decide_files", "decision", "d", plan=None, candidate=None, notes=notes) == "d+1"
    assert notes == ["d"]
    notes = []
    hooks = _hooks(Plain(1), Plain(None), Plain(2))
    assert hooks.chain("agentassay_decide_files", "decision", "d", plan=None, candidate=None, notes=notes) == "d+2+1"
    assert notes == ["d", "d+2", "d+2"]


def test_propagate_lets_input_errors_through_the_guard() -> None:
    from agentassay._spec import SpecError

    class Bad:
        @hookimpl
        def agentassay_first(self, x: int) -> int:
            raise SpecError("bad input")

    hooks = _hooks(Bad())
    with pytest.raises(SpecError):
        hooks.call("agentassay_first", x=1, propagate=(SpecError,))
    assert hooks.failures == []
    assert hooks.call("agentassay_first", x=1) is None and hooks.failures[0].plugin == "p0"


def test_the_stash_is_keyed_by_the_key_object() -> None:
    stash, a, b = Stash(), StashKey[int](), StashKey[str]()
    stash[a] = 1
    assert stash[a] == 1 and a in stash and b not in stash and stash.get(b, "none") == "none"
    assert stash.setdefault(b, "x") == "x" and stash.setdefault(b, "y") == "x" and len(stash) == 2
    del stash[a]
    with pytest.raises(KeyError):
        stash[a]
