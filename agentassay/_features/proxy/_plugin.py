"""The proxy model (``config.proxy``; docs/multifidelity.md): paired runs, the plan, separate runs.

``run`` (recording a baseline): after the target's trials, the proxy replays the target's first
``paired`` seeds of each scenario (paired runs: same input, same seed) and rho is measured on
them — pass bit and fingerprint features, pooled over scenarios, so it reflects how the two models
move together across the suite's inputs. With rho and the USD per trial of each model the
cost-optimal allocation is fixed, and the proxy then runs its planned trials per scenario on seeds
of its own: the baseline's proxy arm.

``check`` re-derives the allocation from the baseline's rho and costs (so the candidate cannot
move it), runs the target's share and then the proxy's share on fresh seeds, and hands the counts
to the gate, which combines the two p-values (_features/proxy/_gate.py).

Hooks: ``prepare`` (the adapter and, in ``check``, the allocation), ``after_trials`` (the proxy's
phases), ``results_sections`` (``proxy``), ``scenario_evidence`` (the p-value combination, also in
``compare``) and ``report_sections`` (its trials and cost).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..._gate import GatePlan, ThresholdFixed
from ..._integrations.adapters import AgentAdapter
from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ..._reports import Section
from ..._results import Results, ResultsError, TrialOutcome
from ..._runner import Prepared, ScenarioState
from ..._spec import Settings, SpecError, Suite
from ..._stats import ProxyAllocation, fidelity_correlation
from ..fingerprints._gate import EXCLUDED
from ..fingerprints._records import fingerprint
from ._gate import ProxyEvidence
from ._gate import allocation as proxy_allocation_for
from ._savings import proxy_trials
from ._settings import ProxySettings

if TYPE_CHECKING:
    from ..._reports import ReportContext, Section
    from ..._runner import EngineOutcome, Prepared, Run

NAME = "proxy"

PHASES = {
    "proxy-paired": "proxy, paired runs",
    "proxy-run": "proxy, baseline trials",
    "proxy-check": "proxy, candidate trials",
}


@dataclass
class ProxyRun:
    """What the proxy phase produced: the results file's ``proxy`` section (the gate's input in ``check``)."""

    info: dict[str, Any] = field(default_factory=dict)
    interrupted: str | None = None
    aborted: str | None = None


def check_adapter(suite: Suite, adapter: AgentAdapter) -> None:
    """A model drives only Agents SDK agents: a proxy for a plain callable would be the target again."""
    if suite.settings.of(ProxySettings).model is not None and adapter.name != "openai-agents":
        raise SpecError(
            f"config.proxy sets a model, but the agent is a {adapter.name} agent, which chooses its own "
            "model. A proxy model drives only OpenAI Agents SDK agents: remove `proxy:` from config.",
            file=str(suite.path) if suite.path else None,
            key="config.proxy",
            expected="an Agents SDK agent",
            got=f"a {adapter.name} agent",
        )


def usd_per_trial(trials: Iterable[TrialOutcome]) -> float | None:
    usd = [t.usd for t in trials if t.usd is not None]
    return sum(usd) / len(usd) if usd else None


def paired_rho(
    target: dict[str, tuple[TrialOutcome, ...]], proxy: dict[str, tuple[TrialOutcome, ...]]
) -> tuple[float | None, int]:
    """rho of Def. 7.7 from paired runs (same scenario and seed), pooled over scenarios.

    Columns: the pass bit and every fingerprint feature the gate tests (latency and input tokens
    left out, as there). Rows with an error or an excluded outcome on either side are dropped.
    Returns (rho, rows); rho is None with fewer than 3 rows.
    """
    rows_t: list[dict[str, float]] = []
    rows_p: list[dict[str, float]] = []
    for name, trials in proxy.items():
        by_index = {t.index: t for t in target.get(name, ())}
        for p in trials:
            t = by_index.get(p.index)
            if t is None or t.error or p.error or t.passed is None or p.passed is None:
                continue
            for rows, trial in ((rows_t, t), (rows_p, p)):
                rec = {k: v for k, v in (fingerprint(trial) or {}).items() if k not in EXCLUDED}
                rows.append({**rec, "passed": float(trial.passed)})
    if len(rows_t) < 3:
        return None, len(rows_t)
    names = sorted({k for rows in (rows_t, rows_p) for r in rows for k in r})
    matrix = [[[float(r.get(k, 0.0)) for k in names] for r in rows] for rows in (rows_t, rows_p)]
    return fidelity_correlation(matrix[0], matrix[1]), len(rows_t)


def plan_from_baseline(baseline: Results, settings: Settings) -> tuple[ProxyAllocation | None, list[str]]:
    """The allocation ``check`` uses: the baseline's rho and costs, the candidate's settings."""
    info = baseline.sections.get("proxy") or {}
    if not info.get("scenarios"):
        return None, [
            "config.proxy is set but the baseline has no proxy trials: record it again with `agentassay run` "
            "and the proxy configured; the target ran alone"
        ]
    alloc = proxy_allocation_for(info.get("rho"), info.get("cost_target"), info.get("cost_proxy"), settings)
    if alloc is None:
        return None, ["the baseline's proxy has no rho or no price, so no proxy allocation; the target ran alone"]
    if not alloc.proxy_pays:
        return None, [f"proxy not used: {alloc.explain()}"]
    return alloc, []


def _phase(run: Run, adapter: AgentAdapter, caps: dict[str, int], *, role: str, seed_role: str | None, version: str) -> EngineOutcome:
    """Run ``caps[name]`` proxy trials of each scenario (the count is the plan; no test stops them)."""

    settings = run.settings
    states = {}
    for s in run.scenarios:
        cap = caps.get(s.name, 0)
        if cap <= 0:
            continue
        monitor = ThresholdFixed(cap, (), threshold=settings.threshold, alpha=settings.alpha)
        limit = cap if settings.errors == "fail" else 2 * cap
        states[s.name] = ScenarioState(s, run.evaluators[s.name], monitor, limit)
    return run.phase(
        role, states, adapter=adapter, role=role, seed_role=seed_role, version=version, label=PHASES[role],
        planned=sum(caps.values()),
    )


def run_proxy(
    run: Run,
    adapter: AgentAdapter,
    target: dict[str, tuple[TrialOutcome, ...]],
    *,
    allocation: ProxyAllocation | None,
) -> ProxyRun:
    """The proxy's trials after the target's: paired runs and the arm (``run``) or the arm (``check``)."""
    settings, baseline, version = run.settings, run.baseline, run.version
    proxy = settings.of(ProxySettings)
    assert proxy.model is not None
    model_label = getattr(adapter, "model_label", None)
    out = ProxyRun({"model": asdict(proxy.model), "label": model_label, "notes": []})

    # Filed under a version of its own, so the store never mixes the proxy's traces with the target's.
    proxy_version = f"{version}+proxy:{model_label or proxy.model.provider}"

    def phase(caps: dict[str, int], role: str, seed_role: str | None = None) -> EngineOutcome:
        return _phase(run, adapter, caps, role=role, seed_role=seed_role, version=proxy_version)

    if baseline is None:  # recording: paired runs first, then the plan, then the arm
        caps = {n: min(proxy.paired, len(trials)) for n, trials in target.items()}
        paired = phase(caps, "proxy-paired", run.seed_role)  # the target's seeds (run~g when pooled)
        out.interrupted, out.aborted = paired.interrupted, paired.aborted
        proxy_paired = {n: st.outcomes() for n, st in paired.states.items()}
        rho, rows = paired_rho(target, proxy_paired)
        cost_t = usd_per_trial(t for trials in target.values() for t in trials)
        cost_p = usd_per_trial(t for trials in proxy_paired.values() for t in trials)
        alloc = proxy_allocation_for(rho, cost_t, cost_p, settings)
        out.info |= {
            "rho": rho,
            "paired_rows": rows,
            "paired": {n: [[t.index, t.passed] for t in trials] for n, trials in proxy_paired.items()},
            "cost_target": cost_t,
            "cost_proxy": cost_p,
            "paired_usd": _usd(proxy_paired.values()),
            "allocation": None if alloc is None else alloc.to_dict(),
        }
        if rho is None:
            out.info["notes"].append(f"rho needs at least 3 paired runs without errors; got {rows}")
        elif cost_t is None or cost_p is None:
            out.info["notes"].append(
                "no proxy allocation: price both models in config.prices (the model names the traces report: "
                f"target and {model_label!r})"
            )
        if out.interrupted or out.aborted or alloc is None or not alloc.proxy_pays:
            if alloc is not None and not alloc.proxy_pays:
                out.info["notes"].append(f"proxy not used: {alloc.explain()}")
            return out
        arm_caps = dict.fromkeys(target, alloc.n_proxy)
        role = "proxy-run"
    else:
        assert allocation is not None
        base = baseline.sections.get("proxy") or {}
        out.info |= {k: base.get(k) for k in ("rho", "paired_rows", "cost_target", "cost_proxy")}
        out.info["allocation"] = allocation.to_dict()
        arm_caps = dict.fromkeys(target, allocation.n_proxy)
        role = "proxy-check"

    arm = phase(arm_caps, role)
    out.interrupted, out.aborted = arm.interrupted, arm.aborted
    trials = {n: st.outcomes() for n, st in arm.states.items()}
    out.info["scenarios"] = {
        n: {
            "passes": sum(1 for t in ts if t.passed),
            "trials": sum(1 for t in ts if t.passed is not None),
            "errors": sum(1 for t in ts if t.error),
            "usd": _usd([ts]),
        }
        for n, ts in trials.items()
    }
    arm_usd = _usd(trials.values())
    out.info["usd"] = arm_usd if baseline is not None else _sum(out.info["paired_usd"], arm_usd)
    return out


def _usd(batches: Iterable[Iterable[TrialOutcome]]) -> float | None:
    usd = [t.usd for trials in batches for t in trials if t.usd is not None]
    return round(math.fsum(usd), 6) if usd else None


def _sum(*values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return round(math.fsum(present), 6) if present else None


# -- hooks ---------------------------------------------------------------------------------------


@dataclass
class _State:
    adapter: AgentAdapter
    allocation: ProxyAllocation | None = None
    result: ProxyRun | None = None


STATE = StashKey[_State]()  # this plugin's state for one run


@hookimpl
def agentassay_prepare(run: Run) -> Prepared | None:
    """The proxy's adapter and, in a check, its allocation: the target then runs only its share (returned)."""

    settings = run.settings
    proxy = settings.of(ProxySettings)
    if proxy.model is None:
        return None
    assert run.adapter is not None
    check_adapter(run.suite, run.adapter)
    state = run.stash[STATE] = _State(run.load_adapter(proxy.model, "config.proxy.model"))
    if run.baseline is not None:
        state.allocation, notes = plan_from_baseline(run.baseline, settings)
        for note in notes:
            run.note(note)
        if state.allocation is not None:
            # With a proxy allocation the target runs only its share; the proxy's trials make up the rest.
            return Prepared(target_settings=replace(settings, trials=state.allocation.n_target, max_trials=None))
    return None


@hookimpl
def agentassay_after_trials(run: Run) -> None:
    state: _State | None = run.stash.get(STATE, None)
    if state is None or run.aborted or run.interrupted:
        return
    if run.baseline is not None and state.allocation is None:  # check without a usable plan: target alone
        return
    state.result = proxy = run_proxy(run, state.adapter, run.trials, allocation=state.allocation)
    run.absorb(proxy, "proxy model")


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    state: _State | None = run.stash.get(STATE, None)
    if state is None or state.result is None:
        return None
    return {"proxy": state.result.info}


@hookimpl
def agentassay_scenario_evidence(plan: GatePlan, candidate: Any) -> list[ProxyEvidence] | None:
    if plan.baseline is None:
        return None
    evidence = ProxyEvidence.from_sections(plan.baseline.sections.get("proxy"), candidate.sections.get("proxy"))
    return None if evidence is None else [evidence]


@dataclass(frozen=True)
class ProxySummary:
    """config.proxy as the reports show it. ``ran`` is False when the section holds notes only."""

    ran: bool
    label: str
    trials: int
    usd: float | None
    rho: float | None
    plan: tuple[int, int] | None  # (target, proxy) trials per scenario when the proxy pays
    notes: tuple[str, ...]


def proxy_of(results: Results) -> ProxySummary | None:
    proxy = results.sections.get("proxy")
    if not proxy:
        return None
    alloc = proxy.get("allocation") or {}
    return ProxySummary(
        bool(proxy.get("scenarios") or proxy.get("paired")),
        str(proxy.get("label")),
        proxy_trials(results),
        proxy.get("usd"),
        proxy.get("rho"),
        (alloc["n_target"], alloc["n_proxy"]) if alloc.get("proxy_pays") else None,
        tuple(str(n) for n in proxy.get("notes") or ()),
    )


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section] | None:

    proxy = proxy_of(results)
    if proxy is None:
        return None
    lines = []
    usd = "" if proxy.usd is None else f", {report.usd(proxy.usd)}"
    plan = f"; {proxy.plan[0]} target + {proxy.plan[1]} proxy trials per scenario" if proxy.plan else ""
    if report.format == "markdown":
        if proxy.ran:
            rho = "ρ not estimated" if proxy.rho is None else f"ρ {proxy.rho:.2f} from paired runs"
            lines.append(report.markup(f"**Proxy** {report.escape(proxy.label, 80)}: {proxy.trials} trials{usd}; {rho}{plan}."))
        lines += [report.markup(f"Proxy note: {report.escape(n, 300)}") for n in proxy.notes]
    elif report.format == "html":  # plain strings: the HTML renderer redacts and escapes them
        if proxy.ran:
            rho = "ρ not estimated" if proxy.rho is None else f"ρ {proxy.rho:.2f} from paired runs"
            lines.append(f"Proxy {proxy.label}: {proxy.trials} trials{usd}; {rho}{plan}.")
        lines += [f"Proxy note: {n}" for n in proxy.notes]
    else:
        if proxy.ran:
            rho = "rho not estimated" if proxy.rho is None else f"rho {proxy.rho:.2f} from paired runs"
            lines.append(f"proxy {proxy.label}: {proxy.trials} trials{usd}; {rho}{plan}")
        lines += [f"note: proxy: {n}" for n in proxy.notes]
    extra = () if proxy.usd is None else (("proxy", proxy.usd),)
    return [Section(key=NAME, place="cost", paragraphs=tuple(lines), extra_usd=extra)]


# proxy sections: per-scenario maps are unioned, costs added, notes unioned; every other key is
# suite-wide (model, rho, costs per trial, allocation) and must agree.
_PROXY_MAPS = ("scenarios", "paired")
_PROXY_SUMS = ("usd", "paired_usd")


def merge_proxy(ordered: Sequence[tuple[Results, str]]) -> dict[str, Any] | None:
    """One proxy section; None when no shard has one (a shard interrupted before its proxy phase has none)."""
    present = [(r.sections["proxy"], src) for r, src in ordered if r.sections.get("proxy")]
    if not present:
        return None
    out, src0 = dict(present[0][0]), present[0][1]
    rest = present[1:]
    for proxy, src in rest:
        for key in sorted(set(proxy) | set(out)):
            mine, theirs = out.get(key), proxy.get(key)
            if key in _PROXY_MAPS:
                out[key] = None if mine is None and theirs is None else {**(mine or {}), **(theirs or {})}
            elif key in _PROXY_SUMS:
                out[key] = (
                    None if mine is None and theirs is None else round((mine or 0.0) + (theirs or 0.0), 6)
                )
            elif key == "notes":
                out[key] = list(dict.fromkeys([*(mine or ()), *(theirs or ())]))
            elif mine != theirs:
                raise ResultsError(
                    f"{src}: proxy.{key} is {theirs!r}, but {src0}: {mine!r}. The proxy's plan must be the same in "
                    "every shard (`check` takes it from the baseline); a baseline with a proxy cannot be "
                    "recorded in shards, since rho is measured over the whole suite."
                )
    return out


@hookimpl
def agentassay_merge_sections(
    shards: Sequence[Results], sources: Sequence[str], names: Sequence[str], notes: list[str]
) -> dict[str, Any] | None:
    """``merge``: one proxy section for the whole suite (None when no shard has one)."""
    merged = merge_proxy(list(zip(shards, sources, strict=True)))
    return None if merged is None else {"proxy": merged}
