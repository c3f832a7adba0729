"""Version 2 of the LlamaIndex airline workflow: the triage prompt asks to answer general questions first.

``workflow`` is the LlamaIndex ``AgentWorkflow`` AgentAssay runs (``agent: examples.frameworks.llamaindex.v2:workflow``);
``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents.
"""

from __future__ import annotations

from examples.customer_service.airline import ROUTING_V2, TRIAGE_INSTRUCTIONS_V2

from ._behaviour import behaviour
from ._workflow import build_workflow

TRIAGE_INSTRUCTIONS = TRIAGE_INSTRUCTIONS_V2

workflow = build_workflow(TRIAGE_INSTRUCTIONS)
agent = workflow  # the name benchmarks/frameworks.py runs

OFFLINE_BEHAVIOUR = behaviour(ROUTING_V2)
