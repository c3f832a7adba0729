"""Version 2 of the ADK airline workflow: the triage prompt asks to answer general questions first.

``agent`` (also ``triage_agent``) is the ADK ``LlmAgent`` AgentAssay runs
(``agent: examples.frameworks.adk.v2:agent``);
``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents.
"""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V2, TRIAGE_INSTRUCTIONS_V2

from ._behaviour import behaviour
from ._workflow import build_triage_agent

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V2

triage_agent = build_triage_agent(TRIAGE_INSTRUCTIONS)
agent = triage_agent  # the name every framework's example gives its agent (docs/frameworks.md, benchmarks)

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V2)
