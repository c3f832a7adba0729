# Vendored from openai/openai-agents-python@1332083 examples/financial_research_agent/agents/verifier_agent.py
# (MIT License, Copyright (c) 2025 OpenAI; see tests/_support/sdk_examples/LICENSE).
# ruff: noqa: I001 (imports kept in upstream order)
from pydantic import BaseModel

from agents import Agent

# Agent to sanity‑check a synthesized report for consistency and recall.
# This can be used to flag potential gaps or obvious mistakes.
VERIFIER_PROMPT = (
    "You are a meticulous auditor. You have been handed a financial analysis report. "
    "Your job is to verify the report is internally consistent, appropriately caveated, and "
    "does not rely on obviously unreleased or impossible facts. You are not performing a full "
    "citation audit because the demo passes synthesized search summaries, not source documents. "
    "Point out any issues or uncertainties."
)


class VerificationResult(BaseModel):
    verified: bool
    """Whether the report seems coherent and plausible."""

    issues: str
    """If not verified, describe the main issues or concerns."""


verifier_agent = Agent(
    name="VerificationAgent",
    instructions=VERIFIER_PROMPT,
    model="gpt-5.6-sol",
    output_type=VerificationResult,
)
