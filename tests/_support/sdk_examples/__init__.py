"""Minimal copies of three OpenAI Agents SDK examples, for extraction tests (issue 17).

Vendored from https://github.com/openai/openai-agents-python at commit
133208381c0467e3a2ff098593fc02a50f78d0d3 (the last revision whose ``financial_research_agent``
has the shape the structural-coverage paper's Table I counts), under the MIT License, Copyright (c)
2025 OpenAI: the licence text is in ``LICENSE`` next to this file. Each file names the upstream path
it comes from. Agent and tool definitions and every ``Runner`` call are kept as written; printing,
tracing UI, interactive input and helpers no extraction reads are cut.
"""
