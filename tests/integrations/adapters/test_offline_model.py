"""The offline simulator: the SDK's Model interface, seeded choices, generated arguments, usage."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, ModelSettings, RunConfig, Runner, function_tool
from agents.models.interface import ModelTracing
from pydantic import BaseModel

from agentassay._integrations.adapters._offline import (
    DEFAULT_MAX_HANDOFFS,
    NO_BEHAVIOUR_TEXT,
    Behaviour,
    OfflineModel,
    load_behaviour,
)
from agentassay._integrations.adapters._openai_agents import install_trace_router


@pytest.fixture(autouse=True, scope="module")
def _no_export() -> None:
    """Runs with tracing on must not reach the SDK's default exporter (it would call OpenAI)."""
    install_trace_router()


@function_tool
def lookup(city: str, days: int) -> str:
    """Weather for a city.

    Args:
        city: City name.
        days: Days ahead.
    """
    return f"sunny in {city} for {days} days"


def make_agents() -> Agent:
    helper = Agent(name="Helper", instructions="help")
    main = Agent(name="Main", instructions="route", tools=[lookup], handoffs=[helper])
    helper.handoffs.append(main)
    return main


PROBS = {"respond": 0.5, "tool:lookup": 0.3, "handoff:Helper": 0.2}
BEHAVIOUR: dict[str, Any] = {
    "Main": {
        "rules": [
            {"input": "(?i)weather", "choose": PROBS},
            {"after": "handoff", "choose": "respond", "respond": "back: {tool_output}"},
            {"after": "tool:lookup", "choose": "respond", "respond": "It is {tool_output}."},
        ],
        "respond": ["Hello!", "Hi there."],
        "arguments": {"lookup": {"city": {"regex": r"in (\w+)", "default": "Nowhere"}}},
    },
    "Helper": {"rules": [{"choose": "respond", "respond": "helper here"}]},
}


def run(agent: Agent, text: str, seed: int, behaviour: Any = BEHAVIOUR, **kwargs: Any) -> Any:
    config = RunConfig(model=OfflineModel(behaviour, seed), tracing_disabled=True, **kwargs)
    return asyncio.run(Runner.run(agent, text, run_config=config, max_turns=8))


def fingerprint(result: Any) -> list[Any]:
    """Everything the run produced, as plain data."""
    items = [
        (type(i).__name__, i.agent.name, json.dumps(i.to_input_item(), default=str)) for i in result.new_items
    ]
    return [*items, result.final_output, result.last_agent.name]


def first_choice(result: Any) -> str:
    kinds = {"ToolCallItem": "tool:lookup", "HandoffCallItem": "handoff:Helper"}
    first = type(result.new_items[0]).__name__
    return kinds.get(first, "respond")


# -- reproducibility and frequencies ---------------------------------------------------------------
def test_same_seed_same_run() -> None:
    agent = make_agents()
    for seed in range(10):
        assert fingerprint(run(agent, "weather in Paris?", seed)) == fingerprint(
            run(agent, "weather in Paris?", seed)
        )


def test_choice_frequencies_follow_the_table() -> None:
    agent = make_agents()
    n = 600
    counts = Counter(first_choice(run(agent, "What is the weather in Oslo?", seed)) for seed in range(n))
    assert set(counts) == set(PROBS)
    for choice, p in PROBS.items():
        assert abs(counts[choice] / n - p) < 0.07, (choice, counts)


def test_direct_calls_are_a_pure_function_of_seed_agent_and_conversation() -> None:
    async def call(model: OfflineModel, text: str) -> str:
        response = await model.get_response(
            "instructions",
            [{"role": "user", "content": text}],
            ModelSettings(),
            [lookup],
            None,
            [],
            ModelTracing.DISABLED,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        )
        return json.dumps([item.model_dump() for item in response.output])

    async def many(model: OfflineModel, text: str) -> list[str]:
        return list(await asyncio.gather(*(call(model, text) for _ in range(20))))

    behaviour = {"Main": {"rules": [{"choose": {"respond": 0.5, "tool:lookup": 0.5}}]}}
    pinned = OfflineModel(behaviour, 1, agent="Main")
    outs = asyncio.run(many(pinned, "hello"))
    assert len(set(outs)) == 1
    # Over seeds, both choices occur; a different conversation draws afresh.
    kinds = Counter(
        json.loads(asyncio.run(call(OfflineModel(behaviour, s, agent="Main"), "hello")))[0]["type"]
        for s in range(40)
    )
    assert set(kinds) == {"message", "function_call"}
    other_agent = OfflineModel(behaviour, 1, agent="Other")
    assert asyncio.run(call(other_agent, "hello")) != outs[0] or asyncio.run(call(pinned, "bye")) != outs[0]


# -- behaviour semantics ---------------------------------------------------------------------------
def test_tool_result_then_templated_answer() -> None:
    agent = make_agents()
    seen = 0
    for seed in range(60):
        result = run(agent, "weather in Paris?", seed)
        calls = [i for i in result.new_items if type(i).__name__ == "ToolCallItem"]
        if not calls:
            continue
        seen += 1
        args = json.loads(calls[0].raw_item.arguments)
        assert args["city"] == "Paris"  # regex extractor
        assert isinstance(args["days"], int)  # drawn from the schema
        assert result.final_output == f"It is sunny in Paris for {args['days']} days."
    assert seen > 5


def test_handoff_and_hand_back() -> None:
    agent = make_agents()
    handoffs = 0
    for seed in range(60):
        result = run(agent, "weather in Paris?", seed)
        if result.last_agent.name == "Helper":
            handoffs += 1
            assert result.final_output == "helper here"
    assert handoffs > 3


def test_no_matching_rule_uses_the_agent_answer() -> None:
    outputs = {run(make_agents(), "good morning", seed).final_output for seed in range(20)}
    assert outputs == {"Hello!", "Hi there."}


def test_agent_without_behaviour_answers_fixed_text() -> None:
    bare = Agent(name="Stranger", instructions="?")
    result = run(bare, "anything", 3, behaviour={})
    assert result.final_output == NO_BEHAVIOUR_TEXT.replace("{agent}", "Stranger")
    star = run(bare, "anything", 3, behaviour={"*": {"respond": "default for {agent}: {input}"}})
    assert star.final_output == "default for Stranger: anything"
    assert run(bare, "anything", 3, behaviour=None).final_output == result.final_output


def test_agent_detection_works_with_tracing_enabled_and_disabled() -> None:
    agent = make_agents()
    config_on = RunConfig(model=OfflineModel(BEHAVIOUR, 4), tracing_disabled=False)
    on = asyncio.run(Runner.run(agent, "weather in Rome", run_config=config_on))
    off = run(agent, "weather in Rome", 4)
    assert fingerprint(on) == fingerprint(off)
    assert on.final_output not in (None, NO_BEHAVIOUR_TEXT.replace("{agent}", "Main"))


def test_loop_guard_stops_endless_handoffs() -> None:
    a = Agent(name="A", instructions="a")
    b = Agent(name="B", instructions="b", handoffs=[a])
    a.handoffs.append(b)
    ping_pong = {
        "A": {"rules": [{"after": "any", "choose": "handoff:B"}], "respond": "A stops"},
        "B": {"rules": [{"after": "any", "choose": "handoff:A"}], "respond": "B stops"},
    }
    config = RunConfig(model=OfflineModel(ping_pong, 0), tracing_disabled=True)
    result = asyncio.run(Runner.run(a, "go", run_config=config, max_turns=20))
    hops = [i for i in result.new_items if type(i).__name__ == "HandoffOutputItem"]
    assert len(hops) == DEFAULT_MAX_HANDOFFS
    assert result.final_output in ("A stops", "B stops")


def test_unknown_choice_fails_clearly() -> None:
    bad = {"Main": {"rules": [{"choose": "tool:nonexistent"}]}}
    with pytest.raises(ValueError, match=r"chose 'tool:nonexistent', but the agent only has \['lookup'\]"):
        run(make_agents(), "hi", 0, behaviour=bad)


def test_tool_choice_is_honoured() -> None:
    agent = make_agents().clone(model_settings=ModelSettings(tool_choice="none"))
    for seed in range(10):
        assert not [i for i in run(agent, "weather in Oslo", seed).new_items if "Call" in type(i).__name__]
    forced = make_agents().clone(model_settings=ModelSettings(tool_choice="lookup"))
    result = run(forced, "good morning", 0)
    assert type(result.new_items[0]).__name__ == "ToolCallItem"


class Forecast(BaseModel):
    city: str
    temperature: int
    unit: str


def test_structured_output_is_generated_from_the_schema() -> None:
    agent = Agent(name="Main", instructions="x", output_type=Forecast)
    result = run(agent, "forecast please", 2, behaviour={"Main": {"respond": "not json"}})
    assert isinstance(result.final_output, Forecast)
    valid = run(
        agent, "x", 2, behaviour={"Main": {"respond": '{"city": "Oslo", "temperature": 3, "unit": "C"}'}}
    )
    assert valid.final_output == Forecast(city="Oslo", temperature=3, unit="C")


class Booking(BaseModel):
    seat: str
    klass: str


def test_arguments_from_schema_enums_and_overrides() -> None:
    @function_tool
    def book(booking: Booking, priority: int, confirm: bool, mode: str) -> str:
        """Book.

        Args:
            booking: what.
            priority: how urgent.
            confirm: whether to confirm.
            mode: how.
        """
        return "ok"

    schema = book.params_json_schema
    schema["properties"]["mode"]["enum"] = ["fast", "slow"]  # enums pick a member
    agent = Agent(name="Main", instructions="x", tools=[book])
    behaviour = {
        "Main": {
            "rules": [{"choose": "tool:book"}, {"after": "tool", "choose": "respond"}],
            "arguments": {"book": {"priority": {"choice": [1, 2]}, "confirm": True}},
        }
    }
    modes = set()
    for seed in range(20):
        result = run(agent, "book me", seed, behaviour=behaviour)
        args = json.loads(result.new_items[0].raw_item.arguments)
        assert set(args) == {"booking", "priority", "confirm", "mode"}
        assert set(args["booking"]) == {"seat", "klass"}  # $ref resolved
        assert args["priority"] in (1, 2) and args["confirm"] is True
        modes.add(args["mode"])
    assert modes == {"fast", "slow"}


def test_usage_is_estimated_and_accumulated() -> None:
    result = run(make_agents(), "weather in Paris?", 0)
    usage = result.context_wrapper.usage
    assert usage.requests == len(result.raw_responses) >= 1
    assert usage.input_tokens > 20 and usage.output_tokens > 0
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens


def test_streaming_matches_non_streaming() -> None:
    agent = make_agents()

    async def streamed(seed: int) -> Any:
        result = Runner.run_streamed(
            agent, "weather in Lima", run_config=RunConfig(model=OfflineModel(BEHAVIOUR, seed))
        )
        events = [event async for event in result.stream_events()]
        assert events
        return result

    for seed in range(8):
        s = asyncio.run(streamed(seed))
        r = run(agent, "weather in Lima", seed)
        assert s.final_output == r.final_output
        assert s.context_wrapper.usage.input_tokens == r.context_wrapper.usage.input_tokens


# -- loading and validation ------------------------------------------------------------------------
def test_yaml_and_module_sources(tmp_path: Any) -> None:
    path = tmp_path / "behaviour.yml"
    path.write_text(
        "Main:\n  rules:\n    - choose: {respond: 1}\n      respond: from yaml\n",
        encoding="utf-8",
    )
    assert run(make_agents(), "hi", 0, behaviour=load_behaviour(path)).final_output == "from yaml"
    relative = load_behaviour("behaviour.yml", root=tmp_path)
    assert relative.agents.keys() == {"Main"}
    module = load_behaviour("examples.customer_service.v1:OFFLINE_BEHAVIOUR")
    assert {"Triage Agent", "FAQ Agent", "Seat Booking Agent"} <= set(module.agents)
    assert isinstance(load_behaviour(module), Behaviour)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"A": {"rule": []}}, "unknown key"),
        ({"A": {"rules": [{"choose": "jump"}]}}, "is not 'respond'"),
        ({"A": {"rules": [{"choose": {"respond": -1}}]}}, "weight must be"),
        ({"A": {"rules": [{"choose": {"respond": 0}}]}}, "sum to zero"),
        ({"A": {"rules": [{"input": "(", "choose": "respond"}]}}, "bad regex"),
        ({"A": {"rules": [{"after": "later", "choose": "respond"}]}}, "after"),
        ({"A": {"max_handoffs": -1}}, "max_handoffs"),
        ({"A": {"respond": 3}}, "string or a non-empty list"),
        (["A"], "mapping"),
    ],
)
def test_behaviour_validation(spec: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Behaviour(spec)


def test_bad_sources() -> None:
    with pytest.raises(ValueError, match="module:attr"):
        load_behaviour("nonsense")
    with pytest.raises(ValueError, match="No such file"):
        load_behaviour("missing.yml")
    with pytest.raises(ValueError, match="no attribute"):
        load_behaviour("examples.customer_service.v1:NOPE")
