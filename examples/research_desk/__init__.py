"""A research desk: a Python manager runs a planner agent, then a writer agent (plain orchestration).

It exercises what the customer-service example does not: a Python coordinator, a hosted tool
(web search), ``Agent.as_tool`` sub-agents, and two distinct agents that share the runtime name
"Fact Checker". Import it as ``examples.research_desk.workflow:manager`` (or ``:ResearchManager``).
"""
