"""Agents SDK agents for the real local model (tests/_support/real_model.py serves it; the suite's `model:` picks it).

`assistant` follows a format rule the offline simulator cannot read: end every answer with DONE. The
Qwen2.5-Coder-0.5B model follows it when the rule and an example are in its instructions;
`assistant_regressed` is the same agent with the rule's line removed (a prompt regression), and
`weather` answers through a function tool, which the small model calls by writing bare JSON (the
normaliser in tests/_support/real_model.py turns that into a tool call). The tool's output is its answer
(`stop_on_first_tool`): after a tool result this 0.5B model mostly writes more JSON, not a sentence.
"""

from __future__ import annotations

from agents import Agent, function_tool

INSTRUCTIONS = "\n".join([
    "You are a concise assistant. Answer in one short sentence.",
    "After your answer, always write DONE as the very last word.",
    "Example:",
    "User: What is 2+2?",
    "Assistant: 2+2 is 4. DONE",
])
RULE = INSTRUCTIONS.splitlines()[1]
REGRESSED = "\n".join(line for line in INSTRUCTIONS.splitlines() if line != RULE)

assistant = Agent(name="Assistant", instructions=INSTRUCTIONS)
assistant_regressed = Agent(name="Assistant", instructions=REGRESSED)


@function_tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"Sunny and 21 degrees Celsius in {city}."


weather = Agent(
    name="Weather Assistant",
    instructions="You are a weather assistant. Use the get_weather tool, then answer in one short sentence.",
    tools=[get_weather],
    tool_use_behavior="stop_on_first_tool",
)
