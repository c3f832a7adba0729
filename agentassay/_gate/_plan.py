"""Which test each scenario gets, at which level, and how scenario verdicts become one decision.

Two claims, two levels (docs/statistics.md). A suite is blocked when *any* scenario FAILs, so
FAIL errors add up across scenarios: sequential tests (and fixed-n threshold tests, which report
no p-value) FAIL each scenario at ``alpha / m`` (Bonferroni), less the share other evidence
(a plugin's test, ``GatePlan.share``) holds; fixed-n regression tests report p-values, so their FAILs
are re-decided with Holm's step-down. A suite deploys only when *every* scenario PASSes, an
intersection-union test: each regression test PASSes at the suite's ``alpha``, uncorrected and
undivided (other evidence can only turn a verdict into FAIL, so it takes nothing from PASS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._spec import Scenario, Settings
from .._stats import (
    Decision,
    Verdict,
    adjust_pvalues,
    deployment_decision,
    sample_size_one_sample,
    sample_size_two_sample,
    suite_verdict,
)
from ._evidence import STAGES, Evidence
from ._monitors import (
    Monitor,
    Prior,
    RegressionFixed,
    RegressionSequential,
    ScenarioVerdict,
    ThresholdFixed,
    ThresholdSPRT,
)


@dataclass(frozen=True)
class BaselineCounts:
    passes: int
    trials: int


def scenario_alpha(settings: Settings, scenarios: int, *, holm_later: bool, share: float = 0.0) -> float:
    """Level of one scenario's pass-rate test: alpha less the ``share`` its other tests hold
    (``GatePlan.taken``), / m by Bonferroni."""
    alpha = settings.alpha * (1 - share) if share else settings.alpha
    if settings.correction == "none" or scenarios <= 1 or (holm_later and settings.correction == "holm"):
        return alpha
    return alpha / scenarios


def monitor_for(
    scenario: Scenario,
    settings: Settings,
    *,
    scenarios: int,
    baseline: BaselineCounts | None = None,
    regression: bool = False,
    prior: Prior | None = None,
    share: float = 0.0,
) -> Monitor:
    """The test for one scenario: threshold (``run``) or regression against ``baseline`` (``check``).

    ``share``: the part of this scenario's alpha its other tests hold (``GatePlan.taken``).
    ``prior``: what a plugin knew before the first trial; it may recalibrate a threshold SPRT
    (:class:`Prior`), at the level this function gives the scenario.
    """
    cap = settings.trial_cap
    sequential = settings.method == "sprt"
    if regression and baseline is not None and baseline.trials > 0:
        if sequential:
            return RegressionSequential(
                cap,
                base_passes=baseline.passes,
                base_trials=baseline.trials,
                alpha=scenario_alpha(settings, scenarios, holm_later=False, share=share),
                delta=settings.margin,
                pass_alpha=settings.alpha,
            )
        return RegressionFixed(
            cap,
            base_passes=baseline.passes,
            base_trials=baseline.trials,
            alpha=scenario_alpha(settings, scenarios, holm_later=True, share=share),
            beta=settings.beta,
            delta=settings.margin,
            pass_alpha=settings.alpha,
        )
    notes: tuple[str, ...] = ()
    if regression:
        notes = ("the baseline has no trials of this scenario, so it was tested against the threshold only",)
    threshold = scenario.threshold if scenario.threshold is not None else settings.threshold
    alpha = scenario_alpha(settings, scenarios, holm_later=False, share=share)
    if sequential:
        start = prior.start(settings, threshold=threshold, alpha=alpha) if prior is not None else None
        return ThresholdSPRT(
            cap, notes, threshold=threshold, delta=settings.delta, alpha=alpha, beta=settings.beta, start=start
        )
    return ThresholdFixed(cap, notes, threshold=threshold, alpha=alpha)


def fixed_n_equivalent(
    scenario: Scenario,
    settings: Settings,
    *,
    scenarios: int,
    baseline: BaselineCounts | None = None,
    regression: bool = False,
) -> int | None:
    """Trials a fixed-n design with the same alpha and beta would use, for the savings figure.

    Threshold tests: the exact one-sample binomial test of ``threshold`` against ``threshold -
    delta``. Regression: paper Eq. 6 per arm at the baseline's observed rate (kept inside
    ``[delta + 0.01, 0.99]`` so that a perfect baseline still gives a finite figure).
    """

    alpha = scenario_alpha(settings, scenarios, holm_later=False)
    try:
        if regression and baseline is not None and baseline.trials > 0:
            rate = min(max(baseline.passes / baseline.trials, settings.margin + 0.01), 0.99)
            return sample_size_two_sample(rate, settings.margin, alpha=alpha, beta=settings.beta)
        threshold = scenario.threshold if scenario.threshold is not None else settings.threshold
        return sample_size_one_sample(threshold, settings.delta, alpha=alpha, beta=settings.beta)
    except ValueError:
        return None


@dataclass(frozen=True)
class SuiteDecision:
    verdict: Verdict
    decision: Decision
    counts: dict[str, int]
    correction: str

    @property
    def exit_code(self) -> int:
        return self.decision.exit_code

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "decision": self.decision.value,
            "exit_code": self.exit_code,
            "counts": dict(self.counts),
            "correction": self.correction,
        }


def holm_adjust(verdicts: dict[str, ScenarioVerdict], settings: Settings) -> dict[str, ScenarioVerdict]:
    """Holm across the fixed-n regression FAILs (the only verdicts that carry p-values).

    The level is what the pass-rate tests hold, not the suite's alpha: ``alpha x (1 - shares)`` when
    other tests (the plugins') took part of it, times ``k / m`` when only ``k`` of the
    ``m`` scenarios carry p-values (the others are tested at ``alpha / m`` each), so that by
    Bonferroni across kinds the suite's false-alarm rate stays at most alpha.
    """
    names = [n for n, v in verdicts.items() if v.test == "regression" and v.pvalue is not None]
    if settings.correction != "holm" or len(verdicts) <= 1 or not names:
        return verdicts
    adjusted = adjust_pvalues([float(verdicts[n].pvalue or 1.0) for n in names], method="holm")
    rate_alpha = min(float(verdicts[n].evidence.get("alpha", settings.alpha)) for n in names)
    level = rate_alpha * len(names) / len(verdicts)
    out = dict(verdicts)
    for name, q in zip(names, adjusted, strict=True):
        v = verdicts[name]
        note = f"Holm-adjusted p = {q:.3g} over {len(names)} scenarios"
        if v.verdict is Verdict.FAIL and q > level:
            v = replace(
                v,
                verdict=Verdict.INCONCLUSIVE,
                explanation=v.explanation.replace("FAIL", "INCONCLUSIVE", 1) + f" Not significant after Holm (p = {q:.3g}).",
            )
        out[name] = replace(v, notes=(*v.notes, note))
    return out


def decide(
    verdicts: dict[str, ScenarioVerdict],
    settings: Settings,
    *,
    evidence: Sequence[Evidence] = (),
) -> tuple[dict[str, ScenarioVerdict], SuiteDecision]:
    """Every verdict from every kind of evidence, in one place (_gate/_evidence.py).

    ``"rate"`` evidence first (p-values combined with the pass-rate test's), then Holm across the
    fixed-n regression p-values, then each ``"test"`` kind, each in the order given.
    """
    kinds: list[Evidence] = list(evidence)
    unknown = [e.kind for e in kinds if e.stage not in STAGES]
    if unknown:
        raise ValueError(f"evidence {unknown} has a stage other than {' or '.join(STAGES)}")
    final = verdicts
    for e in kinds:
        if e.stage == "rate":
            final = e.apply(final, settings)
    final = holm_adjust(final, settings)
    for e in kinds:
        if e.stage == "test":
            final = e.apply(final, settings)
    counts = {v.value: 0 for v in Verdict}
    for v in final.values():
        counts[v.verdict.value] += 1
    overall = suite_verdict([v.verdict for v in final.values()]) if final else Verdict.INCONCLUSIVE
    return final, SuiteDecision(overall, deployment_decision(overall), counts, settings.correction)
