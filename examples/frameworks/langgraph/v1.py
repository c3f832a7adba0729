"""Version 1 of the LangGraph airline workflow: the baseline.

``agent`` is the compiled LangGraph graph AgentAssay runs (``agent: examples.frameworks.langgraph.v1:agent``);
``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents.
"""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1

from ._behaviour import behaviour
from ._workflow import build_graph

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V1

agent = build_graph(TRIAGE_INSTRUCTIONS)

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V1)
