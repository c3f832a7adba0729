"""The Agno airline team in Agno's default coordinate mode: a member's answer comes back to the leader, which
answers the customer (a delegation that returns, not a handoff)."""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1
from examples.frameworks.agno._behaviour import behaviour
from examples.frameworks.agno._workflow import build_team

team = build_team(TRIAGE_INSTRUCTIONS_V1, respond_directly=False)

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V1)
