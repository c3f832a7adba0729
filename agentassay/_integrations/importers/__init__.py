"""Recorded traces into our ``Trace``: OpenTelemetry GenAI, OpenInference, the Agents SDK's export, our store.

Teams already keep traces; analysing those (issue 16, trace-first analysis) needs them as the
``Trace`` every analysis reads. ``detect_format`` names a file's format from its head;
``import_traces`` streams it (memory bounded by the largest trace, not the file) and yields one
``ImportedTrace`` per trace id; spans it cannot use are counted per reason in ``ImportStats``,
never raised. ``import_spans`` builds the same traces from spans already in memory (the live
capture's). Mappings and their sources: docs/trace-first.md.
"""

from ._detect import detect_format
from ._import import import_spans, import_traces
from ._model import FORMATS, ImportedTrace, ImportStats, TraceImportError

__all__ = ["FORMATS", "ImportStats", "ImportedTrace", "TraceImportError", "detect_format", "import_spans", "import_traces"]
