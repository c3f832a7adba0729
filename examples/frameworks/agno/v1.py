"""Version 1 of the Agno airline workflow: the baseline.

``team`` is the Agno team AgentAssay runs (``agent: examples.frameworks.agno.v1:team``);
``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents.
"""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1

from ._behaviour import behaviour
from ._workflow import build_team

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V1

team = build_team(TRIAGE_INSTRUCTIONS)
agent = team  # the name benchmarks/frameworks.py runs

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V1)
