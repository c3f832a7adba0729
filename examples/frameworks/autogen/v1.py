"""Version 1 of the AutoGen airline workflow: the baseline.

``swarm`` is the AutoGen swarm AgentAssay runs (``agent: examples.frameworks.autogen.v1:swarm``);
``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents.
"""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1

from ._behaviour import behaviour
from ._workflow import build_swarm

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V1

swarm = build_swarm(TRIAGE_INSTRUCTIONS)
agent = swarm  # the name benchmarks/frameworks.py runs

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V1)
