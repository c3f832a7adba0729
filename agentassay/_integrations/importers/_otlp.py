"""OTLP/JSON traces: the GenAI semantic conventions (current and up to 1.36) and OpenInference.

Layout (OTLP protobuf JSON mapping): ``{"resourceSpans": [{"resource": {...}, "scopeSpans":
[{"scope": {...}, "spans": [span, ...]}]}]}``, one document or one per line (the collector's file
exporter); or ``jsonl-spans``, one span object per line. Attribute values are ``AnyValue``
objects. Which attribute means what, per convention version, with sources: docs/trace-first.md.

A span is read by what it declares: ``openinference.span.kind`` (OpenInference) or
``gen_ai.operation.name`` (GenAI; spans of conventions before 1.27, which had no operation name,
are recognised as model calls by their ``gen_ai.request.model`` / ``gen_ai.system`` / usage). A
span with neither is kept as structure (its children still hang from it) and counted as skipped.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..._errors import AgentAssayError
from ._build import AGENT, HANDOFF, LLM, MISSING, OTHER, TOOL, Node, link_tool_calls, parse_arguments
from ._json import MAX_EMBEDDED_DEPTH, JsonScanner, loads_embedded, nested_within
from ._model import ImportStats
from ._staging import Staging

NOT_OTLP = "not an OTLP traces document"
NO_OPERATION = "no gen_ai.operation.name"
NO_KIND = "no openinference.span.kind"

MODEL_OPERATIONS = {"chat", "text_completion", "generate_content", "embeddings", "response"}
#: Operations of the conventions that record nothing a Trace has (known, so not counted as skipped).
STRUCTURE_OPERATIONS = {
    "create_agent", "invoke_workflow", "retrieval", "plan", "create_memory", "create_memory_store",
    "delete_memory", "delete_memory_store", "search_memory", "update_memory", "upsert_memory",
    "guardrail_check", "transcription", "speech_generation",
}  # fmt: skip
HANDOFF_OPERATIONS = {"agent_handoff", "handoff"}  # opentelemetry-instrumentation-openai-agents-v2
OPENINFERENCE_STRUCTURE = {
    "CHAIN",
    "RETRIEVER",
    "RERANKER",
    "EMBEDDING",
    "GUARDRAIL",
    "EVALUATOR",
    "PROMPT",
    "UNKNOWN",
}
_STATUS_ERROR = {2, "2", "STATUS_CODE_ERROR", "ERROR"}


# -- AnyValue ------------------------------------------------------------------------------------
#: Deepest ``arrayValue`` / ``kvlistValue`` nesting read from an attribute. Real telemetry nests a few
#: levels; a file nested thousands deep would exhaust the stack of this recursive reader (and of every
#: later reader), so it is refused at the attribute (docs/trace-first.md, "Limits").
MAX_VALUE_DEPTH = 32


class ValueTooDeep(AgentAssayError, ValueError):
    """An AnyValue nested deeper than ``MAX_VALUE_DEPTH``; the message names the attribute."""


def any_value(v: Any, depth: int = 0) -> Any:
    """An OTLP ``AnyValue`` as plain data (a value that is not one is returned as it is)."""
    if type(v) is not dict:
        return v
    s = v.get("stringValue")
    if s is not None:
        return s
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return v["intValue"]
    if "doubleValue" in v:
        try:
            return float(v["doubleValue"])
        except (TypeError, ValueError):
            return v["doubleValue"]
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v or "kvlistValue" in v:
        if depth >= MAX_VALUE_DEPTH:
            raise ValueTooDeep(f"nested more than {MAX_VALUE_DEPTH} levels deep (arrayValue / kvlistValue)")
        if "arrayValue" in v:
            values = v["arrayValue"].get("values") if isinstance(v["arrayValue"], dict) else None
            return [any_value(x, depth + 1) for x in values] if isinstance(values, list) else []
        return attributes(v["kvlistValue"].get("values") if isinstance(v["kvlistValue"], dict) else None, depth + 1)
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def attributes(kvs: Any, depth: int = 0) -> dict[str, Any]:
    """``[{key, value: AnyValue}]`` as a dict."""
    if not isinstance(kvs, list):
        return {}
    try:
        return {
            kv["key"]: any_value(kv.get("value"), depth)
            for kv in kvs
            if type(kv) is dict and type(kv.get("key")) is str
        }
    except ValueTooDeep as exc:
        if depth:
            raise
        key = next((kv["key"] for kv in kvs if type(kv) is dict and _too_deep(kv.get("value"))), "?")
        raise ValueTooDeep(f"attribute {key!r}: {exc}") from None


def _too_deep(v: Any) -> bool:
    try:
        any_value(v)
    except ValueTooDeep:
        return True
    return False


# -- reading -------------------------------------------------------------------------------------
#: A JSON Lines document up to this size is decoded in one piece; larger ones are streamed, which is
#: faster for them (no large transient object graph) as well as bounded.
LINE_LIMIT = 1 << 16


def read_documents(scanner: JsonScanner, staging: Staging, stats: ImportStats) -> None:
    """OTLP/JSON documents (one, or one per line), streamed down to each span."""
    for char in scanner.documents():
        if char != "{":
            scanner.skip()
            stats.spans += 1
            stats.skip(NOT_OTLP)
            continue
        whole, doc = scanner.line_value(LINE_LIMIT)
        if whole:
            _document(doc, staging, stats)
            continue
        found = False
        for key in scanner.members():
            if key == "resourceSpans" and scanner.peek() == "[":
                found = True
                for _ in scanner.items():
                    _resource_spans(scanner, staging, stats)
            else:
                scanner.skip()
        if not found:
            stats.spans += 1
            stats.skip(NOT_OTLP)


def _document(doc: dict[str, Any], staging: Staging, stats: ImportStats) -> None:
    """One decoded document: the same walk as the streaming one, over dicts."""
    blocks = doc.get("resourceSpans")
    if not isinstance(blocks, list):
        stats.spans += 1
        stats.skip(NOT_OTLP)
        return
    for block in blocks:
        if not isinstance(block, dict):
            continue
        rid = staging.new_resource()
        res = block.get("resource")
        staging.set_resource(rid, attributes(res.get("attributes")) if isinstance(res, dict) else {})
        scopes = block.get("scopeSpans", block.get("instrumentationLibrarySpans"))
        for scope in scopes if isinstance(scopes, list) else []:
            spans = scope.get("spans") if isinstance(scope, dict) else None
            for span in spans if isinstance(spans, list) else []:
                stage_span(span, rid, staging, stats)


def _resource_spans(scanner: JsonScanner, staging: Staging, stats: ImportStats) -> None:
    rid = staging.new_resource()
    if scanner.peek() != "{":
        scanner.skip()
        return
    for key in scanner.members():
        if key == "resource":
            res = scanner.value()
            staging.set_resource(rid, attributes(res.get("attributes")) if isinstance(res, dict) else {})
        elif key in ("scopeSpans", "instrumentationLibrarySpans") and scanner.peek() == "[":
            for _ in scanner.items():
                if scanner.peek() != "{":
                    scanner.skip()
                    continue
                for inner in scanner.members():
                    if inner == "spans" and scanner.peek() == "[":
                        for _ in scanner.items():
                            stage_span(scanner.value(), rid, staging, stats)
                    else:
                        scanner.skip()
        else:
            scanner.skip()


def read_spans(scanner: JsonScanner, staging: Staging, stats: ImportStats) -> None:
    """``jsonl-spans``: one OTLP span object per line (a JSON array of them works too)."""
    resources: dict[str, int] = {}
    for char in scanner.documents():
        if char == "[":
            for _ in scanner.items():
                _span_line(scanner.value(), staging, stats, resources)
        else:
            _span_line(scanner.value(), staging, stats, resources)


def _span_line(obj: Any, staging: Staging, stats: ImportStats, resources: dict[str, int]) -> None:
    rid = None
    res = obj.get("resource") if isinstance(obj, dict) else None
    if isinstance(res, dict):
        key = json.dumps(res, sort_keys=True)
        rid = resources.get(key)
        if rid is None:
            if len(resources) > 1024:
                resources.clear()
            rid = resources[key] = staging.new_resource()
            staging.set_resource(rid, attributes(res.get("attributes")))
    stage_span(obj, rid, staging, stats)


def stage_span(obj: Any, rid: int | None, staging: Staging, stats: ImportStats) -> None:
    """Normalise one OTLP span and stage it under its trace id (or count why not)."""
    normalised = span_record(obj, stats)
    if normalised is None:
        return
    tid, rec = normalised
    if rid is not None:
        rec["r"] = rid
    staging.add(tid, rec)


def span_record(obj: Any, stats: ImportStats) -> tuple[str, dict[str, Any]] | None:
    """One OTLP span object as ``(trace id, the compact record nodes() reads)``, or None (counted)."""
    stats.spans += 1
    if type(obj) is not dict:
        stats.skip("span is not a JSON object")
        return None
    tid = obj.get("traceId")
    sid = obj.get("spanId")
    if not tid or not isinstance(tid, str):
        stats.skip("no traceId")
        return None
    if not sid or not isinstance(sid, str):
        stats.skip("no spanId")
        return None
    rec: dict[str, Any] = {"i": sid, "n": obj.get("name")}
    parent = obj.get("parentSpanId")
    if parent and isinstance(parent, str):
        rec["p"] = parent
    start, end = _int(obj.get("startTimeUnixNano")), _int(obj.get("endTimeUnixNano"))
    if start is not None:
        rec["s"] = start
    if end is not None:
        rec["e"] = end
    try:
        attrs = attributes(obj.get("attributes"))
        events = obj.get("events")
        if isinstance(events, list) and events:
            rec["ev"] = [[ev.get("name"), attributes(ev.get("attributes"))] for ev in events if type(ev) is dict]
    except ValueTooDeep as exc:
        raise ValueTooDeep(f"span {sid!r} ({obj.get('name')!r}): {exc}") from None
    if attrs:
        rec["a"] = attrs
    status = obj.get("status")
    if isinstance(status, dict):
        code = status.get("code")
        if isinstance(code, (int, str)) and code in _STATUS_ERROR:
            rec["x"] = status.get("message") or ""
    return tid, rec


def span_object(trace_id: str, rec: dict[str, Any]) -> dict[str, Any]:
    """The OTLP span object a staged record was read from (the inverse of :func:`span_record`), so a
    framework profile's span fix-ups — written for the spans a live run captures — apply to a file's too."""
    out: dict[str, Any] = {"traceId": trace_id, "spanId": rec["i"], "name": rec.get("n")}
    if "p" in rec:
        out["parentSpanId"] = rec["p"]
    if "s" in rec:
        out["startTimeUnixNano"] = str(rec["s"])
    if "e" in rec:
        out["endTimeUnixNano"] = str(rec["e"])
    out["attributes"] = key_values(rec.get("a"))
    if rec.get("ev"):
        out["events"] = [{"name": name, "attributes": key_values(attrs)} for name, attrs in rec["ev"]]
    if "x" in rec:
        out["status"] = {"code": 2, "message": rec["x"]}
    return out


def encode_value(value: Any) -> dict[str, Any]:
    """Plain data as an OTLP ``AnyValue`` (what :func:`any_value` reads back)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bytes):
        return {"stringValue": value.decode("utf-8", "replace")}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": key_values(value)}}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [encode_value(v) for v in value]}}
    return {"stringValue": str(value)}


def key_values(attrs: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """A dict as OTLP ``[{key, value: AnyValue}]``."""
    return [{"key": str(k), "value": encode_value(v)} for k, v in (attrs or {}).items()]


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None and v != "" else None
    except (TypeError, ValueError):
        return None


# -- mapping -------------------------------------------------------------------------------------
def nodes(
    rows: Iterable[tuple[int, int, dict[str, Any]]], stats: ImportStats, *, openinference: bool
) -> list[Node]:
    """One trace's staged spans as Nodes; tool calls joined to their arguments and results."""
    out: list[Node] = []
    for seq, _, rec in rows:
        node = Node(id=rec["i"], parent=rec.get("p"), start=rec.get("s"), end=rec.get("e"), seq=seq)
        node.attrs = attrs = rec.get("a") or {}
        node.resource = rec.get("r")
        events = rec.get("ev") or []
        node.error = _error(rec, attrs, events)
        name = rec.get("n") if isinstance(rec.get("n"), str) else None
        if "openinference.span.kind" in attrs:
            _openinference(node, name, attrs, stats)
        elif "gen_ai.operation.name" in attrs or _legacy_model_span(attrs):
            _genai(node, name, attrs, events, stats)
        else:
            stats.skip(NO_KIND if openinference else NO_OPERATION)
        out.append(node)
    link_tool_calls(out)
    return out


def _error(rec: dict[str, Any], attrs: dict[str, Any], events: list[Any]) -> str | None:
    """Status ERROR's message, else the exception event, else ``error.type``."""
    exc = next((ea for name, ea in events if name == "exception"), None)
    if "x" in rec:
        if rec["x"]:
            return str(rec["x"])
        if exc is not None:
            kind, msg = exc.get("exception.type"), exc.get("exception.message")
            return f"{kind}: {msg}" if kind and msg else str(msg or kind or "error")
        return str(attrs.get("error.type") or "error")
    if attrs.get("error.type") is not None:
        return str(attrs["error.type"])
    return None


def _legacy_model_span(attrs: dict[str, Any]) -> bool:
    """A model call of conventions older than 1.27 (no ``gen_ai.operation.name``)."""
    return any(
        k in attrs
        for k in (
            "gen_ai.request.model", "gen_ai.system", "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
        )
    )  # fmt: skip


def _after(name: str | None, prefix: str) -> str | None:
    """``"invoke_agent Triage"`` -> ``"Triage"``: the span name the conventions prescribe."""
    if name and name.startswith(prefix + " "):
        rest = name[len(prefix) + 1 :].strip()
        return rest or None
    return None


def _genai(
    node: Node, name: str | None, attrs: dict[str, Any], events: list[Any], stats: ImportStats
) -> None:
    op = str(attrs.get("gen_ai.operation.name") or "chat")
    node.usage = _usage(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                        "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")  # fmt: skip
    node.model = _str(attrs.get("gen_ai.request.model")) or _str(attrs.get("gen_ai.response.model"))
    seed = attrs.get("gen_ai.request.seed", attrs.get("gen_ai.openai.request.seed"))
    node.seed = seed if isinstance(seed, int) else None
    if op == "invoke_agent":
        node.name = _str(attrs.get("gen_ai.agent.name")) or _after(name, "invoke_agent")
        node.role = AGENT if node.name else OTHER
        _genai_content(node, attrs, events)
    elif op == "execute_tool":
        node.name = _str(attrs.get("gen_ai.tool.name")) or _after(name, "execute_tool")
        if node.name is None:
            stats.skip("execute_tool without gen_ai.tool.name")
            return
        node.role = TOOL
        node.agent = _str(attrs.get("gen_ai.agent.name"))
        node.call_id = _str(attrs.get("gen_ai.tool.call.id"))
        if "gen_ai.tool.call.arguments" in attrs:
            node.arguments = parse_arguments(attrs["gen_ai.tool.call.arguments"])
        if "gen_ai.tool.call.result" in attrs:  # "expected to be an object", JSON text when not structured
            node.output = _loads(attrs["gen_ai.tool.call.result"])
        node.target = _str(attrs.get("gen_ai.transfer.target.name"))
        node.mode = _str(attrs.get("gen_ai.transfer.mode"))
    elif op in HANDOFF_OPERATIONS:
        node.role = HANDOFF
        node.agent = _str(attrs.get("gen_ai.handoff.from_agent")) or _str(attrs.get("gen_ai.agent.name"))
        node.target = _str(attrs.get("gen_ai.handoff.to_agent"))
        if node.target is None:
            node.role = OTHER
            stats.skip("handoff without gen_ai.handoff.to_agent")
    elif op in MODEL_OPERATIONS:
        node.role = LLM
        _genai_content(node, attrs, events)
    elif op in STRUCTURE_OPERATIONS:
        _genai_content(node, attrs, events)  # a workflow's input and answer, if it is the root
    else:
        stats.skip(f"unknown gen_ai.operation.name {op!r}")


def _genai_content(node: Node, attrs: dict[str, Any], events: list[Any]) -> None:
    """Answer text, first user message, tool calls asked for and tool results given, every version's way."""
    event_attrs = {}
    for _, ea in events:
        for key in ("gen_ai.output.messages", "gen_ai.input.messages"):
            if key in ea and key not in event_attrs:
                event_attrs[key] = ea[key]
    out = _loads(attrs.get("gen_ai.output.messages", event_attrs.get("gen_ai.output.messages")))
    inp = _loads(attrs.get("gen_ai.input.messages", event_attrs.get("gen_ai.input.messages")))
    # Current conventions (1.37+): messages of typed parts.
    if isinstance(out, list):
        for i, msg in enumerate(m for m in out if isinstance(m, dict)):
            texts = []
            for part in _list(msg.get("parts")):
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "text" and isinstance(part.get("content"), str):
                    texts.append(part["content"])
                elif part.get("type") == "tool_call":
                    node.calls.append((_str(part.get("id")), _str(part.get("name")), part.get("arguments")))
            if i == 0 and texts:
                node.text = "".join(texts)
    if isinstance(inp, list):
        for msg in (m for m in inp if isinstance(m, dict)):
            for part in _list(msg.get("parts")):
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "text" and msg.get("role") == "user" and node.user is None:
                    node.user = _text(part.get("content"))
                elif part.get("type") == "tool_call_response":
                    node.results.append((_str(part.get("id")), part.get("response", part.get("result"))))
                elif part.get("type") == "tool_call":
                    node.calls.append((_str(part.get("id")), _str(part.get("name")), part.get("arguments")))
    # Conventions 1.28-1.36: one event per message (gen_ai.user.message, gen_ai.choice, ...).
    for ev_name, ea in events:
        if ev_name == "gen_ai.choice":
            message = _loads(ea.get("message"))
            message = message if isinstance(message, dict) else {}
            content = message.get("content", ea.get("content"))
            if node.text is MISSING and content is not None and str(ea.get("index") or 0) == "0":
                node.text = _text(content)
            _event_calls(node, message.get("tool_calls", ea.get("tool_calls")))
        elif ev_name == "gen_ai.assistant.message":
            _event_calls(node, ea.get("tool_calls"))
        elif ev_name == "gen_ai.user.message" and node.user is None:
            node.user = _text(ea.get("content"))
        elif ev_name == "gen_ai.tool.message":
            node.results.append((_str(ea.get("id")), _loads_content(ea.get("content"))))
        # Conventions 1.27: the whole prompt and completion as one attribute of an event.
        elif ev_name == "gen_ai.content.prompt" and node.user is None:
            node.user = _first_user(_loose(ea.get("gen_ai.prompt")))
        elif ev_name == "gen_ai.content.completion" and node.text is MISSING:
            node.text = _completion_text(_loose(ea.get("gen_ai.completion")))
    # The same as span attributes, and the flattened form of OpenLLMetry (gen_ai.prompt.0.content, ...).
    if node.user is None and "gen_ai.prompt" in attrs:
        node.user = _first_user(_loose(attrs["gen_ai.prompt"]))
    if node.text is MISSING and "gen_ai.completion" in attrs:
        node.text = _completion_text(_loose(attrs["gen_ai.completion"]))
    if any(k.startswith(("gen_ai.prompt.", "gen_ai.completion.")) for k in attrs):
        _flattened(node, attrs)


def _flattened(node: Node, attrs: dict[str, Any]) -> None:
    prompts = _indexed(attrs, "gen_ai.prompt.")
    for i in sorted(prompts):
        p = prompts[i]
        if p.get("role") == "user" and node.user is None and p.get("content") is not None:
            node.user = _text(p["content"])
        elif p.get("role") == "tool" and p.get("tool_call_id"):
            node.results.append((str(p["tool_call_id"]), p.get("content")))
    completions = _indexed(attrs, "gen_ai.completion.")
    for i in sorted(completions):
        c = completions[i]
        if i == 0 and node.text is MISSING and c.get("content") is not None:
            node.text = _text(c["content"])
        calls = _indexed(c, "tool_calls.")
        for j in sorted(calls):
            call = calls[j]
            node.calls.append((_str(call.get("id")), _str(call.get("name")), call.get("arguments")))


def _openinference(node: Node, name: str | None, attrs: dict[str, Any], stats: ImportStats) -> None:
    kind = str(attrs.get("openinference.span.kind")).upper()
    node.usage = _usage(attrs, "llm.token_count.prompt", None, "llm.token_count.completion", None)
    node.model = _str(attrs.get("llm.model_name"))
    json_out = attrs.get("output.mime_type") == "application/json"
    if kind == "AGENT":
        node.name = _str(attrs.get("agent.name")) or (name if node.parent else None)
        node.role = AGENT if node.name else OTHER
    elif kind == "TOOL":
        tool = _str(attrs.get("tool.name"))
        if tool is None and name and name.startswith("handoff to "):
            node.role = HANDOFF
            node.agent = _str(attrs.get("input.value"))
            node.target = _str(attrs.get("output.value")) or name[len("handoff to ") :]
            return
        node.role, node.name = TOOL, tool or name
        node.call_id = _str(attrs.get("tool.id")) or _str(attrs.get("tool_call.id"))
        if "input.value" in attrs:
            node.arguments = parse_arguments(attrs["input.value"])
        if "output.value" in attrs:
            node.output = _loads(attrs["output.value"]) if json_out else attrs["output.value"]
        return
    elif kind == "LLM":
        node.role = LLM
        params = _loads(attrs.get("llm.invocation_parameters"))
        if isinstance(params, dict) and isinstance(params.get("seed"), int):
            node.seed = params["seed"]
        _openinference_messages(node, attrs)
        return
    elif kind not in OPENINFERENCE_STRUCTURE:
        stats.skip(f"unknown openinference.span.kind {kind!r}")
    # The run's own input and answer, read if this span is the root.
    if isinstance(attrs.get("input.value"), str):
        node.user = attrs["input.value"]
    if "output.value" in attrs:
        node.text = _loads(attrs["output.value"]) if json_out else attrs["output.value"]


def _openinference_messages(node: Node, attrs: dict[str, Any]) -> None:
    """``llm.output_messages.N.message.*`` (answer, tool calls) and ``llm.input_messages.N`` (user, tool results)."""
    outs = _indexed(attrs, "llm.output_messages.")
    for i in sorted(outs):
        msg = outs[i]
        text = msg.get("message.content")
        if text is None:
            contents = _indexed(msg, "message.contents.")
            parts = [
                t for _, c in sorted(contents.items())
                if c.get("message_content.type", "text") == "text" and isinstance(t := c.get("message_content.text"), str)
            ]  # fmt: skip
            text = "".join(parts) if parts else None
        if text is not None and node.text is MISSING:
            node.text = text
        calls = _indexed(msg, "message.tool_calls.")
        for j in sorted(calls):
            call = calls[j]
            node.calls.append(
                (_str(call.get("tool_call.id")), _str(call.get("tool_call.function.name")),
                 call.get("tool_call.function.arguments"))
            )  # fmt: skip
    ins = _indexed(attrs, "llm.input_messages.")
    for i in sorted(ins):
        msg = ins[i]
        role = msg.get("message.role")
        content = msg.get("message.content")
        if content is None:
            contents = _indexed(msg, "message.contents.")
            parts = [
                t for _, c in sorted(contents.items()) if isinstance(t := c.get("message_content.text"), str)
            ]
            content = "".join(parts) if parts else None
        if role == "user" and node.user is None and content is not None:
            node.user = _text(content)
        elif role == "tool" and msg.get("message.tool_call_id"):
            node.results.append((str(msg["message.tool_call_id"]), content))


# -- small helpers -------------------------------------------------------------------------------
_INDEX = re.compile(r"(\d+)\.(.+)")


def _indexed(attrs: dict[str, Any], prefix: str) -> dict[int, dict[str, Any]]:
    """Flattened lists: ``{prefix}0.role`` ... as ``{0: {"role": ...}}``."""
    out: dict[int, dict[str, Any]] = {}
    n = len(prefix)
    for key, value in attrs.items():
        if key.startswith(prefix):
            m = _INDEX.fullmatch(key, n)
            if m:
                out.setdefault(int(m.group(1)), {})[m.group(2)] = value
    return out


def _event_calls(node: Node, calls: Any) -> None:
    calls = _loads(calls)
    for call in calls if isinstance(calls, list) else []:
        call = _loads(call)
        if not isinstance(call, dict):
            continue
        fn = _loads(call.get("function"))
        fn = fn if isinstance(fn, dict) else {}
        node.calls.append((_str(call.get("id")), _str(fn.get("name", call.get("name"))), fn.get("arguments")))


def _usage(
    attrs: dict[str, Any], tin: str, tin_old: str | None, tout: str, tout_old: str | None
) -> tuple[int, int] | None:
    i = attrs.get(tin, attrs.get(tin_old) if tin_old else None)
    o = attrs.get(tout, attrs.get(tout_old) if tout_old else None)
    if i is None and o is None:
        return None
    try:
        return int(i or 0), int(o or 0)
    except (TypeError, ValueError):
        return None


def _loads(value: Any) -> Any:
    """A JSON string decoded (structured values pass through; non-JSON text stays text)."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return loads_embedded(value)
        except ValueError:
            return value
    return value


def _loads_content(value: Any) -> Any:
    return _loads(value) if isinstance(value, str) and value[:1] in ("[", "{") else value


def _loose(value: Any) -> Any:
    """JSON, or the Python-literal form the 1.27 examples show (``[{'role': 'user', ...}]``)."""
    if not isinstance(value, str):
        return value
    try:
        return loads_embedded(value)
    except ValueError:
        pass
    if len(value) < 1_000_000:
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        else:
            if nested_within(literal, MAX_EMBEDDED_DEPTH):
                return literal
    return value


def _first_user(messages: Any) -> str | None:
    if isinstance(messages, str):
        return messages
    for m in messages if isinstance(messages, list) else []:
        if isinstance(m, dict) and m.get("role") == "user" and m.get("content") is not None:
            return _text(m["content"])
    return None


def _completion_text(messages: Any) -> Any:
    if isinstance(messages, str):
        return messages
    for m in messages if isinstance(messages, list) else []:
        if isinstance(m, dict) and m.get("content") is not None:
            return _text(m["content"])
    return MISSING


def _text(content: Any) -> Any:
    """Message content as text: a string, or the text parts of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            t for p in content
            if isinstance(t := p if isinstance(p, str) else p.get("text", p.get("content")) if isinstance(p, dict) else None, str)
        ]  # fmt: skip
        return "".join(parts) if parts else None
    if isinstance(content, dict):
        inner = content.get("text", content.get("content"))
        return inner if isinstance(inner, str) else None
    return None if content is None else str(content)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
