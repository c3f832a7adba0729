"""The OpenAI Agents SDK adapter: real Runner, offline model, traces from the SDK's tracing spans."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

import openai
import yaml
from agents import Agent, ModelSettings, function_tool, set_trace_processors
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from agentassay._integrations.adapters._base import AgentRunError
from agentassay._integrations.adapters._offline import NO_BEHAVIOUR_TEXT
from agentassay._integrations.adapters._openai_agents import (
    OpenAIAgentsAdapter,
    _installed_processors,
    install_trace_router,
    is_transient_error,
)
from agentassay._spec._model import ModelConfig
from agentassay._traces import Action, Trace

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # `examples` sits at the repository root, outside the package

from examples.customer_service import v1, v2  # noqa: E402

try:  # the HTTP client the installed openai is built on (newer releases ship it as httpx2)
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx

SUITE = yaml.safe_load(
    (ROOT / "examples" / "customer_service" / "agentassay.yml").read_text(encoding="utf-8")
)
SCENARIOS = {s["name"]: s for s in SUITE["scenarios"]}
SEAT = SCENARIOS["seat_change"]["input"]
BAGGAGE = SCENARIOS["baggage"]["input"]


def stable(trace: Trace) -> dict[str, Any]:
    """A trace without its wall-clock latency, the one field that may differ between replays."""
    d = trace.to_dict()
    d["cost"].pop("latency_s")
    return d


def run_one(adapter: OpenAIAgentsAdapter, text: str, seed: int) -> Trace:
    try:
        return asyncio.run(adapter.run(text, seed=seed))
    except AgentRunError as exc:
        assert exc.trace is not None
        return exc.trace


async def run_many(
    adapter: OpenAIAgentsAdapter, work: list[tuple[str, int]], concurrency: int = 20
) -> list[Trace]:
    gate = asyncio.Semaphore(concurrency)

    async def one(text: str, seed: int) -> Trace:
        async with gate:
            try:
                return await adapter.run(text, seed=seed)
            except AgentRunError as exc:
                assert exc.trace is not None
                return exc.trace

    return list(await asyncio.gather(*(one(t, s) for t, s in work)))


def passes(trace: Trace, scenario: dict[str, Any]) -> bool:
    """The suite's checks, evaluated directly on the trace (a trial passes when all hold)."""
    if trace.error:
        return False
    for check in [*scenario.get("properties", []), *scenario.get("evaluator", [])]:
        ((kind, value),) = check.items()
        ok = {
            "contains": lambda v: str(v).lower() in str(trace.output).lower(),
            "must_call": lambda v: v in trace.tools_called,
            "must_not_call": lambda v: v not in trace.tools_called,
            "must_reach": lambda v: v in trace.agents_reached,
            "max_steps": lambda v: len(trace.steps) <= v,
        }[kind](value)
        if not ok:
            return False
    return True


# -- the example workflow --------------------------------------------------------------------------
def test_example_traces_show_handoffs_tools_outputs_and_tokens() -> None:
    adapter = OpenAIAgentsAdapter(v1.triage_agent)
    traces = asyncio.run(run_many(adapter, [(SEAT, s) for s in range(40)]))
    good = 0
    for trace in traces:
        assert trace.cost.input_tokens > 0 and trace.cost.output_tokens > 0
        assert trace.metadata.seed is not None and trace.metadata.model == "offline-simulator"
        assert trace.metadata.adapter == "openai-agents" and trace.cost.latency_s > 0
        assert trace.steps[0].agent == "Triage Agent"
        for step in trace.steps:
            if step.action is Action.HANDOFF:
                assert step.agent and step.target and step.agent != step.target
        if (
            trace.handoffs[:1] == [("Triage Agent", "Seat Booking Agent")]
            and "update_seat" in trace.tools_called
        ):
            good += 1
            call = next(s for s in trace.steps if s.tool == "update_seat")
            assert call.agent == "Seat Booking Agent"
            assert call.arguments == {"confirmation_number": "ABC123", "new_seat": "14C"}
            assert call.output == "Updated seat to 14C for confirmation number ABC123."
            assert trace.steps[-1].action is Action.RESPOND and "14C" in trace.output
    assert good >= 35
    seeds = {t.metadata.seed for t in traces}
    assert seeds == set(range(40))


def test_same_seed_gives_the_same_trace() -> None:
    adapter = OpenAIAgentsAdapter(v1.triage_agent)
    for seed in range(15):
        first, second = run_one(adapter, SEAT, seed), run_one(adapter, SEAT, seed)
        assert stable(first) == stable(second)


def test_concurrent_trials_match_sequential_ones() -> None:
    adapter = OpenAIAgentsAdapter(v2.triage_agent)
    work = [(SEAT if s % 2 else BAGGAGE, s) for s in range(50)]
    together = asyncio.run(run_many(adapter, work, concurrency=50))
    alone = [run_one(adapter, text, seed) for text, seed in work]
    assert [stable(t) for t in together] == [stable(t) for t in alone]
    assert len({str(t.handoffs) for t in together}) > 1  # the trials really differ


def test_different_seeds_route_with_the_configured_probability() -> None:
    adapter = OpenAIAgentsAdapter(v2.triage_agent)
    traces = asyncio.run(run_many(adapter, [(SEAT, s) for s in range(300)]))
    to_faq = sum(t.handoffs[:1] == [("Triage Agent", "FAQ Agent")] for t in traces) / len(traces)
    assert 0.28 < to_faq < 0.46  # configured 0.37


def test_v1_passes_and_v2_regresses_on_seat_changes() -> None:
    n = 200
    rates: dict[str, dict[str, float]] = {}
    for label, module in (("v1", v1), ("v2", v2)):
        adapter = OpenAIAgentsAdapter(module.triage_agent)
        rates[label] = {}
        for name, scenario in SCENARIOS.items():
            traces = asyncio.run(run_many(adapter, [(scenario["input"], s) for s in range(n)]))
            rates[label][name] = sum(passes(t, scenario) for t in traces) / n
    assert all(0.9 <= r < 1.0 for r in rates["v1"].values()), rates
    assert 0.45 <= rates["v2"]["seat_change"] <= 0.78, rates
    for name in ("baggage", "wifi", "out_of_scope"):
        assert abs(rates["v2"][name] - rates["v1"][name]) < 0.06, rates


def test_suite_file_matches_the_examples() -> None:
    assert SUITE["agent"] == "examples.customer_service.v1:triage_agent"
    assert SUITE["model"] == {"provider": "offline"}
    assert len(SUITE["scenarios"]) == 4
    reached = {a.name for a in [v1.triage_agent, *v1.triage_agent.handoffs]}
    for scenario in SUITE["scenarios"]:
        for check in scenario.get("properties", []):
            if "must_reach" in check:
                assert check["must_reach"] in reached


# -- what the trace captures -----------------------------------------------------------------------
@function_tool
def weather(city: str) -> str:
    """Weather for a city.

    Args:
        city: City name.
    """
    return f"sunny in {city}"


@function_tool
def explode(reason: str) -> str:
    """Always fails.

    Args:
        reason: Why.
    """
    raise RuntimeError(f"kaboom because {reason}")


researcher = Agent(name="Researcher", instructions="research", tools=[weather])
boss = Agent(
    name="Boss",
    instructions="delegate",
    tools=[researcher.as_tool("ask_researcher", "Ask the researcher"), explode],
)
BOSS_BEHAVIOUR = {
    "Boss": {
        "rules": [
            {"choose": "tool:ask_researcher"},
            {"after": "tool:ask_researcher", "choose": "tool:explode"},
            {"after": "tool:explode", "choose": "respond", "respond": "done: {tool_output}"},
        ],
        "arguments": {"explode": {"reason": "testing"}, "ask_researcher": {"input": "weather in Oslo"}},
    },
    "Researcher": {
        "rules": [{"choose": "tool:weather"}],
        "arguments": {"weather": {"city": {"regex": r"in (\w+)"}}},
    },
}


def test_as_tool_sub_run_steps_have_depth_one() -> None:
    trace = run_one(OpenAIAgentsAdapter(boss, behaviour=BOSS_BEHAVIOUR), "go", 1)
    steps = [s.to_dict() for s in trace.steps]
    assert steps[:3] == [
        {
            "action": "handoff",
            "agent": "Boss",
            "tool": "ask_researcher",
            "arguments": {"input": "weather in Oslo"},
            "target": "Researcher",
        },
        {
            "action": "call_tool",
            "agent": "Researcher",
            "tool": "weather",
            "arguments": {"city": "Oslo"},
            "output": "sunny in Oslo",
            "depth": 1,
        },
        {"action": "respond", "agent": "Researcher", "output": "sunny in Oslo", "depth": 1},
    ]
    assert trace.agents_reached == ["Boss", "Researcher"]
    assert trace.tools_called == ["weather", "explode"]


def test_tool_error_text_is_captured() -> None:
    trace = run_one(OpenAIAgentsAdapter(boss, behaviour=BOSS_BEHAVIOUR), "go", 1)
    failed = next(s for s in trace.steps if s.tool == "explode")
    assert failed.action is Action.CALL_TOOL and failed.agent == "Boss"
    assert failed.error == "RuntimeError: kaboom because testing"
    assert failed.output is None
    assert trace.error is None and trace.output.startswith("done: ")  # the run itself went on


def test_example_seat_tool_error_is_captured() -> None:
    adapter = OpenAIAgentsAdapter(v1.triage_agent)
    traces = asyncio.run(
        run_many(adapter, [("Please change my seat to row 99Z, confirmation ABC123", s) for s in range(10)])
    )
    errors = [s.error for t in traces for s in t.steps if s.tool == "update_seat"]
    assert errors and all(e and e.startswith("ValueError: invalid seat") for e in errors)


def test_agent_without_behaviour_still_runs() -> None:
    lone = Agent(name="Lonely", instructions="?")
    trace = run_one(OpenAIAgentsAdapter(lone), "hello", 0)
    assert trace.error is None
    assert trace.output == NO_BEHAVIOUR_TEXT.replace("{agent}", "Lonely")
    assert [s.action for s in trace.steps] == [Action.RESPOND]
    assert trace.cost.input_tokens > 0


def test_max_turns_gives_agent_run_error_with_partial_trace() -> None:
    a = Agent(name="A", instructions="a")
    b = Agent(name="B", instructions="b", handoffs=[a])
    a.handoffs.append(b)
    ping_pong = {
        "A": {"rules": [{"after": "any", "choose": "handoff:B"}], "max_handoffs": 99},
        "B": {"rules": [{"after": "any", "choose": "handoff:A"}], "max_handoffs": 99},
    }
    adapter = OpenAIAgentsAdapter(a, behaviour=ping_pong, max_turns=4)
    with pytest.raises(AgentRunError, match="MaxTurnsExceeded") as info:
        asyncio.run(adapter.run("go", seed=0))
    trace = info.value.trace
    assert trace is not None and trace.error is not None and "Max turns (4)" in trace.error
    assert trace.handoffs[:2] == [("A", "B"), ("B", "A")]
    assert trace.steps[-1].action is Action.ERROR
    assert trace.cost.input_tokens > 0


# -- errors from the model -------------------------------------------------------------------------
class FailingModel(Model):
    """A model that raises a given exception, to see how the adapter classifies it."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise self.exc

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise self.exc


REQUEST = httpx.Request("POST", "https://api.example.invalid/v1/responses")


@pytest.mark.parametrize(
    "exc",
    [
        openai.RateLimitError("slow down", response=httpx.Response(429, request=REQUEST), body=None),
        openai.APITimeoutError(request=REQUEST),
        openai.APIConnectionError(request=REQUEST),
        openai.InternalServerError("oops", response=httpx.Response(500, request=REQUEST), body=None),
        openai.APIStatusError("bad gateway", response=httpx.Response(502, request=REQUEST), body=None),
    ],
)
def test_transient_provider_errors_propagate_unchanged(exc: Exception) -> None:
    assert is_transient_error(exc)
    agent = Agent(name="Flaky", instructions="x", model=FailingModel(exc))
    adapter = OpenAIAgentsAdapter(agent, model=ModelConfig(provider="openai"))
    with pytest.raises(type(exc)) as info:
        asyncio.run(adapter.run("hi", seed=0))
    assert info.value is exc


def test_other_errors_become_agent_run_errors() -> None:
    bad_request = openai.BadRequestError("no", response=httpx.Response(400, request=REQUEST), body=None)
    for exc in (ValueError("broken model"), bad_request):
        assert not is_transient_error(exc)
        agent = Agent(name="Broken", instructions="x", model=FailingModel(exc))
        adapter = OpenAIAgentsAdapter(agent, model=ModelConfig(provider="openai"))
        with pytest.raises(AgentRunError) as info:
            asyncio.run(adapter.run("hi", seed=0))
        assert info.value.trace is not None and info.value.trace.error == str(info.value)
        assert type(exc).__name__ in str(info.value)


# -- model selection -------------------------------------------------------------------------------
class RecordingModel(Model):
    def __init__(self) -> None:
        self.settings: list[ModelSettings] = []

    async def get_response(
        self, system_instructions: Any, input: Any, model_settings: ModelSettings, *a: Any, **k: Any
    ) -> ModelResponse:
        self.settings.append(model_settings)
        text = ResponseOutputText(text="hi", type="output_text", annotations=[], logprobs=[])
        message = ResponseOutputMessage(
            id="m", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(
            output=[message],
            usage=Usage(requests=1, input_tokens=3, output_tokens=1, total_tokens=4),
            response_id=None,
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def test_openai_provider_uses_agent_models_and_temperature() -> None:
    model = RecordingModel()
    agent = Agent(name="Real", instructions="x", model=model)
    adapter = OpenAIAgentsAdapter(agent, model=ModelConfig(provider="openai", temperature=0.3))
    trace = run_one(adapter, "hi", 5)
    assert trace.output == "hi" and trace.cost.input_tokens == 3
    assert model.settings[0].temperature == 0.3
    assert adapter.config()["model"]["provider"] == "openai"


def test_openai_compatible_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents import OpenAIChatCompletionsModel

    config = ModelConfig(
        provider="openai-compatible", name="llama3", base_url="http://localhost:1/v1", api_key_env="TEST_KEY"
    )
    monkeypatch.delenv("TEST_KEY", raising=False)
    with pytest.raises(ValueError, match="TEST_KEY"):
        OpenAIAgentsAdapter(v1.triage_agent, model=config)
    monkeypatch.setenv("TEST_KEY", "secret")
    adapter = OpenAIAgentsAdapter(v1.triage_agent, model=config)
    model, client = adapter._openai_compatible_model()
    assert isinstance(model, OpenAIChatCompletionsModel)
    assert str(client.base_url).rstrip("/") == "http://localhost:1/v1" and client.api_key == "secret"
    # A client per trial, closed by the trial in its own event loop (never one shared across loops).
    assert adapter._openai_compatible_model()[1] is not client
    assert adapter.config()["model"]["name"] == "llama3" and adapter.model_label == "llama3"
    with pytest.raises(ValueError, match="base_url"):
        OpenAIAgentsAdapter(v1.triage_agent, model=ModelConfig(provider="openai-compatible", name="x"))


def test_litellm_provider_needs_the_extra() -> None:
    import importlib.util

    config = ModelConfig(provider="litellm", name="anthropic/claude-sonnet-4")
    if importlib.util.find_spec("litellm") is None:
        with pytest.raises(ValueError, match=r"openai-agents\[litellm\]"):
            OpenAIAgentsAdapter(v1.triage_agent, model=config)
    else:
        assert OpenAIAgentsAdapter(v1.triage_agent, model=config).model_label == config.name


def test_unknown_provider() -> None:
    with pytest.raises(ValueError, match="unknown model provider"):
        OpenAIAgentsAdapter(v1.triage_agent, model=ModelConfig(provider="carrier-pigeon"))


def test_behaviour_lookup_order(tmp_path: Path) -> None:
    # Found through the module that defines the agent (v1 holds triage_agent and OFFLINE_BEHAVIOUR).
    assert OpenAIAgentsAdapter(v1.triage_agent).config()["model"]["behaviour"] == (
        "examples.customer_service.v1:OFFLINE_BEHAVIOUR"
    )
    named = OpenAIAgentsAdapter(v1.triage_agent, module="examples.customer_service.v2")
    assert named.config()["model"]["behaviour"] == "examples.customer_service.v2:OFFLINE_BEHAVIOUR"
    (tmp_path / "b.yaml").write_text("Triage Agent:\n  respond: from the file\n", encoding="utf-8")
    from_file = OpenAIAgentsAdapter(v1.triage_agent, model=ModelConfig(behaviour="b.yaml"), root=tmp_path)
    assert run_one(from_file, "hello there", 0).output == "from the file"
    given = OpenAIAgentsAdapter(v1.triage_agent, behaviour={"Triage Agent": {"respond": "given"}})
    assert run_one(given, "hello there", 0).output == "given"


# -- description -----------------------------------------------------------------------------------
def test_tools_and_config_cover_every_reachable_agent() -> None:
    adapter = OpenAIAgentsAdapter(v1.triage_agent)
    tools = {t.name: t for t in adapter.tools()}
    assert set(tools) == {"faq_lookup_tool", "update_seat"}
    assert tools["faq_lookup_tool"].agent == "FAQ Agent"
    assert tools["update_seat"].agent == "Seat Booking Agent"
    assert set(tools["update_seat"].parameters["properties"]) == {"confirmation_number", "new_seat"}
    config = adapter.config()
    agents_ = {a["name"]: a for a in config["agents"]}
    assert set(agents_) == {"Triage Agent", "FAQ Agent", "Seat Booking Agent"}
    assert agents_["Triage Agent"]["handoffs"] == ["FAQ Agent", "Seat Booking Agent"]
    assert agents_["FAQ Agent"]["handoffs"] == ["Triage Agent"]
    assert (
        "Answer general questions first"
        in OpenAIAgentsAdapter(v2.triage_agent).config()["agents"][0]["instructions"]
    )
    nested = OpenAIAgentsAdapter(boss, behaviour=BOSS_BEHAVIOUR)
    assert {(t.name, t.agent) for t in nested.tools()} == {("explode", "Boss"), ("weather", "Researcher")}
    assert nested.config()["agents"][0]["agent_tools"] == {"ask_researcher": "Researcher"}


# -- tracing ---------------------------------------------------------------------------------------
def test_only_our_processor_is_installed_so_nothing_is_exported() -> None:
    router = install_trace_router()
    OpenAIAgentsAdapter(v1.triage_agent)
    run_one(OpenAIAgentsAdapter(v1.triage_agent), BAGGAGE, 0)
    assert _installed_processors() == (router,)

    threads = [threading.Thread(target=install_trace_router) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _installed_processors() == (router,)

    # Someone resets the processors: the next run puts the router back and still records spans.
    set_trace_processors([])
    trace = run_one(OpenAIAgentsAdapter(v1.triage_agent), BAGGAGE, 0)
    assert _installed_processors() == (router,)
    assert "faq_lookup_tool" in trace.tools_called


def test_globally_disabled_tracing_falls_back_to_run_items() -> None:
    from agents import set_tracing_disabled

    adapter = OpenAIAgentsAdapter(v1.triage_agent)
    expected = run_one(adapter, SEAT, 2)
    set_tracing_disabled(True)
    try:
        fallback = run_one(adapter, SEAT, 2)
    finally:
        set_tracing_disabled(False)
    assert stable(fallback) == stable(expected)


def test_importing_the_package_does_not_import_the_sdk() -> None:
    code = (
        "import sys, agentassay, agentassay._integrations.adapters, agentassay._traces; "
        "assert 'agents' not in sys.modules, 'SDK imported'; "
        "import examples.customer_service.v1 as v; "
        "heavy = [m for m in ('numpy', 'scipy', 'yaml', 'litellm') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_dataclass_outputs_are_plain_data() -> None:
    @dataclasses.dataclass
    class Point:
        x: int

    from agentassay._integrations.adapters._openai_agents import _jsonable

    assert _jsonable({"p": Point(1), "t": (1, "a")}) == {"p": {"x": 1}, "t": [1, "a"]}
