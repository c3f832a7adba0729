"""The offline simulator's framework-free core: behaviour tables, the conversation projection and one decision.

Both faces of the simulator call :func:`decide` with plain data: ``OfflineModel`` (the OpenAI Agents SDK's
``Model`` interface, ``_offline``) and ``OfflineServer`` (an OpenAI-compatible Chat Completions endpoint on
127.0.0.1 for any other framework, ``_offline_server``). This module imports neither ``agents`` nor ``openai``:
framework environments (CrewAI, LangGraph, ...) do not have the Agents SDK installed.

The simulator is **not a language model**: it does not read instructions or understand text. Each
agent's choices come from a small, hand-written *behaviour* table, sampled with probabilities, so
that a workflow shows the run-to-run variation a statistical test has to cope with. Pass rates it
produces measure the behaviour table, never a real model; they exist to demonstrate and test the
tooling, and to rehearse a suite before spending money on a provider.

Behaviour format (a plain mapping, or the same as YAML), keyed by agent name; ``"*"`` applies to
agents not listed. Every key is optional::

    Triage Agent:
      match: {system: "(?i)triage"}       # HTTP endpoint only: how a request is recognised as this agent's
      rules:                              # first matching rule wins
        - after: handoff                  # the agent was handed the conversation back
          choose: respond
          respond: "Back with you. {tool_output}"
        - input: "(?i)change .*seat"      # regex searched in the latest user message
          choose: {"handoff:Seat Booking Agent": 0.97, "handoff:FAQ Agent": 0.02, respond: 0.01}
      respond: "I can help with flight questions and seat changes."   # or a list to pick from
      max_handoffs: 4                     # loop guard: no more handoffs once the chat has this many
    Seat Booking Agent:
      match: {tools: [update_seat]}       # all listed tools are offered in the request
      rules:
        - choose: {"tool:update_seat": 0.98, respond: 0.02}
        - after: "tool:update_seat"
          choose: {respond: 0.98, "handoff:Triage Agent": 0.02}
          respond: "{tool_output}"
      arguments:                          # per tool, per parameter; others come from the JSON schema
        update_seat:
          new_seat: {regex: '\\b(\\d{1,2}[A-F])\\b', default: "1A"}
          confirmation_number: {regex: '\\b([A-Z0-9]{6})\\b'}
    handoff_tools: "^(transfer_to|handoff_to|delegate)"   # HTTP endpoint only (this is the default)

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

Over HTTP (requests carry no agent name, and handoffs are ordinary tool calls):

* ``match`` picks the agent a request is for: ``system`` is a regex searched in the request's system and
  developer messages, ``tools`` a list of names that must all be offered. The first agent in table order
  whose ``match`` holds wins; else the agent whose name occurs in the system text (as whole words,
  case-insensitive, the longest name wins); else ``"*"``.
* ``handoff:NAME`` resolves to an offered tool named ``transfer_to_<name>`` or ``handoff_to_<name>``
  (``<name>`` in snake case: ``Orders Agent`` -> ``orders_agent``) or literally ``NAME``; else to an offered
  handoff tool (``handoff_tools``) taking the target's name (``agent_name``, ``coworker``, ``member_id``, ...:
  Strands' ``handoff_to_agent``), called with it set to ``NAME``.
* the top-level ``handoff_tools`` regex (default ``^(transfer_to|handoff_to|delegate)``) names the tools whose
  results count as handoffs: ``after: handoff`` holds when the latest message is such a result, and
  ``max_handoffs`` counts them.

Determinism: every draw comes from a ``random.Random`` seeded by a hash of (seed, agent name, what
the agent is shown: instructions, tool names, conversation), never from shared state, so concurrent
runs give the same results as sequential ones whatever the scheduling; a changed prompt changes the
draws, as it would change a real model's answers. Token usage is an estimate (~4 characters per
token of input, tool schemas and output) so that cost accounting has something to add up.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import random
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._limits import UserPattern, compile_pattern, regex_error

__all__ = [
    "DEFAULT_HANDOFF_TOOLS",
    "DEFAULT_MAX_HANDOFFS",
    "DEFAULT_RESPONSE",
    "MODEL_NAME",
    "NO_BEHAVIOUR_TEXT",
    "AgentBehaviour",
    "Behaviour",
    "Conversation",
    "Decision",
    "HandoffSpec",
    "ToolSpec",
    "decide",
    "load_behaviour",
    "read_conversation",
    "snake",
]

MODEL_NAME = "offline-simulator"
NO_BEHAVIOUR_TEXT = "[offline simulator] no behaviour is configured for agent '{agent}'."
DEFAULT_RESPONSE = "I'm sorry, I can't help with that."
DEFAULT_MAX_HANDOFFS = 4
CHARS_PER_TOKEN = 4
DEFAULT_HANDOFF_TOOLS = r"^(transfer_to|handoff_to|delegate)"

_AFTER = ("start", "user", "handoff", "tool", "any")
_ARG_KEYS = frozenset({"regex", "default", "choice", "value"})
_AGENT_KEYS = frozenset({"rules", "respond", "arguments", "max_handoffs", "match"})
_MATCH_KEYS = frozenset({"system", "tools"})
_TOP_KEYS = ("handoff_tools",)  # table-wide settings beside the agents
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
    match_system: UserPattern | None = None  # HTTP endpoint: searched in the system text
    match_tools: tuple[str, ...] | None = None  # HTTP endpoint: all must be offered
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
        self.handoff_tools = _pattern(
            self.spec.get("handoff_tools", DEFAULT_HANDOFF_TOOLS), f"{source}['handoff_tools']"
        )
        self.agents: dict[str, AgentBehaviour] = {
            str(name): _compile_agent(body, f"{source}[{name!r}]")
            for name, body in self.spec.items()
            if name not in _TOP_KEYS
        }

    def for_agent(self, name: str | None) -> AgentBehaviour:
        if name is not None and name in self.agents:
            return self.agents[name]
        return self.agents.get("*", _UNKNOWN)

    def resolve_agent(self, system: str, tools: Collection[str]) -> str | None:
        """The agent an HTTP request is for (requests carry no name): ``match``, else a name in the system text.

        ``None`` means no agent was recognised (the ``"*"`` behaviour applies).
        """
        for name, policy in self.agents.items():
            if name == "*" or (policy.match_system is None and policy.match_tools is None):
                continue
            if policy.match_system is not None and policy.match_system.search(system) is None:
                continue
            if policy.match_tools is not None and not set(policy.match_tools) <= set(tools):
                continue
            return name
        lowered = system.casefold()
        named = [
            name
            for name in self.agents
            if name != "*" and re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", lowered)
        ]
        return max(named, key=len) if named else None

    def __repr__(self) -> str:
        return f"Behaviour({self.source}, agents={sorted(self.agents)})"


def _pattern(value: Any, where: str) -> UserPattern:
    if not isinstance(value, str):
        raise ValueError(f"behaviour {where}: expected a regular expression (a string), got {value!r}")
    try:
        return compile_pattern(value)
    except regex_error() as exc:
        raise ValueError(f"behaviour {where}: bad regex: {exc}") from None


def _compile_match(spec: Any, where: str) -> tuple[UserPattern | None, tuple[str, ...] | None]:
    """``match: {system: REGEX, tools: [NAME, ...]}``: how the HTTP endpoint recognises this agent."""
    if not isinstance(spec, Mapping) or not spec:
        raise ValueError(
            f"behaviour {where}: expected a mapping with key(s) {sorted(_MATCH_KEYS)}, "
            "e.g. {system: '(?i)triage', tools: [lookup_order]}"
        )
    unknown = set(spec) - _MATCH_KEYS
    if unknown:
        raise ValueError(f"behaviour {where}: unknown key(s) {sorted(unknown)}; allowed {sorted(_MATCH_KEYS)}")
    system = _pattern(spec["system"], f"{where}.system") if spec.get("system") is not None else None
    tools = spec.get("tools")
    if tools is not None:
        if isinstance(tools, str) or not isinstance(tools, Sequence) or not all(isinstance(t, str) for t in tools):
            raise ValueError(f"behaviour {where}.tools: expected a list of tool names, e.g. [lookup_order]")
        tools = tuple(tools)
    return system, tools


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
    match_system, match_tools = (
        _compile_match(body["match"], f"{where}.match") if body.get("match") is not None else (None, None)
    )
    return AgentBehaviour(
        match_system=match_system,
        match_tools=match_tools,
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
class Conversation:
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


def read_conversation(
    input: str | Sequence[Any], handoff_tools: Collection[str], handoff_pattern: UserPattern | None = None
) -> Conversation:
    """The projection of a Responses-API style input (items as mappings or objects) the simulator reads.

    A tool result is a handoff when its tool is in ``handoff_tools``, its name matches ``handoff_pattern``
    or its output is the SDK's ``{"assistant": NAME}``.
    """
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
            if (
                name in handoff_tools
                or (handoff_pattern is not None and name and handoff_pattern.search(name) is not None)
                or _handoff_target(output) is not None
            ):
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
    return Conversation(last_user, state, last_tool, tool_output, handoffs, "\n".join(parts))


def _rule_applies(rule: _Rule, conv: Conversation) -> bool:
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
    schema: Mapping[str, Any], overrides: Mapping[str, _Arg], rng: random.Random, conv: Conversation
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



# -- the decision -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolSpec:
    """A tool the agent is offered. ``schema`` is ``None`` for a tool the model cannot call by name (hosted)."""

    name: str
    description: str = ""
    schema: Mapping[str, Any] | None = field(default_factory=dict)


@dataclass(frozen=True)
class HandoffSpec:
    """An SDK handoff: the agent it reaches and the tool that reaches it."""

    agent_name: str
    tool_name: str
    description: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """What the simulated model does: answer ``text``, or call ``call`` with JSON ``arguments``."""

    text: str | None
    call: str | None
    arguments: str | None
    input_tokens: int
    output_tokens: int
    tag: str  # 20 hex digits of the draw's hash: stable ids for messages and calls


def snake(name: str) -> str:
    """An agent name as the frameworks spell it in a handoff tool (the SDK's function-style transform)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", re.sub(r"\s", "_", name)).lower()


def _tokens(chars: int) -> int:
    return max(1, math.ceil(chars / CHARS_PER_TOKEN))


def decide(
    behaviour: Behaviour,
    *,
    seed: int,
    agent: str | None,
    system: str | None,
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    handoffs: Sequence[HandoffSpec] = (),
    tool_choice: str | None = None,
    output_schema: Mapping[str, Any] | None = None,
    validate: Callable[[str], Any] | None = None,
) -> Decision:
    """The simulated model's move for one request: a pure function of its arguments.

    ``tool_choice`` is ``auto``/``none``/``required`` or a tool name. ``output_schema`` (a JSON schema) makes
    the answer structured; ``validate`` raises when a text is not valid output (a template that already is
    valid output is kept, else one is generated from the schema). Raises ``ValueError`` when the behaviour
    chooses a tool or handoff the agent is not offered.
    """
    conv = conversation
    handoff_tools = {h.tool_name for h in handoffs}
    # Everything the model is shown feeds the hash: a changed prompt or tool set changes the
    # draws, as it would change a real model's answer, while replays stay identical.
    seen = "\x00".join(
        [
            str(seed),
            agent or "",
            system or "",
            ",".join(t.name for t in tools),
            ",".join(sorted(handoff_tools)),
            conv.text,
        ]
    )
    key = hashlib.blake2b(seen.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    rng = random.Random(int.from_bytes(key, "big"))
    tag = key.hex()[:20]
    policy = behaviour.for_agent(agent)

    rule = next((r for r in policy.rules if _rule_applies(r, conv)), None)
    choice = "respond"
    if rule is not None:
        u = rng.random()
        choice = next((c for c, cum in rule.choices if u < cum), rule.choices[-1][0])
    choice = _apply_tool_choice(choice, tool_choice, tools, handoffs)
    if choice.startswith("handoff:") and conv.handoffs >= policy.max_handoffs:
        choice = "respond"  # loop guard: stop bouncing the conversation between agents

    text = name = arguments = None
    if choice == "respond":
        text = _answer(policy, rule, conv, agent, rng, output_schema, validate)
        produced = len(text)
    else:
        name, schema, preset = _resolve(choice, agent, tools, handoffs, behaviour.handoff_tools)
        overrides = (policy.arguments or {}).get(name, {})
        arguments = json.dumps({**_arguments(schema, overrides, rng, conv), **preset}, ensure_ascii=False)
        produced = len(name) + len(arguments)

    chars_in = len(system or "") + len(conv.text)
    for tool in tools:
        chars_in += len(tool.name) + len(tool.description or "")
        if tool.schema is not None:
            chars_in += len(json.dumps(tool.schema))
    for h in handoffs:
        chars_in += len(h.tool_name) + len(h.description)
    return Decision(text, name, arguments, _tokens(chars_in), _tokens(produced), tag)


def _apply_tool_choice(
    choice: str, forced: str | None, tools: Sequence[ToolSpec], handoffs: Sequence[HandoffSpec]
) -> str:
    """Honour ``tool_choice`` the way an obedient model would."""
    if forced is None or forced == "auto":
        return choice
    if forced == "none":
        return "respond"
    if forced == "required":
        if choice != "respond":
            return choice
        names = [t.name for t in tools if t.schema is not None]
        if names:
            return f"tool:{names[0]}"
        return f"handoff:{handoffs[0].agent_name}" if handoffs else choice
    if any(t.name == forced for t in tools):
        return f"tool:{forced}"
    return choice


#: Parameters of a framework's one handoff tool that name the target agent (Strands ``handoff_to_agent``,
#: ADK ``transfer_to_agent``: ``agent_name``; CrewAI ``coworker``; Agno ``member_id``).
TARGET_PARAMETERS = ("agent_name", "agent", "coworker", "member_id", "to_agent", "target_agent")


def _target_parameter(tool: ToolSpec) -> str | None:
    properties = (tool.schema or {}).get("properties")
    if not isinstance(properties, Mapping):
        return None
    return next((p for p in TARGET_PARAMETERS if p in properties), None)


def _resolve(
    choice: str,
    agent: str | None,
    tools: Sequence[ToolSpec],
    handoffs: Sequence[HandoffSpec],
    handoff_pattern: UserPattern | None = None,
) -> tuple[str, Mapping[str, Any], dict[str, Any]]:
    """The tool a choice names, and arguments it fixes. A handoff is the SDK's handoff, else an offered
    ``transfer_to_<name>``-like tool, else an offered handoff tool (``handoff_pattern``) with a parameter
    naming the target agent (:data:`TARGET_PARAMETERS`), called with that parameter set to the target."""
    kind, _, target = choice.partition(":")
    callable_tools: dict[str, ToolSpec] = {}
    for tool in tools:
        if tool.schema is not None:
            callable_tools.setdefault(tool.name, tool)  # the first of a name, as the SDK would pick
    if kind == "tool":
        if target in callable_tools:
            return target, callable_tools[target].schema or {}, {}
        available = list(callable_tools)
    else:
        for h in handoffs:
            if target in (h.agent_name, h.tool_name):
                return h.tool_name, h.schema or {}, {}
        for candidate in (f"transfer_to_{snake(target)}", f"handoff_to_{snake(target)}", target):
            if candidate in callable_tools:
                return candidate, callable_tools[candidate].schema or {}, {}
        if handoff_pattern is not None:
            for tool in callable_tools.values():
                parameter = _target_parameter(tool)
                if parameter is not None and handoff_pattern.search(tool.name) is not None:
                    return tool.name, tool.schema or {}, {parameter: target}
        available = [f"handoff:{h.agent_name}" for h in handoffs] or list(callable_tools)
    raise ValueError(
        f"offline behaviour for agent {agent!r} chose {choice!r}, but the agent only has {available}"
    )


def _answer(
    policy: AgentBehaviour,
    rule: _Rule | None,
    conv: Conversation,
    agent: str | None,
    rng: random.Random,
    output_schema: Mapping[str, Any] | None,
    validate: Callable[[str], Any] | None,
) -> str:
    templates = (rule.respond if rule is not None else None) or (
        ("{tool_output}",) if conv.state == "tool" and conv.tool_output and policy.known else policy.respond
    )
    if not templates:
        templates = (DEFAULT_RESPONSE if policy.known else NO_BEHAVIOUR_TEXT,)
    template = templates[0] if len(templates) == 1 else rng.choice(templates)
    text = (
        template.replace("{tool_output}", conv.tool_output)
        .replace("{input}", conv.last_user)
        .replace("{agent}", agent or "")
    )
    if output_schema is None:
        return text
    try:  # a structured agent: keep a template that already is valid output, else invent one
        if validate is None:
            raise ValueError("no validator")
        validate(text)
        return text
    except Exception:
        return json.dumps(_generate(output_schema, rng, text, output_schema), ensure_ascii=False)
