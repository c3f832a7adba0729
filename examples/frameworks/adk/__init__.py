"""The airline customer-service workflow in Google ADK (``v1`` baseline, ``v2`` regressed triage).

The triage agent is an ``LlmAgent`` whose ``sub_agents`` are the FAQ and seat-booking agents: ADK offers
every agent of the tree a ``transfer_to_agent(agent_name)`` tool, so triage hands off to a specialist and a
specialist may hand back (a one-way handoff: the receiving agent carries on the conversation). Agent names
are Python identifiers, as ADK requires: ``triage_agent``, ``faq_agent``, ``seat_booking_agent``. The model
is LiteLLM's (``openai/gpt-4.1-mini``), which reads the base URL from the environment. Needs
``agentassay[adk]``.
"""
