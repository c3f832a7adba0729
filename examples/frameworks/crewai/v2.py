"""Version 2 of the CrewAI customer-service crew: the triage prompt that sends seat changes to the FAQ agent
part of the time (the regression a ``check`` against v1 must block)."""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V2, TRIAGE_INSTRUCTIONS_V2

from ._workflow import build_crew, offline_behaviour

crew = build_crew(TRIAGE_INSTRUCTIONS_V2)
agent = crew  # the name every framework's example exposes (benchmarks/frameworks.py)

OFFLINE_BEHAVIOUR = offline_behaviour(ROUTING_V2)
