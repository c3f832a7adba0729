"""The airline customer-service workflow as an AutoGen AgentChat swarm (``v1`` baseline, ``v2`` regressed triage).

Three ``AssistantAgent``s with AutoGen's ``OpenAIChatCompletionClient`` form a ``Swarm``; a handoff is the
``transfer_to_<agent>`` tool AutoGen makes from each agent's ``handoffs`` (triage to FAQ or seat booking,
both back to triage). AutoGen agent names must be Python identifiers, so the agents are ``Triage_Agent``,
``FAQ_Agent`` and ``Seat_Booking_Agent`` (airline.py's names with underscores). Needs ``agentassay[autogen]``.
"""
