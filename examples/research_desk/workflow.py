"""The research desk workflow: ``ResearchManager`` runs a planner agent, then a writer agent.

Shaped like the SDK's ``examples/research_bot`` (a Python manager calling ``Runner.run`` on each
agent in turn), with the delegation styles the structural-coverage paper distinguishes:

* ``ResearchManager`` → Research Planner and → Report Writer: plain Python calls (coordinator);
* Research Planner has a hosted ``WebSearchTool``, a function tool, and a "Fact Checker" that
  checks quotes, exposed as the tool ``verify_quote`` (``Agent.as_tool``);
* Report Writer calls an Editor through ``Agent.as_tool`` (tool ``edit_draft``) and hands the
  draft off to a *different* "Fact Checker" that checks figures and hands it back.

The two fact checkers share their runtime name on purpose: traces show only names, so the
manifest tells them apart by id (``fact_checker``, ``fact_checker_2``). Nothing here needs a
network or an API key until an agent actually runs against a real model; ``OFFLINE_BEHAVIOUR``
lets every agent run under AgentAssay's offline simulator (which cannot call hosted tools, so the
planner's web search is never taken offline).
"""

from __future__ import annotations

import re

from agents import Agent, RunConfig, Runner, WebSearchTool, function_tool

PLANNER = "Research Planner"
WRITER = "Report Writer"
EDITOR = "Editor"
FACT_CHECKER = "Fact Checker"

# A tiny offline "source" for the fact checkers, so the tools return something checkable.
KNOWN_QUOTES = {
    "the only thing we have to fear is fear itself": "Franklin D. Roosevelt",
    "that's one small step for man": "Neil Armstrong",
}
KNOWN_FIGURES = {"speed of light": "299,792 km/s", "everest": "8,849 m", "boiling point of water": "100 °C"}
STYLE_RULES = {
    "numbers": "Spell out numbers below ten; use digits from 10 up.",
    "quotes": "Quote exactly and name the speaker on first mention.",
    "headings": "Use sentence case for headings.",
}


@function_tool
def plan_searches(topic: str, count: int = 3) -> str:
    """Split a research topic into a short list of web searches to run.

    Args:
        topic: The research question or topic.
        count: How many searches to plan (1-5).
    """
    count = max(1, min(5, count))
    angles = ("overview", "latest figures", "expert quotes", "criticism", "history")
    return "\n".join(f"{i + 1}. {topic} {angle}" for i, angle in enumerate(angles[:count]))


@function_tool
def check_quote(quote: str, speaker: str = "") -> str:
    """Check a quotation against the desk's quote archive.

    Args:
        quote: The quoted words.
        speaker: Who the quote is attributed to, if known.
    """
    key = re.sub(r"[^a-z' ]+", "", quote.lower()).strip()
    for known, who in KNOWN_QUOTES.items():
        if known in key:
            if speaker and speaker.lower() not in who.lower():
                return f"Misattributed: the quote is by {who}, not {speaker}."
            return f"Verified: '{known}' ({who})."
    return "Not found in the archive: treat the quote as unverified."


@function_tool
def check_figures(claim: str) -> str:
    """Check the numbers in a claim against the desk's reference figures.

    Args:
        claim: The sentence containing the figure to check.
    """
    text = claim.lower()
    hits = [f"{subject}: {value}" for subject, value in KNOWN_FIGURES.items() if subject in text]
    return "Reference figures: " + "; ".join(hits) if hits else "No reference figure found for this claim."


@function_tool
def lookup_style_rule(topic: str) -> str:
    """Look up the house style rule for a topic (numbers, quotes, headings).

    Args:
        topic: What the rule is about.
    """
    text = topic.lower()
    rules = [rule for key, rule in STYLE_RULES.items() if key.rstrip("s") in text]
    return " ".join(rules) if rules else "No specific rule: keep sentences short and plain."


quote_checker = Agent(
    name=FACT_CHECKER,
    handoff_description="Checks that quotations are exact and correctly attributed.",
    instructions="You verify quotations. Use the check_quote tool for every quote you are given.",
    tools=[check_quote],
)

number_checker = Agent(
    name=FACT_CHECKER,
    handoff_description="Checks the figures and numbers in a draft report.",
    instructions=(
        "You verify numbers in a draft. Use check_figures for each figure, then hand the draft back "
        "to the report writer with your findings."
    ),
    tools=[check_figures],
)

editor_agent = Agent(
    name=EDITOR,
    handoff_description="Edits a draft for clarity and house style.",
    instructions="You edit drafts. Look up the house style rule that applies, then return the edited text.",
    tools=[lookup_style_rule],
)

planner_agent = Agent(
    name=PLANNER,
    handoff_description="Plans the research for a question and gathers sources.",
    instructions=(
        "You plan research. Break the question into searches, search the web, and verify any quote "
        "you intend to use before reporting your notes."
    ),
    tools=[
        WebSearchTool(),
        plan_searches,
        quote_checker.as_tool(
            tool_name="verify_quote",
            tool_description="Ask the fact checker whether a quotation is exact and correctly attributed.",
        ),
    ],
)

writer_agent = Agent(
    name=WRITER,
    handoff_description="Writes the final report from research notes.",
    instructions=(
        "You write a short report from the research notes. Have the editor polish the draft; if the "
        "report contains figures, hand it to the fact checker before finishing."
    ),
    tools=[
        editor_agent.as_tool(
            tool_name="edit_draft",
            tool_description="Send a draft to the editor and get the edited text back.",
        )
    ],
    handoffs=[number_checker],
)
number_checker.handoffs.append(writer_agent)


class ResearchManager:
    """Plans research for a query, then writes the report (two agent runs in plain Python)."""

    def __init__(self) -> None:
        self.planner = planner_agent
        self.writer = writer_agent

    async def run(self, query: str, *, run_config: RunConfig | None = None) -> str:
        """The report for ``query``; ``run_config`` lets a harness choose the model (e.g. offline)."""
        plan = await Runner.run(self.planner, f"Research question: {query}", run_config=run_config)
        notes = str(plan.final_output)
        report = await Runner.run(
            self.writer, f"Question: {query}\n\nResearch notes:\n{notes}", run_config=run_config
        )
        return str(report.final_output)


manager = ResearchManager()


# The offline simulator's per-agent behaviour (format: agentassay/_integrations/adapters/_offline.py). Both fact
# checkers share one entry, as they share a name; which rule fires depends on how they are reached:
# the figures checker is handed the conversation, the quote checker gets a fresh input as a tool.
OFFLINE_BEHAVIOUR: dict[str, object] = {
    PLANNER: {
        "rules": [
            {"after": "tool:verify_quote", "respond": "Research notes. Quote check: {tool_output}"},
            {"after": "tool:plan_searches", "respond": "Research notes. Planned searches:\n{tool_output}"},
            {"input": r"(?i)quote|said|\"", "choose": {"tool:verify_quote": 0.9, "tool:plan_searches": 0.1}},
            {"choose": {"tool:plan_searches": 0.95, "respond": 0.05}},
        ],
        "respond": "Research notes: nothing further to add.",
        "arguments": {"verify_quote": {"input": {"regex": r"\"([^\"]+)\""}}},
    },
    WRITER: {
        "rules": [
            {"after": "handoff", "respond": "Final report (figures checked). {tool_output}"},
            {"after": "tool:edit_draft", "respond": "Final report: {tool_output}"},
            {
                "input": r"\d",
                "choose": {f"handoff:{FACT_CHECKER}": 0.8, "tool:edit_draft": 0.15, "respond": 0.05},
            },
            {"choose": {"tool:edit_draft": 0.9, "respond": 0.1}},
        ],
        "respond": "Final report: see the research notes.",
    },
    EDITOR: {
        "rules": [
            {"after": "tool", "respond": "Edited for house style ({tool_output})"},
            {"choose": {"tool:lookup_style_rule": 0.9, "respond": 0.1}},
        ],
    },
    FACT_CHECKER: {
        "rules": [
            {"after": "handoff", "choose": {"tool:check_figures": 0.95, f"handoff:{WRITER}": 0.05}},
            {
                "after": "tool:check_figures",
                "choose": {f"handoff:{WRITER}": 0.9, "respond": 0.1},
                "respond": "{tool_output}",
            },
            {"after": "tool:check_quote", "respond": "{tool_output}"},
            {"choose": {"tool:check_quote": 0.95, "respond": 0.05}},
        ],
        "arguments": {"check_quote": {"quote": {"regex": r"\"([^\"]+)\""}}},
    },
}
