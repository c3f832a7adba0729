"""Version 2 of the Agno airline workflow: the triage prompt asks to answer general questions first.

``team`` is the Agno team AgentAssay runs (``agent: examples.frameworks.agno.v2:team``);
``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents.
"""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V2, TRIAGE_INSTRUCTIONS_V2

from ._behaviour import behaviour
from ._workflow import build_team

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V2

team = build_team(TRIAGE_INSTRUCTIONS)
agent = team  # the name benchmarks/frameworks.py runs

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V2)
