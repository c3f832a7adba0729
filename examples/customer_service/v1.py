"""Version 1 of the customer-service workflow: the baseline.

``OFFLINE_BEHAVIOUR`` is what the offline simulator does for this version's agents: a triage agent
that routes seat changes to the seat-booking agent almost always (it is stochastic, so not always).
"""

from __future__ import annotations

from ._workflow import FAQ_AGENT, SEAT_AGENT, base_behaviour, build_triage_agent

TRIAGE_INSTRUCTIONS = (
    "You are a helpful triaging agent. You can use your tools to delegate questions to other "
    "appropriate agents."
)

triage_agent = build_triage_agent(TRIAGE_INSTRUCTIONS)

OFFLINE_BEHAVIOUR = base_behaviour(
    {f"handoff:{SEAT_AGENT}": 0.985, f"handoff:{FAQ_AGENT}": 0.01, "respond": 0.005}
)
