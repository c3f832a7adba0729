"""The airline customer-service workflow in PydanticAI (issue 24): the same agents, prompts, tools and suite as
examples/customer_service, with PydanticAI's agent delegation in place of the Agents SDK's handoffs."""
