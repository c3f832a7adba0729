"""What a check will use, before it runs: candidate trials per scenario from the gate's own tests, and USD.

For each scenario the gate builds the test ``check`` would run (``monitor_for``, at the levels the plan leaves
it) and the distribution of the number of candidate trials it stops after is computed exactly, by dynamic
programming over the candidate's pass count with the test's own stopping rule (``SequentialDesign.decide``,
``SPRTDesign``); a fixed-n test always uses its cap. No simulation: the figures are reproducible to the bit.

The candidate is assumed unchanged: its pass rate is drawn from what the baseline says of it, the Jeffreys
posterior Beta(x + 1/2, n - x + 1/2) of the baseline's x passes in n trials (``RATE_POINTS`` equal-weight
quantiles), rather than fixed at x / n, so that a perfect baseline (30/30) does not claim a certainty it
lacks. A regressed candidate usually stops sooner (its FAIL comes early); one near the margin may run longer.
Without a baseline, every scenario is taken at its threshold with a baseline of ``record_cap`` trials at that
rate: a rougher estimate, and no USD (no tokens were measured yet).

USD: the baseline's mean input and output tokens per trial, priced by ``config.prices`` or the table
(``_runner/_cost.py``); the offline simulator costs $0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy.stats import beta as beta_dist

from ..._gate import BaselineCounts, RegressionSequential, ThresholdSPRT, monitor_for
from ..._runner._cost import OFFLINE, price_source, usd_for
from ..._spec import Scenario, Settings

RATE_POINTS = 41  # quantiles of the rate's posterior averaged over (odd: the median is one)
QUANTILE = 0.95


@dataclass(frozen=True)
class ScenarioPlan:
    """One scenario's estimate: candidate trials (expected, 95th percentile, cap) and their USD."""

    name: str
    test: str
    rate: float  # the pass rate assumed (the baseline's observed rate, or the threshold)
    baseline: str | None  # "x/n" of the baseline, or None
    expected: float
    p95: int
    cap: int
    usd_per_trial: float | None = None

    def to_dict(self) -> dict[str, Any]:
        per = self.usd_per_trial
        return {
            "test": self.test,
            "rate": round(self.rate, 6),
            "baseline": self.baseline,
            "expected_trials": round(self.expected, 3),
            "p95_trials": self.p95,
            "cap": self.cap,
            "usd_per_trial": None if per is None else round(per, 8),
            "usd_expected": None if per is None else round(per * self.expected, 8),
            "usd_p95": None if per is None else round(per * self.p95, 8),
        }


@dataclass(frozen=True)
class Plan:
    """The whole suite's estimate (``agentassay plan``; the ``plan`` section of a check's results)."""

    basis: str  # "baseline" | "threshold"
    scenarios: tuple[ScenarioPlan, ...]
    model: str | None = None
    provider: str | None = None
    prices: str | None = None  # where the price came from ("genai-prices 0.2.3", "config.prices", …)
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def priced(self) -> bool:
        return bool(self.scenarios) and all(s.usd_per_trial is not None for s in self.scenarios)

    def totals(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "expected_trials": round(sum(s.expected for s in self.scenarios), 3),
            "p95_trials": sum(s.p95 for s in self.scenarios),
            "cap": sum(s.cap for s in self.scenarios),
            "usd_expected": None,
            "usd_p95": None,
        }
        if self.priced:
            out["usd_expected"] = round(sum(s.expected * (s.usd_per_trial or 0.0) for s in self.scenarios), 8)
            out["usd_p95"] = round(sum(s.p95 * (s.usd_per_trial or 0.0) for s in self.scenarios), 8)
        return out

    def summary(self) -> str:
        """One line: the totals a check is about to spend (printed before its first trial)."""
        t = self.totals()
        line = (
            f"{t['expected_trials']:,.0f} candidate trials expected, {t['p95_trials']:,} at the 95th percentile "
            f"(cap {t['cap']:,})"
        )
        if t["usd_expected"] is not None:
            where = f" ({self.prices}{f' for {self.model}' if self.model else ''})" if self.prices else ""
            line += f"; ${t['usd_expected']:.4f} expected, ${t['usd_p95']:.4f} at the 95th percentile{where}"
        else:
            line += "; USD unknown (no price for the model, or no tokens in the baseline: see the results' notes)"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": "exact",
            "quantile": QUANTILE,
            "basis": self.basis,
            "model": self.model,
            "provider": self.provider,
            "prices": self.prices,
            "scenarios": {s.name: s.to_dict() for s in self.scenarios},
            "total": self.totals(),
            "notes": list(self.notes),
        }


def summarise(dist: np.ndarray, floor: int = 0) -> tuple[float, int]:
    """Expected value and 95th percentile of a stopping-trial distribution (P(N = k), k = 1..len), with
    ``floor`` trials run whatever the test decided (samples fixed in advance, ``GatePlan.require``)."""
    k = np.maximum(np.arange(1, len(dist) + 1), floor)
    total = float(dist.sum()) or 1.0
    expected = float(np.dot(k, dist) / total)
    order = np.argsort(k, kind="stable")
    cdf = np.cumsum(dist[order]) / total
    p95 = int(k[order][min(int(np.searchsorted(cdf, QUANTILE - 1e-12)), len(dist) - 1)])
    return expected, p95


def rate_points(passes: int, trials: int) -> np.ndarray:
    """Equal-weight quantiles of the Jeffreys posterior of a pass rate seen as ``passes`` of ``trials``."""
    u = (np.arange(RATE_POINTS) + 0.5) / RATE_POINTS
    return np.clip(beta_dist.ppf(u, passes + 0.5, trials - passes + 0.5), 0.0, 1.0)


def stopping_distribution(monitor: Any, rates: np.ndarray, base_passes: int, cap: int) -> np.ndarray:
    """P(N = k), k = 1..cap, averaged over ``rates``: the candidate trials the gate's test uses."""
    if isinstance(monitor, RegressionSequential):
        return np.asarray(monitor.test.design.trials_given_baseline(base_passes, rates)).mean(axis=0)
    if isinstance(monitor, ThresholdSPRT):
        rows = [monitor.test.design.operating_characteristic(float(p)).trials_distribution for p in rates]
        dist = np.zeros(cap)
        for row in rows:
            dist[: len(row)] += np.asarray(row[:cap]) / len(rows)
        return dist
    dist = np.zeros(cap)  # a fixed-n test: always its cap
    dist[-1] = 1.0
    return dist


def scenario_plan(
    scenario: Scenario,
    settings: Settings,
    *,
    scenarios: int,
    baseline: BaselineCounts | None,
    share: float = 0.0,
    min_trials: int = 0,
    assumed: bool = False,
) -> ScenarioPlan:
    """One scenario's estimate against ``baseline``. None: tested against its threshold, as a check does for a
    scenario its baseline lacks; or, ``assumed``, against a baseline of ``record_cap`` trials at the threshold
    (no baseline recorded yet)."""
    threshold = scenario.threshold if scenario.threshold is not None else settings.threshold
    cap = settings.trial_cap
    counts: BaselineCounts | None = None
    rates, rate, shown = np.array([threshold]), threshold, None
    if baseline is not None and baseline.trials > 0:
        counts, rates = baseline, rate_points(baseline.passes, baseline.trials)
        rate, shown = baseline.passes / baseline.trials, f"{baseline.passes}/{baseline.trials}"
    elif assumed:
        counts = BaselineCounts(round(threshold * settings.record_cap), settings.record_cap)
    monitor = monitor_for(scenario, settings, scenarios=scenarios, baseline=counts, regression=True, share=share)
    test = {RegressionSequential: "sequential-regression", ThresholdSPRT: "sprt"}.get(type(monitor), "fixed-n")
    passes = counts.passes if counts is not None else 0
    expected, p95 = summarise(stopping_distribution(monitor, rates, passes, cap), min(min_trials, cap))
    return ScenarioPlan(scenario.name, test, rate, shown, expected, p95, cap)


def _tokens(trials: Sequence[Any]) -> tuple[float, float] | None:
    if not trials:
        return None
    return (
        sum(t.input_tokens for t in trials) / len(trials),
        sum(t.output_tokens for t in trials) / len(trials),
    )


def estimate(
    scenarios: Sequence[Scenario],
    settings: Settings,
    *,
    baseline: Any = None,
    model: Mapping[str, Any] | None = None,
    shares: Mapping[str, float] | None = None,
    min_trials: Mapping[str, int] | None = None,
    m: int | None = None,
) -> Plan:
    """The estimate for ``scenarios`` (``m``: the whole suite's count, for the levels) against ``baseline``
    (a Results, or None); ``model``: ``{provider, name}`` that prices the baseline's tokens."""
    m = m if m is not None else len(scenarios)
    counts = baseline.baseline_counts() if baseline is not None else {}
    provider = (model or {}).get("provider")
    name = (model or {}).get("name")
    source = price_source(name, provider, settings.prices)
    notes: list[str] = []
    plans = []
    for sc in scenarios:
        p = scenario_plan(
            sc, settings, scenarios=m, baseline=counts.get(sc.name),
            share=(shares or {}).get(sc.name, 0.0), min_trials=(min_trials or {}).get(sc.name, 0),
            assumed=baseline is None,
        )
        recorded = baseline.scenario(sc.name) if baseline is not None else None
        tokens = _tokens(recorded.trials) if recorded is not None else None
        per = None
        if tokens is not None:
            per = usd_for(tokens[0], tokens[1], name, settings.prices, provider)
            if per is None:
                per = recorded.usd_per_trial()  # the price the baseline's own run found
        plans.append(replace(p, usd_per_trial=per))
    if baseline is None:
        notes.append(
            "no baseline: every scenario is taken at its threshold, against a baseline of "
            f"{settings.record_cap} trials at that rate (a rougher estimate; no tokens measured, so no USD). "
            f"Recording the baseline (`agentassay run SUITE --full`) runs {settings.record_cap} trials per scenario."
        )
    elif any(s.name not in counts or counts[s.name].trials == 0 for s in scenarios):
        missing = [s.name for s in scenarios if s.name not in counts or counts[s.name].trials == 0]
        notes.append(f"not in the baseline, estimated at the threshold: {', '.join(missing)}")
    if source is not None and source.kind == OFFLINE:
        notes.append("the offline simulator makes no paid calls: $0")
    elif baseline is not None and not all(p.usd_per_trial is not None for p in plans):
        what = f"model '{name}'" if name else "the agent's model (the suite names none)"
        notes.append(
            f"no USD: {what} has no price in config.prices or the price table; add it to config.prices "
            "(USD per million input and output tokens; docs/prices.md)"
        )
    if settings.concurrency > 1:
        notes.append(
            f"trials in flight when a scenario's test decides also finish and are paid for: up to "
            f"{settings.concurrency - 1} more per scenario (config.concurrency)"
        )
    label = source.label if source is not None else None
    return Plan("baseline" if baseline is not None else "threshold", tuple(plans), name, provider, label, tuple(notes))
