"""The offline simulator as an OpenAI-compatible Chat Completions endpoint on 127.0.0.1 (issue 24).

Any framework with an OpenAI-compatible client (LangGraph, PydanticAI, CrewAI, ...) reaches the simulator
through its ordinary base-URL setting: the interception is at HTTP, so no SDK object is patched and the
framework's own request/response code runs. Routes: ``POST /v1/chat/completions`` (JSON, or ``"stream":
true`` server-sent ``chat.completion.chunk`` events) and ``GET /v1/models``.

A request carries no agent name, so :meth:`Behaviour.resolve_agent` recognises the agent from the system
text and the offered tools (the behaviour's ``match`` keys, see ``_simulator``); handoffs are tool calls
(``transfer_to_orders_agent``, ...). It carries no trial either: the trial's seed comes from
``seed_for(trace_id)``, with the trace id of the W3C ``traceparent`` header the capture adapter's
instrumented client sends; :class:`TrialSeeds` is the default registry. A request no trial claims is
refused (409) rather than drawn with some other trial's seed, which would mix trials silently.

The answer is :func:`decide` of (seed, agent, system text, offered tool names, conversation) only, so
concurrent requests get the answers they would get one by one.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..._errors import AgentAssayError
from ._quoted import quoted_items, tool_output
from ._simulator import MODEL_NAME, Behaviour, Decision, ToolSpec, decide, load_behaviour, read_conversation

__all__ = ["MAX_BODY", "OfflineServer", "TrialSeeds"]

MAX_BODY = 16 * 1024 * 1024  # bytes of one request body; larger is refused with 413
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")
_STREAM_PIECE = 32  # characters of content per streamed delta
UNATTRIBUTED = (
    "the request could not be attributed to a trial: {why}. Run this framework's trials serially or "
    "instrument its HTTP client so requests carry traceparent"
)

SeedFor = Callable[[str | None], int | None]


class TrialSeeds:
    """Trace id -> trial seed, for the trials running now (thread-safe).

    A request without a trace id is attributed only when exactly one trial is registered (serial trials).
    ``unattributed`` counts the requests it could not attribute.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seeds: dict[str, int] = {}
        self.unattributed = 0

    def register(self, trace_id_hex: str, seed: int) -> None:
        with self._lock:
            self._seeds[trace_id_hex.lower()] = int(seed)

    def unregister(self, trace_id_hex: str) -> None:
        with self._lock:
            self._seeds.pop(trace_id_hex.lower(), None)

    def __call__(self, trace_id: str | None) -> int | None:
        with self._lock:
            if trace_id is not None:
                seed = self._seeds.get(trace_id.lower())
            elif len(self._seeds) == 1:
                seed = next(iter(self._seeds.values()))
            else:
                seed = None
            if seed is None:
                self.unattributed += 1
            return seed


class _RequestError(AgentAssayError):
    """An HTTP error answer: status, OpenAI's error type and code, and the message (never escapes the server)."""

    def __init__(self, status: int, message: str, code: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.kind = status, message, code, kind


def trace_id_of(traceparent: str | None) -> str | None:
    """The trace id of a W3C ``traceparent`` header (32 lowercase hex digits), or None when absent or invalid."""
    found = _TRACEPARENT.match((traceparent or "").strip().lower())
    if found is None or found.group(1) == "ff" or set(found.group(2)) == {"0"} or set(found.group(3)) == {"0"}:
        return None
    return found.group(2)


# -- reading a request --------------------------------------------------------------------------
def _text(content: Any, where: str) -> str:
    """Message content: a string, None, or a list of parts whose ``text`` parts are joined."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
            else:
                raise _RequestError(400, f"{where}: a content part must be an object", "invalid_content")
        return "\n".join(parts)
    raise _RequestError(400, f"{where}: content must be a string or a list of parts", "invalid_content")


def _messages(body: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The system text (system and developer messages) and the rest as Responses-API style items."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _RequestError(400, "'messages' must be a non-empty list of message objects", "invalid_messages")
    system: list[str] = []
    items: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise _RequestError(400, f"{where}: expected an object with a string 'role'", "invalid_messages")
        role = message["role"]
        text = _text(message.get("content"), where)
        if role in ("system", "developer"):
            system.append(text)
        elif role == "tool":
            output = tool_output(text)
            items.append({"type": "function_call_output", "call_id": message.get("tool_call_id"), "output": output})
        elif role == "function":  # the legacy function-calling shape
            items.append({"type": "function_call_output", "call_id": message.get("name"), "output": text})
        elif role == "assistant":
            if text:
                items.append({"role": "assistant", "content": text})
            calls = message.get("tool_calls") or []
            legacy = message.get("function_call")
            if isinstance(legacy, Mapping):
                calls = [*calls, {"id": legacy.get("name"), "function": legacy}]
            if not isinstance(calls, list):
                raise _RequestError(400, f"{where}.tool_calls: expected a list", "invalid_messages")
            for call in calls:
                function = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                    raise _RequestError(
                        400, f"{where}.tool_calls: each call needs function.name", "invalid_messages"
                    )
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.get("id"),
                        "name": function["name"],
                        "arguments": function.get("arguments") or "",
                    }
                )
        elif role == "user" and (quoted := quoted_items(text, items)) is not None:
            items.extend(quoted)  # other agents' turns quoted as a user message (Google ADK): what they were
        else:
            items.append({"role": role, "content": text})
    return "\n".join(system), items


def _tools(body: Mapping[str, Any]) -> list[ToolSpec]:
    tools = body.get("tools")
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise _RequestError(400, "'tools' must be a list of tool objects", "invalid_tools")
    specs = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise _RequestError(400, f"tools[{i}]: expected an object", "invalid_tools")
        if tool.get("type", "function") != "function":
            continue  # custom or hosted tools: not callable by the simulator
        function = tool.get("function")
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise _RequestError(400, f"tools[{i}]: expected function.name (a string)", "invalid_tools")
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, Mapping):
            raise _RequestError(400, f"tools[{i}].function.parameters: expected a JSON schema", "invalid_tools")
        description = function.get("description")
        specs.append(
            ToolSpec(function["name"], description if isinstance(description, str) else "", parameters or {})
        )
    return specs


def _tool_choice(body: Mapping[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, Mapping):
        function = choice.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return function["name"]
        if choice.get("type") in ("allowed_tools", "auto"):
            return None
    raise _RequestError(
        400,
        "'tool_choice' must be 'auto', 'none', 'required' or {'type': 'function', 'function': {'name': ...}}",
        "invalid_tool_choice",
    )


def _output_schema(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    fmt = body.get("response_format")
    if fmt is None:
        return None
    if not isinstance(fmt, Mapping) or not isinstance(fmt.get("type"), str):
        raise _RequestError(400, "'response_format' must be an object with a 'type'", "invalid_response_format")
    if fmt["type"] == "json_object":
        return {"type": "object"}
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if not isinstance(schema, Mapping):
            raise _RequestError(
                400, "'response_format.json_schema.schema' must be a JSON schema object", "invalid_response_format"
            )
        return schema
    return None  # "text"


def _conforms(value: Any, schema: Any, root: Mapping[str, Any], depth: int = 0) -> bool:
    """Whether ``value`` fits the common JSON-schema keywords (type, enum, const, properties, required, items)."""
    if not isinstance(schema, Mapping) or depth > 16:
        return True
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        return _conforms(value, node, root, depth + 1)
    if "const" in schema and value != schema["const"]:
        return False
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        return False
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and not any(
            _conforms(value, option, root, depth + 1) for option in schema[key]
        ):
            return False
    if isinstance(schema.get("allOf"), list) and not all(
        _conforms(value, option, root, depth + 1) for option in schema["allOf"]
    ):
        return False
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if isinstance(kinds, list) and not any(_is(value, kind) for kind in kinds):
        return False
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        if any(name not in value for name in schema.get("required") or []):
            return False
        if schema.get("additionalProperties") is False and set(value) - set(props):
            return False
        return all(_conforms(v, props[k], root, depth + 1) for k, v in value.items() if k in props)
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return all(_conforms(v, schema["items"], root, depth + 1) for v in value)
    return True


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    types = {"string": str, "boolean": bool, "object": dict, "array": list, "null": type(None)}
    return isinstance(value, types.get(kind, object))


def _validator(schema: Mapping[str, Any]) -> Callable[[str], None]:
    def validate(text: str) -> None:
        if not _conforms(json.loads(text), schema, schema):
            raise ValueError("the text does not fit the response format's schema")

    return validate


# -- the answer ---------------------------------------------------------------------------------
def _usage(decision: Decision) -> dict[str, int]:
    n_in, n_out = decision.input_tokens, decision.output_tokens
    return {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}


def _completion(decision: Decision, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": decision.text, "refusal": None}
    if decision.call is not None:
        message["tool_calls"] = [
            {
                "id": f"call_{decision.tag}",
                "type": "function",
                "function": {"name": decision.call, "arguments": decision.arguments or "{}"},
            }
        ]
    return {
        "id": f"chatcmpl-{decision.tag}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "system_fingerprint": None,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "stop" if decision.call is None else "tool_calls",
            }
        ],
        "usage": _usage(decision),
    }


def _chunks(decision: Decision, model: str, include_usage: bool) -> bytes:
    """The decision as OpenAI's ``chat.completion.chunk`` server-sent events, ending with ``[DONE]``."""
    base = {"id": f"chatcmpl-{decision.tag}", "object": "chat.completion.chunk", "created": 0, "model": model}
    base["system_fingerprint"] = None
    events: list[dict[str, Any]] = []

    def delta(body: dict[str, Any], finish: str | None = None) -> None:
        chunk = {**base, "choices": [{"index": 0, "delta": body, "logprobs": None, "finish_reason": finish}]}
        if include_usage:
            chunk["usage"] = None
        events.append(chunk)

    delta({"role": "assistant", "content": "", "refusal": None})
    if decision.call is None:
        text = decision.text or ""
        for start in range(0, len(text), _STREAM_PIECE):
            delta({"content": text[start : start + _STREAM_PIECE]})
        delta({}, "stop")
    else:
        call = {"index": 0, "id": f"call_{decision.tag}", "type": "function"}
        delta({"tool_calls": [{**call, "function": {"name": decision.call, "arguments": ""}}]})
        delta({"tool_calls": [{"index": 0, "function": {"arguments": decision.arguments or "{}"}}]})
        delta({}, "tool_calls")
    if include_usage:
        events.append({**base, "choices": [], "usage": _usage(decision)})
    lines = [f"data: {json.dumps(event, ensure_ascii=False)}\n\n" for event in events]
    return ("".join(lines) + "data: [DONE]\n\n").encode("utf-8")


# -- the server ---------------------------------------------------------------------------------
class OfflineServer:
    """The simulator behind ``http://127.0.0.1:<port>/v1`` for OpenAI-compatible clients (see the module doc).

    ``seed_for(trace_id)`` gives the trial's seed for a request's ``traceparent`` trace id (None when the
    request has none); by default a :class:`TrialSeeds` registry, ``server.seed_for``. ``unattributed``
    counts the requests refused because no trial claimed them.
    """

    def __init__(
        self,
        behaviour: Behaviour | Mapping[str, Any] | str | Path | None = None,
        seed_for: SeedFor | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.behaviour = load_behaviour(behaviour)
        self.seed_for: SeedFor = seed_for if seed_for is not None else TrialSeeds()
        self.unattributed = 0
        self._lock = threading.Lock()
        self._address = (host, port)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the offline server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> OfflineServer:
        if self._httpd is None:
            self._httpd = _HTTPServer(self._address, _Handler, self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, name="agentassay-offline-server", daemon=True
            )
            self._thread.start()
        return self

    def close(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> OfflineServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.base_url if self._httpd is not None else "not started"
        return f"OfflineServer({where}, behaviour={self.behaviour.source})"

    def complete(self, body: Any, traceparent: str | None) -> tuple[str, bytes]:
        """One chat completion: (content type, payload). Raises ``_RequestError`` for an error answer."""
        if not isinstance(body, Mapping):
            raise _RequestError(400, "the request body must be a JSON object", "invalid_body")
        model = body.get("model") if isinstance(body.get("model"), str) else MODEL_NAME
        system, items = _messages(body)
        tools = _tools(body)
        tool_choice = _tool_choice(body)
        schema = _output_schema(body)
        stream = body.get("stream") is True
        options = body.get("stream_options")
        include_usage = isinstance(options, Mapping) and options.get("include_usage") is True
        trace_id = trace_id_of(traceparent)
        seed = self.seed_for(trace_id)
        if seed is None:
            with self._lock:
                self.unattributed += 1
            why = "it carries no traceparent" if trace_id is None else f"no trial has trace id {trace_id}"
            raise _RequestError(409, UNATTRIBUTED.format(why=why), "unattributed_request")
        names = [t.name for t in tools]
        # A registry that also knows each trial's behaviour table (one server for every agent of a process).
        lookup = getattr(self.seed_for, "behaviour", None)
        behaviour = (lookup(trace_id) if lookup is not None else None) or self.behaviour
        agent = behaviour.resolve_agent(system, names)
        try:
            decision = decide(
                behaviour,
                seed=seed,
                agent=agent,
                system=system,
                conversation=read_conversation(items, (), behaviour.handoff_tools),
                tools=tools,
                tool_choice=tool_choice,
                output_schema=schema,
                validate=_validator(schema) if schema is not None else None,
            )
        except ValueError as exc:  # the behaviour chose a tool or handoff the request does not offer
            raise _RequestError(400, str(exc), "offline_behaviour") from None
        if stream:
            return "text/event-stream", _chunks(decision, model, include_usage)
        return "application/json", json.dumps(_completion(decision, model), ensure_ascii=False).encode("utf-8")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], offline: OfflineServer):
        self.offline = offline
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer carries Content-Length
    # Headers and body go out as two writes: with Nagle on, the second waits for the client's delayed ACK
    # (~40 ms a request on Linux; measured 44 ms against 0.05 ms of work).
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: a suite's output is its report, not an access log."""

    def do_GET(self) -> None:
        if self.path.split("?")[0].rstrip("/") == "/v1/models":
            models = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "agentassay"}
            self._send(200, "application/json", json.dumps({"object": "list", "data": [models]}).encode())
        else:
            self._error(_RequestError(404, f"no route GET {self.path}", "not_found"))

    def do_POST(self) -> None:
        try:
            if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
                self._discard_body()
                raise _RequestError(404, f"no route POST {self.path}; use /v1/chat/completions", "not_found")
            raw = self._body()
            try:
                body = json.loads(raw)
            except ValueError as exc:
                raise _RequestError(400, f"the request body is not valid JSON: {exc}", "invalid_json") from None
            content_type, payload = self.server.offline.complete(body, self.headers.get("traceparent"))
            self._send(200, content_type, payload)
        except _RequestError as exc:
            self._error(exc)
        except Exception as exc:  # a bug or a behaviour's regex timeout: an answer, never a dropped socket
            self._error(_RequestError(500, f"offline simulator failed: {exc}", "server_error", "server_error"))

    def _length(self) -> int:
        raw = self.headers.get("Content-Length")
        try:
            length = int(raw) if raw is not None else -1
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            raise _RequestError(400, "a valid Content-Length header is required", "invalid_body")
        if length > MAX_BODY:
            self.close_connection = True  # the body is left unread: this connection cannot be reused
            raise _RequestError(
                413, f"the request body has {length} bytes; the limit is {MAX_BODY}", "body_too_large"
            )
        return length

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._chunked()
        return self.rfile.read(self._length())

    def _chunked(self) -> bytes:
        """A ``Transfer-Encoding: chunked`` body (some clients stream theirs), held to the same limit."""
        parts, size = [], 0
        while True:
            line = self.rfile.readline(1024)
            try:
                length = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                self.close_connection = True
                raise _RequestError(400, "a malformed chunked request body", "invalid_body") from None
            size += length
            if size > MAX_BODY:
                self.close_connection = True
                raise _RequestError(413, f"the request body exceeds the limit of {MAX_BODY} bytes", "body_too_large")
            if length == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            parts.append(self.rfile.read(length))
            self.rfile.readline(1024)  # the CRLF after each chunk

    def _discard_body(self) -> None:
        with contextlib.suppress(_RequestError):  # too large or unsized: the connection closes instead
            self._body()

    def _error(self, exc: _RequestError) -> None:
        body = {"error": {"message": exc.message, "type": exc.kind, "code": exc.code, "param": None}}
        self._send(exc.status, "application/json", json.dumps(body).encode("utf-8"))

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
