"""`agentassay mutate`: the operator registry, stochastic kills through the check gate, not-activated
mutants, bad input (exit 3), skipped operators, and no mutant leaking into the user's objects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentassay._features.mutation import CLASSES, Target, generate, parse_config
from agentassay._integrations.cli import main
from agentassay._spec import load_suite, parse_suite

ROOT = Path(__file__).resolve().parents[3]
CS = ROOT / "examples" / "customer_service" / "agentassay.yml"

PROMPTED = """\
name: prompted
agent: tests._support.prompted_agent:agent
config:
  trials: 60
  concurrency: 4
  seed: 3
mutation:
  prompts: ["tests._support.prompted_agent:SYSTEM_PROMPT"]
  operators: [prompt, tool, model, context]
scenarios:
  - name: refund
    input: "Can I get my money back?"
    evaluator:
      - contains: refund
"""


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))


def snapshot(agent: object) -> list[tuple[str, str, tuple[str, ...], int]]:
    from agentassay._integrations.adapters._openai_agents import _reachable

    return [(a.name, str(a.instructions), tuple(getattr(t, "description", "") for t in a.tools), len(a.handoffs))
            for a in _reachable(agent)]


@pytest.mark.usefixtures("in_root")
def test_mutate_the_example_kills_tool_removal_and_the_downgrade_and_leaves_the_user_objects_alone(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    from examples.customer_service import v1

    before = snapshot(v1.triage_agent)
    out = tmp_path / "m.json"
    assert main(["mutate", str(CS), "--operators", "prompt,tool,model", "-q", "-o", str(out)]) == 0
    section = json.loads(out.read_text())["mutation"]
    status = {m["id"]: m for m in section["mutants"]}
    for mid in ("tool.remove(faq_agent,faq_lookup_tool)", "tool.remove(seat_booking_agent,update_seat)",
                "model.downgrade(offline_mini)"):
        assert status[mid]["status"] == "killed", status[mid]
        assert status[mid]["trials"] < 400  # the early kill stopped the mutant's check
    prompts = [m for m in section["mutants"] if m["class"] == "prompt"]
    assert prompts and all(m["status"] == "not_activated" and m["trials"] == 0 for m in prompts)
    assert all("offline simulator does not read instructions" in m["reason"] for m in prompts)
    assert {m["operator"] for m in prompts} == {"synonym", "reorder", "noise", "dropout"}
    overall = section["scores"]["overall"]
    assert overall["killed"] <= overall["activated"] and 0 <= overall["interval"][0] <= overall["score"] <= overall["interval"][1]
    assert section["scores"]["by_class"]["prompt"]["score"] is None  # nothing activated: no score, not 0 or 1
    assert snapshot(v1.triage_agent) == before  # clones only: the user's agents are untouched
    # the report renders the section from the file
    from agentassay._reports import render_table
    from agentassay._results import load_results

    table = render_table(load_results(out))
    assert "Mutation testing:" in table and "KILLED: tool.remove(faq_agent,faq_lookup_tool)" in table


@pytest.mark.usefixtures("in_root")
def test_a_prompt_string_of_a_plain_callable_is_patched_only_while_its_mutant_runs(tmp_path: Path) -> None:
    from tests._support import prompted_agent

    original = prompted_agent.SYSTEM_PROMPT
    suite = tmp_path / "agentassay.yml"
    suite.write_text(PROMPTED)
    out = tmp_path / "m.json"
    assert main(["mutate", str(suite), "-q", "-o", str(out)]) == 0
    assert original == prompted_agent.SYSTEM_PROMPT  # restored after the run
    section = json.loads(out.read_text())["mutation"]
    by_op = {m["operator"]: m for m in section["mutants"] if m["class"] == "prompt"}
    # dropping line 1 ("Always mention the refund policy.") kills the test; the others change nothing it sees
    dropped = by_op["dropout"]
    assert ("instruction 1" in dropped["diff"]) == (dropped["status"] == "killed")
    assert by_op["noise"]["status"] in ("not_activated", "survived")
    notes = " ".join(section["notes"])
    assert "tool: a plain-callable agent has no tools" in notes and "model: no models named" in notes


def test_operators_are_deterministic() -> None:
    pytest.importorskip("agents")
    from agentassay._integrations.adapters import load_adapter

    suite = load_suite(CS)
    config = parse_config(suite)
    adapter = load_adapter(suite.agent.entry, search=[ROOT], model=suite.model, root=suite.root)

    def ids() -> list[tuple[str, str]]:
        t = Target(suite, suite.agent.entry, adapter, config, suite.settings.seed, lambda m: None)
        return [(m.id, m.diff) for m in generate(t)]

    first = ids()
    assert first == ids() and len(first) >= 30
    assert {m.split(".")[0] for m, _ in first} == set(CLASSES)


def test_one_registry_and_one_mutant_type_for_the_structural_mutants() -> None:
    """The config's classes are the registry's keys; a ``structure`` mutant is the registry's ``Mutant``
    carrying the very edit ``structural_mutants`` (and so ``mutation_analysis``) makes."""
    pytest.importorskip("agents")
    from agentassay._features.mutation import OPERATORS, structural_mutants
    from agentassay._features.structure import extract_manifest
    from agentassay._integrations.adapters import load_adapter

    assert tuple(OPERATORS) == CLASSES
    suite = load_suite(CS)
    config = parse_config(suite, classes="structure")
    adapter = load_adapter(suite.agent.entry, search=[ROOT], model=suite.model, root=suite.root)
    t = Target(suite, suite.agent.entry, adapter, config, suite.settings.seed, lambda m: None)
    mutants = generate(t)
    edits = structural_mutants(extract_manifest(adapter.agent, system=suite.name))
    assert [m.edit for m in mutants] == list(edits) and edits
    assert [m.id for m in mutants] == [f"structure.{e.id}" for e in edits]


@pytest.mark.parametrize(
    ("edit", "args", "words"),
    [
        (None, ["--operators", "prompt,tols"], ["--operators", "unknown operator class 'tols'", "Did you mean 'tool'"]),
        ("  prompts: [42]\n", [], ["mutation.prompts", "module:ATTR"]),
        ("  prompts: [\"no_such_module_xyz:PROMPT\"]\n", [], ["no_such_module_xyz", "mutation.prompts"]),
        ("  prompts: [\"tests._support.prompted_agent:agent\"]\n", [], ["tests._support.prompted_agent:agent", "not a string"]),
        ("  models: [{name: other}]\n", [], ["mutation.models[0]", "not configured", "behaviour: module:ATTR"]),
        ("  modles: []\n", [], ["mutation.modles", "Did you mean 'models'"]),
    ],
)
@pytest.mark.usefixtures("in_root")
def test_bad_input_is_exit_3_naming_the_key_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str | None, args: list[str], words: list[str]
) -> None:
    text = PROMPTED.replace('  prompts: ["tests._support.prompted_agent:SYSTEM_PROMPT"]\n', edit or '  prompts: ["tests._support.prompted_agent:SYSTEM_PROMPT"]\n')
    suite = tmp_path / "agentassay.yml"
    suite.write_text(text)
    assert main(["mutate", str(suite), "-q", *args]) == 3
    err = capsys.readouterr().err
    assert all(w in err for w in words), err


def test_an_empty_mutation_section_is_fine() -> None:
    suite = parse_suite("agent: a.b:c\nmutation: {}\nscenarios:\n  - input: hi\n    evaluator: {contains: x}\n")
    assert parse_config(suite).classes == CLASSES


@pytest.mark.usefixtures("in_root")
def test_the_budget_caps_the_whole_analysis(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    out = tmp_path / "m.json"
    # The original alone costs more than this: it stops at the budget, and no mutant starts.
    assert main(["mutate", str(CS), "--operators", "context", "--budget-usd", "0.002", "-q", "-o", str(out)]) == 0
    section = json.loads(out.read_text())["mutation"]
    assert section["mutants"] and all(m["status"] == "not_run" and "budget" in m["reason"] for m in section["mutants"])
    assert section["scores"]["overall"]["score"] is None
