"""The behavioural coverage tuple of the paper (Sec. 4, Defs. 4.1–4.10, Remark 4.2, Alg. 1 line 1).

``behavioural_coverage`` reads traces (``Trace`` objects, stored trials, or their JSON dicts) and
returns a :class:`BehaviouralCoverage`: the five dimensions C_tool, C_path, C_state, C_boundary,
C_model, their weighted geometric mean, the weakest dimension relative to its target and a
sentence saying what to add. ``coverage_from_store`` does the same straight from the SQLite trace
store, parsing the stored JSON without building ``Trace`` objects (10,000 traces in well under a
second; see benchmarks/coverage.py). docs/coverage-behavioural.md states every definition.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import sqlite3
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._integrations.adapters._base import ToolInfo
from ..._traces import TRACE_SCHEMA, Step, StoreError, Trace
from ._boundaries import DEFAULT_EPSILON, Boundary, compile_boundaries, values_at
from ._chao1 import Chao1Estimate, chao1

COVERAGE_SCHEMA = "agentassay.behavioural-coverage/1"
STATISTICS_SCHEMA = "agentassay.behavioural-statistics/1"
DIMENSIONS = ("tool", "path", "state", "boundary", "model")
DEFAULT_LAMBDA = 20.0

StateAbstraction = Callable[[Sequence[Step], int], Hashable]
_ACTIONS = frozenset({"reason", "call_tool", "handoff", "respond", "error"})
_INDEX_BUCKETS = ("0", "1", "2", "3-4", "3-4", "5-8", "5-8", "5-8", "5-8")
_SHOWN = 5  # names listed in a suggestion before "and N more"


# -- the two trace projections ---------------------------------------------------------------------
def _label(action: str, tool: str | None, target: str | None) -> str | None:
    if action == "call_tool":
        return f"tool:{tool}"
    if action == "handoff":  # ``tool`` set: an ``Agent.as_tool`` delegation, not a tool call
        return f"{'delegate' if tool else 'handoff'}:{target}"
    if action in ("respond", "error"):
        return action
    return None  # reason: not a decision


def decision_path(trace: Trace) -> tuple[tuple[str | None, str], ...]:
    """ρ(τ) of Def. 4.3: the (agent, decision) pair of every step that is not ``reason``.

    The decision is ``tool:<name>`` for a tool call, ``handoff:<target>`` for a handoff,
    ``delegate:<target>`` for an ``as_tool`` delegation (a handoff step with ``tool`` set),
    ``respond`` and ``error``. Arguments, outputs and depth are not part of the path; nesting
    shows through the ``delegate`` step that opens a sub-run.
    """
    path = []
    for s in trace.steps:
        label = _label(s.action.value, s.tool, s.target)
        if label is not None:
            path.append((s.agent, label))
    return tuple(path)


def _state(
    action: str, agent: str | None, tool: str | None, target: str | None, depth: int, failed: bool, index: int
) -> tuple[Any, ...]:
    name = target if action == "handoff" else tool if action in ("call_tool", "error") else None
    depth_bucket = "0" if depth <= 0 else "1" if depth == 1 else "2+"
    index_bucket = _INDEX_BUCKETS[index] if index < 9 else "9+"
    return (agent, action, name, depth_bucket, index_bucket, failed)


def default_state_abstraction(steps: Sequence[Step], index: int) -> tuple[Any, ...]:
    """π of Def. 4.6 for the state at ``steps[index]``: a 6-tuple

    (active agent, action kind, tool called / handoff or delegation target / failing tool,
    depth bucket 0 | 1 | 2+, step-index bucket 0 | 1 | 2 | 3-4 | 5-8 | 9+, step failed).

    The paper's state (ℓ, v, h) maps to it as ℓ = (agent, depth), v = the step counter, h = the
    last action and its target (a history window of one step).
    """
    s = steps[index]
    return _state(s.action.value, s.agent, s.tool, s.target, s.depth, s.error is not None, index)


# -- validation of the options ----------------------------------------------------------------------
def _real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _check_keys(what: str, given: Mapping[str, Any]) -> None:
    if not isinstance(given, Mapping):
        raise TypeError(f"{what} must be a mapping from dimension name to number; got {type(given).__name__}")
    unknown = [k for k in given if k not in DIMENSIONS]
    if unknown:
        raise ValueError(
            f"unknown coverage dimension(s) in {what}: {', '.join(map(repr, unknown))}; "
            f"the dimensions are {', '.join(DIMENSIONS)}"
        )


def normalise_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """Equal weights 1/5 by default. Otherwise the weights of the dimensions named (finite, >= 0;
    a dimension not named weighs 0), rescaled to sum to 1."""
    if weights is None:
        return dict.fromkeys(DIMENSIONS, 1 / len(DIMENSIONS))
    _check_keys("weights", weights)
    for d, w in weights.items():
        if not _real(w) or w < 0:
            raise ValueError(f"weight of {d} must be a finite number >= 0; got {w!r}")
    total = math.fsum(float(w) for w in weights.values())
    if total <= 0:
        raise ValueError(
            "weights sum to 0; give at least one dimension a positive weight "
            "(dimensions not named in weights weigh 0)"
        )
    return {d: float(weights.get(d, 0.0)) / total for d in DIMENSIONS}


def _normalise_targets(targets: Mapping[str, float] | None) -> dict[str, float]:
    out = dict.fromkeys(DIMENSIONS, 1.0)
    if targets is None:
        return out
    _check_keys("targets", targets)
    for d, t in targets.items():
        if not _real(t) or not 0 < t <= 1:
            raise ValueError(f"target of {d} must be in (0, 1]; got {t!r}")
        out[d] = float(t)
    return out


def _check_lambda(state_lambda: float) -> float:
    if not _real(state_lambda) or state_lambda <= 0:
        raise ValueError(f"state_lambda must be a finite number > 0; got {state_lambda!r}")
    return float(state_lambda)


def _target_models(target_models: Sequence[str] | None) -> list[str] | None:
    if target_models is None:
        return None
    if isinstance(target_models, str):
        raise TypeError("target_models must be a sequence of model names, not one string")
    names = list(dict.fromkeys(str(m) for m in target_models))
    if not names:
        raise ValueError("target_models is empty; pass None to measure against the models seen")
    return names


def weighted_geometric_mean(values: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Π C_i^{w_i} (Remark 4.2). A zero dimension with positive weight gives 0; weight 0 ignores it."""
    log_sum = 0.0
    for d, w in weights.items():
        if w <= 0:
            continue
        c = values[d]
        if c <= 0:
            return 0.0
        log_sum += w * math.log(c)
    return min(1.0, math.exp(log_sum))


# -- the result -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CoverageDetails:
    """What each dimension counted. Lists are in tool-inventory / schema order, models sorted."""

    tools_used: tuple[str, ...] = ()
    tools_unused: tuple[str, ...] = ()
    tools_unknown: tuple[str, ...] = ()
    paths_observed: int = 0
    paths_estimated: float = 0.0
    paths_classic: float | None = None
    f1: int = 0
    f2: int = 0
    states_observed: int = 0
    state_lambda: float = DEFAULT_LAMBDA
    boundaries_tested: tuple[str, ...] = ()
    boundaries_untested: tuple[str, ...] = ()
    models_tested: tuple[str, ...] = ()
    models_untested: tuple[str, ...] = ()
    target_models_configured: bool = False
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "tools_used": list(self.tools_used),
            "tools_unused": list(self.tools_unused),
            "tools_unknown": list(self.tools_unknown),
            "paths_observed": self.paths_observed,
            "paths_estimated": self.paths_estimated,
            "paths_classic_chao1": self.paths_classic,
            "f1": self.f1,
            "f2": self.f2,
            "states_observed": self.states_observed,
            "lambda": self.state_lambda,
            "boundaries_tested": list(self.boundaries_tested),
            "boundaries_untested": list(self.boundaries_untested),
            "models_tested": list(self.models_tested),
            "models_untested": list(self.models_untested),
            "target_models_configured": self.target_models_configured,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CoverageDetails:
        classic = d.get("paths_classic_chao1")
        return cls(
            tools_used=tuple(d.get("tools_used", ())),
            tools_unused=tuple(d.get("tools_unused", ())),
            tools_unknown=tuple(d.get("tools_unknown", ())),
            paths_observed=int(d.get("paths_observed", 0)),
            paths_estimated=float(d.get("paths_estimated", 0.0)),
            paths_classic=None if classic is None else float(classic),
            f1=int(d.get("f1", 0)),
            f2=int(d.get("f2", 0)),
            states_observed=int(d.get("states_observed", 0)),
            state_lambda=float(d.get("lambda", DEFAULT_LAMBDA)),
            boundaries_tested=tuple(d.get("boundaries_tested", ())),
            boundaries_untested=tuple(d.get("boundaries_untested", ())),
            models_tested=tuple(d.get("models_tested", ())),
            models_untested=tuple(d.get("models_untested", ())),
            target_models_configured=bool(d.get("target_models_configured", False)),
            notes=tuple(d.get("notes", ())),
        )


@dataclass(frozen=True)
class BehaviouralCoverage:
    """The coverage tuple of Def. 4.1 over ``traces`` traces, its weighted geometric mean, and
    the weakest dimension (argmin C_d / target_d over positively weighted dimensions; ``None``
    when every such dimension meets its target) with a ``suggestion`` of what to add.
    """

    tool: float
    path: float
    state: float
    boundary: float
    model: float
    overall: float
    weights: dict[str, float]
    traces: int
    details: CoverageDetails = field(default_factory=CoverageDetails)
    weakest: str | None = None
    suggestion: str = ""
    targets: dict[str, float] = field(default_factory=lambda: dict.fromkeys(DIMENSIONS, 1.0))

    @property
    def dimensions(self) -> dict[str, float]:
        """The five dimensions by name, in the paper's order."""
        return {d: getattr(self, d) for d in DIMENSIONS}

    def summary(self) -> str:
        """One line: overall, the five dimensions, the trace count and the weakest dimension."""
        dims = ", ".join(f"{d} {getattr(self, d):.2f}" for d in DIMENSIONS)
        weakest = f"; weakest: {self.weakest}" if self.weakest else ""
        return f"behavioural coverage {self.overall:.2f} ({dims}; {self.traces} traces){weakest}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": COVERAGE_SCHEMA,
            **{d: getattr(self, d) for d in DIMENSIONS},
            "overall": self.overall,
            "weights": dict(self.weights),
            "targets": dict(self.targets),
            "traces": self.traces,
            "details": self.details.to_dict(),
            "weakest": self.weakest,
            "suggestion": self.suggestion,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BehaviouralCoverage:
        if d.get("schema") != COVERAGE_SCHEMA:
            raise ValueError(
                f"unsupported coverage schema {d.get('schema')!r}; this version reads {COVERAGE_SCHEMA!r}"
            )
        return cls(
            **{k: float(d[k]) for k in DIMENSIONS},
            overall=float(d["overall"]),
            weights={k: float(v) for k, v in d["weights"].items()},
            traces=int(d["traces"]),
            details=CoverageDetails.from_dict(d.get("details") or {}),
            weakest=d.get("weakest"),
            suggestion=str(d.get("suggestion") or ""),
            targets={k: float(v) for k, v in (d.get("targets") or dict.fromkeys(DIMENSIONS, 1.0)).items()},
        )


# -- accumulation -----------------------------------------------------------------------------------
Record = tuple[str, Any, Any, Any, Any, int, bool]  # action, agent, tool, arguments, target, depth, failed


class _Accumulator:
    """Everything the five dimensions need, gathered in one pass over the traces."""

    def __init__(
        self, tools: Sequence[Any], state_abstraction: StateAbstraction | None, epsilon: float
    ) -> None:
        if isinstance(tools, (str, bytes)) or not isinstance(tools, Iterable):
            raise TypeError("tools must be a sequence of ToolInfo (e.g. adapter.tools())")
        self.tools = list(tools)
        compiled = compile_boundaries(self.tools, epsilon)
        self.boundaries: tuple[Boundary, ...] = compiled.boundaries
        self.schema_notes = compiled.notes
        # per tool: mutable [segments, [(id, predicate), ...]] groups still to be seen
        self.pending: dict[str, list[list[Any]]] = {
            tool: [[segs, list(preds)] for segs, preds in groups] for tool, groups in compiled.checks.items()
        }
        self.inventory: dict[str, str | None] = {}
        for t in self.tools:
            name = t if isinstance(t, str) else t.name
            self.inventory.setdefault(name, None if isinstance(t, str) else getattr(t, "agent", None))
        self.abstraction = state_abstraction
        self.epsilon = epsilon
        self.n = 0
        self.used: set[str] = set()
        self.unknown: dict[str, None] = {}
        # where each unknown tool was first called, (trial, scenario): its place in a merge of shards
        self.unknown_at: dict[str, tuple[Any, Any]] = {}
        self.tested: set[str] = set()
        self.paths: dict[tuple[Any, ...], int] = {}
        self.states: set[Hashable] = set()
        self.models: set[str] = set()
        self.no_model = 0
        self.agents: set[str] = set()

    def _check_boundaries(self, tool: str, arguments: Any, groups: list[list[Any]]) -> None:
        done = False
        for group in groups:
            values = values_at(arguments, group[0])
            if not values:
                continue
            left = []
            for bid, pred in group[1]:
                if any(pred(v) for v in values):
                    self.tested.add(bid)
                else:
                    left.append((bid, pred))
            if len(left) != len(group[1]):
                group[1] = left
                done = done or not left
        if done:
            groups[:] = [g for g in groups if g[1]]
            if not groups:
                del self.pending[tool]

    def _ingest(self, records: Sequence[Record], model: Any, steps: Callable[[], Sequence[Step]]) -> None:
        self.n += 1
        if model is None:
            self.no_model += 1
        else:
            self.models.add(str(model))
        path = []
        default = self.abstraction is None
        states, agents, pending = self.states, self.agents, self.pending
        for i, (action, agent, tool, arguments, target, depth, failed) in enumerate(records):
            if action == "call_tool" and tool is not None:
                if tool in self.inventory:
                    self.used.add(tool)
                else:
                    self.unknown.setdefault(tool, None)
                groups = pending.get(tool)
                if groups:
                    self._check_boundaries(tool, arguments, groups)
            label = _label(action, tool, target)
            if label is not None:
                path.append((agent, label))
            if agent:
                agents.add(agent)
            if action == "handoff" and target:
                agents.add(target)
            if default:
                states.add(_state(action, agent, tool, target, depth, failed, i))
        if not default:
            seq = steps()
            for i in range(len(seq)):
                s = self.abstraction(seq, i)  # type: ignore[misc]
                if s is not None:
                    states.add(s)
        key = tuple(path)
        self.paths[key] = self.paths.get(key, 0) + 1

    def add_trace(self, trace: Trace) -> None:
        records = [
            (s.action.value, s.agent, s.tool, s.arguments, s.target, s.depth, s.error is not None)
            for s in trace.steps
        ]
        before = len(self.unknown)
        self._ingest(records, trace.metadata.model, lambda: trace.steps)
        if len(self.unknown) != before:
            self._mark_unknown(before, trace.metadata.trial, trace.metadata.scenario)

    def add_dict(self, d: Mapping[str, Any]) -> None:
        if d.get("schema") != TRACE_SCHEMA:
            raise ValueError(
                f"unsupported trace schema {d.get('schema')!r}; this version reads {TRACE_SCHEMA!r}"
            )
        raw = d.get("steps") or ()
        records = []
        for s in raw:
            action = s["action"]
            if action not in _ACTIONS:
                raise ValueError(f"unknown step action {action!r} in a stored trace")
            records.append(
                (
                    action,
                    s.get("agent"),
                    s.get("tool"),
                    s.get("arguments"),
                    s.get("target"),
                    int(s.get("depth", 0)),
                    s.get("error") is not None,
                )
            )
        meta = d.get("metadata") or {}
        before = len(self.unknown)
        self._ingest(records, meta.get("model"), lambda: tuple(Step.from_dict(s) for s in raw))
        if len(self.unknown) != before:
            self._mark_unknown(before, meta.get("trial"), meta.get("scenario"))

    def _mark_unknown(self, before: int, trial: Any, scenario: Any) -> None:
        for tool in list(self.unknown)[before:]:
            self.unknown_at[tool] = (trial, scenario)

    def add(self, item: Any) -> None:
        if isinstance(item, Trace):
            self.add_trace(item)
        elif isinstance(getattr(item, "trace", None), Trace):  # a StoredTrial
            self.add_trace(item.trace)
        elif isinstance(item, Mapping):
            self.add_dict(item)
        else:
            raise TypeError(f"expected Trace, StoredTrial or a trace dict; got {type(item).__name__}")


# -- from accumulated counts to the result ----------------------------------------------------------
def _names(items: Sequence[str], quote: bool = True) -> str:
    shown = [f"`{x}`" if quote else x for x in items[:_SHOWN]]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def _tool_dimension(acc: _Accumulator, notes: list[str]) -> tuple[float, list[str], list[str]]:
    """C_tool (Def. 4.2) with the tools used and unused, noting a vacuous inventory and unknown tools."""
    inventory = list(acc.inventory)
    used = [t for t in inventory if t in acc.used]
    unused = [t for t in inventory if t not in acc.used]
    if inventory:
        c_tool = len(used) / len(inventory)
    else:
        c_tool = 1.0
        notes.append("no tools given: tool coverage is vacuously 1.0")
    if acc.unknown:
        notes.append(f"tools called but not in the tool inventory (not counted): {_names(list(acc.unknown))}")
    return c_tool, used, unused


def _path_dimension(acc: _Accumulator, n: int, notes: list[str]) -> Chao1Estimate:
    """The Chao1 estimate behind C_path (Defs. 4.3, 4.4), noting when it cannot extrapolate or f2 = 0."""
    est: Chao1Estimate = chao1(acc.paths.values())
    if n == 1:
        notes.append(
            "one trace: Chao1 cannot extrapolate from a single path, so path coverage is 1.0 by construction"
        )
    if est.f1 > 0 and est.f2 == 0 and n > 1:
        notes.append(
            f"no path seen exactly twice (f2 = 0): the paper's Chao1 f1²/(2f2) is undefined; "
            f"the bias-corrected d + f1(f1−1)/(2(f2+1)) = {est.estimate:.1f} is used"
        )
    return est


def _boundary_dimension(acc: _Accumulator, notes: list[str]) -> tuple[float, list[str], list[str]]:
    """C_boundary (Defs. 4.7, 4.8) with the boundaries tested and untested, plus the schema notes."""
    ids = [b.id for b in acc.boundaries]
    tested = [b for b in ids if b in acc.tested]
    untested = [b for b in ids if b not in acc.tested]
    if ids:
        c_boundary = len(tested) / len(ids)
    else:
        c_boundary = 1.0
        notes.append("the tools' JSON schemas define no boundaries: boundary coverage is vacuously 1.0")
    notes.extend(acc.schema_notes)
    return c_boundary, tested, untested


def _model_dimension(
    acc: _Accumulator, n: int, target_models: list[str] | None, notes: list[str]
) -> tuple[float, list[str], list[str]]:
    """C_model (Def. 4.9) with the models tested and untested; without targets, against the models seen."""
    seen = sorted(acc.models)
    if target_models is None:
        models_tested, models_untested = seen, []
        c_model = 1.0 if n else 0.0
        if n and not seen:
            notes.append(
                "no trace records a model and target_models is not configured: model coverage is vacuously 1.0"
            )
        elif n:
            notes.append(
                f"target_models not configured: measured against the {len(seen)} model(s) seen, so model "
                "coverage is 1.0 by construction"
            )
    else:
        models_tested = [m for m in target_models if m in acc.models]
        models_untested = [m for m in target_models if m not in acc.models]
        c_model = len(models_tested) / len(target_models)
        extra = [m for m in seen if m not in target_models]
        if extra:
            notes.append(f"models seen but not in target_models (not counted): {_names(extra)}")
    if acc.no_model and n:
        notes.append(f"{acc.no_model} of {n} traces record no model")
    return c_model, models_tested, models_untested


def _overall(values: dict[str, float], weights: dict[str, float], n: int, notes: list[str]) -> float:
    """The weighted geometric mean (Def. 4.10), noting unweighted dimensions and a zero that sinks it."""
    unweighted = [d for d in DIMENSIONS if weights[d] == 0]
    overall = weighted_geometric_mean(values, weights)
    if unweighted:
        notes.append(f"weight 0 (not in the overall score, never the weakest): {', '.join(unweighted)}")
    zero = [d for d in DIMENSIONS if weights[d] > 0 and values[d] == 0]
    if zero and n:
        notes.append(f"overall is 0 because {', '.join(zero)} coverage is 0 (geometric mean, Def. 4.10)")
    return overall


def _weakest(values: dict[str, float], weights: dict[str, float], targets: dict[str, float]) -> str | None:
    """The weighted dimension furthest below its target (Alg. 1 line 1), or None when all meet theirs."""
    candidates = [d for d in DIMENSIONS if weights[d] > 0]
    ratios = {d: values[d] / targets[d] for d in candidates}
    weakest = min(candidates, key=lambda d: ratios[d])  # ties: the paper's order
    return None if ratios[weakest] >= 1.0 else weakest


def _finish(
    acc: _Accumulator,
    *,
    target_models: list[str] | None,
    weights: dict[str, float],
    targets: dict[str, float],
    state_lambda: float,
    notes: list[str],
) -> BehaviouralCoverage:
    notes = list(notes)
    n = acc.n
    if n == 0:
        notes.append("no traces: every measured dimension is 0 and the Chao1 path estimate is 0")

    c_tool, used, unused = _tool_dimension(acc, notes)
    est = _path_dimension(acc, n, notes)
    # state (Defs. 4.5, 4.6)
    k = len(acc.states)
    c_state = -math.expm1(-k / state_lambda)
    c_boundary, tested, untested = _boundary_dimension(acc, notes)
    c_model, models_tested, models_untested = _model_dimension(acc, n, target_models, notes)

    values = {"tool": c_tool, "path": est.coverage, "state": c_state, "boundary": c_boundary, "model": c_model}
    overall = _overall(values, weights, n, notes)

    # weakest dimension (Alg. 1 line 1) and what to add
    weakest_out = _weakest(values, weights, targets)
    if weakest_out is None:
        suggestion = "every weighted dimension meets its target; nothing to add"
    else:
        suggestion = _suggest(weakest_out, acc, n, unused, untested, models_untested, est, k, state_lambda)

    details = CoverageDetails(
        tools_used=tuple(used),
        tools_unused=tuple(unused),
        tools_unknown=tuple(acc.unknown),
        paths_observed=est.observed,
        paths_estimated=est.estimate,
        paths_classic=est.classic,
        f1=est.f1,
        f2=est.f2,
        states_observed=k,
        state_lambda=state_lambda,
        boundaries_tested=tuple(tested),
        boundaries_untested=tuple(untested),
        models_tested=tuple(models_tested),
        models_untested=tuple(models_untested),
        target_models_configured=target_models is not None,
        notes=tuple(notes),
    )
    return BehaviouralCoverage(
        **values,
        overall=overall,
        weights=dict(weights),
        traces=n,
        details=details,
        weakest=weakest_out,
        suggestion=suggestion,
        targets=dict(targets),
    )


def _suggest(
    dim: str,
    acc: _Accumulator,
    n: int,
    unused: list[str],
    untested: list[str],
    models_untested: list[str],
    est: Chao1Estimate,
    states: int,
    state_lambda: float,
) -> str:
    if n == 0:
        return "no traces recorded: run the suite before measuring coverage"
    if dim == "tool":
        first = unused[0]
        owner = acc.inventory.get(first)
        where = f" ({owner}; unused)" if owner else " (unused)"
        text = f"add a scenario that makes the agent call `{first}`{where}"
        if len(unused) > 1:
            text += f"; also unused: {_names(unused[1:])}"
        return text
    if dim == "boundary":
        by_id = {b.id: b for b in acc.boundaries}
        # prefer a boundary of a tool the suite already calls: one argument away, not a new scenario
        ordered = sorted(untested, key=lambda b: by_id[b].tool not in acc.used)
        b = by_id[ordered[0]]
        text = f"exercise the boundary {b.id} (call `{b.tool}` with {b.describe()})"
        if len(ordered) > 1:
            text += f"; {len(ordered) - 1} more untested"
        return text
    if dim == "model":
        text = f"run the suite on model `{models_untested[0]}` listed in target models"
        if len(models_untested) > 1:
            text += f"; also untested: {_names(models_untested[1:])}"
        return text
    if dim == "path":
        return (
            f"add scenarios that take different routes (Chao1 estimates {est.estimate:.1f} paths, "
            f"{est.observed} seen, {est.f1} of them only once)"
        )
    known = [a for a in dict.fromkeys(acc.inventory.values()) if a and a not in acc.agents]
    c = -math.expm1(-states / state_lambda)
    tail = f"{states} distinct abstract states seen; C_state = 1 − e^(−{states}/{state_lambda:g}) = {c:.2f}"
    if known:
        return f"add a scenario that reaches {_names(known)} (never active; {tail})"
    return (
        "add scenarios that drive the agents into new states: longer conversations, failing tool calls, "
        f"hand-backs and nested delegations ({tail})"
    )


# -- entry points -----------------------------------------------------------------------------------
def behavioural_coverage(
    traces: Iterable[Trace],
    *,
    tools: Sequence[Any],
    target_models: Sequence[str] | None = None,
    weights: Mapping[str, float] | None = None,
    targets: Mapping[str, float] | None = None,
    state_lambda: float = DEFAULT_LAMBDA,
    state_abstraction: StateAbstraction | None = None,
    epsilon: float = DEFAULT_EPSILON,
) -> BehaviouralCoverage:
    """The coverage tuple of paper Def. 4.1 over ``traces``.

    ``traces``: ``Trace`` objects (``StoredTrial`` rows and ``Trace.to_dict()`` dicts are accepted
    too). ``tools``: the agent's tool inventory, ``adapter.tools()`` (``ToolInfo``; plain names
    work but carry no schema, hence no boundaries). ``target_models``: the models the agent must
    support; without it C_model is measured against the models seen (1.0). ``weights``: per
    dimension, non-negative, rescaled to sum to 1; a dimension not named weighs 0 (default: 1/5
    each). ``targets``: per-dimension
    C*_d in (0, 1] for the weakest-dimension rule (default 1.0). ``state_lambda``: λ of Eq. 17.
    ``state_abstraction(steps, i)``: π of Def. 4.6 for the state at step i (``None`` = not a
    state); default :func:`default_state_abstraction`. ``epsilon``: relative tolerance of
    "at or near" a numeric boundary.
    """
    acc = _Accumulator(tools, state_abstraction, epsilon)
    for item in traces:
        acc.add(item)
    return finish_behavioural(
        acc, target_models=target_models, weights=weights, targets=targets, state_lambda=state_lambda
    )


def behavioural_accumulator(
    tools: Sequence[Any],
    *,
    state_abstraction: StateAbstraction | None = None,
    epsilon: float = DEFAULT_EPSILON,
) -> _Accumulator:
    """An accumulator fed one trace at a time (``acc.add(trace)``), so a run need not keep its traces:
    what ``behavioural_coverage`` does in one pass, spread over the run (finish with ``finish_behavioural``)."""
    return _Accumulator(tools, state_abstraction, epsilon)


def finish_behavioural(
    acc: _Accumulator,
    *,
    target_models: Sequence[str] | None = None,
    weights: Mapping[str, float] | None = None,
    targets: Mapping[str, float] | None = None,
    state_lambda: float = DEFAULT_LAMBDA,
) -> BehaviouralCoverage:
    return _finish(
        acc,
        target_models=_target_models(target_models),
        weights=normalise_weights(weights),
        targets=_normalise_targets(targets),
        state_lambda=_check_lambda(state_lambda),
        notes=[],
    )


# -- sufficient statistics: shards measured apart, one tuple ---------------------------------------
def _tool_dict(tool: Any) -> dict[str, Any]:
    if isinstance(tool, str):
        return {"name": tool, "agent": None, "parameters": None}
    return {"name": tool.name, "agent": getattr(tool, "agent", None), "parameters": getattr(tool, "parameters", None)}


def _json_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _state_digest(state: Hashable) -> str:
    return hashlib.blake2b(repr(state).encode(), digest_size=16).hexdigest()


def behavioural_statistics(acc: _Accumulator) -> dict[str, Any]:
    """The accumulator's sufficient statistics as JSON (``agentassay.behavioural-statistics/1``).

    :func:`merge_behavioural_statistics` of several of these, finished, gives the tuple one
    accumulator fed all their traces gives. Paths are kept with their counts, since Chao1's f1 and
    f2 are functions of the *merged* counts (a path seen once in each of two shards is seen twice).
    States of the default abstraction are kept as they are (tuples of strings, None and booleans);
    states of a custom ``state_abstraction`` (any hashable, perhaps not JSON) as a 128-bit BLAKE2b
    digest of their ``repr`` — exact as long as equal states have equal reprs in every process (so
    tuples of strings and numbers, not sets of strings, whose order follows the hash seed).
    Every list is sorted, so the same traces give the same file.
    """
    digest = acc.abstraction is not None
    states = [_state_digest(s) for s in acc.states] if digest else [list(s) for s in acc.states]
    paths = [[[list(step) for step in path], count] for path, count in acc.paths.items()]
    return {
        "schema": STATISTICS_SCHEMA,
        "tools": [_tool_dict(t) for t in acc.tools],
        "epsilon": acc.epsilon,
        "states_as": "digest" if digest else "default",
        "n": acc.n,
        "no_model": acc.no_model,
        "used": sorted(acc.used),
        "unknown": [[t, *acc.unknown_at.get(t, (None, None))] for t in acc.unknown],
        "tested": sorted(acc.tested),
        "models": sorted(acc.models),
        "agents": sorted(acc.agents),
        "paths": sorted(paths, key=_json_key),
        "states": sorted(states, key=_json_key),
    }


def _no_more_traces(steps: Sequence[Step], index: int) -> Hashable:
    raise TypeError("a merge of digested custom states cannot take more traces: its abstraction is not known")


def merge_behavioural_statistics(
    stats: Sequence[Mapping[str, Any]], order: Sequence[str] = (), *, labels: Sequence[str] | None = None
) -> _Accumulator:
    """One accumulator from shards' :func:`behavioural_statistics`, to finish with :func:`finish_behavioural`.

    Trace and no-model counts are added, path counts added path by path, tools used, boundaries
    tested, models, agents and states united. Unknown tools are listed in the order an unsharded run
    with ``concurrency: 1`` meets them (trials round-robin over the scenarios): by the trial index of
    their first call, then the scenario's place in ``order`` (the suite's scenario names). Raises
    ``ValueError`` naming the difference when the shards' tools, epsilon or state abstraction differ
    (``labels``: what to call each of ``stats`` there, e.g. its file; default "statistics 1", …).
    """
    if not stats:
        raise ValueError("no behavioural statistics to merge")
    names = list(labels) if labels is not None else [f"statistics {k + 1}" for k in range(len(stats))]
    for k, s in enumerate(stats):
        if not isinstance(s, Mapping) or s.get("schema") != STATISTICS_SCHEMA:
            got = s.get("schema") if isinstance(s, Mapping) else type(s).__name__
            raise ValueError(f"{names[k]}: schema {got!r}; this version reads {STATISTICS_SCHEMA!r}")
    first = stats[0]
    for k, s in enumerate(stats[1:], 1):
        for key, what in (("tools", "tool inventory"), ("epsilon", "boundary epsilon"), ("states_as", "state abstraction")):
            if s.get(key) != first.get(key):
                raise ValueError(f"{names[k]} was measured with another {what} than {names[0]}")

    tools = [ToolInfo(t["name"], parameters=t.get("parameters"), agent=t.get("agent")) for t in first["tools"]]
    acc = _Accumulator(tools, None if first["states_as"] == "default" else _no_more_traces, float(first["epsilon"]))
    place = {name: i for i, name in enumerate(order)}
    unknown: dict[str, tuple[Any, ...]] = {}
    for k, s in enumerate(stats):
        acc.n += int(s["n"])
        acc.no_model += int(s["no_model"])
        acc.used.update(s["used"])
        acc.tested.update(s["tested"])
        acc.models.update(s["models"])
        acc.agents.update(s["agents"])
        for path, count in s["paths"]:
            key = tuple(tuple(step) for step in path)
            acc.paths[key] = acc.paths.get(key, 0) + int(count)
        acc.states.update(tuple(x) if isinstance(x, list) else x for x in s["states"])
        for j, (tool, trial, scenario) in enumerate(s["unknown"]):
            rank = (
                trial if isinstance(trial, int) else math.inf,
                place.get(scenario, len(place)),
                k,
                j,
            )
            if tool not in unknown or rank < unknown[tool][0]:
                unknown[tool] = (rank, trial, scenario)
    for tool, (_, trial, scenario) in sorted(unknown.items(), key=lambda kv: kv[1][0]):
        acc.unknown[tool] = None
        acc.unknown_at[tool] = (trial, scenario)
    for tool, groups in list(acc.pending.items()):  # boundaries still to be seen, should more traces come
        for group in groups:
            group[1] = [(bid, pred) for bid, pred in group[1] if bid not in acc.tested]
        groups[:] = [g for g in groups if g[1]]
        if not groups:
            del acc.pending[tool]
    return acc


def _connect(store: Any) -> tuple[sqlite3.Connection, bool]:
    db = getattr(store, "_db", None)  # an open TraceStore: share its connection
    if isinstance(db, sqlite3.Connection):
        return db, False
    if not isinstance(store, (str, Path)):
        raise TypeError(f"store must be a TraceStore or the path of one; got {type(store).__name__}")
    path = Path(store)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no trace store here")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        conn.execute("SELECT trace FROM trials LIMIT 0")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not a usable AgentAssay trace store ({exc})") from exc
    return conn, True


def coverage_from_store(
    store: Any,
    *,
    tools: Sequence[Any],
    agent_version: str | None = None,
    suite: str | None = None,
    scenarios: Iterable[str] | None = None,
    run_id: str | None = None,
    target_models: Sequence[str] | None = None,
    weights: Mapping[str, float] | None = None,
    targets: Mapping[str, float] | None = None,
    state_lambda: float = DEFAULT_LAMBDA,
    state_abstraction: StateAbstraction | None = None,
    epsilon: float = DEFAULT_EPSILON,
) -> BehaviouralCoverage:
    """:func:`behavioural_coverage` of the trials in a trace store (a ``TraceStore`` or its path).

    Filters: ``agent_version``, ``suite``, ``scenarios`` and ``run_id`` (each ``None`` = all).
    A path is opened read-only. The stored JSON is read directly, without building ``Trace``
    objects; the result equals ``behavioural_coverage`` of the same trials.
    """
    w = normalise_weights(weights)
    t = _normalise_targets(targets)
    lam = _check_lambda(state_lambda)
    models = _target_models(target_models)
    acc = _Accumulator(tools, state_abstraction, epsilon)
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("agent_version", agent_version), ("suite", suite), ("run_id", run_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if scenarios is not None:
        if isinstance(scenarios, str):
            raise TypeError("scenarios must be a list of scenario names, not one string")
        names = list(scenarios)
        where.append(f"scenario IN ({','.join('?' * len(names))})" if names else "0")
        params.extend(names)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    notes: list[str] = []
    conn, owned = _connect(store)
    try:
        loads = json.loads
        for (text,) in conn.execute(f"SELECT trace FROM trials{clause} ORDER BY id", params):
            acc.add_dict(loads(text))
        if agent_version is None:
            versions = [
                r[0] for r in conn.execute(f"SELECT DISTINCT agent_version FROM trials{clause}", params)
            ]
            if len(versions) > 1:
                notes.append(
                    f"traces of {len(versions)} agent versions pooled ({_names(sorted(versions), quote=False)}); "
                    "pass agent_version to measure one"
                )
    finally:
        if owned:
            conn.close()
    return _finish(acc, target_models=models, weights=w, targets=t, state_lambda=lam, notes=notes)
