"""`model: {provider: offline}` for an agent outside the Agents SDK (issue 24, point 3), end to end.

The agent below is what a framework does, written out: it builds an ``openai.OpenAI()`` client at import
(reading ``OPENAI_BASE_URL`` like every framework's client), loops over chat completions with tools, and
reports GenAI spans. AgentAssay must put the offline server behind that client before the import, tell the
server each trial's seed and behaviour through ``traceparent``, and capture each trial's spans.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from agentassay._integrations.adapters._otel._offline import reset
from agentassay._integrations.cli import main
from agentassay._traces import Action, TraceStore

AGENT = '''
import json
import openai
from opentelemetry import trace

client = openai.OpenAI()  # base URL and key from the environment, as frameworks do
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "description": "Look an order up.",
          "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                         "required": ["order_id"]}}}]

def lookup_order(order_id):
    return f"order {order_id}: shipped"

OFFLINE_BEHAVIOUR = {
    "Orders Agent": {
        "match": {"system": "(?i)orders"},
        "rules": [
            {"after": "user", "choose": {"tool:lookup_order": 0.5, "respond": 0.5}, "respond": "no idea"},
            {"after": "tool", "choose": "respond", "respond": "{tool_output}"},
        ],
        "arguments": {"lookup_order": {"order_id": {"regex": "(\\\\d+)"}}},
    },
}

def agent(question):
    tracer = trace.get_tracer("toy")
    messages = [{"role": "system", "content": "You are the orders agent."},
                {"role": "user", "content": question}]
    with tracer.start_as_current_span("invoke_agent Orders Agent", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Orders Agent"}):
        for _ in range(3):
            reply = client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=TOOLS)
            with tracer.start_as_current_span("chat", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4.1-mini",
                    "gen_ai.usage.input_tokens": reply.usage.prompt_tokens,
                    "gen_ai.usage.output_tokens": reply.usage.completion_tokens}):
                pass
            message = reply.choices[0].message
            if not message.tool_calls:
                return message.content
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                args = json.loads(call.function.arguments)
                result = lookup_order(**args)
                with tracer.start_as_current_span("execute_tool lookup_order", attributes={
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
                        "gen_ai.agent.name": "Orders Agent",
                        "gen_ai.tool.call.arguments": call.function.arguments,
                        "gen_ai.tool.call.result": result}):
                    pass
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return "gave up"
'''

SUITE = '''
name: toy-orders
agent: {entry: "toy_orders_agent:agent", framework: otel}
model: {provider: offline}
config: {trials: 16, threshold: 0.1, method: fixed, concurrency: 8, seed: 3}
scenarios:
  - name: where
    input: "Where is order 4242?"
    evaluator:
      - contains: "shipped"
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("openai")
    (tmp_path / "toy_orders_agent.py").write_text(textwrap.dedent(AGENT), encoding="utf-8")
    (tmp_path / "agentassay.yml").write_text(SUITE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for key in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    reset()  # as in a fresh process: no endpoint yet, the environment the user's
    yield tmp_path
    reset()
    sys.modules.pop("toy_orders_agent", None)


def test_offline_trials_of_a_non_sdk_agent_draw_per_trial_and_keep_their_traces(project: Path) -> None:
    store = project / "traces.db"
    code = main(["run", "agentassay.yml", "-o", "out.json", "--store", str(store), "-q"])
    assert code in (0, 1, 2)
    results = json.loads((project / "out.json").read_text(encoding="utf-8"))
    [scenario] = results["scenarios"]
    trials = scenario["trials"]
    assert len(trials) == 16
    passed = sum(1 for t in trials if t["passed"])
    assert 0 < passed < 16, "each trial draws with its own seed: a 50/50 rule gives both outcomes"
    db = TraceStore(store)
    try:
        [version] = db.versions()
        stored = db.query(version, ["where"])
    finally:
        db.close()
    assert len(stored) == 16
    for row in stored:
        trace = row.trace
        calls = [s for s in trace.steps if s.action is Action.CALL_TOOL]
        assert trace.metadata.adapter == "otel:otel"
        assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0
        assert all(s.agent == "Orders Agent" for s in trace.steps)
        if row.passed:
            assert calls[0].arguments == {"order_id": "4242"} and calls[0].output == "order 4242: shipped"
            assert trace.output == "order 4242: shipped"
        else:
            assert not calls and trace.output == "no idea"
    assert len({row.trace.metadata.extra["trace_id"] for row in stored}) == 16

def test_same_seed_same_outcomes(project: Path) -> None:
    """Concurrent trials (8 in flight) give the outcomes a second run with the same seed gives."""
    main(["run", "agentassay.yml", "-o", "a.json", "-q"])
    main(["run", "agentassay.yml", "-o", "b.json", "-q", "--concurrency", "1"])
    a = json.loads((project / "a.json").read_text(encoding="utf-8"))["scenarios"][0]["trials"]
    b = json.loads((project / "b.json").read_text(encoding="utf-8"))["scenarios"][0]["trials"]
    assert [t["passed"] for t in a] == [t["passed"] for t in b]


def test_a_real_provider_judge_does_not_reach_the_simulator(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a framework agent runs offline, OPENAI_* point at the simulator; the judge reads the user's."""
    from agentassay._integrations.adapters._otel._offline import OPENAI_URL, user_openai_settings
    from agentassay._integrations.adapters._resolve import load_adapter
    from agentassay._spec import ModelConfig

    monkeypatch.setenv("OPENAI_API_KEY", "sk-users-own")
    reset()
    load_adapter("toy_orders_agent:agent", framework="otel", model=ModelConfig(provider="offline"), root=project)
    import os

    assert os.environ["OPENAI_API_KEY"] == "sk-users-own"  # kept: module code and redaction see the user's key
    assert os.environ["OPENAI_BASE_URL"].startswith("http://127.0.0.1:")
    assert user_openai_settings() == {"base_url": OPENAI_URL, "api_key": "sk-users-own"}

    from agentassay._features.judge._config import JudgeConfig
    from agentassay._features.judge._providers import OpenAIGrader

    judge = JudgeConfig(rubric="is it right?", model=ModelConfig(provider="openai", name="gpt-4.1-mini"))
    grader = OpenAIGrader(judge, timeout=5)
    assert str(grader.client.base_url).rstrip("/") == OPENAI_URL and grader.client.api_key == "sk-users-own"
