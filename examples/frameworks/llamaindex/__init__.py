"""The airline customer-service workflow as a LlamaIndex ``AgentWorkflow`` (``v1`` baseline, ``v2`` regressed triage).

Three ``FunctionAgent``s with llama-index-llms-openai's ``OpenAI`` LLM; the triage agent is the workflow's root
and hands off with the ``handoff(to_agent, reason)`` tool the workflow gives every agent that has
``can_handoff_to`` (so the specialists may hand back too). Needs ``agentassay[llamaindex]``.
"""
