"""AgentAssay: statistically sound regression testing for non-deterministic LLM agents.

The public face: every name a user or a plugin author needs is importable from here (``from agentassay
import load_suite, run_suite, regression_verdict``), documented in docs/api.md; everything else is an
implementation detail that may move: every subpackage and module here is private (``agentassay._spec``, …),
as httpx's modules are. Names are resolved on first use (``agentassay._stats`` pulls in scipy),
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
    "SpecError": "agentassay._spec",
    "ResultsError": "agentassay._results",
    "AgentLoadError": "agentassay._integrations.adapters",
    "PluginError": "agentassay._plugins",
    "TransientError": "agentassay._integrations.adapters",
    "TraceImportError": "agentassay._integrations.importers",
    # the suite
    "Suite": "agentassay._spec",
    "Scenario": "agentassay._spec",
    "Settings": "agentassay._spec",
    "load_suite": "agentassay._spec",
    "parse_suite": "agentassay._spec",
    # running it
    "run_suite": "agentassay._runner",
    "RunReport": "agentassay._runner",
    "AgentAdapter": "agentassay._integrations.adapters",
    "Trace": "agentassay._traces",
    "TraceStore": "agentassay._traces",
    "import_traces": "agentassay._integrations.importers",
    "ImportStats": "agentassay._integrations.importers",
    "detect_format": "agentassay._integrations.importers",
    "main": "agentassay._integrations.cli",
    # results and verdicts
    "Results": "agentassay._results",
    "ScenarioResult": "agentassay._results",
    "TrialOutcome": "agentassay._results",
    "load_results": "agentassay._results",
    "compare_results": "agentassay._results",
    "merge_results": "agentassay._features.shards",
    "Verdict": "agentassay._stats",
    "Decision": "agentassay._stats",
    "ScenarioVerdict": "agentassay._gate",
    "SuiteDecision": "agentassay._gate",
    "decide": "agentassay._gate",
    # the statistics (scipy.stats style: small frozen results with .verdict, .pvalue and .explain())
    "regression_verdict": "agentassay._stats",
    "RegressionResult": "agentassay._stats",
    "threshold_verdict": "agentassay._stats",
    "ThresholdResult": "agentassay._stats",
    "proportion_ci": "agentassay._stats",
    "SequentialDesign": "agentassay._stats",
    "sequential_regression": "agentassay._stats",
    "SequentialResult": "agentassay._stats",
    "sprt": "agentassay._stats",
    "SPRTResult": "agentassay._stats",
    "SPRT": "agentassay._stats",
    "SPRTDesign": "agentassay._stats",
    "warm_start": "agentassay._stats",
    "WarmStart": "agentassay._stats",
    "adjust_pvalues": "agentassay._stats",
    "correct_regressions": "agentassay._stats",
    "bonferroni_alpha": "agentassay._stats",
    "deployment_decision": "agentassay._stats",
    "trials_to_decide": "agentassay._stats",
    "MoreTrials": "agentassay._stats",
    "sample_size_two_sample": "agentassay._stats",
    "sample_size_one_sample": "agentassay._stats",
    "power_one_sample": "agentassay._stats",
    "power_two_sample": "agentassay._stats",
    "bayesian_regression": "agentassay._stats",
    # plugins
    "hookimpl": "agentassay._plugins",
    "hookspec": "agentassay._plugins",
    "Plugins": "agentassay._plugins",
    "Stash": "agentassay._plugins",
    "StashKey": "agentassay._plugins",
    "ScenarioTest": "agentassay._gate",
    "Prepared": "agentassay._runner",
    "Section": "agentassay._reports",
    "ScenarioPart": "agentassay._reports",
    # reports
    "render_table": "agentassay._reports",
    "render_pr_comment": "agentassay._reports",
    "render_html": "agentassay._reports",
    "render_junit": "agentassay._reports",
    "load_traces": "agentassay._reports",
    # the features' Python entry points (each feature's page in docs/)
    "evaluate_contracts": "agentassay._features.contracts",
    "behavioural_coverage": "agentassay._features.coverage",
    "coverage_from_store": "agentassay._features.coverage",
    "grade_traces": "agentassay._features.judge",
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
