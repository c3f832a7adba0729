"""Version 2 of the customer-service workflow: a prompt change that regresses seat changes.

The triage prompt now asks the agent to answer general questions first. In the simulated behaviour
this shows up as seat-change requests being routed to the FAQ agent about 37% of the time (the FAQ
agent then answers the generic seat FAQ and no seat is changed); other requests behave as in v1.
"""

from __future__ import annotations

from ._workflow import FAQ_AGENT, SEAT_AGENT, base_behaviour, build_triage_agent

TRIAGE_INSTRUCTIONS = (
    "You are a helpful triaging agent. Answer general questions first: whenever a request mentions "
    "seats, baggage, wifi or food, let the FAQ agent look it up before anything else. You can use "
    "your tools to delegate questions to other appropriate agents."
)

triage_agent = build_triage_agent(TRIAGE_INSTRUCTIONS)

OFFLINE_BEHAVIOUR = base_behaviour(
    {f"handoff:{SEAT_AGENT}": 0.62, f"handoff:{FAQ_AGENT}": 0.37, "respond": 0.01}
)
