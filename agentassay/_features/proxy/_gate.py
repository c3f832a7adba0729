"""The proxy half of ``check`` (multi-fidelity, paper Def. 7.7 / Prop. 7.4; docs/multifidelity.md).

A scenario's fixed-n regression test on the target model gives p_e ("no regression" against the
baseline's target trials); the same test on separate proxy trials against the baseline's proxy
trials gives p_c. Weighted Stouffer (weights sqrt(n_e), |rho| sqrt(n_c)) merges them into the
scenario's p-value, which then goes through Holm like any fixed-n regression p-value.

Why this is valid whatever rho is: under "nothing changed" both p-values are super-uniform and
independent (separate seeds on separate models), and the weights are fixed by the baseline before
the candidate runs. rho only decides how much the proxy is worth (power and the allocation).
PASS still needs the target's own non-inferiority test: the proxy may show a regression, never
prove its absence, because a change the proxy model does not reproduce is invisible to it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..._gate import ScenarioVerdict
from ..._spec import Settings
from ..._stats import ProxyAllocation, Verdict, combine_proxy, proxy_allocation, regression_verdict


@dataclass(frozen=True)
class ProxyEvidence:
    """What the gate needs of the proxy: rho (fixed by the baseline) and per-scenario counts.

    ``counts[name] = (base_passes, base_trials, cand_passes, cand_trials)`` on the proxy model.
    """

    rho: float
    counts: dict[str, tuple[int, int, int, int]]
    kind: str = "proxy"
    stage: str = "rate"  # combined into the pass-rate p-value before Holm (_gate/_evidence.py)

    def apply(self, verdicts: dict[str, ScenarioVerdict], settings: Settings) -> dict[str, ScenarioVerdict]:
        return combine(verdicts, settings, self)

    @classmethod
    def from_sections(cls, base: dict[str, Any] | None, cand: dict[str, Any] | None) -> ProxyEvidence | None:
        """From the ``proxy`` sections of the baseline's and the candidate's results (None if either lacks it)."""
        if not base or not cand or base.get("rho") is None:
            return None
        b, c = base.get("scenarios") or {}, cand.get("scenarios") or {}
        counts = {
            n: (int(b[n]["passes"]), int(b[n]["trials"]), int(c[n]["passes"]), int(c[n]["trials"]))
            for n in c
            if n in b
        }
        return cls(float(base["rho"]), counts) if counts else None


def allocation(
    rho: float | None, cost_target: float | None, cost_proxy: float | None, settings: Settings
) -> ProxyAllocation | None:
    """Per-scenario (target, proxy) trials for a fixed-n regression of ``settings.trials`` per side.

    None when it cannot be planned (no rho, an unpriced model); the caller says why in a note.
    """
    if rho is None or not cost_target or not cost_proxy or cost_target <= 0 or cost_proxy <= 0:
        return None
    return proxy_allocation(
        rho,
        cost_target=cost_target,
        cost_proxy=cost_proxy,
        trials_single=settings.trials,
        min_target=settings.part("proxy").min_target,
    )


def combine(
    verdicts: dict[str, ScenarioVerdict], settings: Settings, evidence: ProxyEvidence
) -> dict[str, ScenarioVerdict]:
    """Replace each fixed-n regression p-value by its combination with the proxy's (before Holm)."""
    out = dict(verdicts)
    for name, (bp, bn, cp, cn) in evidence.counts.items():
        v = verdicts.get(name)
        if v is None or v.test != "regression" or v.pvalue is None or bn <= 0 or cn <= 0:
            continue
        alpha = float(v.evidence.get("alpha", settings.alpha))
        proxy = regression_verdict(bp, bn, cp, cn, alpha=alpha, beta=settings.beta, delta=settings.margin)
        c = combine_proxy(float(v.pvalue), proxy.pvalue, rho=evidence.rho, n_target=v.trials_used, n_proxy=cn)
        p = float(c.pvalue)
        if v.verdict is Verdict.PASS:  # the target's own non-inferiority test; the proxy cannot veto it
            verdict, why = Verdict.PASS, v.explanation
        elif p <= alpha:
            verdict = Verdict.FAIL
            why = f"FAIL: regression shown by target and proxy together ({c.explain()}, alpha = {alpha:.3g})."
        else:
            verdict = Verdict.INCONCLUSIVE
            why = (
                f"INCONCLUSIVE: no regression shown by target and proxy together ({c.explain()}), and the "
                f"target's {v.trials_used} trials do not show non-inferiority."
            )
        info: dict[str, Any] = {
            "p_target": float(v.pvalue),
            "p_proxy": proxy.pvalue,
            "p_combined": p,
            "rho": evidence.rho,
            "proxy_base": [bp, bn],
            "proxy_cand": [cp, cn],
            "effective_trials": c.effective_trials,
            "explanation": c.explain(),
        }
        out[name] = replace(v, verdict=verdict, explanation=why, pvalue=p, evidence={**v.evidence, "proxy": info})
    return out
