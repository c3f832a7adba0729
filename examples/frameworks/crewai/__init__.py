"""The airline customer-service workflow in CrewAI: ``v1`` (baseline) and ``v2`` (the regressed triage prompt)."""
