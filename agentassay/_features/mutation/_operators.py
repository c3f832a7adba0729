"""The mutation operator registry (paper Sec. 5.1): five classes, each a function from the agent under test
to its mutants.

* ``prompt`` (Def. 5.2): synonym substitution, instruction reordering, noise injection, instruction
  dropout — on each SDK agent's ``instructions`` (in a cloned agent graph, never the user's objects),
  or on the prompt strings a plain-callable suite names (``mutation: {prompts: [module:ATTR]}``),
  patched only while that mutant's trials run.
* ``tool`` (Def. 5.3): removal, reordering, a misleading sentence in a description or in a parameter's
  schema, and the probe's faults (the tool fails with an error, or returns malformed output).
* ``model`` (Def. 5.4): swap or downgrade to a model the suite names (``mutation: {models: [...]}``);
  offline, a second behaviour table.
* ``context`` (Def. 5.5): every scenario's input truncated, padded with a noise passage, or its
  sentences permuted.
* ``structure`` (the coverage paper): the structural mutants of the workflow graph
  (``_structural.structural_mutants``: the graph edits), applied to a cloned graph.

Every operator is deterministic (random choices come from a seed fixed by the suite's seed and the
mutant), and every mutant has a readable id and a one-line diff. An operator that cannot apply to
this agent (no tools to remove, a plain callable's model) gives a note, not a mutant.
"""

from __future__ import annotations

import contextlib
import copy
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ..._integrations.adapters._openai_agents import _reachable
from ..._integrations.adapters._probe import Probe
from ._mutant import Mutant, Mutated, Target
from ._structural import clone_graph, structure_mutants

SYNONYMS = {
    "helpful": "useful", "delegate": "assign", "answer": "reply to", "customer": "client", "question": "query",
    "use": "employ", "transfer": "pass", "update": "change", "ask": "request", "support": "assist",
    "identify": "find", "appropriate": "suitable", "summarize": "condense", "document": "text", "always": "invariably",
    "never": "not ever", "respond": "reply", "tools": "functions", "request": "demand", "check": "verify",
}
NOISE = (
    "Note that the office plants are watered on Tuesdays.",
    "The quarterly newsletter will be sent out next week.",
    "Remember that the cafeteria closes early on Fridays.",
)
TOOL_NOISE = "Use this tool only when the user explicitly asks for a refund of their ticket."
CONTEXT_NOISE = (
    "Unrelated note: the museum downtown extends its opening hours in summer, and the city library "
    "is hosting a poetry reading on Sunday afternoon."
)
OFFLINE_PROMPTS = (
    "not activated: the offline simulator does not read instructions, so a prompt mutation only changes its "
    "random draws, never its behaviour (run `agentassay mutate` with a real model to test prompts)"
)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


def _clip(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _segments(text: str) -> list[str]:
    """Instructions as the units the prompt operators move: lines, else sentences."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) >= 2:
        return lines
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _join(parts: list[str], original: str) -> str:
    return "\n".join(parts) if len([ln for ln in original.splitlines() if ln.strip()]) >= 2 else " ".join(parts)


# -- prompt ----------------------------------------------------------------------------------------


def prompt_edits(text: str, rng_for: Callable[[str], random.Random]) -> list[tuple[str, str, str]]:
    """``(operator, mutated text, diff)`` for the four prompt operators on one prompt (those that apply)."""
    out: list[tuple[str, str, str]] = []
    words = [w for w in SYNONYMS if re.search(rf"\b{w}\b", text, re.IGNORECASE)]
    if words:
        w = rng_for("synonym").choice(sorted(words))
        new = re.sub(rf"\b{w}\b", SYNONYMS[w], text, count=1, flags=re.IGNORECASE)
        out.append(("synonym", new, f"replaced '{w}' with '{SYNONYMS[w]}'"))
    parts = _segments(text)
    if len(parts) >= 2:
        order = list(range(len(parts)))
        rng = rng_for("reorder")
        while order == sorted(order):
            rng.shuffle(order)
        out.append(("reorder", _join([parts[i] for i in order], text),
                    f"reordered its {len(parts)} instructions as {','.join(str(i + 1) for i in order)}"))
        i = rng_for("dropout").randrange(len(parts))
        out.append(("dropout", _join(parts[:i] + parts[i + 1:], text), f"dropped instruction {i + 1}: '{_clip(parts[i], 60)}'"))
    rng = rng_for("noise")
    noise = rng.choice(NOISE)
    at = rng.randrange(len(parts) + 1) if parts else 0
    out.append(("noise", _join([*parts[:at], noise, *parts[at:]], text), f"inserted noise at {at + 1}: '{noise}'"))
    return out


def prompt_mutants(t: Target) -> list[Mutant]:
    offline = getattr(getattr(t.adapter, "model_config", None), "provider", None) == "offline"
    out: list[Mutant] = []
    agent = t.sdk_agent
    if agent is not None:

        for original in _reachable(agent):
            text = original.instructions
            if not isinstance(text, str) or not text.strip():
                t.notes.append(f"prompt: {original.name!r} has no string instructions to mutate; skipped")
                continue
            for op, new, diff in prompt_edits(text, lambda op, n=original.name: t.rng("prompt", n, op)):
                out.append(Mutant(
                    f"prompt.{op}({_slug(original.name)})", "prompt", op, f"{original.name}: {diff}",
                    build=_instructions(t, original.name, new), not_run=OFFLINE_PROMPTS if offline else None,
                ))
    for ref in t.config.prompts:
        module_name, _, attr = ref.partition(":")
        module = _import_module(module_name)
        text = getattr(module, attr)
        for op, new, diff in prompt_edits(text, lambda op, r=ref: t.rng("prompt", r, op)):
            out.append(Mutant(f"prompt.{op}({_slug(attr)})", "prompt", op, f"{ref}: {diff}",
                              build=_patched(module, attr, new), exclusive=True))
    if agent is None and not t.config.prompts:
        t.notes.append(
            "prompt: a plain-callable agent; name its prompt strings in `mutation: {prompts: [module:ATTR]}` to mutate them"
        )
    return out


def _import_module(name: str) -> Any:
    import importlib

    return importlib.import_module(name)


def _instructions(t: Target, agent_name: str, text: str) -> Callable[[], Mutated]:
    def build() -> Mutated:
        originals, clones = clone_graph(t.sdk_agent)
        for a in originals:
            if a.name == agent_name:
                clones[id(a)].instructions = text
        return Mutated(adapter=t.sdk_adapter(clones[id(t.sdk_agent)]))

    return build


def _patched(module: Any, attr: str, value: str) -> Callable[[], Mutated]:
    @contextlib.contextmanager
    def patch() -> Iterator[None]:
        old = getattr(module, attr)
        setattr(module, attr, value)
        try:
            yield
        finally:
            setattr(module, attr, old)

    return lambda: Mutated(patch=patch)


# -- tool ------------------------------------------------------------------------------------------


def tool_mutants(t: Target) -> list[Mutant]:
    agent = t.sdk_agent
    if agent is None:
        t.notes.append("tool: a plain-callable agent has no tools to mutate; skipped")
        return []
    from agents.tool import FunctionTool


    out: list[Mutant] = []
    for original in _reachable(agent):
        tools = [x for x in original.tools if isinstance(x, FunctionTool)]
        slug = _slug(original.name)
        if not tools:
            continue
        for tool in tools:
            name = tool.name
            out.append(Mutant(f"tool.remove({slug},{name})", "tool", "remove",
                              f"{original.name}: removed tool '{name}'",
                              build=_tools(t, original.name, lambda ts, n=name: [x for x in ts if getattr(x, "name", None) != n])))
            out.append(Mutant(f"tool.description_noise({slug},{name})", "tool", "description_noise",
                              f"{original.name}: '{name}' description + '{_clip(TOOL_NOISE, 50)}'",
                              build=_tools(t, original.name, lambda ts, n=name: [_noisy(x) if getattr(x, "name", None) == n else x for x in ts])))
            props = (tool.params_json_schema or {}).get("properties") or {}
            if props:
                param = sorted(props)[0]
                out.append(Mutant(f"tool.schema_noise({slug},{name})", "tool", "schema_noise",
                                  f"{original.name}: '{name}.{param}' described as a refund reference",
                                  build=_tools(t, original.name, lambda ts, n=name, p=param: [_schema_noisy(x, p) if getattr(x, "name", None) == n else x for x in ts])))
            for mode in ("error", "malformed"):
                out.append(Mutant(f"tool.fail_{mode}({name})", "tool", f"fail_{mode}",
                                  f"'{name}' {'fails with an error' if mode == 'error' else 'returns malformed output'}",
                                  build=_faulty(t, name, mode)))
        if len(tools) >= 2:
            out.append(Mutant(f"tool.reorder({slug})", "tool", "reorder", f"{original.name}: tools in reverse order",
                              build=_tools(t, original.name, lambda ts: list(reversed(ts)))))
    # a tool shared by agents gets its fault mutants once
    seen: set[str] = set()
    return [m for m in out if not (m.id.startswith("tool.fail_") and (m.id in seen or seen.add(m.id)))]


def _noisy(tool: Any) -> Any:
    moved = copy.copy(tool)
    moved.description = f"{tool.description or ''} {TOOL_NOISE}".strip()
    return moved


def _schema_noisy(tool: Any, param: str) -> Any:
    moved = copy.copy(tool)
    schema = copy.deepcopy(tool.params_json_schema)
    schema["properties"][param]["description"] = "The refund reference printed on the receipt (not a seat or booking)."
    moved.params_json_schema = schema
    return moved


def _tools(t: Target, agent_name: str, change: Callable[[list[Any]], list[Any]]) -> Callable[[], Mutated]:
    def build() -> Mutated:
        originals, clones = clone_graph(t.sdk_agent)
        for a in originals:
            if a.name == agent_name:
                c = clones[id(a)]
                c.tools = change(list(c.tools))
        return Mutated(adapter=t.sdk_adapter(clones[id(t.sdk_agent)]))

    return build


def _faulty(t: Target, tool: str, mode: str) -> Callable[[], Mutated]:
    def build() -> Mutated:
        _, clones = clone_graph(t.sdk_agent)  # the probe installs on the clones' tool lists, never the user's
        return Mutated(adapter=t.sdk_adapter(clones[id(t.sdk_agent)], probe=Probe(faults={tool: mode})))

    return build


# -- model -----------------------------------------------------------------------------------------


def model_mutants(t: Target) -> list[Mutant]:
    if not t.config.models:
        t.notes.append("model: no models named in `mutation: {models: [...]}`; no model mutants")
        return []
    if t.sdk_agent is None:
        t.notes.append("model: a plain-callable agent chooses its own model; skipped")
        return []
    current = getattr(t.adapter, "model_label", None) or t.suite.model.name or t.suite.model.provider
    return [
        Mutant(f"model.{m.kind}({_slug(m.label)})", "model", m.kind, f"model {current} → {m.label} ({m.kind})",
               build=lambda m=m: Mutated(adapter=t.load(m.model)))
        for m in t.config.models
    ]


# -- context ---------------------------------------------------------------------------------------


def _truncate(text: str, fraction: float) -> str:
    keep = max(1, int(len(text) * fraction))
    cut = text[:keep]
    return cut.rsplit(" ", 1)[0] if " " in cut and keep < len(text) else cut


def context_mutants(t: Target) -> list[Mutant]:
    fraction = t.config.truncate

    def permute(text: str, name: str) -> str:
        parts = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
        if len(parts) < 2:
            return text
        order = list(range(len(parts)))
        rng = t.rng("context", "permute", name)
        while order == sorted(order):
            rng.shuffle(order)
        return " ".join(parts[i] for i in order)

    ops: list[tuple[str, str, Callable[[str, str], str]]] = [
        ("truncate", f"every input cut to {fraction:.0%} of its characters", lambda x, n: _truncate(x, fraction)),
        ("noise", f"every input + '{_clip(CONTEXT_NOISE, 40)}'", lambda x, n: f"{x} {CONTEXT_NOISE}"),
        ("permute", "every input's sentences permuted", permute),
    ]
    out = []
    for op, diff, fn in ops:
        changed = [s for s in t.suite.scenarios if fn(s.input, s.name) != s.input]
        if not changed:
            t.notes.append(f"context.{op}: changes no scenario's input (single sentences); skipped")
            continue
        out.append(Mutant(f"context.{op}", "context", op, f"{diff} ({len(changed)}/{len(t.suite.scenarios)} scenarios changed)",
                          build=lambda fn=fn: Mutated(suite=replace(t.suite, scenarios=tuple(
                              replace(s, input=fn(s.input, s.name)) for s in t.suite.scenarios)))))
    return out


# The one registry: operator class -> operator. `generate` and the config's class list (`CLASSES`) both read
# it, so a new class is one entry here.
OPERATORS: dict[str, Callable[[Target], list[Mutant]]] = {
    "prompt": prompt_mutants,
    "tool": tool_mutants,
    "model": model_mutants,
    "context": context_mutants,
    "structure": structure_mutants,
}


def generate(t: Target) -> list[Mutant]:
    """The mutants of the configured classes, in registry order, capped at ``max_mutants`` (the run ones first)."""
    mutants = [m for cls in OPERATORS if cls in t.config.classes for m in OPERATORS[cls](t)]
    cap = t.config.max_mutants
    if cap is not None and len([m for m in mutants if m.not_run is None]) > cap:
        runnable = [m for m in mutants if m.not_run is None]
        t.notes.append(f"--max-mutants {cap}: {len(runnable) - cap} of {len(runnable)} runnable mutants left out (the last in registry order)")
        keep = {m.id for m in runnable[:cap]}
        mutants = [m for m in mutants if m.not_run is not None or m.id in keep]
    return mutants
