"""The airline customer-service workflow as a CrewAI crew, shared by ``v1`` and ``v2``.

Built from examples/customer_service/airline.py (names, prompts, tools), so the scenarios and checks of
examples/customer_service/agentassay.yml apply unchanged. CrewAI's way to hand work to another agent is
delegation: the triage agent (``allow_delegation=True``) gets CrewAI's ``Delegate work to coworker`` and
``Ask question to coworker`` tools, whose ``coworker`` argument names the FAQ or the seat-booking agent;
the coworker's answer comes back to triage as the tool's result (CrewAI's hand-back).

Input convention (AgentAssay's crewai profile): a run is ``crew.kickoff(inputs={"input": <scenario input>})``,
so the task description holds ``{input}``.

The model is ``crewai.LLM(model="gpt-4.1-mini")``: CrewAI's native OpenAI client, which reads
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` from the environment (the offline simulator's endpoint when the
suite says ``model: {provider: offline}``).
"""

from __future__ import annotations

from typing import Any

from crewai import LLM, Agent, Crew, Process, Task
from crewai.tools import tool

from examples.customer_service.airline import (
    FAQ_AGENT,
    FAQ_DESCRIPTION,
    FAQ_INSTRUCTIONS,
    SEAT_AGENT,
    SEAT_DESCRIPTION,
    SEAT_INSTRUCTIONS,
    TRIAGE_AGENT,
    TRIAGE_DESCRIPTION,
    base_behaviour,
    faq_lookup_tool,
    update_seat,
)

MODEL = "gpt-4.1-mini"
#: CrewAI's delegation tools as the model sees them (CrewAI's tool names, made function-safe).
DELEGATE = "delegate_work_to_coworker"
ASK = "ask_question_to_coworker"
TASK = "A customer writes: {input}\nHelp them: delegate to the right coworker when one is better placed."
EXPECTED = "The answer to send to the customer."


def build_crew(triage_instructions: str) -> Crew:
    """Fresh agents and task for one version; only the triage agent's instructions differ."""
    llm = LLM(model=MODEL)
    faq = Agent(
        role=FAQ_AGENT,
        goal=FAQ_DESCRIPTION,
        backstory=FAQ_INSTRUCTIONS,
        tools=[tool(faq_lookup_tool)],
        llm=llm,
        allow_delegation=False,
        max_iter=6,
    )
    seat = Agent(
        role=SEAT_AGENT,
        goal=SEAT_DESCRIPTION,
        backstory=SEAT_INSTRUCTIONS,
        tools=[tool(update_seat)],
        llm=llm,
        allow_delegation=False,
        max_iter=6,
    )
    triage = Agent(
        role=TRIAGE_AGENT,
        goal=TRIAGE_DESCRIPTION,
        backstory=triage_instructions,
        llm=llm,
        allow_delegation=True,
        max_iter=6,
    )
    task = Task(description=TASK, expected_output=EXPECTED, agent=triage)
    return Crew(agents=[triage, faq, seat], tasks=[task], process=Process.sequential, verbose=False)


def offline_behaviour(seat_change_routing: dict[str, float]) -> dict[str, Any]:
    """airline.py's behaviour for this crew: triage's handoffs become CrewAI's delegation tools.

    A behaviour fills a tool's arguments per tool, not per choice, so each coworker gets its own tool: seat
    changes are delegated work (``delegate_work_to_coworker``, coworker = the seat-booking agent), FAQ
    questions are questions (``ask_question_to_coworker``, coworker = the FAQ agent). A coworker's hand-back
    is its answer (its delegation returns to triage), so the coworkers' ``handoff:Triage Agent`` is ``respond``;
    requests are told apart by CrewAI's system prompt, which starts "You are <role>.".
    """
    table = base_behaviour(seat_change_routing)
    to_tool = {f"handoff:{SEAT_AGENT}": f"tool:{DELEGATE}", f"handoff:{FAQ_AGENT}": f"tool:{ASK}"}
    for name, body in table.items():
        assert isinstance(body, dict)
        for rule in body["rules"]:
            choose = rule["choose"]
            if isinstance(choose, dict):
                merged: dict[str, float] = {}
                for choice, weight in choose.items():
                    choice = to_tool.get(choice, choice) if name == TRIAGE_AGENT else choice
                    choice = "respond" if choice == f"handoff:{TRIAGE_AGENT}" else choice
                    merged[choice] = merged.get(choice, 0.0) + weight
                rule["choose"] = merged
        body["match"] = {"system": rf"^You are {name}\b"}
    triage, faq = table[TRIAGE_AGENT], table[FAQ_AGENT]
    assert isinstance(triage, dict) and isinstance(faq, dict)
    # Triage only sees its coworker's answer as a tool result (CrewAI's delegation is a tool), so it wraps up
    # after any tool result; and no tool counts as a handoff, so that answer is the {tool_output}.
    triage["rules"][0]["after"] = "tool"
    table["handoff_tools"] = "(?!)"
    # The customer's words, not CrewAI's whole task prompt, go to the coworker and to the FAQ lookup.
    request = {"regex": r"A customer writes: (.*)"}
    triage["arguments"] = {
        DELEGATE: {"coworker": SEAT_AGENT, "task": request, "context": request},
        ASK: {"coworker": FAQ_AGENT, "question": request, "context": request},
    }
    faq["arguments"] = {"faq_lookup_tool": {"question": {"regex": r"Current Task: (.*)"}}}
    return table
