"""Version 1 of the CrewAI customer-service crew: the baseline (see ``_workflow``)."""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1

from ._workflow import build_crew, offline_behaviour

crew = build_crew(TRIAGE_INSTRUCTIONS_V1)
agent = crew  # the name every framework's example exposes (benchmarks/frameworks.py)

OFFLINE_BEHAVIOUR = offline_behaviour(ROUTING_V1)
