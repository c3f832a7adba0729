"""Adapters: run one input through an agent framework and return a Trace (paper Sec. 8.3).

Heavy integrations load lazily: ``OpenAIAgentsAdapter`` and ``OfflineModel`` import the
OpenAI Agents SDK (seconds of import time) only when first touched.
"""

from __future__ import annotations

from typing import Any

from ._base import AgentAdapter, AgentRunError, ToolInfo
from ._callable import CallableAdapter
from ._resolve import AgentLoadError, adapter_for, import_entry, is_sdk_agent, load_adapter
from ._transient import TransientError, is_transient

__all__ = [
    "AgentAdapter",
    "AgentLoadError",
    "AgentRunError",
    "CallableAdapter",
    "OfflineModel",
    "OpenAIAgentsAdapter",
    "ToolInfo",
    "TransientError",
    "adapter_for",
    "import_entry",
    "is_sdk_agent",
    "is_transient",
    "load_adapter",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAIAgentsAdapter":
        # lazy: the Agents SDK is heavy and optional
        from ._openai_agents import OpenAIAgentsAdapter

        return OpenAIAgentsAdapter
    if name == "OfflineModel":
        # lazy: the Agents SDK is heavy and optional
        from ._offline import OfflineModel

        return OfflineModel
    raise AttributeError(f"module 'agentassay._integrations.adapters' has no attribute {name!r}")
