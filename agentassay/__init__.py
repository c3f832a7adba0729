"""AgentAssay: statistically sound regression testing for non-deterministic LLM agents.

The public face: every name a user or a plugin author needs is importable from here (``from agentassay
import load_suite, run_suite, regression_verdict``), documented in docs/api.md; everything else is an
implementation detail that may move. Names are resolved on first use (``agentassay.stats`` pulls in scipy),
so ``import agentassay`` and ``agentassay --help`` stay fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# name -> the module that defines it (docs/api.md lists them in the same groups).
_PUBLIC: dict[str, str] = {
    # errors and exit codes
    "AgentAssayError": "agentassay._errors",
    "ExitCode": "agentassay._errors",
    "SpecError": "agentassay.spec",
    "ResultsError": "agentassay.results",
    "AgentLoadError": "agentassay.integrations.adapters",
    "PluginError": "agentassay.plugins",
    # the suite
    "Suite": "agentassay.spec",
    "Scenario": "agentassay.spec",
    "Settings": "agentassay.spec",
    "load_suite": "agentassay.spec",
    "parse_suite": "agentassay.spec",
    # running it
    "run_suite": "agentassay.runner",
    "RunReport": "agentassay.runner",
    "AgentAdapter": "agentassay.integrations.adapters",
    "Trace": "agentassay.traces",
    "TraceStore": "agentassay.traces",
    # results and verdicts
    "Results": "agentassay.results",
    "ScenarioResult": "agentassay.results",
    "TrialOutcome": "agentassay.results",
    "load_results": "agentassay.results",
    "compare_results": "agentassay.results",
    "merge_results": "agentassay.features.shards",
    "Verdict": "agentassay.stats",
    "Decision": "agentassay.stats",
    "ScenarioVerdict": "agentassay.gate",
    "SuiteDecision": "agentassay.gate",
    "decide": "agentassay.gate",
    # the statistics (scipy.stats style: small frozen results with .verdict, .pvalue and .explain())
    "regression_verdict": "agentassay.stats",
    "RegressionResult": "agentassay.stats",
    "threshold_verdict": "agentassay.stats",
    "ThresholdResult": "agentassay.stats",
    "proportion_ci": "agentassay.stats",
    "SequentialDesign": "agentassay.stats",
    "sequential_regression": "agentassay.stats",
    "SequentialResult": "agentassay.stats",
    "sprt": "agentassay.stats",
    "SPRTResult": "agentassay.stats",
    "adjust_pvalues": "agentassay.stats",
    "trials_to_decide": "agentassay.stats",
    "MoreTrials": "agentassay.stats",
    "sample_size_two_sample": "agentassay.stats",
    "power_two_sample": "agentassay.stats",
    "bayesian_regression": "agentassay.stats",
    # plugins
    "hookimpl": "agentassay.plugins",
    "hookspec": "agentassay.plugins",
    "Plugins": "agentassay.plugins",
    "Stash": "agentassay.plugins",
    "StashKey": "agentassay.plugins",
    # reports
    "render_table": "agentassay.reports",
    "render_pr_comment": "agentassay.reports",
    "render_html": "agentassay.reports",
    "render_junit": "agentassay.reports",
}

__all__ = sorted([*_PUBLIC, "__version__"])


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use, then keep the name here (PEP 562)."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'agentassay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
