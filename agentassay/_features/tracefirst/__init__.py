"""Trace-first analysis (paper Sec. 7.3, Thm 7.3): what a run reports, from traces already recorded.

``analyze`` matches recorded traces — our store, a results file's run, or imported OpenTelemetry GenAI,
OpenInference and Agents SDK traces — to a suite's scenarios and replays them through ``run_suite``
(``ReplayAdapter``), so every check, contract, coverage measure and cached judge grade is computed by
the same code as in a live run, at zero token cost. docs/trace-first.md.
"""

from ._analyze import AnalyzeError, Gathered, Rule, analyze, gather, replay_suite, rules_of
from ._replay import NotRecorded, ReplayAdapter

__all__ = [
    "AnalyzeError",
    "Gathered",
    "NotRecorded",
    "ReplayAdapter",
    "Rule",
    "analyze",
    "gather",
    "replay_suite",
    "rules_of",
]
