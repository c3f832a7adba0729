"""From one trace's spans, whatever their format, to our ``Trace``: one walk for every format.

Each format's reader turns its spans into ``Node``s that say what a span *is* (an agent, a tool
call, a handoff, a model call, or structure only); this module walks the span tree the way the
live adapter (``adapters/_openai_agents.py``) walks the SDK's spans, so a run recorded by any of
them becomes the same Trace:

* an agent span makes its agent the active one; an agent span inside another agent's span, with
  no handoff span announcing it, is a handoff from the enclosing agent (older GenAI conventions
  record handoffs only that way);
* a handoff span, or a tool span that passes control (``gen_ai.transfer.mode = pass_control``),
  is ``Action.HANDOFF`` from the active agent to the target;
* a tool span with agent spans inside it, or one that returns to its caller after a transfer, is
  an ``Agent.as_tool``-style delegation: ``HANDOFF`` with the tool's name, the sub-run's steps one
  level deeper, then the sub-run's answer (``RESPOND``) or its error at that depth;
* any other tool span is ``Action.CALL_TOOL``;
* the run ends with ``RESPOND`` (the final answer) or, when the run failed, ``ERROR``.

Tokens: the run's own total where the format records one (the SDK's task span), else the sum of
the innermost spans that carry usage, so a total recorded on an agent span is not added to the
per-call usage below it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ..._traces import Action, Cost, Step, Trace, TraceMetadata
from ._json import loads_embedded

AGENT = "agent"
TOOL = "tool"
HANDOFF = "handoff"
LLM = "llm"
OTHER = "other"  # structure only: workflows, chains, turns, guardrails, unknown spans

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()


@dataclass(eq=False)
class Node:
    """One span, reduced to what the walk needs. ``seq`` is its position in the file."""

    id: str
    parent: str | None
    start: int | None  # nanoseconds since the epoch
    end: int | None
    seq: int
    role: str = OTHER
    name: str | None = None  # agent name (AGENT) or tool name (TOOL)
    agent: str | None = None  # the acting agent the span names (TOOL, HANDOFF source)
    target: str | None = None  # HANDOFF target; TOOL transfer target
    mode: str | None = None  # TOOL transfer mode: pass_control | return_to_caller
    arguments: Any = MISSING
    output: Any = MISSING
    error: str | None = None
    call_id: str | None = None
    usage: tuple[int, int] | None = None
    model: str | None = None
    seed: int | None = None
    text: Any = MISSING  # LLM: the model's answer text; root: the run's answer
    user: str | None = None  # the first user message this span records
    task: bool = False  # the run's own span whose usage is the run's total (SDK task)
    calls: list[tuple[str | None, str | None, Any]] = field(
        default_factory=list
    )  # (id, name, arguments) requested
    results: list[tuple[str | None, Any]] = field(default_factory=list)  # (id, content) returned to the model
    attrs: dict[str, Any] = field(default_factory=dict)
    resource: int | None = None  # OTLP: the staged resource the span came with
    children: list[Node] = field(default_factory=list)


@dataclass
class Built:
    """What one trace became; ``dropped`` counts spans the walk could not reach (reason -> n)."""

    trace: Trace | None
    input: str | None
    root: Node | None
    dropped: dict[str, int]


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments as the live adapter records them: JSON text decoded, else as given."""
    if not isinstance(raw, str):
        return raw
    try:
        return loads_embedded(raw) if raw.strip() else {}
    except ValueError:
        return raw


def link_tool_calls(nodes: Iterable[Node]) -> None:
    """Fill tool spans' missing arguments and results from what model spans recorded.

    GenAI conventions up to 1.37 put a tool call's arguments only in the model's output (the
    ``gen_ai.choice`` event or output messages) and its result only in the next model input (the
    ``gen_ai.tool.message`` event or input messages), joined to the ``execute_tool`` span by
    ``gen_ai.tool.call.id``; without an id, the earliest unmatched call of the same tool is used.
    """
    ordered = sorted(nodes, key=_order)
    by_id: dict[str, Any] = {}
    by_name: dict[str, list[Any]] = {}
    results: dict[str, Any] = {}
    for n in ordered:
        for cid, name, args in n.calls:
            if cid:
                by_id[cid] = args
            if name:
                by_name.setdefault(name, []).append((cid, args))
        for cid, content in n.results:
            if cid and cid not in results:
                results[cid] = content
    used: set[str] = set()
    for n in ordered:
        if n.role != TOOL:
            continue
        if n.arguments is MISSING:
            if n.call_id and n.call_id in by_id:
                n.arguments = parse_arguments(by_id[n.call_id])
                used.add(n.call_id)
            elif not n.call_id and n.name in by_name:
                queue = by_name[n.name]
                while queue:
                    cid, args = queue.pop(0)
                    if cid is None or cid not in used:
                        n.arguments = parse_arguments(args)
                        break
        if n.output is MISSING and n.call_id and n.call_id in results:
            n.output = results[n.call_id]


def _order(n: Node) -> tuple[bool, int, int]:
    """Children run in start order; spans without a start time go last, in file order."""
    return (n.start is None, n.start or 0, n.seq)


def _iso(ns: int | None) -> str | None:
    if ns is None:
        return None
    try:
        stamp = datetime.fromtimestamp(ns // 1_000_000_000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None  # a timestamp no calendar holds: the trace is still usable
    return (stamp + timedelta(microseconds=ns % 1_000_000_000 // 1000)).isoformat(timespec="microseconds")


def build(nodes: list[Node], *, trace_id: str, source: str) -> Built:
    """Walk one trace's nodes into a Trace (None when no span says anything about a run)."""
    dropped: dict[str, int] = {}
    by_id: dict[str, Node] = {}
    for n in nodes:
        if n.id in by_id:
            dropped["duplicate span id"] = dropped.get("duplicate span id", 0) + 1
            continue
        by_id[n.id] = n
    roots: list[Node] = []
    for n in by_id.values():
        parent = by_id.get(n.parent) if n.parent else None
        if parent is None or parent is n:
            roots.append(n)
        else:
            parent.children.append(n)
    for n in by_id.values():
        n.children.sort(key=_order)
    roots.sort(key=_order)
    true_roots = [n for n in roots if not n.parent or n.parent == n.id]  # orphans' parents are elsewhere

    walk = _Walk()
    visited = walk.run(roots)
    unreachable = len(by_id) - visited
    if unreachable:
        dropped["in a parent cycle"] = dropped.get("in a parent cycle", 0) + unreachable
    if not any(n.role in (AGENT, TOOL, HANDOFF, LLM) for n, _ in walk.order):
        return Built(None, None, roots[0] if roots else None, dropped)

    root = (true_roots or roots)[0]
    steps = walk.steps
    error = root.error or walk.agent_error
    if error:
        last = walk.last_agent or (root.name if root.role == AGENT else None)
        steps.append(Step(Action.ERROR, agent=last, error=error))
        output = None
    else:
        output = root.text if root.text is not MISSING else walk.final_text
        output = None if output is MISSING else output
        steps.append(Step(Action.RESPOND, agent=walk.last_agent, output=output))

    starts = [n.start for n in by_id.values() if n.start is not None]
    ends = [n.end for n in by_id.values() if n.end is not None]
    latency = (max(ends) - min(starts)) / 1e9 if starts and ends and max(ends) >= min(starts) else 0.0
    tokens_in, tokens_out = _tokens(walk.order)
    trace = Trace(
        steps=tuple(steps),
        output=output,
        cost=Cost(input_tokens=tokens_in, output_tokens=tokens_out, latency_s=latency),
        metadata=TraceMetadata(
            seed=walk.seed,
            model=walk.model,
            adapter=f"import:{source}",
            timestamp=_iso(min(starts) if starts else None),
            extra={"trace_id": trace_id},
        ),
        error=error,
    )
    user = root.user or walk.first_user
    return Built(trace, user, root, dropped)


def _tokens(order: list[tuple[Node, int]]) -> tuple[int, int]:
    """The run's total (outermost task spans) if recorded, else the innermost spans with usage."""
    tasks = [n for n, _ in order if n.task and n.usage is not None]
    if tasks:
        inner_tasks: set[int] = set()
        for n in tasks:
            stack = list(n.children)
            while stack:
                c = stack.pop()
                if c.task:
                    inner_tasks.add(id(c))
                stack.extend(c.children)
        outer = [n for n in tasks if id(n) not in inner_tasks]
        return sum(n.usage[0] for n in outer if n.usage), sum(n.usage[1] for n in outer if n.usage)
    below: dict[int, bool] = {}
    total_in = total_out = 0
    for n, _ in reversed(order):  # children before parents
        has_below = any(below.get(id(c), False) for c in n.children)
        if n.usage is not None and not has_below:
            total_in += n.usage[0]
            total_out += n.usage[1]
        below[id(n)] = has_below or n.usage is not None
    return total_in, total_out


class _Walk:
    """The adapter's span walk, iterative (a hostile file cannot exhaust the recursion limit)."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.pending: str | None = None  # the agent an explicit handoff just announced
        self.last_agent: str | None = None  # the active top-level agent
        self.final_text: Any = MISSING  # the last top-level model answer
        self.first_user: str | None = None
        self.agent_error: str | None = None  # the error of a failed top-level agent span
        self.model: str | None = None
        self.seed: int | None = None
        self.order: list[tuple[Node, int]] = []  # (node, depth) in walk order, every reachable node

    def run(self, roots: list[Node]) -> int:
        stack: list[Any] = [(node, None, 0) for node in reversed(roots)]
        seen: set[int] = set()
        while stack:
            item = stack.pop()
            if isinstance(item, Step):
                self.steps.append(item)
                continue
            node, agent, depth = item
            if id(node) in seen:
                continue
            seen.add(id(node))
            self.order.append((node, depth))
            stack.extend(self._visit(node, agent, depth))
        return len(seen)

    def _visit(self, node: Node, agent: str | None, depth: int) -> list[Any]:
        """Handle one node; return what to process next, in reverse order (a stack)."""
        role = node.role
        if node.model and self.model is None:
            self.model = node.model
        if node.seed is not None and self.seed is None:
            self.seed = node.seed
        if role == AGENT and node.name:
            if agent is not None and node.name != agent and self.pending != node.name:
                self.steps.append(Step(Action.HANDOFF, agent=agent, target=node.name, depth=depth))
            self.pending = None
            agent = node.name
            if depth == 0:
                self.last_agent = agent
                if node.error:
                    self.agent_error = node.error
        elif role == HANDOFF:
            self.steps.append(
                Step(Action.HANDOFF, agent=node.agent or agent, target=node.target, depth=depth)
            )
            self.pending = node.target
        elif role == TOOL:
            return self._tool(node, agent, depth)
        elif role == LLM:
            if depth == 0 and node.text is not MISSING and node.text is not None:
                self.final_text = node.text
            if depth == 0 and node.user and self.first_user is None:
                self.first_user = node.user
        return [(c, agent, depth) for c in reversed(node.children)]

    def _tool(self, node: Node, agent: str | None, depth: int) -> list[Any]:
        source = agent if agent is not None else node.agent
        arguments = None if node.arguments is MISSING else node.arguments
        output = None if node.output is MISSING else node.output
        if node.target is not None and node.mode != "return_to_caller":
            # A transfer that passes control: the SDK's handoff, whatever span records it.
            self.steps.append(Step(Action.HANDOFF, agent=source, target=node.target, depth=depth))
            self.pending = node.target
            return [(c, agent, depth) for c in reversed(node.children)]
        inner = _sub_agents(node)
        if not inner and node.target is None:
            self.steps.append(
                Step(
                    Action.CALL_TOOL,
                    agent=source,
                    tool=node.name,
                    arguments=arguments,
                    output=None if node.error else output,
                    error=node.error,
                    depth=depth,
                )
            )
            return []
        first = inner[0] if inner else node.target
        last = inner[-1] if inner else node.target
        self.steps.append(
            Step(Action.HANDOFF, agent=source, tool=node.name, arguments=arguments, target=first, depth=depth)
        )
        self.pending = first
        after: list[Any] = []
        if node.error is not None:
            after.append(Step(Action.ERROR, agent=last, tool=node.name, error=node.error, depth=depth + 1))
        elif node.end is not None:
            after.append(Step(Action.RESPOND, agent=last, output=output, depth=depth + 1))
        return after + [(c, agent, depth + 1) for c in reversed(node.children)]


def _sub_agents(node: Node) -> list[str]:
    """Agents that ran inside a tool span (a sub-run), not nested in a deeper tool span."""
    found: list[str] = []
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if n.role == AGENT and n.name:
            found.append(n.name)
        elif n.role != TOOL:
            stack.extend(reversed(n.children))
    return found
