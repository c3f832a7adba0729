"""Reading and repairing OTLP JSON span objects: what every profile's ``fix_spans`` works on."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def value(any_value: Mapping[str, Any]) -> Any:
    """A scalar ``AnyValue`` (string, bool, double, int); None for arrays, maps and nothing."""
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in any_value:
            return any_value[key]
    if "intValue" in any_value:
        return int(any_value["intValue"])
    return None


def attrs(span: Mapping[str, Any]) -> dict[str, Any]:
    """A span's scalar attributes as a dict."""
    return {kv["key"]: value(kv.get("value") or {}) for kv in span.get("attributes") or []}


def attr(span: Mapping[str, Any], key: str) -> Any:
    """One scalar attribute of a span, or None."""
    for kv in span.get("attributes") or ():
        if kv.get("key") == key:
            return value(kv.get("value") or {})
    return None


def set_attr(span: dict[str, Any], key: str, new: Any) -> None:
    """Set (or, with None, remove) a string, int or bool attribute of a span."""
    kvs = [kv for kv in span.get("attributes") or [] if kv.get("key") != key]
    if new is not None:
        if isinstance(new, bool):
            encoded: dict[str, Any] = {"boolValue": new}
        elif isinstance(new, int):
            encoded = {"intValue": str(new)}
        else:
            encoded = {"stringValue": str(new)}
        kvs.append({"key": key, "value": encoded})
    span["attributes"] = kvs


def loads_json(text: Any) -> Any:
    """JSON text that is an object or array, decoded; None for anything else."""
    if isinstance(text, str) and text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return None
    return None


def as_handoff(span: dict[str, Any], source: Any, target: str, tool: Any, call_id: Any = None) -> None:
    """Rewrite a framework's handoff-tool span as a GenAI handoff span (its other attributes dropped): control
    passes from ``source`` to ``target`` by ``tool``. Every profile whose framework hands off by a tool call."""
    span["attributes"] = []
    set_attr(span, "gen_ai.operation.name", "handoff")
    set_attr(span, "gen_ai.handoff.from_agent", source)
    set_attr(span, "gen_ai.handoff.to_agent", target)
    set_attr(span, "gen_ai.tool.name", tool)
    set_attr(span, "gen_ai.tool.call.id", call_id)
