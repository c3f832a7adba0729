"""Which test each scenario gets, at which level, and how scenario verdicts become one decision.

Two claims, two levels (docs/statistics.md). A suite is blocked when *any* scenario FAILs, so
FAIL errors add up across scenarios: sequential tests (and fixed-n threshold tests, which report
no p-value) FAIL each scenario at ``alpha / m`` (Bonferroni), less the share other evidence
(fingerprints, a plugin's test) holds; fixed-n regression tests report p-values, so their FAILs
are re-decided with Holm's step-down. A suite deploys only when *every* scenario PASSes, an
intersection-union test: each regression test PASSes at the suite's ``alpha``, uncorrected and
undivided (other evidence can only turn a verdict into FAIL, so it takes nothing from PASS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..spec import Scenario, Settings
from ..stats import Decision, Verdict, adjust_pvalues, deployment_decision, suite_verdict, warm_start
from ._evidence import STAGES, Evidence
from ._fingerprints import MIN_ROWS, SHARE, FingerprintPlan
from ._monitors import (
    Monitor,
    RegressionFixed,
    RegressionSequential,
    ScenarioVerdict,
    ThresholdFixed,
    ThresholdSPRT,
)
from ._proxy import ProxyEvidence

if TYPE_CHECKING:
    from ..features.fingerprints import FingerprintResult


@dataclass(frozen=True)
class BaselineCounts:
    passes: int
    trials: int


def scenario_alpha(
    settings: Settings, scenarios: int, *, holm_later: bool, fingerprints: bool = False, share: float = 0.0
) -> float:
    """Level of one scenario's pass-rate test: alpha less the ``share`` its other tests hold (the
    fingerprint test's half, ``fingerprints=True``, when ``share`` is not given), / m by Bonferroni."""
    taken = share or (SHARE if fingerprints else 0.0)
    alpha = settings.alpha * (1 - taken) if taken else settings.alpha
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
    fingerprints: bool = False,
    prior: BaselineCounts | None = None,
    share: float = 0.0,
) -> Monitor:
    """The test for one scenario: threshold (``run``) or regression against ``baseline`` (``check``).

    ``share``: the part of this scenario's alpha its other tests hold (``GatePlan.taken``);
    ``fingerprints=True`` is the fingerprint test's share. ``prior``: recorded trials that
    warm-start a threshold SPRT (``settings.warm_start``; any version, see stats.warm_start).
    """
    taken = share or (SHARE if fingerprints else 0.0)
    cap = settings.trial_cap
    sequential = settings.method == "sprt"
    if regression and baseline is not None and baseline.trials > 0:
        if sequential:
            return RegressionSequential(
                cap,
                base_passes=baseline.passes,
                base_trials=baseline.trials,
                alpha=scenario_alpha(settings, scenarios, holm_later=False, share=taken),
                delta=settings.margin,
                pass_alpha=settings.alpha,
            )
        return RegressionFixed(
            cap,
            base_passes=baseline.passes,
            base_trials=baseline.trials,
            alpha=scenario_alpha(settings, scenarios, holm_later=True, share=taken),
            beta=settings.beta,
            delta=settings.margin,
            pass_alpha=settings.alpha,
        )
    notes: tuple[str, ...] = ()
    if regression:
        notes = ("the baseline has no trials of this scenario, so it was tested against the threshold only",)
    threshold = scenario.threshold if scenario.threshold is not None else settings.threshold
    alpha = scenario_alpha(settings, scenarios, holm_later=False, share=taken)
    if sequential:
        warm = None
        if settings.part("warm_start").enabled and prior is not None and prior.trials > 0:
            warm = warm_start(
                prior.passes, prior.trials, threshold=threshold, delta=settings.delta, alpha=alpha,
                beta=settings.beta, max_trials=cap, inflation=settings.part("warm_start").inflation,
            )
        return ThresholdSPRT(
            cap, notes, threshold=threshold, delta=settings.delta, alpha=alpha, beta=settings.beta, warm=warm
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
    from ..stats import sample_size_one_sample, sample_size_two_sample

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


def coverage_gate(
    decision: SuiteDecision, overall: float | None, minimum: float | None
) -> tuple[SuiteDecision, str | None]:
    """Paper Eq. 26: a deploy whose overall coverage is below ``minimum`` becomes manual review.

    Coverage never turns a block into anything else, and never blocks: too little coverage means
    the evidence is thin, not that the agent got worse.
    """
    if minimum is None or overall is None or decision.decision is not Decision.DEPLOY or overall >= minimum:
        return decision, None
    note = (
        f"coverage gate (config.coverage.min = {minimum:g}): overall coverage {overall:.3f} is below the minimum, "
        "so a PASS needs manual review (paper Eq. 26)"
    )
    return replace(decision, decision=Decision.MANUAL), note


def holm_adjust(verdicts: dict[str, ScenarioVerdict], settings: Settings) -> dict[str, ScenarioVerdict]:
    """Holm across the fixed-n regression FAILs (the only verdicts that carry p-values).

    The level is what the pass-rate tests hold, not the suite's alpha: ``alpha x (1 - shares)`` when
    other tests (fingerprints, a plugin's) took part of it, times ``k / m`` when only ``k`` of the
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


def combine_fingerprints(
    verdicts: dict[str, ScenarioVerdict],
    settings: Settings,
    fingerprints: dict[str, tuple[FingerprintResult | None, FingerprintPlan]],
) -> dict[str, ScenarioVerdict]:
    """Fold each scenario's fingerprint test into its verdict (FAIL if either test FAILs).

    The fingerprint p-values are adjusted across scenarios (Holm by default) and compared with
    ``alpha * SHARE``; a PASS needs the pass-rate PASS and no behaviour shift.
    """
    alpha = settings.alpha * SHARE
    tested = {n: float(r.p_value) for n, (r, _) in fingerprints.items() if r is not None and n in verdicts}
    raw = list(tested.values())
    method = settings.correction if settings.correction in ("holm", "bonferroni") and len(raw) > 1 else None
    q_of = dict(zip(tested, adjust_pvalues(raw, method=method) if method else raw, strict=True))
    out = dict(verdicts)
    for name, (r, plan_) in fingerprints.items():
        v = verdicts.get(name)
        if v is None:
            continue
        fp: dict[str, Any] = {"plan": plan_.to_dict(), "alpha": alpha}
        if r is None:
            fp |= {"verdict": None, "explanation": f"not tested: fewer than {MIN_ROWS} fingerprinted trials on a side"}
            out[name] = replace(v, fingerprint=fp, rate_verdict=v.verdict)
            continue
        q = float(q_of[name])
        shifted = q <= alpha
        words = r.attribution(3) if shifted else []
        if shifted and not words and r.shifts:
            words = [r.shifts[0].describe()]
        fp |= {
            "verdict": (Verdict.FAIL if shifted else Verdict.PASS).value,
            "p_value": float(r.p_value),
            "adjusted_p": q,
            "correction": method or "none",
            "n_baseline": r.n_baseline,
            "n_candidate": r.n_candidate,
            "shift": words,
            "largest": r.shifts[0].describe() if r.shifts else None,
            "explanation": r.explain(),
            "features": [
                {"name": f.name, "baseline": f.baseline_mean, "candidate": f.candidate_mean, "adjusted_p": f.adjusted_p}
                for f in r.shifts[:8]
            ],
        }
        verdict, explanation = v.verdict, v.explanation
        if shifted:
            verdict = Verdict.FAIL
            explanation = f"FAIL: behaviour shifted ({'; '.join(words)}; p = {q:.3g}). Pass rate: {v.explanation}"
        out[name] = replace(v, verdict=verdict, explanation=explanation, fingerprint=fp, rate_verdict=v.verdict)
    return out


@dataclass(frozen=True)
class FingerprintEvidence:
    """The fingerprint shift tests of a ``check`` as gate evidence (a test of its own, half of alpha)."""

    results: dict[str, tuple[FingerprintResult | None, FingerprintPlan]]
    kind: str = "fingerprints"
    stage: str = "test"

    def apply(self, verdicts: dict[str, ScenarioVerdict], settings: Settings) -> dict[str, ScenarioVerdict]:
        return combine_fingerprints(verdicts, settings, self.results) if self.results else verdicts


def decide(
    verdicts: dict[str, ScenarioVerdict],
    settings: Settings,
    fingerprints: dict[str, tuple[FingerprintResult | None, FingerprintPlan]] | None = None,
    proxy: ProxyEvidence | None = None,
    *,
    evidence: Sequence[Evidence] = (),
) -> tuple[dict[str, ScenarioVerdict], SuiteDecision]:
    """Every verdict from every kind of evidence, in one place (gate/_evidence.py).

    ``"rate"`` evidence first (the proxy's p-values combined with the pass-rate test's), then Holm
    across the fixed-n regression p-values, then each ``"test"`` kind (the fingerprint tests, then
    the others in the order given). ``fingerprints`` and ``proxy`` are the built-in kinds passed directly.
    """
    kinds: list[Evidence] = list(evidence)
    if proxy is not None:
        kinds.insert(0, proxy)
    if fingerprints:
        kinds.insert(0, FingerprintEvidence(fingerprints))
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
