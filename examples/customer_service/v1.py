"""Version 1 of the customer-service workflow: the baseline.

``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents: a triage agent
that routes seat changes to the seat-booking agent almost always (it is stochastic, so not always).
"""

from __future__ import annotations

from ._workflow import build_triage_agent
from .airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1, base_behaviour

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V1

triage_agent = build_triage_agent(TRIAGE_INSTRUCTIONS)

OFFLINE_BEHAVIOUR = base_behaviour(ROUTING_V1)
