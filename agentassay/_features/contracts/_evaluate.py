"""Contracts over many traces: the per-contract counts and examples, the same live and from stored traces.

The live plugin (``agentassay._features.contracts._plugin``) and the trace-first ``analyze`` both call
:class:`Tally` per trace, so a contract evaluated on a run's stored traces gives exactly the counts
and examples the run wrote, with no agent call. Examples are the violations of the lowest trial
indices, not the first to finish, so they do not depend on the order concurrent trials finished in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from ..._spec import Suite
from ..._traces import Trace
from ._model import Contract, Violation, suite_contracts

EXAMPLES = 3  # violations kept per contract (lowest trial indices)


@dataclass
class Tally:
    """One contract's satisfaction over trials: counts, and the violations of the lowest trial indices."""

    trials: int = 0
    satisfied: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)

    def add(self, trial: int, violation: Violation | None) -> None:
        self.trials += 1
        if violation is None:
            self.satisfied += 1
            return
        self.examples.append((trial, violation.text))
        self.examples.sort(key=lambda e: e[0])
        del self.examples[EXAMPLES:]

    def to_dict(self) -> dict[str, Any]:
        return {
            "trials": self.trials,
            "satisfied": self.satisfied,
            "violations": [{"trial": t, "text": text} for t, text in self.examples],
        }


def counted(trace: Trace, suite: Suite) -> bool:
    """Does this trace count? Not an error trial that ``errors: exclude`` leaves out of the pass rate."""
    return not (trace.error and suite.settings.errors == "exclude")


def record(contract: Contract, tally: Tally) -> dict[str, Any]:
    """What the results file keeps of one contract in one scenario, before any statistic."""
    return {**contract.describe(), **tally.to_dict()}


def evaluate_contracts(
    suite: Suite,
    scenario_name: str,
    traces: Iterable[Trace],
    inputs: str | Iterable[str] | None = None,
    *,
    search: Sequence[str | os.PathLike[str]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Every contract of ``scenario_name`` over ``traces``: ``{name: {kind, text, scope, p, delta, trials,
    satisfied, violations}}``, exactly what a live run writes for the same traces (the results file's
    ``contracts`` section adds the statistics).

    ``inputs``: the scenario's input (None), one input for every trace (a string), or one per trace.
    A trace's trial index is its ``metadata.trial`` (else its position). Error traces count unless the
    suite sets ``errors: exclude``, as in a run. Raises ``SpecError`` for a bad contract and
    ``KeyError`` for an unknown scenario.
    """
    scenarios = {s.name: s for s in suite.scenarios}
    if scenario_name not in scenarios:
        raise KeyError(
            f"no scenario {scenario_name!r} in suite {suite.name!r} (scenarios: {', '.join(scenarios)})"
        )
    contracts = suite_contracts(suite, search=search)[scenario_name]
    if inputs is None:
        inputs = scenarios[scenario_name].input
    if isinstance(inputs, str):
        pairs: Iterable[tuple[Trace, str]] = zip(traces, repeat(inputs))
    else:
        traces, inputs = list(traces), list(inputs)
        if len(traces) != len(inputs):
            raise ValueError(
                f"{len(traces)} traces but {len(inputs)} inputs: give one input per trace, or one for all"
            )
        pairs = zip(traces, inputs, strict=True)
    tallies = {c.name: Tally() for c in contracts}
    for position, (trace, text) in enumerate(pairs):
        if not counted(trace, suite):
            continue
        trial = trace.metadata.trial if trace.metadata.trial is not None else position
        for c in contracts:
            tallies[c.name].add(trial, c.evaluate(text, trace))
    return {c.name: record(c, tallies[c.name]) for c in contracts}
