"""Violation rates and Prop. 6.1: a relation's violations tested against the baseline's, as a regression.

Each relation yields counts — ``pairs`` and ``violations`` — and nothing else is needed: the rate,
its exact (Clopper-Pearson) 95% interval, and in ``check`` the regression test of the candidate's
*non-violating* pairs against the baseline's with the same exact machinery as a pass rate
(:func:`agentassay._stats.regression_verdict`: one-sided Fisher p-value; FAIL when significant and
non-inferiority within ``delta`` is not shown). A regression is more violations.

A scenario's tested relations are combined by Bonferroni, ``p = min(1, r · min p)``, and the gate
applies Holm across scenarios at ``alpha × SHARE``. Everything here is a function of the results
sections, so ``compare`` and ``merge`` re-derive the same p-values from the files, and
``benchmarks/metamorphic.py`` measures this very function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..._gate import ScenarioTest
from ..._stats import proportion_ci, regression_verdict

if TYPE_CHECKING:
    from ..._gate import ScenarioTest
    from ..._spec import Settings

KIND = "metamorphic"
# Of each scenario's alpha, held by its relations in `check` (fingerprints hold 0.5, contracts 0.15
# where they apply; the pass-rate test keeps the rest). Fixed in advance, so the candidate cannot move it.
SHARE = 0.2
CI_METHOD = "clopper-pearson"
CONFIDENCE = 0.95


def interval(violations: int, pairs: int) -> list[float] | None:
    """The exact two-sided 95% interval of the violation rate (None without pairs)."""
    if pairs <= 0:
        return None

    lo, hi = proportion_ci(violations, pairs, confidence_level=CONFIDENCE, method=CI_METHOD)
    return [float(lo), float(hi)]


@lru_cache(maxsize=8192)
def regression(
    base_pairs: int,
    base_violations: int,
    cand_pairs: int,
    cand_violations: int,
    *,
    level: float,
    beta: float,
    delta: float,
) -> tuple[float, str]:
    """(one-sided p-value, verdict) of "the candidate violates no more often than the baseline".

    The pass-rate regression test on the non-violating pairs; cached, since the exact
    non-inferiority bound costs a tenth of a second and ``compare`` and the report ask again.
    """

    r = regression_verdict(
        base_pairs - base_violations,
        base_pairs,
        cand_pairs - cand_violations,
        cand_pairs,
        alpha=level,
        beta=beta,
        delta=delta,
    )
    return float(r.pvalue), r.verdict.value


def level_of(settings: Settings, relations: int) -> float:
    """What one of a scenario's ``relations`` tested relations is tested at: ``alpha · SHARE / r``."""
    return settings.alpha * SHARE / max(relations, 1)


def bonferroni(pvalues: Sequence[float]) -> float:
    return min(1.0, len(pvalues) * min(pvalues))


def untested_reason(entry: Mapping[str, Any], base: Mapping[str, Any] | None) -> str | None:
    """Why a relation is reported but not tested against the baseline (None: it is tested)."""
    if base is None:
        return "the baseline has no relation of this name (record it again with this suite)"
    for part in ("family", "transform", "check"):
        if base.get(part) != entry.get(part):
            return (
                f"the baseline's relation of this name has another {part} ({_show(base.get(part))}, now "
                f"{_show(entry.get(part))}), so the two are not the same relation"
            )
    if int(base.get("pairs") or 0) <= 0:
        return "the baseline has no pairs of it"
    if int(entry.get("pairs") or 0) <= 0:
        return "no pairs ran"
    return None


def _show(value: Any) -> str:
    if isinstance(value, Mapping) and len(value) == 1:
        ((k, v),) = value.items()
        return f"{k}: {v}"
    return str(value)


def assess(
    entries: Sequence[Mapping[str, Any]], baseline: Mapping[str, Mapping[str, Any]] | None, settings: Settings
) -> list[dict[str, Any]]:
    """Each relation record with its statistics: rate and interval; with a ``baseline`` (its records of
    this scenario by name), the regression test or why there is none."""
    reasons = {str(e["name"]): untested_reason(e, (baseline or {}).get(str(e["name"]))) for e in entries}
    tested = sum(1 for r in reasons.values() if r is None) if baseline is not None else 0
    level = level_of(settings, tested)
    out = []
    for e in entries:
        n, v = int(e.get("pairs") or 0), int(e.get("violations") or 0)
        stats: dict[str, Any] = {"rate": v / n if n else None, "ci": interval(v, n)}
        if baseline is not None:
            reason = reasons[str(e["name"])]
            if reason is not None:
                stats["untested"] = reason
            else:
                b = baseline[str(e["name"])]
                bn, bv = int(b["pairs"]), int(b["violations"])
                p, verdict = regression(bn, bv, n, v, level=level, beta=settings.beta, delta=settings.margin)
                stats |= {
                    "baseline": {"pairs": bn, "violations": bv},
                    "test": "regression",
                    "level": level,
                    "pvalue": p,
                    "verdict": verdict,
                }
        out.append({**e, **stats})
    return out


def by_name(section: Mapping[str, Any] | None, scenario: str) -> dict[str, Mapping[str, Any]] | None:
    """A section's relation records of one scenario, by name (None when the section has none)."""
    if not section:
        return None
    entries = ((section.get("scenarios") or {}).get(scenario) or {}).get("relations") or []
    return {str(e["name"]): e for e in entries}


def _pct(x: float) -> str:
    return f"{x:.0%}"


def words(entry: Mapping[str, Any]) -> str:
    """A violated relation in one sentence, for the verdict's explanation and the PR comment."""
    n, v = int(entry.get("pairs") or 0), int(entry.get("violations") or 0)
    text = f"relation '{entry['name']}' violated in {v}/{n} pairs ({_pct(v / n) if n else '—'})"
    base = entry.get("baseline")
    if base:
        bn, bv = int(base["pairs"]), int(base["violations"])
        text += f" against {bv}/{bn} ({_pct(bv / bn) if bn else '—'}) in the baseline"
    examples = entry.get("examples") or []
    if examples:
        text += f"; e.g. {examples[0]['reason']}"
    return text


def scenario_test(
    base: Mapping[str, Any] | None,
    candidate: Mapping[str, Any] | None,
    settings: Settings,
    gated: Callable[[str], bool] = lambda name: True,
) -> ScenarioTest | None:
    """The gate's evidence from two ``metamorphic`` sections: one p-value per scenario ``gated`` (its share
    was reserved in the plan), Bonferroni over its tested relations; None when nothing is tested."""

    if not base or not candidate:
        return None
    pvalues: dict[str, float] = {}
    details: dict[str, dict[str, Any]] = {}
    describe: dict[str, str] = {}
    for name, s in (candidate.get("scenarios") or {}).items():
        raw = s.get("relations") or []
        if not raw or not gated(name):
            continue
        entries = [e for e in assess(raw, by_name(base, name) or {}, settings) if "pvalue" in e]
        if not entries:
            continue
        pvalues[name] = bonferroni([e["pvalue"] for e in entries])
        describe[name] = words(min(entries, key=lambda e: e["pvalue"]))
        details[name] = {
            "relations": {
                e["name"]: {
                    "pvalue": e["pvalue"],
                    "pairs": e["pairs"],
                    "violations": e["violations"],
                    "baseline": e["baseline"],
                    "verdict": e["verdict"],
                }
                for e in entries
            },
            "bonferroni": len(entries),
        }
    if not pvalues:
        return None
    return ScenarioTest(KIND, SHARE, pvalues, details=details, describe=describe)
