"""Who grades: a scripted function (offline), an OpenAI(-compatible) endpoint, or any LiteLLM model.

Every grader answers one request (rubric, the scenario's input, the agent's final output and the
tools it called) for one seed. Real models are asked for a JSON object ``{"grade": …, "reason": …}``
and the reply is read defensively: code fences, prose around the object, ``"pass"`` / ``"4"``
strings. The providers are the agents' (docs/adapters.md), configured by the same ``model:`` form;
their clients run synchronously, in the evaluator's own thread (the engine calls judged
evaluators off the event loop).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..._errors import AgentAssayError
from ..._integrations.adapters._otel._offline import user_openai_settings
from ..._traces import Action, Trace
from ._config import JudgeConfig, load_scripted

# Part of every cache key: a changed prompt must not be answered from answers to the old one.
PROMPT_VERSION = "judge-prompt/1"
_MAX_OUTPUT = 8000
_MAX_TOOLS = 20
_MAX_ARGS = 200


class GradeError(AgentAssayError, ValueError):
    """A reply that is not a grade on the judge's scale (retried once, then an error trial)."""


@dataclass(frozen=True)
class Request:
    """What one grading sees: the rubric and scale, the scenario's input, the final output, the tools called."""

    rubric: str
    scale: str
    input: str
    output: Any
    tools: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, config: JudgeConfig, input: str, trace: Trace) -> Request:
        tools = tuple((s.tool, s.arguments) for s in trace.steps if s.action is Action.CALL_TOOL and s.tool)
        return cls(config.rubric, config.scale, input, trace.output, tools)

    def content(self) -> dict[str, Any]:
        """The graded content, as the cache digests it (the rubric and model are keyed apart)."""
        return {
            "input": self.input,
            "output": output_text(self.output),
            "tools": [list(t) for t in self.tools],
        }


@dataclass(frozen=True)
class Reply:
    """One answer: ``text`` from a model (parsed later) or ``value`` from a scripted judge, and its tokens."""

    text: str | None = None
    value: Any = None
    input_tokens: int = 0
    output_tokens: int = 0


Grader = Callable[[Request, int], Reply]


def output_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def tools_text(tools: Sequence[tuple[str, Any]]) -> str:
    if not tools:
        return "(none)"
    lines = [f"- {name}({_clip(output_text(args), _MAX_ARGS)})" for name, args in tools[:_MAX_TOOLS]]
    if len(tools) > _MAX_TOOLS:
        lines.append(f"- … and {len(tools) - _MAX_TOOLS} more calls")
    return "\n".join(lines)


def messages(request: Request) -> list[dict[str, str]]:
    """The judge prompt: the rubric decides; the tools are context, briefly."""
    if request.scale == "pass_fail":
        grade = '"grade" is true when the output meets the rubric and false when it does not'
    else:
        grade = '"grade" is an integer from 1 (does not meet the rubric at all) to 5 (meets it fully)'
    system = (
        "You grade one output of an AI agent against a rubric. Apply the rubric literally; do not reward style. "
        'Answer with one JSON object and nothing else: {"grade": <grade>, "reason": "<one short sentence>"}, where '
        f"{grade}."
    )
    user = (
        f"Rubric:\n{request.rubric}\n\n"
        f"Input the agent was given:\n{_clip(request.input, _MAX_OUTPUT)}\n\n"
        f"The agent's final output:\n{_clip(output_text(request.output), _MAX_OUTPUT) or '(no output)'}\n\n"
        f"Tools the agent called, in order:\n{tools_text(request.tools)}\n\n"
        "Reply with the JSON object only."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# -- reading a grade ------------------------------------------------------------------------------

_PASS = {"pass", "passed", "true", "yes", "1", "ok"}
_FAIL = {"fail", "failed", "false", "no", "0"}


def _grade(value: Any, scale: str) -> bool | float:
    if scale == "pass_fail":
        if isinstance(value, bool):
            return value
        if isinstance(value, int | float) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _PASS | _FAIL:
            return value.strip().lower() in _PASS
        raise GradeError(f"grade {_clip(repr(value), 60)} is not pass/fail (true or false)")
    if isinstance(value, bool):
        raise GradeError(f"grade {value!r} is a pass/fail answer on the 1-5 scale")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise GradeError(f"grade {_clip(repr(value), 60)} is not a number from 1 to 5") from None
    if isinstance(value, int | float) and 1 <= value <= 5:
        return int(value) if float(value).is_integer() else float(value)
    raise GradeError(f"grade {_clip(repr(value), 60)} is not a number from 1 to 5")


def _objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text`` (fences, prose and all), in order."""
    decoder = json.JSONDecoder()
    found, i = [], text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        i = text.find("{", end)
    return found


def parse_reply(reply: Reply, scale: str) -> tuple[bool | float, str]:
    """(grade, reason) of one reply; GradeError when it holds no grade on the scale."""
    if reply.text is None:  # a scripted judge: bool, a number, or (grade, reason)
        value, reason = reply.value, ""
        if isinstance(value, tuple | list) and len(value) == 2:
            value, reason = value
        return _grade(value, scale), "" if reason is None else str(reason)
    text = reply.text.strip()
    for obj in _objects(text):
        lowered = {str(k).lower(): v for k, v in obj.items()}
        for key in ("grade", "score", "verdict", "passed", "pass"):
            if key in lowered:
                reason = lowered.get("reason", lowered.get("explanation", ""))
                return _grade(lowered[key], scale), "" if reason is None else str(reason)
    raise GradeError(f"the judge's reply holds no JSON object with a grade: {_clip(repr(text), 120)}")


# -- graders --------------------------------------------------------------------------------------


class ScriptedGrader:
    """``function(*, input, output, rubric, seed)``: an offline judge, noisy only through ``seed``."""

    def __init__(self, behaviour: str, search: Sequence[str | os.PathLike[str]] = ()) -> None:
        self.fn = load_scripted(behaviour, search)

    def __call__(self, request: Request, seed: int) -> Reply:
        return Reply(
            value=self.fn(input=request.input, output=request.output, rubric=request.rubric, seed=seed)
        )


class OpenAIGrader:
    """Chat completions on the synchronous ``openai`` client (``openai`` and ``openai-compatible``)."""

    def __init__(self, config: JudgeConfig, *, timeout: float) -> None:
        import openai

        m = config.model
        env = m.api_key_env
        if m.provider == "openai-compatible":
            api_key = os.environ.get(env, "") if env else "not-needed"  # local servers often need none
        else:
            api_key = os.environ.get(env) if env else None  # None: the client reads OPENAI_API_KEY
        # An agent of another framework on the offline model points OPENAI_* at the simulator: not for the judge.
        user = user_openai_settings()
        if api_key is None:
            api_key = user.get("api_key")
        base_url = m.base_url or user.get("base_url")
        # Retries are ours (transient errors, with backoff), so the client makes exactly one request per call.
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
        self.config = config

    def __call__(self, request: Request, seed: int) -> Reply:
        m = self.config.model
        kwargs: dict[str, Any] = {"model": str(m.name), "messages": messages(request)}
        if m.temperature is not None:
            kwargs["temperature"] = m.temperature
        if m.provider == "openai":  # OpenAI's own API: JSON mode and a per-(trace, repeat) seed
            kwargs["response_format"] = {"type": "json_object"}
            kwargs["seed"] = seed
        response = self.client.chat.completions.create(**kwargs)
        text = response.choices[0].message.content if response.choices else None
        usage = response.usage
        return Reply(
            text=text or "",
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )


class LiteLLMGrader:
    """``litellm.completion``: any provider LiteLLM knows (``name: anthropic/claude-sonnet-4``)."""

    def __init__(self, config: JudgeConfig, *, timeout: float) -> None:
        import litellm

        self.litellm = litellm
        self.config = config
        self.timeout = timeout

    def __call__(self, request: Request, seed: int) -> Reply:
        m = self.config.model
        kwargs: dict[str, Any] = {
            "model": str(m.name),
            "messages": messages(request),
            "timeout": self.timeout,
            "num_retries": 0,
        }
        if m.base_url:
            kwargs["api_base"] = m.base_url
        if m.api_key_env:
            kwargs["api_key"] = os.environ.get(m.api_key_env)
        # OpenAI's models read OPENAI_*, which the offline endpoint may point at the simulator: the user's instead.
        user = user_openai_settings()
        if user and str(m.name).partition("/")[0] in ("openai", str(m.name)):
            kwargs.setdefault("api_base", user.get("base_url"))
            if user.get("api_key"):
                kwargs.setdefault("api_key", user["api_key"])
        if m.temperature is not None:
            kwargs["temperature"] = m.temperature
        response = self.litellm.completion(**kwargs)
        text = response.choices[0].message.content if response.choices else None
        usage = getattr(response, "usage", None)
        return Reply(
            text=text or "",
            input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )


def make_grader(
    config: JudgeConfig, *, timeout: float = 120.0, search: Sequence[str | os.PathLike[str]] = ()
) -> Grader:
    provider = config.model.provider
    if provider == "offline":
        return ScriptedGrader(str(config.model.behaviour), search)
    if provider in ("openai", "openai-compatible"):
        return OpenAIGrader(config, timeout=timeout)
    if provider == "litellm":
        return LiteLLMGrader(config, timeout=timeout)
    raise ValueError(f"unknown judge provider {provider!r}")
