"""Version 2 of the PydanticAI airline workflow: the regression (its triage prompt sends seat changes to the FAQ
agent part of the time, as examples/customer_service/v2.py's)."""

from __future__ import annotations

from ...customer_service.airline import ROUTING_V2, TRIAGE_INSTRUCTIONS_V2
from ._workflow import build_triage_agent, offline_behaviour

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V2

triage_agent = build_triage_agent(TRIAGE_INSTRUCTIONS)
agent = triage_agent  # every framework's example names its entry `agent` (benchmarks/frameworks.py)

OFFLINE_BEHAVIOUR = offline_behaviour(ROUTING_V2)
