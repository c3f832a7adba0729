"""The airline customer-service workflow as a LangGraph graph (``v1`` baseline, ``v2`` regressed triage).

Three ``langchain.agents.create_agent`` agents are nodes of one parent graph; a handoff is a ``transfer_to_<agent>``
tool returning ``Command(goto=<agent>, graph=Command.PARENT)`` (LangGraph's documented multi-agent
handoff, the tool langgraph-supervisor and langgraph-swarm generate). Needs ``agentassay[langgraph]``.
"""
