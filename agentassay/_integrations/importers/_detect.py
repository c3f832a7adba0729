"""Which format a file is, from its first bytes and its first JSON value: never the whole file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ._model import TraceImportError

SQLITE_MAGIC = b"SQLite format 3\x00"
_HEAD = 64 * 1024
_SNIFF = 1024 * 1024  # how far to look for OpenInference's attribute before calling a file plain OTLP
_OPENINFERENCE = b'"openinference.span.kind"'
_FIRST_KEY = re.compile(r'\s*([\[{])\s*(?:\{\s*)?"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*")?')

KNOWN = (
    'expected OTLP/JSON traces ({"resourceSpans": ...}, one document or one per line), OTLP spans '
    'one per line ({"traceId": ..., "spanId": ...}), an OpenAI Agents SDK export ({"object": '
    '"trace.span", ...}), or an AgentAssay trace store (.db)'
)


def detect_format(path: str | Path) -> str:
    """``otlp-json`` | ``jsonl-spans`` | ``openinference`` | ``agents-sdk`` | ``agentassay-store`` | ``agentassay-results``.

    Raises TraceImportError (naming the file) when it cannot be read or is none of them.
    """
    p = Path(path)
    try:
        with p.open("rb") as f:
            head = f.read(_HEAD)
            if head.startswith(SQLITE_MAGIC):
                return "agentassay-store"
            sniff = head + f.read(_SNIFF - _HEAD) if len(head) == _HEAD else head
    except IsADirectoryError:
        raise TraceImportError(f"{p}: is a directory, not a trace file") from None
    except OSError as exc:
        raise TraceImportError(f"{p}: cannot read ({exc.strerror or exc})") from None
    text = head.decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n")
    if not text:
        raise TraceImportError(f"{p}: empty file; {KNOWN}")
    if text[0] not in "[{":
        raise TraceImportError(f"{p}, line 1: not JSON (starts with {text[:24]!r}); {KNOWN}")
    try:
        first, _ = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):  # RecursionError: nested too deep; the reader reports where
        first = None  # larger than the head (a big document): judge by its first key
    kind = _classify(first) if first is not None else _classify_head(text)
    if kind == "otlp":
        return "openinference" if _OPENINFERENCE in sniff else "otlp-json"
    if kind is None:
        raise TraceImportError(f"{p}: not a known trace format; {KNOWN}")
    if kind.startswith("!"):
        raise TraceImportError(f"{p}: {kind[1:]}")
    return kind


def _classify(value: Any) -> str | None:
    if isinstance(value, list):
        first = next((v for v in value if isinstance(v, dict)), None)
        return _classify(first) if first is not None else None
    if not isinstance(value, dict):
        return None
    if "resourceSpans" in value:
        return "otlp"
    for key, what in (
        ("resourceLogs", "logs"),
        ("resourceMetrics", "metrics"),
        ("resourceProfiles", "profiles"),
    ):
        if key in value:
            return f"!OTLP {what}, not traces; export the traces signal"
    if value.get("object") in ("trace", "trace.span"):
        return "agents-sdk"
    if isinstance(value.get("data"), list):
        return _classify(value["data"]) if value["data"] else "agents-sdk"
    if value.get("schema") == "agentassay.results/1":
        return "agentassay-results"
    if "traceId" in value and "spanId" in value:
        return "jsonl-spans"
    return None


def _classify_head(text: str) -> str | None:
    """A first value too large to decode from the head: its first key (and a string value) decide."""
    m = _FIRST_KEY.match(text)
    if m is None:
        return None
    key, value = m.group(2), (m.group(3) or "").strip('"')
    if key == "resourceSpans":
        return "otlp"
    if key in ("resourceLogs", "resourceMetrics", "resourceProfiles"):
        return _classify({key: None})
    if key == "data" or (key == "object" and value in ("trace", "trace.span")):
        return "agents-sdk"
    if key == "schema" and value == "agentassay.results/1":
        return "agentassay-results"
    if key in ("traceId", "spanId"):
        return "jsonl-spans"
    return None
