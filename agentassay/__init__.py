"""AgentAssay: statistically sound regression testing for non-deterministic LLM agents.

Subpackages are imported on demand (``agentassay.stats`` pulls in scipy), so that
``import agentassay`` and ``agentassay --help`` stay fast.
"""

__version__ = "0.1.0"
