"""An offline, seeded *simulator* of an LLM for the OpenAI Agents SDK (no network, no weights).

``OfflineModel`` implements the SDK's ``Model`` interface, so the real ``Runner``, real function
tools, real handoffs and ``Agent.as_tool`` sub-runs execute unchanged; only the model's choices are
simulated. It is **not a language model**: it does not read instructions or understand text. Each
agent's choices come from a small, hand-written *behaviour* table, sampled with probabilities, so
that a workflow shows the run-to-run variation a statistical test has to cope with. Pass rates it
produces measure the behaviour table, never a real model; they exist to demonstrate and test the
tooling, and to rehearse a suite before spending money on a provider.

Behaviour format (a plain mapping, or the same as YAML), keyed by agent name; ``"*"`` applies to
agents not listed. Every key is optional::

    Triage Agent:
      rules:                              # first matching rule wins
        - after: handoff                  # the agent was handed the conversation back
          choose: respond
          respond: "Back with you. {tool_output}"
        - input: "(?i)change .*seat"      # regex searched in the latest user message
          choose: {"handoff:Seat Booking Agent": 0.97, "handoff:FAQ Agent": 0.02, respond: 0.01}
      respond: "I can help with flight questions and seat changes."   # or a list to pick from
      max_handoffs: 4                     # loop guard: no more handoffs once the chat has this many
    Seat Booking Agent:
      rules:
        - choose: {"tool:update_seat": 0.98, respond: 0.02}
        - after: "tool:update_seat"
          choose: {respond: 0.98, "handoff:Triage Agent": 0.02}
          respond: "{tool_output}"
      arguments:                          # per tool, per parameter; others come from the JSON schema
        update_seat:
          new_seat: {regex: '\\b(\\d{1,2}[A-F])\\b', default: "1A"}
          confirmation_number: {regex: '\\b([A-Z0-9]{6})\\b'}

* ``after`` (the state of the conversation when the agent is asked): ``user`` (last item is a
  user message), ``handoff`` (it was just handed over), ``start`` (either; the default),
  ``tool`` / ``tool:NAME`` (a tool result came back), ``any``.
* choices: ``respond``, ``tool:NAME``, ``handoff:AGENT NAME`` (or the handoff's tool name).
  Weights are normalised. With no matching rule an agent responds; after a tool result its default
  answer is ``{tool_output}``.
* templates may use ``{tool_output}`` (latest non-handoff tool result), ``{input}`` (latest user
  message) and ``{agent}``.
* arguments: a literal value, or ``{regex, default, choice, value}``; ``regex`` is searched in the
  latest user message (group 1 if present). Unlisted parameters are generated from the tool's JSON
  schema: enums pick a member, strings take the latest user message, numbers and booleans are drawn.

Determinism: every draw comes from a ``random.Random`` seeded by a hash of (seed, agent name, what
the agent is shown: instructions, tool names, conversation), never from shared state, so concurrent
runs in one event loop give the same results as sequential ones whatever the scheduling; a changed
prompt changes the draws, as it would change a real model's answers. Token usage is an estimate (~4 characters per
token of input, tool schemas and output) so that cost accounting has something to add up.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import math
import random
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import ModelResponse, TResponseInputItem, TResponseOutputItem, TResponseStreamEvent
from agents.model_settings import ModelSettings
from agents.models.interface import Model, ModelTracing
from agents.tool import FunctionTool, Tool
from agents.tracing import generation_span, get_current_span
from agents.tracing.span_data import AgentSpanData, TurnSpanData
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
    ResponseUsage,
)
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from ..._limits import UserPattern, compile_pattern, regex_error

__all__ = [
    "DEFAULT_MAX_HANDOFFS",
    "DEFAULT_RESPONSE",
    "MODEL_NAME",
    "NO_BEHAVIOUR_TEXT",
    "AgentBehaviour",
    "Behaviour",
    "OfflineModel",
    "load_behaviour",
]

MODEL_NAME = "offline-simulator"
NO_BEHAVIOUR_TEXT = "[offline simulator] no behaviour is configured for agent '{agent}'."
DEFAULT_RESPONSE = "I'm sorry, I can't help with that."
DEFAULT_MAX_HANDOFFS = 4
CHARS_PER_TOKEN = 4

_AFTER = ("start", "user", "handoff", "tool", "any")
_ARG_KEYS = frozenset({"regex", "default", "choice", "value"})
_AGENT_KEYS = frozenset({"rules", "respond", "arguments", "max_handoffs"})
_RULE_KEYS = frozenset({"input", "after", "choose", "respond"})


# -- the compiled behaviour ---------------------------------------------------------------------
@dataclass(frozen=True)
class _Arg:
    """How one tool parameter is filled: a literal, a regex on the user message, or a pick."""

    value: Any = None
    has_value: bool = False
    regex: UserPattern | None = None
    choice: tuple[Any, ...] | None = None
    default: Any = None
    has_default: bool = False


@dataclass(frozen=True)
class _Rule:
    pattern: UserPattern | None
    after: str
    choices: tuple[tuple[str, float], ...]  # (choice, cumulative probability)
    respond: tuple[str, ...] | None


@dataclass(frozen=True)
class AgentBehaviour:
    """One agent's compiled policy (see the module docstring for the source format)."""

    rules: tuple[_Rule, ...] = ()
    respond: tuple[str, ...] | None = None
    arguments: Mapping[str, Mapping[str, _Arg]] | None = None
    max_handoffs: int = DEFAULT_MAX_HANDOFFS
    known: bool = True  # False for the built-in fallback: answers NO_BEHAVIOUR_TEXT


_UNKNOWN = AgentBehaviour(known=False)


class Behaviour:
    """A validated behaviour mapping, compiled once and shared by every seeded model.

    Validation happens here, not mid-run, so a typo in a rule fails when the suite loads.
    """

    def __init__(self, spec: Mapping[str, Any] | None = None, *, source: str = "<mapping>") -> None:
        if not isinstance(spec or {}, Mapping):
            raise ValueError(f"behaviour {source}: expected a mapping of agent name to behaviour")
        self.source = source
        self.spec: dict[str, Any] = dict(spec or {})
        self.agents: dict[str, AgentBehaviour] = {
            str(name): _compile_agent(body, f"{source}[{name!r}]") for name, body in self.spec.items()
        }

    def for_agent(self, name: str | None) -> AgentBehaviour:
        if name is not None and name in self.agents:
            return self.agents[name]
        return self.agents.get("*", _UNKNOWN)

    def __repr__(self) -> str:
        return f"Behaviour({self.source}, agents={sorted(self.agents)})"


def _compile_agent(body: Any, where: str) -> AgentBehaviour:
    if body is None:
        return AgentBehaviour()
    if not isinstance(body, Mapping):
        raise ValueError(f"behaviour {where}: expected a mapping with keys {sorted(_AGENT_KEYS)}")
    unknown = set(body) - _AGENT_KEYS
    if unknown:
        raise ValueError(
            f"behaviour {where}: unknown key(s) {sorted(unknown)}; allowed {sorted(_AGENT_KEYS)}"
        )
    rules = body.get("rules") or []
    if not isinstance(rules, Sequence) or isinstance(rules, str):
        raise ValueError(f"behaviour {where}.rules: expected a list of rules")
    max_handoffs = body.get("max_handoffs", DEFAULT_MAX_HANDOFFS)
    if not isinstance(max_handoffs, int) or isinstance(max_handoffs, bool) or max_handoffs < 0:
        raise ValueError(f"behaviour {where}.max_handoffs: expected a non-negative integer")
    arguments = body.get("arguments") or {}
    if not isinstance(arguments, Mapping):
        raise ValueError(f"behaviour {where}.arguments: expected a mapping of tool name to parameters")
    compiled_args: dict[str, dict[str, _Arg]] = {}
    for tool, params in arguments.items():
        if not isinstance(params, Mapping):
            raise ValueError(f"behaviour {where}.arguments[{tool!r}]: expected a mapping of parameters")
        compiled_args[str(tool)] = {
            str(p): _compile_arg(v, f"{where}.arguments[{tool!r}][{p!r}]") for p, v in params.items()
        }
    return AgentBehaviour(
        rules=tuple(_compile_rule(r, f"{where}.rules[{i}]") for i, r in enumerate(rules)),
        respond=_templates(body.get("respond"), f"{where}.respond"),
        arguments=compiled_args,
        max_handoffs=max_handoffs,
    )


def _compile_rule(rule: Any, where: str) -> _Rule:
    if not isinstance(rule, Mapping):
        raise ValueError(f"behaviour {where}: expected a mapping with keys {sorted(_RULE_KEYS)}")
    unknown = set(rule) - _RULE_KEYS
    if unknown:
        raise ValueError(f"behaviour {where}: unknown key(s) {sorted(unknown)}; allowed {sorted(_RULE_KEYS)}")
    after = str(rule.get("after", "start"))
    if after not in _AFTER and not (after.startswith("tool:") and len(after) > 5):
        raise ValueError(f"behaviour {where}.after: {after!r} is not one of {', '.join(_AFTER)}, tool:NAME")
    pattern = None
    if rule.get("input") is not None:
        try:
            pattern = compile_pattern(str(rule["input"]))
        except regex_error() as exc:
            raise ValueError(f"behaviour {where}.input: bad regex: {exc}") from None
    choose = rule.get("choose", "respond")
    table = {choose: 1.0} if isinstance(choose, str) else choose
    if not isinstance(table, Mapping) or not table:
        raise ValueError(f"behaviour {where}.choose: expected a choice or a mapping of choice to weight")
    total = 0.0
    for choice, weight in table.items():
        if not (choice == "respond" or re.fullmatch(r"(tool|handoff):.+", str(choice))):
            raise ValueError(
                f"behaviour {where}.choose: {choice!r} is not 'respond', 'tool:NAME' or 'handoff:AGENT'"
            )
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or weight < 0
            or math.isnan(weight)
        ):
            raise ValueError(f"behaviour {where}.choose[{choice!r}]: weight must be a number >= 0")
        total += float(weight)
    if total <= 0:
        raise ValueError(f"behaviour {where}.choose: weights sum to zero")
    cumulative, acc = [], 0.0
    for choice, weight in table.items():
        acc += float(weight) / total
        cumulative.append((str(choice), acc))
    return _Rule(pattern, after, tuple(cumulative), _templates(rule.get("respond"), f"{where}.respond"))


def _compile_arg(spec: Any, where: str) -> _Arg:
    if not (isinstance(spec, Mapping) and spec and set(spec) <= _ARG_KEYS):
        return _Arg(value=spec, has_value=True)
    if "value" in spec:
        return _Arg(value=spec["value"], has_value=True)
    regex = None
    if spec.get("regex") is not None:
        try:
            regex = compile_pattern(str(spec["regex"]))
        except regex_error() as exc:
            raise ValueError(f"behaviour {where}.regex: bad regex: {exc}") from None
    choice = spec.get("choice")
    if choice is not None and (
        isinstance(choice, str | bytes) or not isinstance(choice, Sequence) or not choice
    ):
        raise ValueError(f"behaviour {where}.choice: expected a non-empty list")
    return _Arg(
        regex=regex,
        choice=tuple(choice) if choice is not None else None,
        default=spec.get("default"),
        has_default="default" in spec,
    )


def _templates(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"behaviour {where}: expected a string or a non-empty list of strings")


def load_behaviour(
    source: Behaviour | Mapping[str, Any] | str | Path | None, *, root: str | Path | None = None
) -> Behaviour:
    """Compile a behaviour from a mapping, a ``.yml``/``.yaml``/``.json`` path or ``module:attr``.

    Relative paths resolve against ``root`` (the suite's folder), else the working directory.
    """
    if source is None:
        return Behaviour()
    if isinstance(source, Behaviour):
        return source
    if isinstance(source, Mapping):
        return Behaviour(source)
    text = str(source)
    path = Path(text)
    if path.suffix.lower() in (".yml", ".yaml", ".json") or isinstance(source, Path):
        if not path.is_absolute() and root is not None:
            path = Path(root) / path
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"behaviour file {path}: {exc.strerror or exc}") from None
        if path.suffix.lower() == ".json":
            data = json.loads(raw)
        else:
            import yaml  # only needed for YAML files

            data = yaml.safe_load(raw)
        return Behaviour(data or {}, source=str(path))
    module_name, sep, attr = text.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"behaviour {text!r}: expected 'module:attr' or a .yml/.yaml path")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"behaviour {text!r}: {exc}") from None
    if isinstance(obj, Behaviour):
        return obj
    if not isinstance(obj, Mapping):
        raise ValueError(f"behaviour {text!r} is a {type(obj).__name__}, not a mapping")
    return Behaviour(obj, source=text)


# -- reading the conversation -------------------------------------------------------------------
@dataclass(frozen=True)
class _Conversation:
    """What the simulator may condition on: a projection of the input, hashed for seeding."""

    last_user: str
    state: str  # user | handoff | tool | other
    last_tool: str | None
    tool_output: str
    handoffs: int
    text: str  # canonical projection; its hash seeds the draws, its length estimates tokens


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, Mapping) else getattr(item, key, None)


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for part in content:
            text = _get(part, "text")
            if text is None:
                text = _get(part, "refusal")
            if isinstance(text, str):
                parts.append(text)
        return "\n".join(parts)
    return str(content)


def _handoff_target(output: str) -> str | None:
    """The SDK marks a handoff's tool result as ``{"assistant": "<agent name>"}``."""
    if not output.startswith("{") or '"assistant"' not in output:
        return None
    try:
        data = json.loads(output)
    except ValueError:
        return None
    if isinstance(data, dict) and len(data) == 1 and isinstance(data.get("assistant"), str):
        return data["assistant"]
    return None


def _read_conversation(input: str | list[TResponseInputItem], handoff_tools: set[str]) -> _Conversation:
    items: Sequence[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else input
    calls: dict[Any, str] = {}
    parts: list[str] = []
    last_user, state, last_tool, tool_output, handoffs = "", "other", None, "", 0
    for item in items:
        kind = _get(item, "type")
        role = _get(item, "role")
        if kind == "function_call":
            name = str(_get(item, "name") or "")
            calls[_get(item, "call_id")] = name
            parts.append(f"call {name} {_get(item, 'arguments') or ''}")
            state = "other"
        elif kind == "function_call_output":
            output = _text_of(_get(item, "output"))
            name = calls.get(_get(item, "call_id"))
            parts.append(f"result {name or ''} {output}")
            if name in handoff_tools or _handoff_target(output) is not None:
                handoffs += 1
                state, last_tool = "handoff", None
            else:
                state, last_tool, tool_output = "tool", name, output
        elif role is not None:
            text = _text_of(_get(item, "content"))
            parts.append(f"{role}: {text}")
            if role == "user":
                last_user, state = text, "user"
            else:
                state = "other"
        elif kind is not None:
            parts.append(str(kind))
    return _Conversation(last_user, state, last_tool, tool_output, handoffs, "\n".join(parts))


def _rule_applies(rule: _Rule, conv: _Conversation) -> bool:
    after = rule.after
    if after == "any":
        pass
    elif after == "start":
        if conv.state not in ("user", "handoff", "other"):
            return False
    elif after.startswith("tool:"):
        if conv.state != "tool" or conv.last_tool != after[5:]:
            return False
    elif conv.state != after:
        return False
    return rule.pattern is None or rule.pattern.search(conv.last_user) is not None


# -- argument generation ------------------------------------------------------------------------
def _resolve_ref(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root
    for part in ref[2:].split("/"):
        node = node.get(part, {}) if isinstance(node, Mapping) else {}
    return node if isinstance(node, Mapping) else {}


def _generate(schema: Any, rng: random.Random, text: str, root: Mapping[str, Any], depth: int = 0) -> Any:
    """A value valid for common JSON schemas, drawn with ``rng``; strings default to ``text``."""
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    schema = _resolve_ref(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return rng.choice(list(schema["enum"]))
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in schema.get(key) or [] if _resolve_ref(o, root).get("type") != "null"]
        if options:
            return _generate(options[0], rng, text, root, depth + 1)
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        return {k: _generate(v, rng, text, root, depth + 1) for k, v in props.items()}
    if kind == "array":
        n = max(1, int(schema.get("minItems", 1)))
        return [_generate(schema.get("items") or {}, rng, text, root, depth + 1) for _ in range(n)]
    if kind == "integer":
        lo = int(schema.get("minimum", 0))
        return rng.randint(lo, int(schema.get("maximum", lo + 100)))
    if kind == "number":
        lo = float(schema.get("minimum", 0.0))
        return round(rng.uniform(lo, float(schema.get("maximum", lo + 100.0))), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    value = text
    if isinstance(schema.get("maxLength"), int):
        value = value[: schema["maxLength"]]
    return value


def _arguments(
    schema: Mapping[str, Any], overrides: Mapping[str, _Arg], rng: random.Random, conv: _Conversation
) -> dict[str, Any]:
    value = _generate(schema, rng, conv.last_user, schema)
    args = dict(value) if isinstance(value, dict) else {}
    for name, spec in overrides.items():
        if spec.has_value:
            args[name] = spec.value
            continue
        found = spec.regex.search(conv.last_user) if spec.regex is not None else None
        if found is not None:
            args[name] = found.group(1) if found.re.groups else found.group(0)
        elif spec.choice is not None:
            args[name] = rng.choice(spec.choice)
        elif spec.has_default:
            args[name] = spec.default
    return args


# -- the model ----------------------------------------------------------------------------------
def _current_agent() -> str | None:
    """The agent the runner is asking: its turn span (or agent span) is current during the call.

    The SDK marks these spans current even when tracing is disabled (no-op spans keep their data).
    """
    data = getattr(get_current_span(), "span_data", None)
    if isinstance(data, TurnSpanData):
        return data.agent_name
    if isinstance(data, AgentSpanData):
        return data.name
    return None


def _tokens(chars: int) -> int:
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))


class OfflineModel(Model):
    """A seeded simulator of a model, driven by a ``Behaviour`` (see the module docstring).

    ``agent`` pins the policy to one agent name, for use as ``Agent(model=...)``; by default the
    agent is read from the runner's current span, so one instance serves a whole workflow.
    """

    def __init__(
        self,
        behaviour: Behaviour | Mapping[str, Any] | None = None,
        seed: int = 0,
        *,
        agent: str | None = None,
    ) -> None:
        self.behaviour = load_behaviour(behaviour)
        self.seed = int(seed)
        self.agent = agent

    def __repr__(self) -> str:
        return f"OfflineModel(seed={self.seed}, behaviour={self.behaviour.source})"

    # The SDK's two entry points ---------------------------------------------------------------
    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
        **_: Any,
    ) -> ModelResponse:
        agent = self.agent or _current_agent()
        # Yield once, as a network call would, so concurrent trials genuinely interleave.
        await asyncio.sleep(0)
        with generation_span(
            model=MODEL_NAME, model_config={"seed": self.seed}, disabled=tracing.is_disabled()
        ) as span:
            output, usage = self._decide(
                agent, system_instructions, input, model_settings, tools, output_schema, handoffs
            )
            span.span_data.usage = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
            if tracing.include_data():
                span.span_data.output = [item.model_dump(exclude_unset=True) for item in output]
        return ModelResponse(output=output, usage=usage, response_id=None)

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
        **_: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """The same decision as ``get_response``, delivered as Responses-API stream events."""
        result = await self.get_response(
            system_instructions, input, model_settings, tools, output_schema, handoffs, tracing
        )
        usage = result.usage
        response = Response(
            id="resp_offline",
            created_at=0,
            model=MODEL_NAME,
            object="response",
            output=list(result.output),
            tool_choice="auto",
            tools=[],
            top_p=None,
            parallel_tool_calls=False,
            status="completed",
            usage=ResponseUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                total_tokens=usage.total_tokens,
                input_tokens_details=InputTokensDetails.model_validate(
                    {"cached_tokens": 0, "cache_write_tokens": 0}
                ),
                output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
            ),
        )
        seq = 0
        yield ResponseCreatedEvent(
            type="response.created",
            response=response.model_copy(update={"output": [], "status": "in_progress"}),
            sequence_number=seq,
        )
        for index, item in enumerate(result.output):
            seq += 1
            yield ResponseOutputItemAddedEvent(
                type="response.output_item.added", item=item, output_index=index, sequence_number=seq
            )
            if isinstance(item, ResponseOutputMessage):
                for content_index, part in enumerate(item.content):
                    seq += 1
                    yield ResponseTextDeltaEvent(
                        type="response.output_text.delta",
                        item_id=item.id,
                        output_index=index,
                        content_index=content_index,
                        delta=getattr(part, "text", ""),
                        logprobs=[],
                        sequence_number=seq,
                    )
            seq += 1
            yield ResponseOutputItemDoneEvent(
                type="response.output_item.done", item=item, output_index=index, sequence_number=seq
            )
        yield ResponseCompletedEvent(type="response.completed", response=response, sequence_number=seq + 1)

    # The simulation ---------------------------------------------------------------------------
    def _decide(
        self,
        agent: str | None,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
    ) -> tuple[list[TResponseOutputItem], Usage]:
        handoff_tools = {h.tool_name for h in handoffs}
        conv = _read_conversation(input, handoff_tools)
        # Everything the model is shown feeds the hash: a changed prompt or tool set changes the
        # draws, as it would change a real model's answer, while replays stay identical.
        seen = "\x00".join(
            [
                str(self.seed),
                agent or "",
                system_instructions or "",
                ",".join(str(getattr(t, "name", "")) for t in tools),
                ",".join(sorted(handoff_tools)),
                conv.text,
            ]
        )
        key = hashlib.blake2b(seen.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        rng = random.Random(int.from_bytes(key, "big"))
        tag = key.hex()[:20]
        policy = self.behaviour.for_agent(agent)

        rule = next((r for r in policy.rules if _rule_applies(r, conv)), None)
        choice = "respond"
        if rule is not None:
            u = rng.random()
            choice = next((c for c, cum in rule.choices if u < cum), rule.choices[-1][0])
        choice = self._apply_tool_choice(choice, model_settings, tools, handoffs)
        if choice.startswith("handoff:") and conv.handoffs >= policy.max_handoffs:
            choice = "respond"  # loop guard: stop bouncing the conversation between agents

        output: TResponseOutputItem
        if choice == "respond":
            text = self._answer(policy, rule, conv, agent, rng, output_schema)
            output = ResponseOutputMessage(
                id=f"msg_{tag}",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])],
            )
            produced = len(text)
        else:
            name, schema = self._resolve(choice, agent, tools, handoffs)
            overrides = (policy.arguments or {}).get(name, {})
            arguments = json.dumps(_arguments(schema, overrides, rng, conv), ensure_ascii=False)
            output = ResponseFunctionToolCall(
                id=f"fc_{tag}",
                call_id=f"call_{tag}",
                type="function_call",
                name=name,
                arguments=arguments,
                status="completed",
            )
            produced = len(name) + len(arguments)

        chars_in = len(system_instructions or "") + len(conv.text)
        for tool in tools:
            chars_in += len(getattr(tool, "name", "")) + len(getattr(tool, "description", "") or "")
            if isinstance(tool, FunctionTool):
                chars_in += len(json.dumps(tool.params_json_schema))
        for h in handoffs:
            chars_in += len(h.tool_name) + len(h.tool_description)
        n_in, n_out = _tokens(chars_in), _tokens(produced)
        usage = Usage(requests=1, input_tokens=n_in, output_tokens=n_out, total_tokens=n_in + n_out)
        return [output], usage

    @staticmethod
    def _apply_tool_choice(
        choice: str, settings: ModelSettings, tools: list[Tool], handoffs: list[Handoff]
    ) -> str:
        """Honour ``ModelSettings.tool_choice`` the way an obedient model would."""
        forced = settings.tool_choice
        if forced is None or forced == "auto" or not isinstance(forced, str):
            return choice
        if forced == "none":
            return "respond"
        if forced == "required":
            if choice != "respond":
                return choice
            names = [t.name for t in tools if isinstance(t, FunctionTool)]
            if names:
                return f"tool:{names[0]}"
            return f"handoff:{handoffs[0].agent_name}" if handoffs else choice
        if any(getattr(t, "name", None) == forced for t in tools):
            return f"tool:{forced}"
        return choice

    @staticmethod
    def _resolve(
        choice: str, agent: str | None, tools: list[Tool], handoffs: list[Handoff]
    ) -> tuple[str, Mapping[str, Any]]:
        kind, _, target = choice.partition(":")
        if kind == "tool":
            for tool in tools:
                if isinstance(tool, FunctionTool) and tool.name == target:
                    return tool.name, tool.params_json_schema
            available = [t.name for t in tools if isinstance(t, FunctionTool)]
        else:
            for h in handoffs:
                if target in (h.agent_name, h.tool_name):
                    return h.tool_name, h.input_json_schema or {}
            available = [f"handoff:{h.agent_name}" for h in handoffs]
        raise ValueError(
            f"offline behaviour for agent {agent!r} chose {choice!r}, but the agent only has {available}"
        )

    @staticmethod
    def _answer(
        policy: AgentBehaviour,
        rule: _Rule | None,
        conv: _Conversation,
        agent: str | None,
        rng: random.Random,
        output_schema: AgentOutputSchemaBase | None,
    ) -> str:
        templates = (rule.respond if rule is not None else None) or (
            ("{tool_output}",)
            if conv.state == "tool" and conv.tool_output and policy.known
            else policy.respond
        )
        if not templates:
            templates = (DEFAULT_RESPONSE if policy.known else NO_BEHAVIOUR_TEXT,)
        template = templates[0] if len(templates) == 1 else rng.choice(templates)
        text = (
            template.replace("{tool_output}", conv.tool_output)
            .replace("{input}", conv.last_user)
            .replace("{agent}", agent or "")
        )
        if output_schema is None or output_schema.is_plain_text():
            return text
        try:  # a structured agent: keep a template that already is valid output, else invent one
            output_schema.validate_json(text)
            return text
        except Exception:
            schema = output_schema.json_schema()
            return json.dumps(_generate(schema, rng, text, schema), ensure_ascii=False)
