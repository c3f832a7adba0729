"""Stochastic kills, done soundly (paper Def. 5.6–5.10; docs/mutation.md).

The original's trials are recorded once (``run --full``). Each mutant is then *checked* against
them with the very gate ``agentassay check`` uses — the sequential regression test (or fixed-n),
fingerprints, multiplicity across scenarios — on the same trial seeds for every mutant:

* **killed**: the check blocks (a FAIL at the gate's known alpha; sequential tests stop as soon as
  a regression is shown: Def. 5.10's early kill);
* **survived**: the check deploys — non-inferiority shown for every scenario, no behaviour shift —
  although the mutant did change behaviour (below);
* **inconclusive**: changed behaviour, neither killed nor shown non-inferior at this budget;
* **not activated** (Def. 5.7's heuristic): no evidence that the mutant changed anything — no
  scenario's pass rate differs from the original's (two-sided exact test) and no fingerprint
  moved, each at ``alpha_equiv`` — reported with those p-values and left out of the score.

The mutation score (Eq. 22) is killed / activated with an exact Clopper-Pearson interval, overall
and per class. A one-run-per-mutant rule (the reference implementation's) is never used;
``benchmarks/mutation.py`` measures both.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from ..._integrations.adapters import load_adapter
from ..._plugins import default_plugins, hookimpl
from ..._results import Results
from ..._runner import run_suite
from ..._spec import Suite
from ..._stats import proportion_ci
from ..budget._settings import BudgetSettings
from ._config import CLASSES, MutationConfig
from ._operators import Mutant, Target, generate

SCHEMA = "agentassay.mutation/1"
ALPHA_EQUIV = 0.05
STATUSES = ("killed", "survived", "inconclusive", "not_activated", "not_run")


@dataclass(frozen=True)
class Classification:
    status: str
    reason: str
    evidence: dict[str, Any]


def _two_sided(base: tuple[int, int], cand: tuple[int, int]) -> float:
    from scipy.stats import fisher_exact

    (bk, bn), (ck, cn) = base, cand
    if bn <= 0 or cn <= 0:
        return 1.0
    return float(fisher_exact([[bk, bn - bk], [ck, cn - ck]], alternative="two-sided")[1])


def classify(check: Results, *, alpha_equiv: float = ALPHA_EQUIV) -> Classification:
    """A mutant's status from its ``check`` results against the original (module docstring)."""
    decision = check.decision.decision.value
    per: dict[str, Any] = {}
    activated_by: list[str] = []
    for s in check.scenarios:
        info: dict[str, Any] = {"verdict": s.verdict.verdict.value, "trials": s.verdict.trials_used}
        if s.baseline is not None:
            p = _two_sided((s.baseline.passes, s.baseline.trials), (s.passes, s.counted_trials))
            info["rate_p_two_sided"] = p
            if p <= alpha_equiv:
                activated_by.append(f"{s.name}: pass rate {s.baseline.passes}/{s.baseline.trials} → {s.passes}/{s.counted_trials} (p = {p:.2g})")
        fp = s.verdict.data.get("fingerprint") or {}
        if fp.get("pvalue") is not None:
            info["fingerprint_p"] = fp["pvalue"]
            if float(fp["pvalue"]) <= alpha_equiv:
                activated_by.append(f"{s.name}: behaviour moved ({fp.get('largest') or 'fingerprint'}, p = {float(fp['pvalue']):.2g})")
        per[s.name] = info
    evidence = {"decision": decision, "scenarios": per, "activated_by": activated_by}
    if decision == "block":
        failed = [s for s in check.scenarios if s.verdict.verdict.value == "fail"]
        why = "; ".join(f"{s.name}: {s.verdict.explanation}" for s in failed[:2])
        return Classification("killed", why, evidence)
    if not activated_by:
        return Classification(
            "not_activated",
            f"no scenario's pass rate or behaviour differs from the original's (two-sided, alpha {alpha_equiv:g})",
            evidence,
        )
    if decision == "deploy":
        return Classification("survived", "; ".join(activated_by[:2]) + "; yet every scenario passed", evidence)
    return Classification("inconclusive", "; ".join(activated_by[:2]) + "; not killed, not shown harmless", evidence)


def score(statuses: Sequence[str]) -> dict[str, Any]:
    """Eq. 22: killed / activated (not-activated and not-run mutants left out), with a 95% exact interval."""

    killed = sum(1 for s in statuses if s == "killed")
    activated = sum(1 for s in statuses if s in ("killed", "survived", "inconclusive"))
    out: dict[str, Any] = {"killed": killed, "activated": activated, "mutants": len(statuses)}
    if activated:
        lo, hi = proportion_ci(killed, activated, method="clopper-pearson")
        out |= {"score": killed / activated, "interval": [float(lo), float(hi)]}
    else:
        out |= {"score": None, "interval": None}
    return out


@dataclass
class MutationRun:
    """What ``agentassay mutate`` produced: the original's results with a ``mutation`` section."""

    results: Results
    aborted: str | None = None
    interrupted: str | None = None


def hint(m: dict[str, Any]) -> str:
    how = {"survived": "it survived", "inconclusive": "it was inconclusive"}.get(m["status"], m["status"])
    return f"add a scenario that fails when {m['diff']} ({how}: {m['reason']})"


class KillSwitch:
    """A plugin for one mutant's check: once a scenario's *sequential* test FAILs, the suite blocks whatever the
    other scenarios show (a sequential FAIL is final, and other evidence can only add FAILs), so no new trial
    starts — the early kill of Def. 5.10, extended from the scenario to the mutant."""

    __name__ = "mutation-kill-switch"

    def __init__(self) -> None:
        self.seen: set[str] = set()

    @hookimpl
    def agentassay_trial_finished(self, run: Any, phase: Any, state: Any) -> None:
        name = state.scenario.name
        if phase.name != "target" or name in self.seen or state.decided_at is None:
            return
        self.seen.add(name)
        verdict = state.monitor.finish()
        if verdict.test == "sequential-regression" and verdict.verdict.value == "fail":
            run.hold(f"killed: {name} failed its sequential regression test")


def _adapter_loader(suite: Suite, entry: str) -> Callable[[Any], Any]:
    """A loader of ``entry``'s adapter for a model, preflighted, so model mutants load like the original."""

    search = [__import__("pathlib").Path.cwd(), suite.root]

    def load(model: Any) -> Any:
        adapter = load_adapter(entry, factory=suite.agent.factory and entry == suite.agent.entry, model=model,
                               search=search, root=suite.root)
        # the provider preflight (issue 22, defect 11): a model mutant's key and server before its first trial
        from ..._integrations.adapters._preflight import preflight_adapter

        preflight_adapter(adapter, model, file=None if suite.path is None else str(suite.path),
                          key="model" if model is suite.model else "mutation.models")
        return adapter

    return load


class _MutantChecker:
    """Checks mutants against the recorded original under one shared budget; threads share its rows."""

    def __init__(self, suite: Suite, *, entry: str, adapter: Any, original: Any, plugins: Any, workers: int,
                 say: Callable[[str], None]) -> None:
        self.suite, self.entry, self.adapter, self.original, self.say = suite, entry, adapter, original, say
        self.base_plugins = plugins
        self.kill_switch = KillSwitch
        self.spent = [original.results.cost()["usd"] or 0.0]
        self.budget = suite.settings.part("budget").usd
        self.lock = threading.Lock()
        self.per_run = replace(suite.settings, concurrency=max(1, suite.settings.concurrency // workers))
        self.rows: dict[str, dict[str, Any]] = {}

    def record(self, m: Mutant, status: str, reason: str, **extra: Any) -> None:
        """Store the mutant's row (keyed by id, so the report can keep generation order)."""
        self.rows[m.id] = {"id": m.id, "class": m.cls, "operator": m.operator, "diff": m.diff,
                           "status": status, "reason": reason, **extra}

    def check(self, m: Mutant) -> None:
        """Run the gate on one mutant against the original's trials and record its classification."""

        budget, spent = self.budget, self.spent
        with self.lock:
            if budget is not None and spent[0] >= budget:
                self.record(m, "not_run", f"the budget (config.budget_usd ${budget:g}) was spent before it started")
                return
            remaining = None if budget is None else budget - spent[0]
        try:
            mutated = m.build()
        except (ValueError, TypeError) as exc:
            self.record(m, "not_run", f"cannot be applied to this agent: {exc}")
            return
        msuite = mutated.suite or self.suite
        msuite = replace(msuite, settings=self.per_run.with_parts(BudgetSettings(remaining)))
        patch = mutated.patch() if mutated.patch is not None else _nothing()
        with patch:
            report = run_suite(
                msuite, adapter=mutated.adapter or self.adapter, entry=self.entry,
                baseline=self.original.results, progress=False, handle_signals=False,
                plugins=self.base_plugins.with_objects(self.kill_switch()), version=f"mutant:{m.id}",
            )
        res = report.results
        usd = res.cost()["usd"] or 0.0
        with self.lock:
            spent[0] += usd
        trials = sum(len(s.trials) for s in res.scenarios)
        if report.aborted:
            self.record(m, "killed", f"the mutant could not run at all: {report.aborted}", trials=trials,
                        usd=usd, evidence={"decision": "aborted"})
            return
        c = classify(res)
        self.record(m, c.status, c.reason, trials=trials, usd=round(usd, 6), evidence=c.evidence)
        self.say(f"{m.id}: {c.status.replace('_', ' ')} after {trials} trials")

    def check_all(self, mutants: Sequence[Mutant], workers: int) -> list[dict[str, Any]]:
        """Check every runnable mutant (shared ones ``workers`` at a time, exclusive ones alone); rows in order."""
        for m in mutants:
            if m.not_run is not None:
                self.record(m, "not_activated", m.not_run, trials=0)
        runnable = [m for m in mutants if m.not_run is None]
        shared = [m for m in runnable if not m.exclusive]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(self.check, shared))
        for m in runnable:  # a module patch is visible to every thread: these run alone
            if m.exclusive:
                self.check(m)
        return [self.rows[m.id] for m in mutants]


def _section(suite: Suite, config: MutationConfig, original: Results, ordered: list[dict[str, Any]],
             notes: Sequence[str]) -> dict[str, Any]:
    """The ``mutation`` section of the results: every mutant's row, the scores, totals and hints."""
    statuses = [r["status"] for r in ordered]
    return {
        "schema": SCHEMA,
        "original": {"run_id": original.run_id, "decision": original.decision.decision.value},
        "classes": list(config.classes),
        "alpha": suite.settings.alpha,
        "alpha_equiv": ALPHA_EQUIV,
        "mutants": ordered,
        "scores": {
            "overall": score(statuses),
            "by_class": {c: score([r["status"] for r in ordered if r["class"] == c]) for c in CLASSES if c in config.classes},
        },
        "trials": sum(int(r.get("trials") or 0) for r in ordered),
        "usd": round(math.fsum(float(r.get("usd") or 0.0) for r in ordered), 6),
        "hints": [hint(r) for r in ordered if r["status"] in ("survived", "inconclusive")],
        "notes": list(dict.fromkeys(notes)),
    }


def run_mutation(
    suite: Suite,
    *,
    config: MutationConfig,
    entry: str | None = None,
    plugins: Any = None,
    progress: Callable[[str], None] | None = None,
    workers: int | None = None,
) -> MutationRun:
    """Record the original once, check every mutant against it (``workers`` at a time, sharing the suite's
    ``concurrency``), classify, score. ``config.max_mutants`` caps the mutants; ``budget_usd`` of the suite
    caps the whole analysis (no mutant starts once it is spent)."""

    say = progress or (lambda text: None)
    entry = entry or suite.agent.entry
    load = _adapter_loader(suite, entry)


    base_plugins = plugins or default_plugins()

    adapter = load(suite.model)
    say(f"recording the original ({entry}): every scenario to its cap")
    original = run_suite(suite, adapter=adapter, entry=entry, full=True, progress=False, handle_signals=True,
                         plugins=plugins)
    if original.aborted or original.interrupted:
        return MutationRun(original.results, original.aborted, original.interrupted)
    target = Target(suite, entry, adapter, config, suite.settings.seed, load)
    mutants = generate(target)
    workers = workers or max(1, min(4, suite.settings.concurrency // 4))
    checker = _MutantChecker(suite, entry=entry, adapter=adapter, original=original, plugins=base_plugins,
                             workers=workers, say=say)
    ordered = checker.check_all(mutants, workers)
    section = _section(suite, config, original.results, ordered, target.notes)
    results = replace(original.results, sections={**original.results.sections, "mutation": section})
    return MutationRun(results)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
