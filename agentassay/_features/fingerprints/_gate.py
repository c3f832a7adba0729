"""The fingerprint half of the regression gate: how many trials, which trials, at which level.

Alpha split (docs/token-efficiency.md): when the baseline carries fingerprints, each scenario's
pass-rate test runs at half the level it would otherwise get and the fingerprint tests share the
other half, Holm-adjusted across scenarios. A suite is blocked when any test FAILs, so by
Bonferroni the family-wise false-alarm rate stays at most alpha.

Which trials: the first ``n`` trials by index, with ``n`` fixed before the candidate runs (the
adaptive budget, planned from the baseline's own fingerprints). Not "the trials the sequential
pass-rate test happened to use": that number depends on the outcomes, and a sample cut at a
data-dependent point is enriched with whatever made the test stop, which would bias the
comparison. The engine keeps running a scenario until its fingerprint sample is complete.

Two features are left out of the gate's test. Latency measures the CI machine as much as the
agent (a baseline recorded on one runner is compared with a candidate on another). Input tokens
mostly measure the prompt: any edit to the instructions moves them in every scenario at once,
which says nothing about behaviour; the cost report shows that change instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..._gate import ScenarioVerdict, explain_fail
from ..._spec import Settings
from ..._stats import Verdict, adjust_pvalues
from . import fingerprint_test, from_records, plan_budget
from ._records import VERDICT_KEY

if TYPE_CHECKING:
    from . import FeatureShift, FingerprintResult

SHARE = 0.5  # of alpha, for the fingerprint tests
DEFAULT_SAMPLE = 30  # fingerprint sample of a recording run when the suite does not set one
PERMUTATIONS = 2000
MIN_ROWS = 3
EXCLUDED = ("latency_s", "input_tokens")


@dataclass(frozen=True)
class FingerprintPlan:
    """Trials per side for one scenario's fingerprint test, and where the figure came from."""

    trials: int
    alpha: float
    budget: dict[str, Any] | None = None  # the adaptive-budget plan (None: set in the suite)

    def to_dict(self) -> dict[str, Any]:
        return {"trials": self.trials, "alpha": self.alpha, "budget": self.budget}


def recording_sample(settings: Settings, *, full: bool = False) -> int:
    """Trials a ``run`` keeps per scenario for its fingerprint sample (0: fingerprints off).

    With ``full`` every scenario runs to its cap anyway, so the whole run is the sample.
    """
    if not settings.part("fingerprints").enabled:
        return 0
    if full:
        return settings.trial_cap
    return min(settings.part("fingerprints").trials or DEFAULT_SAMPLE, settings.trial_cap)


def plan(baseline: Sequence[dict[str, float]], settings: Settings, *, scenarios: int) -> FingerprintPlan | None:
    """The candidate's fingerprint sample size, or None when there is nothing to compare with."""
    if not settings.part("fingerprints").enabled or len(baseline) < MIN_ROWS:
        return None

    alpha = settings.alpha * SHARE
    if settings.part("fingerprints").trials is not None:
        return FingerprintPlan(min(settings.part("fingerprints").trials, settings.trial_cap), alpha)
    (matrix,) = from_records(_strip(baseline))
    budget = plan_budget(
        matrix,
        alpha=alpha / max(scenarios, 1),  # planned at the Bonferroni level, conservative for Holm
        beta=settings.beta,
        shift=settings.part("fingerprints").shift,
        minimum=MIN_ROWS * 3,
        maximum=settings.trial_cap,
    )
    return FingerprintPlan(budget.trials, alpha, budget.to_dict())


def _strip(rows: Sequence[dict[str, float]]) -> list[dict[str, float]]:
    return [{k: v for k, v in r.items() if k not in EXCLUDED} for r in rows]


def seed_for(settings: Settings, scenario: str) -> int:
    """Permutation seed: fixed by the suite, so ``compare`` re-derives the very p-value ``check`` got."""
    digest = hashlib.blake2b(f"{settings.seed}|fingerprint|{scenario}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def test(
    baseline: Sequence[dict[str, float]],
    candidate: Sequence[dict[str, float]],
    settings: Settings,
    *,
    scenario: str,
) -> FingerprintResult | None:
    """Permutation max-T test of the two samples at alpha * SHARE (Holm across scenarios comes later)."""
    if len(baseline) < MIN_ROWS or len(candidate) < MIN_ROWS:
        return None

    xb, xc = from_records(_strip(baseline), _strip(candidate))
    return fingerprint_test(
        xb,
        xc,
        alpha=settings.alpha * SHARE,
        method="permutation",
        permutations=PERMUTATIONS,
        seed=seed_for(settings, scenario),
    )


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
    tested = {n: float(r.pvalue) for n, (r, _) in fingerprints.items() if r is not None and n in verdicts}
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
            out[name] = replace(v, data={**v.data, VERDICT_KEY: fp}, rate_verdict=v.verdict)
            continue
        q = float(q_of[name])
        shifted = q <= alpha
        ranked = r.ranked()  # the explanation's order: tool use and routing before lengths and tokens
        words = r.attribution(3) if shifted else []
        if shifted and not words and ranked:
            words = [ranked[0].describe()]
        fp |= {
            "verdict": (Verdict.FAIL if shifted else Verdict.PASS).value,
            "pvalue": float(r.pvalue),
            "adjusted_p": q,
            "correction": method or "none",
            "n_baseline": r.n_baseline,
            "n_candidate": r.n_candidate,
            "shift": words,
            "largest": _largest(ranked, shifted),
            "explanation": r.explain(),
            "features": [
                {"name": f.name, "baseline": f.baseline_mean, "candidate": f.candidate_mean, "adjusted_p": f.adjusted_p}
                for f in ranked[:8]
            ],
        }
        verdict, explanation = v.verdict, v.explanation
        if shifted:
            verdict = Verdict.FAIL
            explanation = explain_fail(v, f"Behaviour shifted (p = {q:.3g}): {'; '.join(words)}")
        out[name] = replace(
            v, verdict=verdict, explanation=explanation, data={**v.data, VERDICT_KEY: fp}, rate_verdict=v.verdict
        )
    return out


def _largest(ranked: list[FeatureShift], shifted: bool) -> str | None:
    """The move a report names: the first an explanation names when the test found a shift; else the
    largest bounded effect over every feature (no group comes first when nothing moved significantly)."""
    if not ranked:
        return None
    return (ranked[0] if shifted else max(ranked, key=lambda f: (f.effect, f.standardized))).describe()


@dataclass(frozen=True)
class FingerprintEvidence:
    """The fingerprint shift tests of a ``check`` as gate evidence (a test of its own, half of alpha)."""

    results: dict[str, tuple[FingerprintResult | None, FingerprintPlan]]
    kind: str = "fingerprints"
    stage: str = "test"

    def apply(self, verdicts: dict[str, ScenarioVerdict], settings: Settings) -> dict[str, ScenarioVerdict]:
        return combine_fingerprints(verdicts, settings, self.results) if self.results else verdicts
