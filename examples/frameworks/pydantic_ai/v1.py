"""Version 1 of the PydanticAI airline workflow: the baseline (examples/customer_service/v1.py's prompts)."""

from __future__ import annotations

from ...customer_service.airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1
from ._workflow import build_triage_agent, offline_behaviour

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V1

triage_agent = build_triage_agent(TRIAGE_INSTRUCTIONS)
agent = triage_agent  # every framework's example names its entry `agent` (benchmarks/frameworks.py)

OFFLINE_BEHAVIOUR = offline_behaviour(ROUTING_V1)
