"""A scripted, deterministic stand-in for the realizer's LM: no network, no weights, no API key.

``ScriptedEngine`` is a DSPy 3.4 *custom engine* (``complete(Request) -> Response``), used as
``dspy.LM("scripted/realizer", engine=ScriptedEngine(script), cache=False)``. It is not a language
model. It reads the prompt DSPy's ``ChatAdapter`` built (system message: the input and output
fields and the instructions; last user message: ``[[ ## field ## ]]`` blocks) and answers two
kinds of request:

* a **realizer** request (a signature with an output field ``scenario``: ``RealizeReach``,
  ``RealizeUseTool``, ``RealizeRestrictTool``, ``RealizeDelegate``, with or without
  ``ChainOfThought``'s ``reasoning``): it reads the ``objective`` field and answers with the next
  candidate the script lists for that objective (below);
* ``dspy.Refine``'s **OfferFeedback** request (output fields ``discussion`` and ``advice``): it
  reads ``program_outputs`` (JSON) and, when the reward function annotated the prediction with
  what the runtime observed (``runtime``: ``missing`` objective ids, ``leaked`` identifiers,
  ``observed`` summary, ``error``), gives advice that names exactly those; with no runtime
  information it can only say that the reward was below the threshold. The advice is keyed by
  the ``module_names`` it is shown, as ``OfferFeedback.advice: dict[str, str]`` requires, and
  Refine injects it into the next attempt as the input field ``hint_``.

Script format (a mapping, or a YAML file holding one), keyed by objective id; ``"*"`` is used for
objectives the script does not list::

    "UseTool(faq_agent, faq_lookup_tool)":
      - "How much baggage can I bring on the plane?"
    "Delegate(faq_agent, triage_agent)":
      - "Is there wifi on the plane?"                       # a plain candidate
      - when_feedback: "Delegate(faq_agent, triage_agent)"  # eligible only when the feedback or
        text: "Is there wifi on the plane? After that I have something else to ask."  # hint says so
    "*":
      - "Hello, I need some help with my trip."

Semantics, per objective (the engine keeps state; ``reset()`` forgets it): each realizer request
returns the first candidate, in script order, that has not been returned yet and whose
``when_feedback`` text (if any) occurs, case-insensitively, in the request's ``feedback`` or
``hint_`` field. When no candidate qualifies, the *default* is returned: the objective's first
candidate without a condition (the realizer falls back on its baseline phrasing), else the first
``"*"`` candidate, else a fixed generic message. ``when_feedback`` may also be a list: every text
in it must occur. So a later candidate can be made to depend on what the runtime reported about
earlier attempts: withhold the feedback and it is never chosen.

Every request is recorded in ``requests`` (``ScriptedCall``: kind, objective, the feedback and hint
it carried, the prompt, the reply); ``calls`` counts them.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["GENERIC_SCENARIO", "ScriptedCall", "ScriptedEngine", "load_script", "parse_fields"]

#: What a realizer request gets when neither the objective nor ``"*"`` has a candidate.
GENERIC_SCENARIO = "Hello, I need some help with my trip."
_WILDCARD = "*"
_CANDIDATE_KEYS = frozenset({"text", "when_feedback"})
_FIELD = re.compile(r"\[\[ ## (\w+) ## \]\]\n?")
_RESPOND = "\n\nRespond with the corresponding output fields"
_NUMBERED_FIELD = re.compile(r"^\s*\d+\.\s*`(\w+)`", re.MULTILINE)


@dataclass(frozen=True)
class _Candidate:
    text: str
    when: tuple[str, ...] = ()  # every text must occur in the feedback / hint

    def applies(self, context: str) -> bool:
        low = context.lower()
        return all(w.lower() in low for w in self.when)


@dataclass(frozen=True)
class ScriptedCall:
    """One request the engine answered."""

    kind: Literal["realize", "advice"]
    objective: str | None  # realizer requests: the ``objective`` field
    feedback: str | None  # realizer requests: the ``feedback`` field
    hint: str | None  # realizer requests: Refine's ``hint_`` field (None: the prompt had none)
    prompt: str  # the last user message, as the adapter formatted it
    reply: str  # the scenario text, or the advice text
    candidate: int | None = None  # index in the objective's list; None: the default was used


def load_script(script: Mapping[str, Any] | str | Path) -> dict[str, tuple[_Candidate, ...]]:
    """Validate a script (a mapping or a YAML path) into candidates per objective id."""
    source = "<mapping>"
    if not isinstance(script, Mapping):
        import yaml

        path = Path(script)
        source = str(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"realizer script {path}: {exc.strerror or exc}") from None
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ValueError(f"realizer script {path}: expected a mapping of objective id to candidates")
        script = data
    out: dict[str, tuple[_Candidate, ...]] = {}
    for key, items in script.items():
        where = f"realizer script {source}[{key!r}]"
        if isinstance(items, str) or not isinstance(items, Sequence):
            raise ValueError(f"{where}: expected a list of candidates")
        candidates = []
        for i, item in enumerate(items):
            candidates.append(_candidate(item, f"{where}[{i}]"))
        out[str(key)] = tuple(candidates)
    return out


def _candidate(item: Any, where: str) -> _Candidate:
    if isinstance(item, str):
        return _Candidate(item)
    if not isinstance(item, Mapping):
        raise ValueError(f"{where}: expected a string or a mapping with text and when_feedback")
    unknown = set(item) - _CANDIDATE_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}; allowed {sorted(_CANDIDATE_KEYS)}")
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}.text: expected a non-empty string")
    when = item.get("when_feedback")
    if when is None:
        conditions: tuple[str, ...] = ()
    elif isinstance(when, str) and when.strip():
        conditions = (when,)
    elif (
        isinstance(when, Sequence)
        and not isinstance(when, str)
        and when
        and all(isinstance(w, str) and w.strip() for w in when)
    ):
        conditions = tuple(when)
    else:
        raise ValueError(f"{where}.when_feedback: expected a non-empty string or list of strings")
    return _Candidate(text, conditions)


def parse_fields(text: str) -> dict[str, str]:
    """``[[ ## name ## ]]`` blocks of a ChatAdapter message, values stripped."""
    parts = _FIELD.split(text)
    fields: dict[str, str] = {}
    for i in range(1, len(parts) - 1, 2):
        value = parts[i + 1]
        cut = value.find(_RESPOND)
        if cut >= 0:
            value = value[:cut]
        fields[parts[i]] = value.strip()
    return fields


def _section_fields(system: str, heading: str, end: str) -> tuple[str, ...]:
    start = system.find(heading)
    if start < 0:
        return ()
    stop = system.find(end, start)
    section = system[start : stop if stop >= 0 else None]
    return tuple(_NUMBERED_FIELD.findall(section))


def _system_text(request: Any) -> str:
    system = request.system
    if system is None:
        return ""
    if isinstance(system, str):
        return system
    return "".join(getattr(p, "text", "") or "" for p in system)


class ScriptedEngine:
    """A deterministic DSPy engine that plays a realizer script (see the module docstring)."""

    def __init__(self, script: Mapping[str, Any] | str | Path) -> None:
        self.script = load_script(script)
        self.requests: list[ScriptedCall] = []
        self._used: dict[str, set[int]] = {}
        self._lock = threading.Lock()

    # -- bookkeeping -------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        return len(self.requests)

    @property
    def realize_calls(self) -> tuple[ScriptedCall, ...]:
        return tuple(c for c in self.requests if c.kind == "realize")

    @property
    def advice_calls(self) -> tuple[ScriptedCall, ...]:
        return tuple(c for c in self.requests if c.kind == "advice")

    def reset(self) -> None:
        """Forget which candidates were used and the recorded requests."""
        with self._lock:
            self.requests.clear()
            self._used.clear()

    # -- the engine contract -----------------------------------------------------------------
    def complete(self, request: Any) -> Any:
        from dspy.lm15 import Message, Response, TextPart, Usage

        system = _system_text(request)
        users = [m for m in request.messages if m.role == "user"]
        prompt = (users[-1].text if users else request.messages[-1].text) or ""
        fields = parse_fields(prompt)
        outputs = _section_fields(system, "Your output fields are:", "All interactions will be structured")
        if "advice" in outputs:
            values, call = self._advise(fields, prompt)
        elif "scenario" in outputs:
            values, call = self._realize(fields, prompt)
        else:
            raise ValueError(
                "ScriptedEngine answers only realizer requests (output field `scenario`) and "
                f"dspy.Refine's OfferFeedback requests (`advice`); this request asks for {list(outputs)}"
            )
        with self._lock:
            self.requests.append(call)
        blocks = [f"[[ ## {name} ## ]]\n{values.get(name, '')}" for name in outputs]
        text = "\n\n".join([*blocks, "[[ ## completed ## ]]"])
        return Response(
            id=None,
            model="scripted",
            message=Message.assistant([TextPart(text)]),
            finish_reason="stop",
            usage=Usage(input_tokens=(len(system) + len(prompt)) // 4, output_tokens=len(text) // 4),
        )

    def stream(self, request: Any) -> Any:
        from dspy.lm15 import response_to_events

        return response_to_events(self.complete(request))

    def close(self) -> None:
        pass

    # -- the two kinds of request ------------------------------------------------------------
    def _realize(self, fields: dict[str, str], prompt: str) -> tuple[dict[str, str], ScriptedCall]:
        objective = fields.get("objective")
        if not objective:
            raise ValueError("ScriptedEngine: the realizer request has no `objective` field")
        feedback = fields.get("feedback", "")
        hint = fields.get("hint_")
        context = f"{feedback}\n{hint or ''}"
        key = objective if objective in self.script else _WILDCARD
        candidates = self.script.get(key, ())
        with self._lock:
            used = self._used.setdefault(objective, set())
            index = next((i for i, c in enumerate(candidates) if i not in used and c.applies(context)), None)
            if index is not None:
                used.add(index)
        text = candidates[index].text if index is not None else self._default(candidates)
        reasoning = (
            f"Scripted candidate {index + 1} for {objective}."
            if index is not None
            else f"No scripted candidate applies to {objective}; falling back on the default."
        )
        call = ScriptedCall("realize", objective, feedback, hint, prompt, text, index)
        return {"scenario": text, "reasoning": reasoning}, call

    def _default(self, candidates: Sequence[_Candidate]) -> str:
        for pool in (candidates, self.script.get(_WILDCARD, ())):
            for c in pool:
                if not c.when:
                    return c.text
        return GENERIC_SCENARIO

    def _advise(self, fields: dict[str, str], prompt: str) -> tuple[dict[str, str], ScriptedCall]:
        try:
            names = json.loads(fields.get("module_names", "[]"))
        except ValueError:
            names = []
        if not isinstance(names, list) or not names:
            names = ["realize"]
        try:
            outputs = json.loads(fields.get("program_outputs", "{}"))
        except ValueError:
            outputs = {}
        runtime = outputs.get("runtime") if isinstance(outputs, dict) else None
        reward = fields.get("reward_value", "?")
        threshold = fields.get("target_threshold", "?")
        advice, discussion = _advice_from(runtime, reward, threshold)
        values = {
            "discussion": discussion,
            "advice": json.dumps({str(n): advice for n in names}, ensure_ascii=False),
        }
        return values, ScriptedCall("advice", None, None, None, prompt, advice)


def _advice_from(runtime: Any, reward: str, threshold: str) -> tuple[str, str]:
    """Advice that repeats what the runtime reported, or N/A when nothing was reported."""
    if not isinstance(runtime, dict):
        return (
            "N/A",
            f"The reward was {reward} (threshold {threshold}); the outputs carry no runtime "
            "observation, so no module can be blamed for anything specific.",
        )
    parts: list[str] = []
    leaked = [str(x) for x in runtime.get("leaked") or ()]
    missing = [str(x) for x in runtime.get("missing") or ()]
    if leaked:
        parts.append(
            f"The scenario was rejected without being run because it names {', '.join(leaked)}; "
            "describe the need in the customer's own words and never use internal identifiers."
        )
    if runtime.get("error"):
        parts.append(f"The run failed: {runtime['error']}.")
    if missing:
        observed = runtime.get("observed") or "nothing"
        parts.append(
            f"Running the scenario did not witness {', '.join(missing)} (observed: {observed}). "
            f"Revise the request so that the workflow exhibits {', '.join(missing)}."
        )
    if not parts:
        return "N/A", f"The reward was {reward} (threshold {threshold}); nothing was reported missing."
    text = " ".join(parts)
    return text, f"The realizer is to blame: reward {reward} below {threshold}. {text}"
