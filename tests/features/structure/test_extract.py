"""Manifest extraction from OpenAI Agents SDK objects and Python coordinators."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    FileSearchTool,
    RunConfig,
    Runner,
    WebSearchTool,
    function_tool,
    handoff,
)

from agentassay._features.structure import AgentNode, Delegation, Manifest, ToolNode
from agentassay._features.structure._extract import ExtractError, extract_manifest, slug
from agentassay._features.structure._manifest import (
    CLOSED_WORLD_NOTE,
    check_manifest,
    dump_manifest,
    load_manifest,
)
from agentassay._integrations.adapters._offline import Behaviour, OfflineModel
from agentassay._integrations.adapters._resolve import AgentLoadError
from tests._support.sdk_examples.financial_research_agent.agents.writer_agent import writer_agent
from tests._support.sdk_examples.financial_research_agent.manager import FinancialResearchManager

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `examples` sits at the repository root, outside the package

CUSTOMER_SERVICE = "examples.customer_service.v1:triage_agent"
RESEARCH_DESK = "examples.research_desk.workflow:manager"


def without_source(m: Manifest) -> Manifest:
    return Manifest(**{**m.__dict__, "source": None})


# -- the paper's running example ------------------------------------------------------------------
def test_customer_service_matches_listing_1() -> None:
    m = extract_manifest(CUSTOMER_SERVICE)
    assert m.system == "customer_service" and m.entry_agent == "triage_agent"
    assert m.source == CUSTOMER_SERVICE
    assert [a.id for a in m.agents] == ["triage_agent", "faq_agent", "seat_booking_agent"]
    assert [a.name for a in m.agents] == ["Triage Agent", "FAQ Agent", "Seat Booking Agent"]
    assert [(t.id, t.name, t.kind) for t in m.tools] == [
        ("faq_lookup_tool", "faq_lookup_tool", "function"),
        ("update_seat", "update_seat", "function"),
    ]
    assert set(m.allow) == {("faq_agent", "faq_lookup_tool"), ("seat_booking_agent", "update_seat")}
    assert set(m.restrict) == {
        ("triage_agent", "faq_lookup_tool"),
        ("triage_agent", "update_seat"),
        ("faq_agent", "update_seat"),
        ("seat_booking_agent", "faq_lookup_tool"),
    }
    assert {d.edge for d in m.delegations} == {
        ("triage_agent", "faq_agent"),
        ("faq_agent", "triage_agent"),
        ("triage_agent", "seat_booking_agent"),
        ("seat_booking_agent", "triage_agent"),
    }
    assert len(m.delegations) == 4
    assert all(d.via == "handoff" and d.trigger == "delegate" for d in m.delegations)
    assert {d.edge: d.tool for d in m.delegations}[("triage_agent", "faq_agent")] == "transfer_to_faq_agent"
    assert len(m.agents) + len(m.allow) + len(m.restrict) + len(m.delegations) == 13
    assert m.agent("faq_agent").description == "A helpful agent that can answer questions about the airline."
    schema = m.tool("update_seat").schema
    assert schema is not None and set(schema["properties"]) == {"confirmation_number", "new_seat"}
    assert CLOSED_WORLD_NOTE in m.notes


def test_customer_service_v2_has_the_same_structure() -> None:
    v1 = extract_manifest(CUSTOMER_SERVICE)
    v2 = extract_manifest("examples.customer_service.v2:triage_agent")
    assert without_source(v1) == without_source(v2)


def test_extracted_manifest_survives_dump_and_load(tmp_path: Path) -> None:
    m = extract_manifest(CUSTOMER_SERVICE)
    path = tmp_path / "manifest.yml"
    path.write_text(dump_manifest(m), encoding="utf-8")
    assert without_source(load_manifest(path)) == without_source(m)


def test_options_system_and_no_derivation() -> None:
    m = extract_manifest(CUSTOMER_SERVICE, system="oai_customer_service", derive_restrictions=False)
    assert m.system == "oai_customer_service"
    assert m.restrict == () and CLOSED_WORLD_NOTE not in m.notes


def test_agent_object_target() -> None:
    from examples.customer_service import v1

    m = extract_manifest(v1.triage_agent)
    assert m.source is None and m.system == "triage_agent"
    assert without_source(m) == without_source(extract_manifest(CUSTOMER_SERVICE, system="triage_agent"))


# -- the research desk: coordinator, hosted tool, as_tool, shared names ---------------------------
RESEARCH_DESK_AGENTS = (
    AgentNode(
        "research_manager",
        "ResearchManager",
        "coordinator",
        "Plans research for a query, then writes the report (two agent runs in plain Python).",
    ),
    AgentNode(
        "research_planner",
        "Research Planner",
        "agent",
        "Plans the research for a question and gathers sources.",
    ),
    AgentNode("report_writer", "Report Writer", "agent", "Writes the final report from research notes."),
    AgentNode(
        "fact_checker", "Fact Checker", "agent", "Checks that quotations are exact and correctly attributed."
    ),
    AgentNode("fact_checker_2", "Fact Checker", "agent", "Checks the figures and numbers in a draft report."),
    AgentNode("editor", "Editor", "agent", "Edits a draft for clarity and house style."),
)
RESEARCH_DESK_TOOLS = [
    ("web_search", "web_search", "hosted", ""),
    (
        "plan_searches",
        "plan_searches",
        "function",
        "Split a research topic into a short list of web searches to run.",
    ),
    ("check_quote", "check_quote", "function", "Check a quotation against the desk's quote archive."),
    (
        "check_figures",
        "check_figures",
        "function",
        "Check the numbers in a claim against the desk's reference figures.",
    ),
    (
        "lookup_style_rule",
        "lookup_style_rule",
        "function",
        "Look up the house style rule for a topic (numbers, quotes, headings).",
    ),
]
RESEARCH_DESK_ALLOW = (
    ("research_planner", "web_search"),
    ("research_planner", "plan_searches"),
    ("fact_checker", "check_quote"),
    ("fact_checker_2", "check_figures"),
    ("editor", "lookup_style_rule"),
)
RESEARCH_DESK_RESTRICT = (
    ("research_planner", "check_quote"),
    ("research_planner", "check_figures"),
    ("research_planner", "lookup_style_rule"),
    ("report_writer", "web_search"),
    ("report_writer", "plan_searches"),
    ("report_writer", "check_quote"),
    ("report_writer", "check_figures"),
    ("report_writer", "lookup_style_rule"),
    ("fact_checker", "web_search"),
    ("fact_checker", "plan_searches"),
    ("fact_checker", "check_figures"),
    ("fact_checker", "lookup_style_rule"),
    ("fact_checker_2", "web_search"),
    ("fact_checker_2", "plan_searches"),
    ("fact_checker_2", "check_quote"),
    ("fact_checker_2", "lookup_style_rule"),
    ("editor", "web_search"),
    ("editor", "plan_searches"),
    ("editor", "check_quote"),
    ("editor", "check_figures"),
)
RESEARCH_DESK_DELEGATIONS = (
    Delegation("research_manager", "research_planner", "call", "delegate", None),
    Delegation("research_manager", "report_writer", "call", "delegate", None),
    Delegation("research_planner", "fact_checker", "as_tool", "delegate", "verify_quote"),
    Delegation("report_writer", "fact_checker_2", "handoff", "delegate", "transfer_to_fact_checker"),
    Delegation("report_writer", "editor", "as_tool", "delegate", "edit_draft"),
    Delegation("fact_checker_2", "report_writer", "handoff", "delegate", "transfer_to_report_writer"),
)


@pytest.mark.parametrize("entry", [RESEARCH_DESK, "examples.research_desk.workflow:ResearchManager"])
def test_research_desk_manifest_exactly(entry: str) -> None:
    m = extract_manifest(entry)
    assert m.system == "research_desk"
    assert m.entry_agent == "research_manager"
    assert m.source == entry
    assert m.agents == RESEARCH_DESK_AGENTS
    assert m.agent_ids_named("Fact Checker") == ("fact_checker", "fact_checker_2")
    assert [(t.id, t.name, t.kind, t.description) for t in m.tools] == RESEARCH_DESK_TOOLS
    assert m.tool("web_search").schema is None
    assert m.tool("check_quote").schema == {
        "properties": {
            "quote": {"description": "The quoted words.", "title": "Quote", "type": "string"},
            "speaker": {
                "default": "",
                "description": "Who the quote is attributed to, if known.",
                "title": "Speaker",
                "type": "string",
            },
        },
        "required": ["quote", "speaker"],
        "title": "check_quote_args",
        "type": "object",
        "additionalProperties": False,
    }
    assert m.allow == RESEARCH_DESK_ALLOW
    assert m.restrict == RESEARCH_DESK_RESTRICT  # no restriction for the coordinator: it never calls tools
    assert m.delegations == RESEARCH_DESK_DELEGATIONS
    assert m.notes == (
        "ResearchManager is a Python coordinator: each agent it runs with Runner is a 'call' delegation "
        "from it (paper Sec. IV-B-d)",
        CLOSED_WORLD_NOTE,
    )
    assert len(m.agents) + len(m.allow) + len(m.restrict) + len(m.delegations) == 37
    assert check_manifest(m) is m


def test_research_desk_manifest_file_is_current() -> None:
    """The checked-in manifest.yml is what extraction gives (regenerate it when workflow.py changes)."""
    on_disk = load_manifest(ROOT / "examples" / "research_desk" / "manifest.yml")
    assert without_source(on_disk) == without_source(extract_manifest(RESEARCH_DESK))


def test_research_desk_runs_offline() -> None:
    """The example is importable and runnable without a network or API key (offline simulator)."""
    from examples.research_desk.workflow import OFFLINE_BEHAVIOUR, manager

    async def run(query: str, seed: int) -> str:
        config = RunConfig(model=OfflineModel(Behaviour(OFFLINE_BEHAVIOUR), seed), tracing_disabled=True)
        return await manager.run(query, run_config=config)

    figures = asyncio.run(run("How fast is the speed of light? I read 300000 km/s.", 0))
    assert figures == "Final report (figures checked). Reference figures: speed of light: 299,792 km/s"
    plain = asyncio.run(run("Write about house style for quotes.", 0))
    assert plain.startswith("Final report: Edited for house style")


# -- walking rules --------------------------------------------------------------------------------
@function_tool
def shared_lookup(query: str) -> str:
    """Look something up."""
    return query


def _named_tool(label: str) -> Any:
    @function_tool(name_override="lookup")
    def lookup(query: str) -> str:
        """Look it up."""
        return label + query

    return lookup


def test_slug() -> None:
    assert slug("Triage Agent") == "triage_agent"
    assert slug("FAQ Agent") == "faq_agent"
    assert slug("Seat Booking Agent") == "seat_booking_agent"
    assert slug("  --Weird!! name--  ") == "weird_name"
    assert slug("!!!") == "node"


def test_tool_identity_one_object_one_node_two_objects_two_nodes() -> None:
    one, two = _named_tool("a"), _named_tool("b")
    left = Agent(name="Left", tools=[shared_lookup, one])
    right = Agent(name="Right", tools=[shared_lookup, two])
    root = Agent(name="Root", handoffs=[left, right])
    m = extract_manifest(root, derive_restrictions=False)
    assert [(t.id, t.name) for t in m.tools] == [
        ("shared_lookup", "shared_lookup"),
        ("lookup", "lookup"),
        ("lookup_2", "lookup"),
    ]
    assert m.allow == (
        ("left", "shared_lookup"),
        ("left", "lookup"),
        ("right", "shared_lookup"),
        ("right", "lookup_2"),
    )
    derived = extract_manifest(root)
    assert derived.restrict == (("root", "shared_lookup"), ("root", "lookup"), ("root", "lookup_2"),
                                ("left", "lookup_2"), ("right", "lookup"))  # fmt: skip


def test_same_named_agents_get_suffixes_and_tool_ids_avoid_agent_ids() -> None:
    @function_tool(name_override="helper")
    def helper_tool(x: str) -> str:
        """Help."""
        return x

    a1 = Agent(name="Helper", tools=[helper_tool])
    a2 = Agent(name="Helper")
    a3 = Agent(name="Helper")
    root = Agent(name="Root", handoffs=[a1, handoff(a2)], tools=[a3.as_tool("ask_helper", "Ask.")])
    m = extract_manifest(root)
    assert [(a.id, a.name) for a in m.agents] == [
        ("root", "Root"),
        ("helper", "Helper"),
        ("helper_2", "Helper"),
        ("helper_3", "Helper"),
    ]
    assert [t.id for t in m.tools] == ["helper_4"]  # the tool's slug is taken by an agent
    assert m.delegations == (
        Delegation("root", "helper", "handoff", "delegate", "transfer_to_helper"),
        Delegation("root", "helper_2", "handoff", "delegate", "transfer_to_helper"),
        Delegation("root", "helper_3", "as_tool", "delegate", "ask_helper"),
    )


def test_hosted_tools_and_descriptions() -> None:
    agent = Agent(
        name="Searcher",
        instructions="\n  Search things.\nThen more.",
        tools=[WebSearchTool(), FileSearchTool(vector_store_ids=["vs_1"])],
    )
    m = extract_manifest(agent)
    assert m.agents == (AgentNode("searcher", "Searcher", "agent", "Search things."),)
    assert m.tools == (
        ToolNode("web_search", "web_search", "hosted"),
        ToolNode("file_search", "file_search", "hosted"),
    )


def test_unrecoverable_handoff_target_matched_by_name_or_noted() -> None:
    faq = Agent(name="FAQ Agent")
    lost = handoff(faq)
    lost._agent_ref = None  # as for a hand-built Handoff: only agent_name is known
    root = Agent(name="Root", handoffs=[lost], tools=[faq.as_tool("ask_faq", "Ask.")])
    m = extract_manifest(root, derive_restrictions=False)
    assert set(m.delegations) == {
        Delegation("root", "faq_agent", "as_tool", "delegate", "ask_faq"),
        Delegation("root", "faq_agent", "handoff", "delegate", "transfer_to_faq_agent"),
    }
    assert any("target agent not recoverable; matched 'FAQ Agent' by name" in n for n in m.notes)

    orphan = handoff(Agent(name="Ghost"))
    orphan._agent_ref = None
    m = extract_manifest(Agent(name="Root", handoffs=[orphan]))
    assert m.delegations == ()
    assert any("no reachable agent has the name 'Ghost'; edge left out" in n for n in m.notes)


# -- coordinators ---------------------------------------------------------------------------------
alpha = Agent(name="Alpha")
beta = Agent(name="Beta", handoffs=[alpha])


class BareNames:
    """Runs module-level agents by name."""

    def go(self, text: str) -> Any:
        first = Runner.run_sync(alpha, text)
        return Runner.run_streamed(starting_agent=beta, input=str(first.final_output))


class ClassAttributes:
    agent = beta

    async def go(self, text: str) -> Any:
        return await Runner.run(self.agent, text)


class Built:
    def __init__(self) -> None:
        self.agent = Agent(name="Inline")

    async def go(self, text: str) -> Any:
        return await Runner.run(self.agent, text)


gamma = Agent(name="Gamma")


class FanOut:
    """Asks every specialist, or one picked by key."""

    def __init__(self) -> None:
        self.specialists = {"a": alpha, "g": gamma}
        self.fallbacks = [beta]

    async def ask_all(self, text: str) -> list[Any]:
        return [await Runner.run(agent, text) for agent in self.specialists.values()]

    async def ask_one(self, key: str, text: str) -> Any:
        return await Runner.run(self.fallbacks[0] if key == "?" else self.specialists[key], text)

    async def ask_picked(self, key: str, text: str) -> Any:
        return await Runner.run(self.pick(key), text)

    def pick(self, key: str) -> Agent:
        return self.specialists[key]


class NoRuns:
    def go(self) -> int:
        return 1


def test_coordinator_with_module_level_agents() -> None:
    m = extract_manifest(BareNames)
    assert m.entry_agent == "bare_names" and m.system == "bare_names"
    assert m.agents == (
        AgentNode("bare_names", "BareNames", "coordinator", "Runs module-level agents by name."),
        AgentNode("alpha", "Alpha"),
        AgentNode("beta", "Beta"),
    )
    assert m.delegations == (
        Delegation("bare_names", "alpha", "call"),
        Delegation("bare_names", "beta", "call"),
        Delegation("beta", "alpha", "handoff", "delegate", "transfer_to_alpha"),
    )
    assert extract_manifest(ClassAttributes()).agents[1:] == (
        AgentNode("beta", "Beta"),
        AgentNode("alpha", "Alpha"),
    )


@pytest.mark.parametrize("target", [FanOut, FanOut()])
def test_fan_out_coordinator_collections_and_loops(target: object) -> None:
    """Loops, subscripts and conditionals stand for every agent they may pick; calls are noted."""
    m = extract_manifest(target, derive_restrictions=False)
    assert [a.id for a in m.agents] == ["fan_out", "alpha", "gamma", "beta"]
    assert [d.edge for d in m.delegations if d.via == "call"] == [
        ("fan_out", "alpha"),
        ("fan_out", "gamma"),
        ("fan_out", "beta"),
    ]
    assert ("beta", "alpha") in {d.edge for d in m.delegations}
    unresolved = [n for n in m.notes if "could not be resolved" in n]
    assert len(unresolved) == 1 and "Runner.run(self.pick(key), ...) at line" in unresolved[0]


def test_coordinator_instance_attributes_are_read_from_the_instance() -> None:
    m = extract_manifest(Built())
    assert [a.id for a in m.agents] == ["built", "inline"]
    with pytest.raises(ExtractError) as info:
        extract_manifest(Built)
    message = str(info.value)
    assert "extract from an instance of Built" in message
    assert "docs/coverage.md#writing-a-manifest" in message


def test_coordinator_without_agents_asks_for_a_manifest() -> None:
    with pytest.raises(
        ExtractError, match=r"no agent run by its methods could be resolved.*writing-a-manifest"
    ):
        extract_manifest(NoRuns())


# -- errors ---------------------------------------------------------------------------------------
def test_entry_point_that_fails_to_import() -> None:
    with pytest.raises(AgentLoadError, match=r"cannot import agent module 'examples\.nowhere'"):
        extract_manifest("examples.nowhere:agent")
    with pytest.raises(
        AgentLoadError, match=r"has no attribute 'triage_agnt'.*Did you mean 'triage_agent'\?"
    ):
        extract_manifest("examples.customer_service.v1:triage_agnt")
    with pytest.raises(AgentLoadError, match=r"must look like 'package\.module:attribute'"):
        extract_manifest("examples.customer_service.v1")


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        (42, "an int"),
        (lambda text: text, "a function"),
        (sys, "a module"),
        (Agent, "the class Agent"),
        (shared_lookup, "a FunctionTool"),
    ],
)
def test_non_agent_objects_are_refused_with_what_is_accepted(target: object, kind: str) -> None:
    with pytest.raises(ExtractError) as info:
        extract_manifest(target)
    message = str(info.value)
    assert f"the target is {kind};" in message
    assert "accepts an OpenAI Agents SDK Agent, or a class" in message
    assert isinstance(info.value, ValueError)


# -- the Agents SDK's own examples (issue 17): the coverage paper's Table I -----------------------
# tests/_support/sdk_examples vendors them (MIT, openai/openai-agents-python@1332083; see its __init__.py).
SDK_EXAMPLES = {
    "customer_service": "tests._support.sdk_examples.customer_service.main:triage_agent",
    "research_bot": "tests._support.sdk_examples.research_bot.manager:ResearchManager",
    "financial_research_agent": "tests._support.sdk_examples.financial_research_agent.manager:FinancialResearchManager",
}
# Table I of Kahani & Bagherzadeh: Ag, Tl, Al, Re, De
TABLE_I = {
    "customer_service": (3, 2, 2, 4, 4),
    "research_bot": (4, 4, 4, 12, 3),
    "financial_research_agent": (7, 7, 7, 42, 6),
}
# ours where they differ (tools, allowed, restricted): docs/coverage.md, "Counting"
OURS = {"customer_service": (2, 2, 4), "research_bot": (1, 1, 2), "financial_research_agent": (1, 1, 5)}


def table_i_counts(m: Manifest) -> tuple[int, int, int, int, int]:
    """Table I's counting rebuilt from our manifest (docs/coverage.md, "Counting"): every agent a
    coordinator runs and every ``as_tool`` is also a tool and an allowed edge of its caller, and
    the closed world spans every agent × tool pair, the coordinator's included."""
    agent_tools = [d for d in m.delegations if d.via in ("call", "as_tool")]
    tools, allowed = len(m.tools) + len(agent_tools), len(m.allow) + len(agent_tools)
    return len(m.agents), tools, allowed, len(m.agents) * tools - allowed, len(m.delegations)


@pytest.mark.parametrize("example", sorted(SDK_EXAMPLES))
def test_agentassay_manifest_on_the_sdk_examples_gives_table_i(
    example: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentassay._integrations.cli import main

    monkeypatch.chdir(ROOT)  # the CLI imports entry points from the working directory
    assert main(["manifest", SDK_EXAMPLES[example], "--json"]) == 0
    out, err = capsys.readouterr()
    counts = json.loads(out)["counts"]
    agents, *_, delegations = TABLE_I[example]
    assert (counts["agents"], counts["delegations"]) == (agents, delegations)
    assert (counts["tools"], counts["allowed"], counts["restricted"]) == OURS[example]
    m = extract_manifest(SDK_EXAMPLES[example])
    assert m.system == example
    assert table_i_counts(m) == TABLE_I[example]
    assert not [n for n in m.notes if "could not be resolved" in n or "cannot tell" in n]
    assert f"{agents} reachable agents" in err and f"{delegations} delegations" in err


def test_financial_research_writer_is_the_run_time_clone_with_both_analysts() -> None:
    m = extract_manifest(SDK_EXAMPLES["financial_research_agent"])
    assert [(a.id, a.kind) for a in m.agents] == [
        ("financial_research_manager", "coordinator"),
        ("financialplanneragent", "agent"),
        ("financialsearchagent", "agent"),
        ("financialwriteragent", "agent"),
        ("verificationagent", "agent"),
        ("fundamentalsanalystagent", "agent"),
        ("riskanalystagent", "agent"),
    ]
    assert m.delegations == (
        Delegation("financial_research_manager", "financialplanneragent", "call"),
        Delegation("financial_research_manager", "financialsearchagent", "call"),
        Delegation("financial_research_manager", "financialwriteragent", "call"),
        Delegation("financial_research_manager", "verificationagent", "call"),
        Delegation("financialwriteragent", "fundamentalsanalystagent", "as_tool", "delegate", "fundamentals_analysis"),
        Delegation("financialwriteragent", "riskanalystagent", "as_tool", "delegate", "risk_analysis"),
    )
    assert [(t.id, t.kind) for t in m.tools] == [("web_search", "hosted")]
    assert m.allow == (("financialsearchagent", "web_search"),)
    assert writer_agent.tools == []  # evaluating the clone left the module's agent as it was
    built = [n for n in m.notes if "built at run time" in n]
    assert len(built) == 1
    assert "Runner.run_streamed(writer_with_tools, ...)" in built[0] and "'FinancialWriterAgent'" in built[0]


REVISION_PROMPT = "Revise the report from the verification feedback."


class RevisingManager(FinancialResearchManager):
    """Upstream's later revision of the example: a second clone of the writer (new instructions)."""

    async def _revise_report(self, draft: str) -> Any:
        revision_agent = writer_agent.clone(instructions=REVISION_PROMPT)
        return await Runner.run(revision_agent, draft)


def test_a_second_clone_of_one_agent_is_a_second_node_with_the_same_name() -> None:
    m = extract_manifest(RevisingManager)
    writers = m.agent_ids_named("FinancialWriterAgent")
    assert len(writers) == 2
    calls = {d.target for d in m.delegations if d.source == "revising_manager"}
    assert set(writers) <= calls
    tools_of = {w: sorted(d.tool or "" for d in m.delegations if d.source == w) for w in writers}
    assert sorted(tools_of.values()) == [[], ["fundamentals_analysis", "risk_analysis"]]  # the revision has none
    assert (len(m.agents), len(m.delegations)) == (8, 7)


# -- what the evaluator computes, and what it refuses to run ------------------------------------
CALLED: list[str] = []


def _side_effect() -> str:
    CALLED.append("side effect")
    return "x"


def make_specialist(name: str = "Specialist", extra: Any = None) -> Agent:
    """A plain factory: assignments and one return."""
    tools = [shared_lookup]
    marker = _side_effect()  # never run: it is not on the path to the returned agent
    return Agent(name=name, handoff_description=marker, tools=tools if extra is None else [*tools, extra])


LOOKUP_Z = _named_tool("z")


def make_team() -> Agent:
    return Agent[Any](
        name="Team Lead",
        handoffs=[handoff(make_specialist("Booker"), tool_name_override="book")],
        tools=[make_specialist().as_tool("ask_specialist", None)],
    )


def make_with_branch(flag: bool = True) -> Agent:
    if flag:
        return Agent(name="Branchy")
    return Agent(name="Other")


class Orchestra:
    """Builds its agents at run time."""

    async def run(self, query: str) -> Any:
        helper = gamma.clone(tools=[alpha.as_tool(tool_name="ask_alpha", tool_description=query)])
        first = await Runner.run(helper, query)
        again = await Runner.run(helper, str(first.final_output))  # the same object: one node
        briefed = beta.clone(instructions=f"Answer about {query}")  # unknown text: dropped, graph kept
        await Runner.run(briefed, str(again.final_output))
        await Runner.run(make_specialist("Factory Made", extra=LOOKUP_Z), query)
        await Runner.run(Agent(name="Inline", tools=[WebSearchTool()]), query)
        return await Runner.run(make_with_branch(), query)


def test_clone_as_tool_factories_and_inline_agents_are_evaluated_not_run() -> None:
    CALLED.clear()
    m = extract_manifest(Orchestra, derive_restrictions=False)
    assert [a.id for a in m.agents] == ["orchestra", "gamma", "beta", "factory_made", "inline", "alpha"]
    assert m.delegations == (
        Delegation("orchestra", "gamma", "call"),
        Delegation("orchestra", "beta", "call"),
        Delegation("orchestra", "factory_made", "call"),
        Delegation("orchestra", "inline", "call"),
        Delegation("gamma", "alpha", "as_tool", "delegate", "ask_alpha"),
        Delegation("beta", "alpha", "handoff", "delegate", "transfer_to_alpha"),
    )
    assert m.allow == (("factory_made", "shared_lookup"), ("factory_made", "lookup"), ("inline", "web_search"))
    assert CALLED == []  # the factory was read, not called
    unresolved = [n for n in m.notes if "could not be resolved" in n]
    assert len(unresolved) == 1
    assert "Runner.run(make_with_branch(), ...)" in unresolved[0]
    assert "factory make_with_branch(): only a body of assignments and one return is evaluated" in unresolved[0]
    assert gamma.tools == [] and beta.instructions is None  # the module's agents are untouched


def test_a_factory_entry_point_is_evaluated_from_its_source() -> None:
    CALLED.clear()
    m = extract_manifest(make_team, derive_restrictions=False)
    assert [a.id for a in m.agents] == ["team_lead", "booker", "specialist"]
    assert m.delegations == (
        Delegation("team_lead", "booker", "handoff", "delegate", "book"),
        Delegation("team_lead", "specialist", "as_tool", "delegate", "ask_specialist"),
    )
    assert m.allow == (("booker", "shared_lookup"), ("specialist", "shared_lookup"))
    assert m.notes[0] == "the agent is what make_team() returns, evaluated from its source without calling it"
    assert CALLED == []
    with pytest.raises(ExtractError, match=r"the target is a function \(factory make_with_branch\(\): only a body"):
        extract_manifest(make_with_branch)


class Guarded(Agent):
    """An Agent subclass from user code: its methods may do anything."""

    def clone(self, **kwargs: Any) -> Any:
        CALLED.append("clone")
        return super().clone(**kwargs)


guarded = Guarded(name="Guarded")


class Unsafe:
    @property
    def agent(self) -> Agent:
        CALLED.append("property")
        return alpha

    async def go(self, text: str) -> Any:
        await Runner.run(self.agent, text)  # a property: not run
        await Runner.run(guarded.clone(name="G2"), text)  # a user subclass: its clone not run
        tools = [alpha.as_tool("ask", None)]
        tools.append(shared_lookup)  # changed in place: the list cannot be known statically
        await Runner.run(gamma.clone(tools=tools), text)
        return await Runner.run(beta, text)


def test_user_code_is_never_run_and_what_cannot_be_known_is_reported() -> None:
    CALLED.clear()
    m = extract_manifest(Unsafe())
    assert [a.id for a in m.agents] == ["unsafe", "beta", "alpha"]
    assert CALLED == []
    unresolved = [n for n in m.notes if "could not be resolved" in n]
    assert len(unresolved) == 3
    assert "Runner.run(self.agent, ...)" in unresolved[0]
    assert "Runner.run(guarded.clone(name='G2'), ...)" in unresolved[1]
    assert "Guarded subclasses Agent outside the SDK; its clone() is not run" in unresolved[1]
    assert "Runner.run(gamma.clone(tools=tools), ...)" in unresolved[2]
