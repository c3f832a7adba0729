# Vendored from openai/openai-agents-python@1332083 examples/financial_research_agent/agents/search_agent.py
# (MIT License, Copyright (c) 2025 OpenAI; see tests/_support/sdk_examples/LICENSE).
from agents import Agent, WebSearchTool

# Given a search term, use web search to pull back a brief summary.
# Summaries should be concise but capture the main financial points.
INSTRUCTIONS = (
    "You are a research assistant specializing in financial topics. "
    "Given a search term, use web search to retrieve up‑to‑date context and "
    "produce a short summary of at most 300 words. Focus on key numbers, events, "
    "or quotes that will be useful to a financial analyst."
)

search_agent = Agent(
    name="FinancialSearchAgent",
    model="gpt-5.6-sol",
    instructions=INSTRUCTIONS,
    tools=[WebSearchTool()],
)
