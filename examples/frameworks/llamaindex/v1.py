"""Version 1 of the LlamaIndex airline workflow: the baseline.

``workflow`` is the LlamaIndex ``AgentWorkflow`` AgentAssay runs (``agent: examples.frameworks.llamaindex.v1:workflow``);
``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents.
"""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V1, TRIAGE_INSTRUCTIONS_V1

from ._behaviour import behaviour
from ._workflow import build_workflow

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V1

workflow = build_workflow(TRIAGE_INSTRUCTIONS)
agent = workflow  # the name benchmarks/frameworks.py runs

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V1)
