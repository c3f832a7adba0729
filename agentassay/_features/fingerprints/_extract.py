"""Behavioural fingerprints (paper Def. 7.1, Alg. 3): one fixed-length, named vector per trace.

Every column has a name a reviewer can read (``calls:update_seat``, ``steps``, ...) because the
test in :mod:`._test` reports *which* features moved, not only that something moved. Columns are
kept in natural units (counts, characters, tokens, seconds); the test standardises them itself.

Two deliberate departures from Alg. 3: tool usage is reported both as raw counts per run and as
shares of the run's tool calls (the paper divides by the number of *steps*, mixing the two), and
``recovered`` is a 0/1 indicator rather than a ratio, so it stays meaningful for a run with one error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..._traces._model import Action, Trace

ACTIONS: tuple[Action, ...] = tuple(Action)
STRUCTURE = ("steps", "max_depth", "handoffs", "distinct_agents", "branches")
OUTPUT = ("output_chars", "output_words")
ERRORS = ("errors", "recovered")
COST = ("input_tokens", "output_tokens", "latency_s")


@dataclass(frozen=True, eq=False)
class FingerprintMatrix:
    """Fingerprints of a batch of traces: ``values[i, j]`` is feature ``names[j]`` of trace ``i``."""

    values: np.ndarray
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        values = np.asarray(self.values, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(f"values must be a 2-D array (rows = traces); got shape {values.shape}")
        if values.shape[1] != len(self.names):
            raise ValueError(f"values has {values.shape[1]} columns but {len(self.names)} names were given")
        if len(set(self.names)) != len(self.names):
            raise ValueError("names must be unique")
        values.setflags(write=False)  # frozen means frozen: a shared fingerprint cannot be edited
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "names", tuple(self.names))

    def __len__(self) -> int:
        return int(self.values.shape[0])

    @property
    def tools(self) -> tuple[str, ...]:
        """The tool list the matrix was extracted with (in column order)."""
        return tuple(n[6:] for n in self.names if n.startswith("calls:"))

    def column(self, name: str) -> np.ndarray:
        """One feature across all traces; a ValueError lists the valid names."""
        try:
            j = self.names.index(name)
        except ValueError:
            raise ValueError(f"unknown feature {name!r}; valid names: {', '.join(self.names)}") from None
        return self.values[:, j]

    def to_dict(self) -> dict[str, list[float]]:
        return {name: self.values[:, j].tolist() for j, name in enumerate(self.names)}


def feature_names(tools: Sequence[str]) -> tuple[str, ...]:
    """Column names of a fingerprint for this tool list: stable, so reports can be compared."""
    return (
        *(f"calls:{t}" for t in tools),
        *(f"share:{t}" for t in tools),
        *STRUCTURE,
        *OUTPUT,
        *(f"frac:{a.value}" for a in ACTIONS),
        *ERRORS,
        *COST,
    )


def _tool_union(traces: Sequence[Trace]) -> list[str]:
    seen: set[str] = set()
    for tr in traces:
        for s in tr.steps:
            if s.tool and s.action is Action.CALL_TOOL:
                seen.add(s.tool)
    return sorted(seen)


def _output_text(output: object) -> str:
    if output is None:
        return ""
    return output if isinstance(output, str) else str(output)


_ACTION_INDEX = {a: i for i, a in enumerate(ACTIONS)}
# Module constants, not ``Action.X`` look-ups, in the per-step loop (the hot path of extraction).
_CALL_TOOL, _HANDOFF, _RESPOND, _ERROR = Action.CALL_TOOL, Action.HANDOFF, Action.RESPOND, Action.ERROR


def _row(tr: Trace, tool_index: dict[str, int]) -> list[float]:
    """One trace's features in :func:`feature_names` order (``tool_index``: tool -> column)."""
    k = len(tool_index)
    action_index = _ACTION_INDEX
    calls = [0] * k
    acts = [0] * len(ACTIONS)
    used: set[str] = set()
    agents: set[str] = set()
    depth = n_handoffs = n_errors = 0
    pending_error = recovered = False
    for s in tr.steps:
        act = s.action
        acts[action_index[act]] += 1
        if s.depth > depth:
            depth = s.depth
        if s.agent:
            agents.add(s.agent)
        if act is _CALL_TOOL:
            tool = s.tool
            if tool:
                used.add(tool)
                i = tool_index.get(tool)
                if i is not None:
                    calls[i] += 1
            if s.error is None:
                if pending_error:
                    recovered = True
            else:
                n_errors += 1
                pending_error = True
        elif act is _HANDOFF:
            n_handoffs += 1
            if s.target:
                agents.add(s.target)
        elif act is _ERROR or s.error is not None:
            n_errors += 1
            pending_error = True
        elif act is _RESPOND and pending_error:
            recovered = True
    m = len(tr.steps)
    total_calls = sum(calls)
    shares = [c / total_calls for c in calls] if total_calls else [0.0] * k
    fracs = [a / m for a in acts] if m else [0.0] * len(ACTIONS)
    text = _output_text(tr.output)
    cost = tr.cost
    return [
        *calls,
        *shares,
        m,
        depth,
        n_handoffs,
        len(agents),
        len(used),
        len(text),
        len(text.split()),
        *fracs,
        n_errors + (tr.error is not None),
        recovered,
        cost.input_tokens,
        cost.output_tokens,
        cost.latency_s,
    ]


def extract(traces: Sequence[Trace], *, tools: Sequence[str] | None = None) -> FingerprintMatrix:
    """Fingerprint every trace; ``tools`` fixes the tool columns (default: sorted union of the batch).

    Calls to tools outside ``tools`` still count towards ``steps``, ``branches`` and
    ``frac:call_tool`` but get no column, and ``share:*`` is taken over the listed tools only, so
    the shares sum to one whenever a listed tool was called and are all zero otherwise.
    To compare two batches, extract both with the same tool list (see :func:`extract_pair`).
    """
    tool_list = list(_tool_union(traces) if tools is None else tools)
    if len(set(tool_list)) != len(tool_list):
        raise ValueError(f"tools must not repeat a name; got {tool_list!r}")
    names = feature_names(tool_list)
    tool_index = {t: i for i, t in enumerate(tool_list)}
    # Plain Python rows, converted once: per-element numpy writes would cost more than the step loop.
    rows = [_row(tr, tool_index) for tr in traces]
    values = np.array(rows, dtype=np.float64) if rows else np.zeros((0, len(names)))
    return FingerprintMatrix(values, names)


def extract_pair(
    baseline: Sequence[Trace], candidate: Sequence[Trace], *, tools: Sequence[str] | None = None
) -> tuple[FingerprintMatrix, FingerprintMatrix]:
    """Fingerprint a baseline and a candidate batch on one shared tool list.

    Separate :func:`extract` calls would give a tool the candidate started (or stopped) calling a
    column in one matrix only, and the comparison would silently misalign; the default tool list
    here is the sorted union over *both* batches.
    """
    if tools is None:
        tools = sorted(set(_tool_union(baseline)) | set(_tool_union(candidate)))
    return extract(baseline, tools=tools), extract(candidate, tools=tools)


def fingerprint_of(trace: Trace) -> dict[str, float]:
    """One trace's fingerprint as ``{feature: value}``: what the results file and the store keep.

    A dict, not a row, because the tool columns depend on which tools this run called; rows from
    different runs are aligned later by :func:`from_records`.
    """
    tools = _tool_union([trace])
    row = _row(trace, {t: i for i, t in enumerate(tools)})
    return {name: float(v) for name, v in zip(feature_names(tools), row, strict=True)}


def from_records(*batches: Sequence[dict[str, float]]) -> tuple[FingerprintMatrix, ...]:
    """Align stored fingerprints of several batches on one column list (tool union, stable order).

    A tool a run never called has 0 calls and a 0 share, which is exactly what :func:`extract`
    would have recorded with that tool listed.
    """
    tools = sorted({n[6:] for batch in batches for rec in batch for n in rec if n.startswith("calls:")})
    names = feature_names(tools)
    out = []
    for batch in batches:
        values = np.array([[float(rec.get(n, 0.0)) for n in names] for rec in batch], dtype=np.float64)
        out.append(FingerprintMatrix(values.reshape(len(batch), len(names)), names))
    return tuple(out)
