"""Version 1 of the ADK airline workflow: the baseline.

``agent`` (also ``triage_agent``) is the ADK ``LlmAgent`` AgentAssay runs
(``agent: examples.frameworks.adk.v1:agent``);
``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents.
"""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1

from ._behaviour import behaviour
from ._workflow import build_triage_agent

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V1

triage_agent = build_triage_agent(TRIAGE_INSTRUCTIONS)
agent = triage_agent  # the name every framework's example gives its agent (docs/frameworks.md, benchmarks)

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V1)
