"""The OpenAI Agents SDK's own trace export: ``trace`` and ``trace.span`` objects.

What ``Trace.export()`` / ``Span.export()`` return (``agents/tracing/traces.py``, ``spans.py``,
``span_data.py``) and what ``BackendSpanExporter`` posts (``{"data": [...]}``): one object per
line (JSON Lines, what a file-writing ``TracingProcessor`` writes), one JSON array, or the
``{"data": [...]}`` envelope. The mapping is the live adapter's, so an export of a run imports to
the Trace the adapter recorded for it (docs/trace-first.md lists the two known differences: tool
error text, which the SDK redacts in spans, and the wording of run errors).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from ._build import AGENT, HANDOFF, LLM, MISSING, OTHER, TOOL, Node, parse_arguments
from ._json import JsonScanner, loads_embedded
from ._model import ImportStats
from ._staging import SPAN, TRACE_RECORD, Staging

NOT_SDK = "not an Agents SDK trace or span object"
#: span_data types of the SDK that carry nothing a Trace records (known, so not counted as skipped).
_STRUCTURE = {"guardrail", "mcp_tools", "transcription", "speech", "speech_group", "custom", "task", "turn"}
_ENVELOPE = re.compile(r'\{\s*"data"\s*:')


# -- reading --------------------------------------------------------------------------------------
def read(scanner: JsonScanner, staging: Staging, stats: ImportStats) -> None:
    """Stage every span and trace object of the file, streaming."""
    for char in scanner.documents():
        if char == "[":
            for _ in scanner.items():
                _item(scanner.value(), staging, stats)
        elif char == "{" and scanner.looking_at(_ENVELOPE):
            for key in scanner.members():
                if key == "data" and scanner.peek() == "[":
                    for _ in scanner.items():
                        _item(scanner.value(), staging, stats)
                else:
                    scanner.skip()
        else:
            _item(scanner.value(), staging, stats)


def _item(obj: Any, staging: Staging, stats: ImportStats) -> None:
    kind = obj.get("object") if isinstance(obj, dict) else None
    if kind == "trace":
        tid = obj.get("id") or obj.get("trace_id")
        if isinstance(tid, str) and tid:
            record = {k: obj.get(k) for k in ("workflow_name", "group_id", "metadata")}
            staging.add(tid, record, TRACE_RECORD)
        return
    stats.spans += 1
    if kind != "trace.span":
        stats.skip(NOT_SDK)
        return
    tid, sid = obj.get("trace_id"), obj.get("id") or obj.get("span_id")
    if not isinstance(tid, str) or not tid:
        stats.skip("no trace_id")
        return
    if not isinstance(sid, str) or not sid:
        stats.skip("no span id")
        return
    staging.add(
        tid,
        {
            "i": sid,
            "p": obj.get("parent_id"),
            "s": obj.get("started_at"),
            "e": obj.get("ended_at"),
            "d": obj.get("span_data"),
            "x": obj.get("error"),
        },
        SPAN,
    )


# -- mapping --------------------------------------------------------------------------------------
def nodes(
    rows: Iterable[tuple[int, int, dict[str, Any]]], stats: ImportStats
) -> tuple[list[Node], dict[str, Any]]:
    """One trace's staged rows as Nodes, and its ``trace`` object (workflow name, metadata)."""
    out: list[Node] = []
    record: dict[str, Any] = {}
    for seq, kind, rec in rows:
        if kind == TRACE_RECORD:
            record = rec
            continue
        parent = rec.get("p")
        node = Node(
            id=rec["i"],
            parent=parent if isinstance(parent, str) and parent else None,
            start=_ns(rec.get("s")),
            end=_ns(rec.get("e")),
            seq=seq,
        )
        out.append(node)
        data = rec.get("d")
        if not isinstance(data, dict):
            stats.skip("no span_data")
            continue
        _classify(node, data, _error_text(rec.get("x")), stats)
    _structured_outputs(out)
    return out, record


def attributes(record: dict[str, Any], root: Node | None) -> dict[str, Any]:
    """What scenarios can be matched on: the ``trace`` object's workflow name, group and metadata."""
    attrs: dict[str, Any] = {}
    if record.get("workflow_name") is not None:
        attrs["workflow_name"] = record["workflow_name"]
    elif root is not None and root.attrs.get("name"):
        attrs["workflow_name"] = root.attrs["name"]
    if record.get("group_id") is not None:
        attrs["group_id"] = record["group_id"]
    metadata = record.get("metadata")
    for key, value in (metadata if isinstance(metadata, dict) else {}).items():
        attrs[f"metadata.{key}"] = value
    return attrs


def _classify(node: Node, data: dict[str, Any], error: str | None, stats: ImportStats) -> None:
    kind = data.get("type")
    kind = kind if isinstance(kind, str) else repr(kind)
    node.error = error
    if kind == "agent":
        node.role, node.name = AGENT, _str(data.get("name"))
        node.attrs = {"output_type": data.get("output_type")}
        if node.name is None:
            node.role = OTHER
            stats.skip("agent span without a name")
    elif kind == "function":
        node.role, node.name = TOOL, _str(data.get("name"))
        node.arguments = parse_arguments(data.get("input"))
        node.output = data.get("output")
    elif kind == "handoff":
        node.role, node.agent, node.target = HANDOFF, _str(data.get("from_agent")), _str(data.get("to_agent"))
    elif kind == "generation":
        node.role, node.model, node.usage = LLM, _str(data.get("model")), _usage(data.get("usage"))
        config = data.get("model_config")
        if isinstance(config, dict) and isinstance(config.get("seed"), int):
            node.seed = config["seed"]
        node.text, node.calls = _generation_output(data.get("output"))
        node.user = _first_user(data.get("input"))
    elif kind == "response":
        node.role, node.usage = LLM, _usage(data.get("usage"))
    elif kind == "task" or (kind == "custom" and _custom_kind(data) == "task"):
        payload = _payload(data, kind)
        node.task, node.usage = True, _usage(payload.get("usage"))
        node.attrs = {"name": payload.get("name")}
    elif kind == "turn" or (kind == "custom" and _custom_kind(data) == "turn"):
        node.usage = _usage(_payload(data, kind).get("usage"))
    elif kind not in _STRUCTURE:
        stats.skip(f"unknown span_data.type {kind!r}")


def _payload(data: dict[str, Any], kind: str) -> dict[str, Any]:
    """A task or turn span's fields: in ``data`` of a ``custom`` span (0.24), or the span data itself."""
    payload = data.get("data") if kind == "custom" else data
    return payload if isinstance(payload, dict) else {}


def _custom_kind(data: dict[str, Any]) -> Any:
    payload = data.get("data")
    return payload.get("sdk_span_type") if isinstance(payload, dict) else None


def _structured_outputs(nodes: list[Node]) -> None:
    """An agent with a structured output type answers JSON: decode it as the adapter's final output is."""
    by_id = {n.id: n for n in nodes}
    for n in nodes:
        if n.role != LLM or not isinstance(n.text, str):
            continue
        p, hops = by_id.get(n.parent or ""), 0
        while p is not None and p.role != AGENT and hops < 64:
            p, hops = by_id.get(p.parent or ""), hops + 1
        output_type = p.attrs.get("output_type") if p is not None else None
        if output_type not in (None, "str"):
            with contextlib.suppress(ValueError):
                n.text = loads_embedded(n.text)


def _generation_output(output: Any) -> tuple[Any, list[tuple[str | None, str | None, Any]]]:
    """The answer text of a generation (Responses items or a Chat Completions message) and its tool calls."""
    texts: list[str] = []
    calls: list[tuple[str | None, str | None, Any]] = []
    found = False
    for item in output if isinstance(output, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            calls.append((_str(item.get("call_id")), _str(item.get("name")), item.get("arguments")))
            continue
        if item.get("type") not in (None, "message") or item.get("role") not in (None, "assistant"):
            continue
        content = item.get("content")
        if isinstance(content, str):
            texts.append(content)
            found = True
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                    found = True
                elif isinstance(part, dict) and isinstance(part.get("refusal"), str):
                    texts.append(part["refusal"])
                    found = True
        calls_made = item.get("tool_calls")
        for call in calls_made if isinstance(calls_made, list) else []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                calls.append((_str(call.get("id")), _str(fn.get("name")), fn.get("arguments")))
    return ("".join(texts) if found else MISSING), calls


def _first_user(messages: Any) -> str | None:
    for m in messages if isinstance(messages, list) else []:
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                parts = [t for p in content if isinstance(p, dict) and isinstance(t := p.get("text"), str)]
                if parts:
                    return "".join(parts)
    return None


def _usage(usage: Any) -> tuple[int, int] | None:
    if not isinstance(usage, dict):
        return None
    tin = usage.get("input_tokens", usage.get("prompt_tokens"))
    tout = usage.get("output_tokens", usage.get("completion_tokens"))
    if tin is None and tout is None:
        return None
    try:
        return int(tin or 0), int(tout or 0)
    except (TypeError, ValueError):
        return None


def _error_text(error: Any) -> str | None:
    """The adapter's wording for a span error: ``message: data.error`` or the message alone."""
    if not error:
        return None
    if not isinstance(error, dict):
        return str(error)
    data = error.get("data") or {}
    detail = data.get("error") if isinstance(data, dict) else None
    return f"{error.get('message')}: {detail}" if detail else str(error.get("message"))


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _ns(stamp: Any) -> int | None:
    """ISO 8601 (what the SDK writes) to nanoseconds since the epoch; None when absent or unreadable."""
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        dt = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
