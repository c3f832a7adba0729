"""Version 2 of the customer-service workflow: a prompt change that regresses seat changes.

The triage prompt now asks the agent to answer general questions first. In the simulated behaviour
this shows up as seat-change requests being routed to the FAQ agent about 37% of the time (the FAQ
agent then answers the generic seat FAQ and no seat is changed); other requests behave as in v1.
"""

from __future__ import annotations

from ._workflow import build_triage_agent
from .airline import ROUTING_V2, TRIAGE_INSTRUCTIONS_V2, base_behaviour

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V2

triage_agent = build_triage_agent(TRIAGE_INSTRUCTIONS)

OFFLINE_BEHAVIOUR = base_behaviour(ROUTING_V2)
