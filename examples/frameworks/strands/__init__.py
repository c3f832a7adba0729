"""The airline customer-service workflow as a Strands Agents swarm (``v1`` baseline, ``v2`` regressed triage).

Three Strands ``Agent``s with the OpenAI model provider form a ``strands.multiagent.Swarm`` whose entry point
is the triage agent; a handoff is the ``handoff_to_agent(agent_name, message, context)`` tool the swarm gives
every member (so the specialists may hand back too). Needs ``agentassay[strands]``.
"""
