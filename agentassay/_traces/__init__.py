"""Traces (paper Def. 3.2) and the SQLite trace store (Def. 7.5)."""

from ._model import RESTRICTED_CALL, TOOL_NOT_FOUND, TRACE_SCHEMA, Action, Cost, Step, Trace, TraceMetadata
from ._store import StoredTrial, StoreError, TraceStore

__all__ = [
    "RESTRICTED_CALL",
    "TOOL_NOT_FOUND",
    "TRACE_SCHEMA",
    "Action",
    "Cost",
    "Step",
    "StoreError",
    "StoredTrial",
    "Trace",
    "TraceMetadata",
    "TraceStore",
]
