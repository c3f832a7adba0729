"""The airline customer-service workflow in smolagents (``v1`` baseline, ``v2`` regressed triage).

The triage agent is a ``ToolCallingAgent`` whose ``managed_agents`` are the FAQ and seat-booking agents:
smolagents offers each managed agent to the manager's model as a tool named after it (argument ``task``),
runs it, and gives its final answer back as the tool's observation, so a specialist always returns to
triage (a delegation, not a one-way handoff). Agent names are Python identifiers, as smolagents requires:
``triage_agent``, ``faq_agent``, ``seat_booking_agent``. Needs ``agentassay[smolagents]``.
"""
