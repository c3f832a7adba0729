"""The airline customer-service workflow in other agent frameworks (issue 24), one package per framework.

Each builds its agents from examples/customer_service/airline.py (names, prompts, tools, offline
behaviour), so the scenarios and checks of examples/customer_service/agentassay.yml apply unchanged.
"""
