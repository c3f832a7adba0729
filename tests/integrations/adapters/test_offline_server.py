"""The offline simulator over HTTP, driven by the real ``openai`` client (and raw ``http.client`` for errors)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from agentassay._integrations.adapters._offline_server import MAX_BODY, OfflineServer, TrialSeeds, trace_id_of
from agentassay._integrations.adapters._simulator import Behaviour, read_conversation

ROOT = Path(__file__).resolve().parents[3]

# The customer-service shape of the framework examples: triage hands off to orders, which looks the order up.
BEHAVIOUR: dict[str, Any] = {
    "Triage Agent": {
        "match": {"system": "(?i)triage"},
        "rules": [
            {"after": "handoff", "choose": "respond", "respond": "Back at triage."},
            {"input": "(?i)order", "choose": {"handoff:Orders Agent": 1.0}},
            {"input": "(?i)coin", "choose": {"respond": 0.5, "tool:flip": 0.5}, "respond": "heads"},
        ],
        "respond": "I can help with orders.",
    },
    "Orders Agent": {
        "rules": [
            {"after": "handoff", "choose": {"tool:lookup_order": 1.0}},
            {"after": "tool:lookup_order", "choose": "respond", "respond": "{tool_output}"},
        ],
        "arguments": {"lookup_order": {"order_id": {"regex": r"\b(\d{3,})\b"}}},
    },
    "Refunds Agent": {"match": {"tools": ["issue_refund"]}, "respond": "Refunds here."},
    "*": {"respond": "Generic answer."},
}

TRIAGE = "You are the front desk: triage the customer's request."
ORDERS = "You are the Orders Agent. Look orders up."


def fn(name: str, **params: str) -> dict[str, Any]:
    """An OpenAI function tool with string parameters (strict, as real clients send it)."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"the {name} tool",
            "parameters": {
                "type": "object",
                "properties": {p: {"type": "string"} for p in params},
                "required": list(params),
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


LOOKUP = fn("lookup_order", order_id="str")
TRANSFER = fn("transfer_to_orders_agent")
FLIP = fn("flip")


def traceparent(n: int) -> str:
    return f"00-{n:032x}-{1:016x}-01"


@pytest.fixture
def seeds() -> TrialSeeds:
    return TrialSeeds()


@pytest.fixture
def server(seeds: TrialSeeds) -> Iterator[OfflineServer]:
    with OfflineServer(BEHAVIOUR, seeds) as running:
        yield running


def client(server: OfflineServer, trace: int | None = 1) -> openai.OpenAI:
    headers = {"traceparent": traceparent(trace)} if trace is not None else {}
    return openai.OpenAI(base_url=server.base_url, api_key="offline", default_headers=headers, max_retries=0)


def ask(server: OfflineServer, messages: list[dict[str, Any]], trace: int = 1, **kw: Any) -> Any:
    return client(server, trace).chat.completions.create(model="gpt-test", messages=messages, **kw)


def raw(server: OfflineServer, method: str, path: str, body: bytes | None = None, **headers: str) -> tuple[int, Any]:
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json", **headers})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def handed_over(user: str) -> list[dict[str, Any]]:
    """A conversation just handed to the orders agent by a transfer tool call."""
    return [
        {"role": "system", "content": ORDERS},
        {"role": "user", "content": user},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "transfer_to_orders_agent", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Transferred to Orders Agent."},
    ]


# -- answers ----------------------------------------------------------------------------------------
def test_plain_answer_with_usage_and_model_echo(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    reply = ask(server, [{"role": "system", "content": TRIAGE}, {"role": "user", "content": "hello"}])
    assert reply.choices[0].message.content == "I can help with orders."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == "gpt-test"
    usage = reply.usage
    assert usage is not None and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_handoff_tool_call_then_lookup_then_answer(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    triage = ask(
        server,
        [{"role": "system", "content": TRIAGE}, {"role": "user", "content": "where is order 12345?"}],
        tools=[TRANSFER],
        parallel_tool_calls=False,
    )
    call = triage.choices[0].message.tool_calls[0]
    assert triage.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "transfer_to_orders_agent"  # handoff:Orders Agent, as chat frameworks spell it

    messages = handed_over("where is order 12345?")  # after: handoff
    lookup = ask(server, messages, tools=[LOOKUP, TRANSFER], tool_choice="auto")
    call = lookup.choices[0].message.tool_calls[0]
    assert call.function.name == "lookup_order"
    assert json.loads(call.function.arguments) == {"order_id": "12345"}

    messages += [
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": [{"type": "text", "text": "Order 12345 shipped."}]},
    ]
    answer = ask(server, messages, tools=[LOOKUP, TRANSFER])
    assert answer.choices[0].message.content == "Order 12345 shipped."  # {tool_output}


def test_after_handoff_holds_for_the_agent_handed_to(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    messages = handed_over("hi")
    messages[0] = {"role": "system", "content": TRIAGE}
    reply = ask(server, messages, tools=[TRANSFER])
    assert reply.choices[0].message.content == "Back at triage."


def test_streaming_tool_call_reassembled_by_the_client(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    stream = ask(
        server, handed_over("order 987 please"), tools=[LOOKUP], stream=True, stream_options={"include_usage": True}
    )
    name, arguments, finish, usage, ids = "", "", None, None, set()
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk" and chunk.model == "gpt-test"
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
            for delta in choice.delta.tool_calls or []:
                assert delta.index == 0 and delta.function is not None
                if delta.id:
                    ids.add(delta.id)
                name += delta.function.name or ""
                arguments += delta.function.arguments or ""
    assert (name, json.loads(arguments), finish) == ("lookup_order", {"order_id": "987"}, "tool_calls")
    assert len(ids) == 1 and usage is not None and usage.total_tokens > 0
    blocking = ask(server, handed_over("order 987 please"), tools=[LOOKUP])
    assert blocking.choices[0].message.tool_calls[0].function.arguments == arguments
    assert blocking.usage.total_tokens == usage.total_tokens


def test_streaming_text(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    messages = [{"role": "developer", "content": "Something else entirely."}, {"role": "user", "content": "x"}]
    chunks = list(ask(server, messages, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Generic answer."
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[-1].choices[0].finish_reason == "stop"


# -- which agent ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("system", "tools", "expected"),
    [
        (TRIAGE, [], "I can help with orders."),  # match.system
        ("You process refunds.", [fn("issue_refund")], "Refunds here."),  # match.tools
        ("You are the orders agent; be brief.", [], "I'm sorry, I can't help with that."),  # name, any case
        ("You are a poet.", [], "Generic answer."),  # "*"
    ],
)
def test_agent_resolution(
    server: OfflineServer, seeds: TrialSeeds, system: str, tools: list[Any], expected: str
) -> None:
    seeds.register(f"{1:032x}", 7)
    messages = [{"role": "system", "content": [{"type": "text", "text": system}]}, {"role": "user", "content": "hi"}]
    reply = ask(server, messages, **({"tools": tools} if tools else {}))
    assert reply.choices[0].message.content == expected


def test_resolve_agent_longest_name_and_table_order() -> None:
    b = Behaviour({"Orders": {}, "Orders Agent": {}, "A": {"match": {"tools": ["t"]}}, "B": {"match": {"tools": ["t"]}}})
    assert b.resolve_agent("hello ORDERS AGENT", []) == "Orders Agent"
    assert b.resolve_agent("orders agent", ["t", "u"]) == "A"
    assert b.resolve_agent("nobody in the disorders department", []) is None  # whole words only


@pytest.mark.parametrize(
    ("match", "message"),
    [
        ("triage", r"\['Triage Agent'\]\.match: expected a mapping with key\(s\) \['system', 'tools'\]"),
        ({"prompt": "x"}, r"unknown key\(s\) \['prompt'\]; allowed \['system', 'tools'\]"),
        ({"system": "("}, r"\.match\.system: bad regex"),
        ({"tools": "lookup"}, r"\.match\.tools: expected a list of tool names"),
    ],
)
def test_match_is_validated_when_the_behaviour_loads(match: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Behaviour({"Triage Agent": {"match": match}})


def test_handoff_tools_setting_is_validated_and_used() -> None:
    with pytest.raises(ValueError, match=r"\['handoff_tools'\]: bad regex"):
        Behaviour({"handoff_tools": "("})
    b = Behaviour({"handoff_tools": "^route_", "A": {}})
    assert set(b.agents) == {"A"}
    items = [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "1", "name": "route_to_b", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "1", "output": "ok"},
    ]
    conv = read_conversation(items, (), b.handoff_tools)
    assert (conv.state, conv.handoffs) == ("handoff", 1)
    conv = read_conversation(items, (), Behaviour().handoff_tools)
    assert (conv.state, conv.handoffs, conv.tool_output) == ("tool", 0, "ok")


# -- tool_choice and structured output ----------------------------------------------------------------
def test_tool_choice_forms(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    messages = handed_over("order 555")
    assert ask(server, messages, tools=[LOOKUP], tool_choice="none").choices[0].message.tool_calls is None
    messages[0] = {"role": "system", "content": "You are a poet."}
    forced = {"type": "function", "function": {"name": "lookup_order"}}
    assert ask(server, messages, tools=[LOOKUP], tool_choice=forced).choices[0].message.tool_calls
    assert ask(server, messages, tools=[LOOKUP], tool_choice="required").choices[0].message.tool_calls


def test_response_format_json_schema(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    schema = {
        "type": "object",
        "properties": {"status": {"type": "string", "enum": ["ok", "late"]}, "days": {"type": "integer"}},
        "required": ["status", "days"],
        "additionalProperties": False,
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "Status", "schema": schema, "strict": True}}
    reply = ask(server, [{"role": "system", "content": TRIAGE}, {"role": "user", "content": "hi"}], response_format=fmt)
    data = json.loads(reply.choices[0].message.content)
    assert data["status"] in ("ok", "late") and isinstance(data["days"], int) and set(data) == {"status", "days"}


# -- trials: seeds, concurrency, attribution ------------------------------------------------------------
COIN = [{"role": "system", "content": TRIAGE}, {"role": "user", "content": "flip a coin"}]


def coin(server: OfflineServer, trace: int) -> str:
    message = ask(server, COIN, trace=trace, tools=[FLIP]).choices[0].message
    return message.content if message.tool_calls is None else f"call {message.tool_calls[0].function.name}"


def test_concurrent_requests_answer_as_sequential_ones(server: OfflineServer, seeds: TrialSeeds) -> None:
    for n in range(1, 9):
        seeds.register(f"{n:032x}", 1000 + n)
    sequential = {n: coin(server, n) for n in range(1, 9)}
    barrier = threading.Barrier(8)
    concurrent: dict[int, str] = {}

    def worker(n: int) -> None:
        barrier.wait()
        concurrent[n] = coin(server, n)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert concurrent == sequential
    assert len(set(sequential.values())) == 2  # the 50/50 rule drew both ways across these trials


def test_seeds_change_the_draws_and_replay(server: OfflineServer, seeds: TrialSeeds) -> None:
    for n in range(1, 21):
        seeds.register(f"{n:032x}", n)
    draws = [coin(server, n) for n in range(1, 21)]
    assert set(draws) == {"heads", "call flip"}
    assert [coin(server, n) for n in range(1, 21)] == draws


def test_unattributed_requests_are_refused_with_409(server: OfflineServer, seeds: TrialSeeds) -> None:
    with pytest.raises(openai.ConflictError, match="could not be attributed to a trial"):
        ask(server, COIN, trace=5)
    seeds.register(f"{1:032x}", 3)
    assert client(server, None).chat.completions.create(model="m", messages=COIN).choices  # the only trial
    seeds.register(f"{2:032x}", 4)
    status, body = raw(server, "POST", "/v1/chat/completions", json.dumps({"messages": COIN}).encode())
    assert status == 409 and body["error"]["code"] == "unattributed_request"
    assert "instrument its HTTP client so requests carry traceparent" in body["error"]["message"]
    assert server.unattributed == 2 and seeds.unattributed == 2
    seeds.unregister(f"{2:032x}")
    assert seeds(None) == 3


def test_traceparent_parsing() -> None:
    assert trace_id_of(traceparent(255)) == f"{255:032x}"
    assert trace_id_of("00-" + "0" * 32 + "-" + "1" * 16 + "-01") is None
    assert trace_id_of("garbage") is None and trace_id_of(None) is None


# -- errors -----------------------------------------------------------------------------------------
def test_models_route(server: OfflineServer) -> None:
    assert [m.id for m in client(server).models.list()] == ["offline-simulator"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[]", "must be a JSON object"),
        (json.dumps({"model": "m"}).encode(), "'messages' must be a non-empty list"),
        (json.dumps({"messages": [{"content": "x"}]}).encode(), r"messages[0]: expected an object"),
        (json.dumps({"messages": COIN, "tools": [{"type": "function"}]}).encode(), "tools[0]: expected function"),
        (json.dumps({"messages": COIN, "tool_choice": 3}).encode(), "'tool_choice' must be"),
    ],
)
def test_bad_requests_get_400(server: OfflineServer, seeds: TrialSeeds, body: bytes, message: str) -> None:
    seeds.register(f"{1:032x}", 7)
    status, answer = raw(server, "POST", "/v1/chat/completions", body)
    assert status == 400 and set(answer["error"]) >= {"message", "type", "code"}
    assert message in answer["error"]["message"]


def test_a_choice_the_request_does_not_offer_is_400(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    with pytest.raises(openai.BadRequestError) as caught:
        ask(server, [{"role": "system", "content": TRIAGE}, {"role": "user", "content": "order 1"}], tools=[FLIP])
    assert (
        "offline behaviour for agent 'Triage Agent' chose 'handoff:Orders Agent', but the agent only has ['flip']"
        in str(caught.value)
    )


def test_chunked_request_body(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = json.dumps({"model": "m", "messages": [{"role": "system", "content": TRIAGE}, {"role": "user", "content": "hi"}]})
    try:
        pieces = iter([body[:10].encode(), body[10:].encode()])
        conn.request("POST", "/v1/chat/completions", body=pieces, encode_chunked=True)
        response = conn.getresponse()
        assert response.status == 200
        assert json.loads(response.read())["choices"][0]["message"]["content"] == "I can help with orders."
    finally:
        conn.close()


def test_max_handoffs_counts_handoff_tool_results(server: OfflineServer, seeds: TrialSeeds) -> None:
    seeds.register(f"{1:032x}", 7)
    messages: list[dict[str, Any]] = [{"role": "system", "content": TRIAGE}]
    for i in range(4):  # DEFAULT_MAX_HANDOFFS transfers, each taken while under the guard
        reply = ask(server, [*messages, {"role": "user", "content": "my order 42"}], tools=[TRANSFER])
        assert reply.choices[0].message.tool_calls is not None
        call = {"id": f"h{i}", "type": "function", "function": {"name": "transfer_to_orders_agent", "arguments": "{}"}}
        messages += [
            {"role": "user", "content": "my order 42"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"h{i}", "content": "ok"},
        ]
    messages.append({"role": "user", "content": "my order 42"})
    reply = ask(server, messages, tools=[TRANSFER])
    assert reply.choices[0].message.tool_calls is None  # the loop guard answers instead


def test_unknown_paths_are_404_and_big_bodies_413(server: OfflineServer) -> None:
    assert raw(server, "GET", "/v1/nothing")[0] == 404
    assert raw(server, "POST", "/v1/completions", b"{}")[0] == 404
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:  # announce a body over the limit; the server answers without reading it
        conn.putrequest("POST", "/v1/chat/completions")
        conn.putheader("Content-Length", str(MAX_BODY + 1))
        conn.endheaders()
        response = conn.getresponse()
        assert response.status == 413 and json.loads(response.read())["error"]["code"] == "body_too_large"
    finally:
        conn.close()


# -- the core stands alone --------------------------------------------------------------------------
def test_simulator_core_imports_without_the_sdks() -> None:
    code = (
        "import sys\n"
        "sys.modules['agents'] = None\n"
        "sys.modules['openai'] = None\n"
        "import agentassay._integrations.adapters._simulator as s\n"
        "import agentassay._integrations.adapters._offline_server as h\n"
        "assert 'agents' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "print(s.decide.__name__, h.OfflineServer.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["decide", "OfflineServer"]
