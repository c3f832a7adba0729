"""The workflow manifest: Listing 1 parses, dumps back, and every ill-formed input names all offenders."""

from __future__ import annotations

import copy
import pickle
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentassay._features.structure import AgentNode, Delegation, Manifest, ToolNode
from agentassay._features.structure._manifest import (
    CLOSED_WORLD_NOTE,
    ManifestError,
    check_manifest,
    derive_restrictions,
    dump_manifest,
    load_manifest,
    manifest_to_data,
    parse_manifest,
)

# The paper's Listing 1, verbatim.
LISTING_1 = """\
system:
  id: oai_customer_service
  entry_agent: triage_agent

agents:
  - id: triage_agent
  - id: faq_agent
  - id: seat_booking_agent

tools:
  - id: faq_lookup_tool
  - id: update_seat

permissions:
  allow:
    - [faq_agent, faq_lookup_tool]
    - [seat_booking_agent, update_seat]

  restrict:
    - [triage_agent, faq_lookup_tool]
    - [triage_agent, update_seat]
    - [faq_agent, update_seat]
    - [seat_booking_agent, faq_lookup_tool]

delegations:
  - {from: triage_agent, to: faq_agent, trigger: delegate}
  - {from: faq_agent, to: triage_agent, trigger: delegate}
  - {from: triage_agent, to: seat_booking_agent, trigger: delegate}
  - {from: seat_booking_agent, to: triage_agent, trigger: delegate}
"""

RESTRICT_1 = (
    ("triage_agent", "faq_lookup_tool"),
    ("triage_agent", "update_seat"),
    ("faq_agent", "update_seat"),
    ("seat_booking_agent", "faq_lookup_tool"),
)


def listing() -> dict[str, Any]:
    return yaml.safe_load(LISTING_1)


def error_of(data: Any, **kwargs: Any) -> ManifestError:
    with pytest.raises(ManifestError) as info:
        parse_manifest(data, **kwargs)
    return info.value


# -- parsing and dumping --------------------------------------------------------------------------
def test_listing_1_parses_to_the_papers_graph() -> None:
    m = parse_manifest(listing())
    assert m.system == "oai_customer_service" and m.entry_agent == "triage_agent"
    assert m.agents == (
        AgentNode("triage_agent", "triage_agent"),
        AgentNode("faq_agent", "faq_agent"),
        AgentNode("seat_booking_agent", "seat_booking_agent"),
    )
    assert m.tools == (ToolNode("faq_lookup_tool", "faq_lookup_tool"), ToolNode("update_seat", "update_seat"))
    assert m.allow == (("faq_agent", "faq_lookup_tool"), ("seat_booking_agent", "update_seat"))
    assert m.restrict == RESTRICT_1
    assert [d.edge for d in m.delegations] == [
        ("triage_agent", "faq_agent"),
        ("faq_agent", "triage_agent"),
        ("triage_agent", "seat_booking_agent"),
        ("seat_booking_agent", "triage_agent"),
    ]
    assert all(d.via == "declared" and d.trigger == "delegate" and d.tool is None for d in m.delegations)
    assert len(m.agents) + len(m.allow) + len(m.restrict) + len(m.delegations) == 13
    assert m.source is None and m.notes == ()


def test_dump_of_listing_1_is_listing_1() -> None:
    """Defaults are omitted, pairs and delegations stay on one line: the paper's own rendering."""
    text = dump_manifest(parse_manifest(listing()))
    assert text == LISTING_1.replace("\n\n", "\n")


RICH = Manifest(
    system="desk",
    entry_agent="boss",
    agents=(
        AgentNode("boss", "Boss", "coordinator", "Runs the show."),
        AgentNode("checker", "Fact Checker", "agent", "Checks quotes."),
        AgentNode("checker_2", "Fact Checker"),
        AgentNode("no", "yes"),  # YAML 1.1 booleans must survive the round trip as strings
    ),
    tools=(
        ToolNode("web_search", "web_search", "hosted"),
        ToolNode(
            "check",
            "check",
            "function",
            "Check it.",
            {"type": "object", "properties": {"q": {"type": "string"}}},
        ),
        ToolNode("mcp_fs", "read_file", "mcp"),
        ToolNode("on", "null", "other", "", {}),
    ),
    allow=(("checker", "check"), ("checker_2", "web_search"), ("no", "on")),
    restrict=(("checker", "web_search"),),
    delegations=(
        Delegation("boss", "checker", "call"),
        Delegation("checker", "checker_2", "handoff", "escalate", "transfer_to_fact_checker"),
        Delegation("checker", "checker_2", "as_tool", "delegate", "ask"),
        Delegation("checker_2", "no"),
    ),
    notes=("hand-written", "second note"),
    source="somewhere.yml",
)


@pytest.mark.parametrize("manifest", [RICH, Manifest("s", "a", (AgentNode("a", "a"),))])
def test_round_trip_equals_except_source(manifest: Manifest) -> None:
    back = parse_manifest(yaml.safe_load(dump_manifest(manifest)))
    assert back.source is None
    assert back == Manifest(**{**manifest.__dict__, "source": None})


def test_dump_omits_defaults_and_keeps_schema() -> None:
    data = manifest_to_data(RICH)
    assert data["agents"][2] == {"id": "checker_2", "name": "Fact Checker"}
    assert data["tools"][0] == {"id": "web_search", "kind": "hosted"}
    assert data["tools"][1]["schema"] == {"type": "object", "properties": {"q": {"type": "string"}}}
    assert data["tools"][3]["schema"] == {}  # an empty schema is still a schema
    assert type(data["permissions"]["allow"][0]) is list and type(data["delegations"][0]) is dict
    assert yaml.safe_load(yaml.safe_dump(data)) == data  # plain data: any YAML/JSON writer takes it
    assert data["delegations"][3] == {"from": "checker_2", "to": "no", "trigger": "delegate"}
    assert (
        data["delegations"][1]["via"] == "handoff"
        and data["delegations"][1]["tool"] == "transfer_to_fact_checker"
    )


def test_schema_is_copied_not_aliased() -> None:
    data = listing()
    schema = {"type": "object", "properties": {}}
    data["tools"][0]["schema"] = schema
    m = parse_manifest(data)
    schema["type"] = "changed"
    assert m.tools[0].schema == {"type": "object", "properties": {}}


def test_bare_string_entries_and_names() -> None:
    data = listing()
    data["agents"] = ["triage_agent", {"id": "faq_agent", "name": "FAQ Agent"}, "seat_booking_agent"]
    m = parse_manifest(data)
    assert m.agents[0] == AgentNode("triage_agent", "triage_agent")
    assert m.agent_ids_named("FAQ Agent") == ("faq_agent",)


def test_source_is_recorded() -> None:
    assert parse_manifest(listing(), source="x/manifest.yml").source == "x/manifest.yml"


# -- well-formedness ------------------------------------------------------------------------------
def test_conflicting_pairs_are_all_listed_with_field_and_fix() -> None:
    data = listing()
    data["permissions"]["allow"] += [["faq_agent", "update_seat"], ["triage_agent", "faq_lookup_tool"]]
    err = error_of(data, source="examples/x/manifest.yml")
    assert str(err) == (
        "examples/x/manifest.yml: permissions: 2 agent–tool pairs are both allowed and restricted: "
        "(faq_agent, update_seat), (triage_agent, faq_lookup_tool). "
        "Fix: remove each pair from either permissions.allow or permissions.restrict."
    )
    assert err.source == "examples/x/manifest.yml" and err.field == "permissions"
    assert err.problems == ["(faq_agent, update_seat)", "(triage_agent, faq_lookup_tool)"]
    assert err.fix == "remove each pair from either permissions.allow or permissions.restrict"
    assert isinstance(err, ValueError)


def test_undeclared_endpoints_are_all_listed_with_end_and_suggestion() -> None:
    data = listing()
    data["permissions"]["allow"].append(["faq_agnt", "faq_lookup_tool"])
    data["permissions"]["restrict"].append(["triage_agent", "update_sea"])
    data["delegations"].append({"from": "triage", "to": "billing_agent"})
    err = error_of(data)
    assert err.field == "permissions.allow, permissions.restrict, delegations"
    assert err.problems == [
        "permissions.allow[2] (faq_agnt, faq_lookup_tool): agent 'faq_agnt' is not a declared agent "
        "(did you mean 'faq_agent'?)",
        "permissions.restrict[4] (triage_agent, update_sea): tool 'update_sea' is not a declared tool "
        "(did you mean 'update_seat'?)",
        "delegations[4] triage → billing_agent: from 'triage' is not a declared agent (did you mean 'triage_agent'?)",
        "delegations[4] triage → billing_agent: to 'billing_agent' is not a declared agent",
    ]
    assert "4 edge endpoints do not name a declared node" in str(err)
    assert "declare each missing agent under 'agents:'" in err.fix


def test_agent_in_the_tool_slot_and_tool_in_a_delegation() -> None:
    data = listing()
    data["permissions"]["allow"].append(["faq_agent", "seat_booking_agent"])
    data["delegations"].append({"from": "faq_agent", "to": "update_seat"})
    err = error_of(data)
    assert err.problems == [
        "permissions.allow[2] (faq_agent, seat_booking_agent): tool 'seat_booking_agent' is an agent, not a tool",
        "delegations[4] faq_agent → update_seat: to 'update_seat' is a tool, not an agent",
    ]
    assert "permission pairs are [agent, tool]" in err.fix


def test_duplicate_ids_are_all_listed() -> None:
    data = listing()
    data["agents"] += [{"id": "faq_agent"}, {"id": "update_seat"}]
    data["tools"].append({"id": "update_seat"})
    err = error_of(data)
    assert err.field == "agents, tools"
    assert err.problems == [
        "'faq_agent' is declared 2 times (agents[1], agents[3])",
        "'update_seat' is declared 2 times (tools[1], tools[2])",
        "'update_seat' is both an agent id and a tool id",
    ]
    assert "own id" in err.fix


def test_entry_agent_must_be_a_declared_agent() -> None:
    data = listing()
    data["system"]["entry_agent"] = "triage"
    err = error_of(data)
    assert err.field == "system.entry_agent"
    assert err.problems == ["'triage' is not a declared agent (did you mean 'triage_agent'?)"]
    data["system"]["entry_agent"] = "update_seat"
    assert error_of(data).problems == ["'update_seat' is a tool, not an agent"]


def test_unknown_keys_everywhere_with_suggestions() -> None:
    data = listing()
    data["delegation"] = []
    data["system"]["entry"] = "x"
    data["agents"][1]["knd"] = "agent"
    data["tools"][0]["parameters"] = {}
    data["permissions"]["allowed"] = []
    data["delegations"][2]["source"] = "x"
    data["delegations"][3]["zzz"] = 1
    err = error_of(data)
    assert err.problems == [
        "unknown key 'delegation' (did you mean 'delegations'?)",
        "system: unknown key 'entry' (did you mean 'entry_agent'?)",
        "agents[1]: unknown key 'knd' (did you mean 'kind'?)",
        "tools[0]: unknown key 'parameters' (did you mean 'schema'?)",
        "permissions: unknown key 'allowed' (did you mean 'allow'?)",
        "delegations[2]: unknown key 'source' (did you mean 'from'?)",
        "delegations[3]: unknown key 'zzz' (known keys: from, to, trigger, via, tool)",
    ]
    assert err.field == "(top level), system, agents, tools, permissions, delegations"
    assert "docs/coverage.md#writing-a-manifest" in err.fix


def test_wrong_types_say_what_was_expected() -> None:
    data = listing()
    data["system"]["id"] = 7
    data["agents"][0]["kind"] = "cordinator"
    data["agents"].append(["not", "a", "mapping"])
    data["tools"][1]["schema"] = "object"
    data["permissions"]["allow"][0] = ["faq_agent"]
    data["permissions"]["restrict"] = "everything"
    data["delegations"][0]["via"] = "handof"
    data["delegations"][1] = "faq_agent -> triage_agent"
    data["notes"] = [1]
    err = error_of(data)
    assert err.problems == [
        "system.id: expected a string, got a number 7 (quote it to keep it a string)",
        "agents[0].kind: expected one of agent, coordinator, got 'cordinator' (did you mean 'coordinator'?)",
        "agents[3]: expected a mapping with an 'id', got a list ['not', 'a', 'mapping']",
        "tools[1].schema: expected a mapping (a JSON schema), got a string",
        "permissions.allow[0]: expected an [agent, tool] pair of two ids, got ['faq_agent']",
        "permissions.restrict: expected a list of [agent, tool] pairs or the string 'derive', got 'everything'",
        "delegations[0].via: expected one of handoff, as_tool, call, declared, got 'handof' (did you mean 'handoff'?)",
        "delegations[1]: expected a mapping like {from: a, to: b}, got 'faq_agent -> triage_agent'",
        "notes[0]: expected a string, got a number",
    ]
    assert (
        err.field == "system.id, agents, tools, permissions.allow, permissions.restrict, delegations, notes"
    )
    assert str(err).startswith(f"<manifest>: {err.field}: 9 problems with keys or types: system.id: expected")


def test_missing_sections_and_non_mapping_document() -> None:
    err = error_of({"agents": [{"id": "a"}]})
    assert err.problems == ["system: expected a mapping with 'id' and 'entry_agent', missing"]
    err = error_of({"system": {"id": "s"}})
    assert err.problems == [
        "system.entry_agent: missing; expected a string",
        "agents: missing; expected a list with at least the entry agent",
    ]
    assert error_of(["a", "list"]).problems[0].endswith("got a list")
    assert "agents: expected a list of mappings" in str(
        error_of({"system": {"id": "s", "entry_agent": "a"}, "agents": "a"})
    )


def test_duplicate_edges_are_errors_but_parallel_delegations_are_not() -> None:
    data = listing()
    data["permissions"]["allow"].append(["faq_agent", "faq_lookup_tool"])
    data["delegations"].append({"from": "triage_agent", "to": "faq_agent", "trigger": "delegate"})
    err = error_of(data)
    assert err.problems == [
        "permissions.allow: (faq_agent, faq_lookup_tool) is listed 2 times",
        "delegations: triage_agent → faq_agent (via declared) is listed 2 times",
    ]
    ok = listing()  # the same edge by handoff and by as_tool is two ways to delegate, not a duplicate
    ok["delegations"] += [
        {"from": "triage_agent", "to": "faq_agent", "via": "handoff"},
        {"from": "triage_agent", "to": "faq_agent", "via": "as_tool", "tool": "ask_faq"},
    ]
    assert len(parse_manifest(ok).delegations) == 6


def test_check_manifest_validates_objects_too() -> None:
    bad = Manifest("s", "a", (AgentNode("a", "a"),), allow=(("a", "t"),))
    with pytest.raises(ManifestError, match=r"tool 't' is not a declared tool"):
        check_manifest(bad)
    good = parse_manifest(listing())
    assert check_manifest(good) is good


def test_manifest_error_pickles() -> None:
    data = listing()
    data["system"]["entry_agent"] = "nobody"
    err = error_of(data)
    back = pickle.loads(pickle.dumps(err))
    assert (back.source, back.field, back.problems, back.fix, str(back)) == (
        err.source,
        err.field,
        err.problems,
        err.fix,
        str(err),
    )


# -- closed-world restrictions --------------------------------------------------------------------
def test_derive_reproduces_listing_1() -> None:
    data = listing()
    del data["permissions"]["restrict"]
    m = parse_manifest(data, derive_restrictions=True)
    assert m.restrict == RESTRICT_1
    assert m.notes == (CLOSED_WORLD_NOTE,)
    assert "closed-world" in CLOSED_WORLD_NOTE
    data["permissions"]["restrict"] = "derive"
    assert parse_manifest(data) == m
    plain = parse_manifest({**data, "permissions": {"allow": data["permissions"]["allow"]}})
    assert plain.restrict == () and derive_restrictions(plain) == m


def test_derive_keeps_existing_without_duplicates_and_is_idempotent() -> None:
    data = listing()
    data["tools"].append({"id": "audit_log"})  # allowed to nobody: not derived
    data["permissions"]["restrict"] = [["seat_booking_agent", "faq_lookup_tool"], ["faq_agent", "audit_log"]]
    m = parse_manifest(data, derive_restrictions=True)
    assert m.restrict == (
        ("triage_agent", "faq_lookup_tool"),
        ("triage_agent", "update_seat"),
        ("faq_agent", "update_seat"),
        ("faq_agent", "audit_log"),
        ("seat_booking_agent", "faq_lookup_tool"),
    )
    assert derive_restrictions(m) == m  # no second note, no duplicates


def test_derive_skips_coordinators_and_shared_tools() -> None:
    m = Manifest(
        "s",
        "boss",
        (
            AgentNode("boss", "Boss", "coordinator"),
            AgentNode("a", "a"),
            AgentNode("b", "b"),
            AgentNode("c", "c"),
        ),
        (ToolNode("t", "t"), ToolNode("u", "u")),
        allow=(("a", "t"), ("b", "t"), ("c", "u")),
        delegations=(Delegation("boss", "a", "call"),),
    )
    assert derive_restrictions(m).restrict == (("a", "u"), ("b", "u"), ("c", "t"))
    assert m.restrict == ()  # the input is not changed


# -- files ----------------------------------------------------------------------------------------
def test_load_manifest_from_file(tmp_path: Path) -> None:
    path = tmp_path / "manifest.yml"
    path.write_text(LISTING_1, encoding="utf-8")
    m = load_manifest(path)
    assert m.source == str(path) and m.restrict == RESTRICT_1
    no_restrict = LISTING_1.split("  restrict:")[0] + "\ndelegations: []\n"
    path.write_text(no_restrict, encoding="utf-8")
    assert load_manifest(path, derive_restrictions=True).restrict == RESTRICT_1


def test_load_manifest_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yml"
    with pytest.raises(ManifestError, match=r"nope\.yml: cannot read the manifest: the file does not exist"):
        load_manifest(missing)
    with pytest.raises(ManifestError, match="it is a folder"):
        load_manifest(tmp_path)
    bad = tmp_path / "bad.yml"
    bad.write_text(textwrap.dedent("system:\n  id: [unclosed\nagents: []\n"), encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        load_manifest(bad)
    assert info.value.source == str(bad)
    assert str(info.value).startswith(f"{bad}: invalid YAML: line ")
    empty = tmp_path / "empty.yml"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(ManifestError, match="the file is empty"):
        load_manifest(empty)
    conflicting = tmp_path / "c.yml"
    data = listing()
    data["permissions"]["allow"].append(["triage_agent", "update_seat"])
    conflicting.write_text(yaml.safe_dump(copy.deepcopy(data)), encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        load_manifest(conflicting)
    assert str(info.value).startswith(f"{conflicting}: permissions: 1 agent–tool pair is both allowed")
