"""What an import returns: each trace with the bits needed to match it to a scenario, and the counts.

``ImportStats`` is an accumulator the caller hands in (``import_traces(..., stats=ImportStats())``)
and reads after the loop: a generator has no other place to return its counts once it is exhausted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..._errors import AgentAssayError
from ..._traces import Trace

#: Every format :func:`agentassay._integrations.importers.detect_format` can name.
FORMATS = (
    "otlp-json",
    "jsonl-spans",
    "openinference",
    "agents-sdk",
    "agentassay-store",
    "agentassay-results",
)


class TraceImportError(AgentAssayError):
    """The file cannot be imported at all: unreadable, not JSON, or not the format it claims.

    The message names the file, and the line or offset when known. (Unknown or incomplete spans
    inside a readable file are not errors: they are counted in :class:`ImportStats`.)
    """


@dataclass
class ImportStats:
    """Spans read, traces returned, spans skipped and why (reason -> count).

    Filled in place while an import runs, so a caller can pass one in and read it after the
    loop; it is complete once the iterator is exhausted.
    """

    spans: int = 0
    traces: int = 0
    skipped: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    #: Traces a framework profile's span fix-ups failed on (each read as exported instead).
    unfixed: int = 0

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` spans skipped for ``reason``."""
        self.skipped += n
        self.reasons[reason] = self.reasons.get(reason, 0) + n

    def summary(self) -> str:
        """One line for a terminal or a report: ``214 spans, 20 traces, 12 skipped: no gen_ai.operation.name (12)``."""
        text = f"{self.spans} spans, {self.traces} traces, {self.skipped} skipped"
        if self.reasons:
            ordered = sorted(self.reasons.items(), key=lambda kv: (-kv[1], kv[0]))
            text += ": " + "; ".join(f"{reason} ({n})" for reason, n in ordered)
        if self.unfixed:
            text += f"; {self.unfixed} traces read as exported (the framework's span fix-ups failed on them)"
        return text


@dataclass(frozen=True)
class ImportedTrace:
    """One recorded run as our :class:`~agentassay._traces.Trace`.

    ``input`` is the first user input of the run where the source recorded it (None otherwise);
    ``attributes`` are the root span's attributes, so scenarios can be matched by a span
    attribute as well as by input text.
    """

    trace_id: str
    trace: Trace
    input: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
