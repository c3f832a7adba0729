"""The features: each package owns its suite keys, results section, gate evidence and report sections,
and registers through the same hooks a third-party plugin uses (docs/architecture.md, docs/plugins.md).

The kernel (``spec``, ``runner``, ``plugins``, ``gate``, ``results``, ``traces``, ``reports``) imports none
of them: it reads :data:`BUILTINS` by module name, as pytest names its built-in plugins, and loads a
feature's ``_plugin`` module only when a run, a report or a comparison needs it. Keep this module cheap:
it is read whenever a suite is.
"""

from __future__ import annotations

from typing import Any

from .._spec._kinds import CheckKind
from .._spec._settings import BuiltinPlugin as Builtin


def _part(run: Any, name: str) -> Any:
    return run.suite.settings.part(name)


def _has(results: Any, key: str) -> bool:
    return bool(results.sections.get(key))


def _section(plan: Any, key: str) -> bool:
    """The plan's candidate (re-derived from a file) or its baseline has this plugin's section."""
    base = getattr(plan.baseline, "sections", None) or {}
    return bool(plan.sections.get(key) or base.get(key))


def _baseline_has(run: Any, key: str) -> bool:
    base = run.options.baseline
    return base is not None and bool(base.sections.get(key))


def _option(run: Any, name: str) -> Any:
    return run.options.extra.get(name)


def _warmed(results: Any) -> bool:
    """Some scenario's SPRT had a warm PASS rule (the HTML report's caption says it is not drawn)."""
    return any((getattr(s.verdict, "evidence", None) or {}).get("warm_rate") is not None for s in results.scenarios)


def _uses(run: Any, key: str) -> bool:
    """The suite writes ``key`` at the top level or in a scenario."""
    return key in run.suite.extensions or any(key in s.extensions for s in run.suite.scenarios)


# Call order (first called first).
BUILTINS: tuple[Builtin, ...] = (
    Builtin("store", "agentassay._features.store._plugin", lambda run: run.options.store is not None),
    Builtin(
        "budget", "agentassay._features.budget._plugin", lambda run: _part(run, "budget").usd is not None,
        settings="agentassay._features.budget._settings:BudgetSettings",
        records="agentassay._features.budget._settings:RECORDS",
    ),
    Builtin(
        "warm_start", "agentassay._features.warm_start._plugin", lambda run: _option(run, "warm_from") is not None,
        for_results=_warmed,
        settings="agentassay._features.warm_start._settings:WarmStartSettings",
        records="agentassay._features.warm_start._settings:RECORDS",
    ),
    Builtin("pool", "agentassay._features.pool._plugin", lambda run: _option(run, "pool") is not None),
    # The estimate `agentassay plan` gives, recorded in every check's results for the comment (issue 25).
    Builtin("plan", "agentassay._features.plan._plugin", lambda run: run.options.baseline is not None),
    Builtin(
        "fingerprints",
        "agentassay._features.fingerprints._plugin",
        lambda run: True,  # every trial's fingerprint is recorded, on or off (its test needs it on)
        for_results=lambda results: True,  # every report states whether fingerprints were on
        for_plan=lambda plan: plan.settings.part("fingerprints").enabled,
        settings="agentassay._features.fingerprints._settings:FingerprintSettings",
        records="agentassay._features.fingerprints._records:RECORDS",
    ),
    Builtin(
        "proxy",
        "agentassay._features.proxy._plugin",
        lambda run: _part(run, "proxy").model is not None,
        for_results=lambda results: _has(results, "proxy"),
        for_plan=lambda plan: plan.baseline is not None and _has(plan.baseline, "proxy"),
        settings="agentassay._features.proxy._settings:ProxySettings",
        records="agentassay._features.proxy._settings:RECORDS",
        sections=("proxy",),
        savings="agentassay._features.proxy._savings:adjust_savings",
    ),
    Builtin(
        "coverage",
        "agentassay._features.coverage._plugin",
        lambda run: _part(run, "coverage").enabled,
        for_results=lambda results: _has(results, "coverage"),
        for_plan=lambda plan: bool(plan.sections.get("coverage")),  # the Eq. 26 gate in compare / merge
        settings="agentassay._features.coverage._settings:CoverageConfig",
        records="agentassay._features.coverage._settings:RECORDS",
        sections=("coverage",),
    ),
    Builtin(
        "metamorphic",
        "agentassay._features.metamorphic._plugin",
        lambda run: (
            any("metamorphic" in s.extensions for s in run.suite.scenarios)
            or _baseline_has(run, "metamorphic")
            or "config.metamorphic" in run.suite.extensions
        ),
        for_results=lambda results: bool(results.sections.get("metamorphic")),
        for_plan=lambda plan: _section(plan, "metamorphic"),
        keys={"config": ("metamorphic",), "scenario": ("metamorphic",)},
    ),
    Builtin(
        "contracts",
        "agentassay._features.contracts._plugin",
        lambda run: _uses(run, "contracts") or _baseline_has(run, "contracts"),
        for_results=lambda results: bool(results.sections.get("contracts")),
        for_plan=lambda plan: _section(plan, "contracts"),
        keys={"suite": ("contracts",), "scenario": ("contracts",)},
    ),
    Builtin(
        "judge",
        "agentassay._features.judge._plugin",
        lambda run: _uses(run, "judge"),
        for_results=lambda results: bool(results.sections.get("judge")),
        keys={"suite": ("judge",), "scenario": ("judge",)},
        # `{judge: module:function}`: a grading function of the user's own, its other keys passed through.
        checks=(
            CheckKind(
                "judge",
                "entry",
                options=None,
                reserved=("input", "output", "properties"),
                names_code=True,
                build="agentassay._features.judge._check:build",
            ),
        ),
        grades="an LLM judge (`judge:`, docs/judge.md)",
    ),
    Builtin(
        "mutation",
        "agentassay._features.mutation._plugin",
        lambda run: False,
        for_results=lambda results: bool(results.sections.get("mutation")),
        keys={"suite": ("mutation",)},
    ),
    Builtin(
        "alerts",
        "agentassay._features.alerts._plugin",
        lambda run: run.options.baseline is not None,
        for_results=lambda results: bool(results.sections.get("alerts")),
        for_plan=lambda plan: plan.baseline is not None,  # compare / merge --baseline: alerts from the files
        settings="agentassay._features.alerts._settings:AlertsConfig",
        records="agentassay._features.alerts._settings:RECORDS",
    ),
    Builtin(
        "shards", "agentassay._features.shards._plugin", lambda run: _option(run, "shard") is not None, sections=("shard",),
        records="agentassay._features.shards._records:RECORDS",
        hookspecs="agentassay._features.shards._hookspecs",
    ),
    # `match:` of a scenario is trace-first analysis's (`agentassay analyze`); no hooks in a run.
    Builtin("analyze", "agentassay._features.tracefirst", lambda run: False, keys={"scenario": ("match",)}),
)
