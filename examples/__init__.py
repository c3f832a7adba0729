"""Example agents and suites for AgentAssay; import them as ``examples.<name>.<module>:<attr>``."""
