"""The LlamaIndex version of the airline workflow: triage hands off to FAQ or seat booking, both may hand back.

The LLM is llama-index-llms-openai's ``OpenAI`` without ``api_base``: it reads the base URL and key from the
environment (``OPENAI_API_BASE`` / ``OPENAI_API_KEY``; it ignores ``OPENAI_BASE_URL``), so the same workflow
runs against OpenAI, any compatible server or AgentAssay's offline simulator (``model: {provider: offline}``)
unchanged. A ``FunctionAgent`` streams its model calls; ``stream_options.include_usage`` asks the server for
the token counts of each streamed answer (OpenAI sends none otherwise, and the trace would have no tokens).
"""

from __future__ import annotations

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.llms import LLM
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI

from examples.customer_service.airline import (
    FAQ_AGENT,
    FAQ_DESCRIPTION,
    FAQ_INSTRUCTIONS,
    SEAT_AGENT,
    SEAT_DESCRIPTION,
    SEAT_INSTRUCTIONS,
    TRIAGE_AGENT,
    TRIAGE_DESCRIPTION,
    faq_lookup_tool,
    update_seat,
)

MODEL = "gpt-4.1-mini"
#: Seconds one run may take (the workflow's own timeout).
TIMEOUT = 60.0


def build_workflow(triage_instructions: str, llm: LLM | None = None) -> AgentWorkflow:
    """One version's workflow; ``llm`` replaces the OpenAI-compatible LLM (a scripted one, in tests)."""
    model = llm if llm is not None else OpenAI(
        model=MODEL, additional_kwargs={"stream_options": {"include_usage": True}}
    )

    def agent(name: str, description: str, prompt: str, tools: list[object], to: list[str]) -> FunctionAgent:
        return FunctionAgent(
            name=name, description=description, system_prompt=prompt, llm=model, tools=tools, can_handoff_to=to
        )

    triage = agent(TRIAGE_AGENT, TRIAGE_DESCRIPTION, triage_instructions, [], [FAQ_AGENT, SEAT_AGENT])
    faq = agent(FAQ_AGENT, FAQ_DESCRIPTION, FAQ_INSTRUCTIONS, [FunctionTool.from_defaults(faq_lookup_tool)], [TRIAGE_AGENT])
    seat = agent(SEAT_AGENT, SEAT_DESCRIPTION, SEAT_INSTRUCTIONS, [FunctionTool.from_defaults(update_seat)], [TRIAGE_AGENT])
    return AgentWorkflow(agents=[triage, faq, seat], root_agent=TRIAGE_AGENT, timeout=TIMEOUT)
