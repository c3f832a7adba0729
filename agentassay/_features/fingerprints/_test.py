"""Did the agent's behaviour shift? A two-sample test on fingerprints, with attribution.

The default is a permutation test on a max-type statistic: for every feature a Welch-like
standardised mean difference, and the largest of them as the test statistic. Under H0 (baseline and
candidate traces come from one distribution) the pooled rows are exchangeable, so the permutation
p-value ``(count + 1) / (B + 1)`` is valid at every sample size, whatever the features look like —
constant, sum-to-one, integer, skewed. The paper's Hotelling T² (Thm. 7.1) assumes multivariate
normality, which these features violate; ERRATA.md records it running far from its nominal level.
It is kept as ``method="hotelling"`` for comparison, and ``docs/fingerprints.md`` reports its
measured false-alarm rate next to the permutation test's.

The max-T permutation distribution also yields single-step adjusted p-values per feature
(Westfall & Young), which control the family-wise error over features: a feature named in
``explain()`` is one the data singles out, not a multiple-comparisons accident.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..._stats import adjust_pvalues
from ..._stats._validation import check_choice, check_count, check_open_unit
from ..._stats._verdict import Verdict
from ._extract import COST, OUTPUT, FingerprintMatrix

METHODS = ("permutation", "hotelling")
# Share of the pooled variance added to each feature's Welch variance: stops a feature that is
# constant within both groups (but differs between them) from producing an infinite statistic,
# and damps rare-event features whose within-group variance is often zero at small n.
_VAR_FLOOR = 0.05
# Permutation statistics within this relative distance of the observed one count as ties:
# the same value summed in a different order must not turn a tie into a strict exceedance.
_TIE_RTOL = 1e-9
_BLOCK_CELLS = 4_000_000  # permutations x rows per block, bounds memory at ~32 MB


@dataclass(frozen=True)
class FeatureShift:
    """One feature's means in each arm; ``adjusted_p`` is corrected for testing every feature."""

    name: str
    baseline_mean: float
    candidate_mean: float
    adjusted_p: float
    standardized: float = 0.0

    def describe(self) -> str:
        return f"{phrase(self.name)} {_num(self.baseline_mean)} → {_num(self.candidate_mean)}"

    @property
    def group(self) -> int:
        """Where the feature stands in an explanation: tool use and routing (0), the run's structure and
        errors (1), answer lengths (2), tokens and latency (3). Unknown names go with the structure."""
        kind = self.name.partition(":")[0]
        if kind in ("calls", "share") or self.name in _ROUTING:
            return 0
        if self.name in _LENGTHS:
            return 2
        if self.name in _COSTS:
            return 3
        return 1

    @property
    def effect(self) -> float:
        """A bounded size of the move, in [0, 1] for the non-negative features a fingerprint holds.

        Shares and 0/1 indicators: the difference in proportions. Counts and lengths: the relative
        change ``|Δ| / max(|baseline|, |candidate|)``, which ignores the within-arm spread, so a
        near-constant feature that the test singles out cannot outrank a large move (docs/fingerprints.md).
        """
        b, c = self.baseline_mean, self.candidate_mean
        if self.name.partition(":")[0] in ("share", "frac") or self.name in _PROPORTIONS:
            return min(abs(c - b), 1.0)
        top = max(abs(b), abs(c))
        return min(abs(c - b) / top, 1.0) if top > 0 else 0.0


@dataclass(frozen=True)
class FingerprintResult:
    """Outcome of :func:`fingerprint_test`.

    ``Verdict.FAIL``: the behaviour shifted (p ≤ alpha). ``Verdict.PASS`` means only *no shift
    detected at alpha* — a non-significant test is not evidence that the two behave the same.
    ``shifts`` covers every tested feature, largest standardised shift first (the test's order;
    :meth:`significant` and :meth:`ranked` give the explanation's order); ``dropped`` lists
    features that were constant over both arms together and so could not be tested.
    """

    verdict: Verdict
    pvalue: float
    statistic: float
    method: str
    alpha: float
    n_baseline: int
    n_candidate: int
    shifts: tuple[FeatureShift, ...]
    dropped: tuple[str, ...] = ()
    permutations: int | None = None
    components: int | None = None

    @property
    def shifted(self) -> bool:
        return self.verdict is Verdict.FAIL

    def significant(self) -> list[FeatureShift]:
        """Features whose own adjusted p-value is ≤ alpha, in explanation order (:func:`rank_shifts`)."""
        return rank_shifts([s for s in self.shifts if s.adjusted_p <= self.alpha])

    def ranked(self) -> list[FeatureShift]:
        """Every tested feature in explanation order: the significant ones first, then the rest."""
        return [*self.significant(), *rank_shifts([s for s in self.shifts if s.adjusted_p > self.alpha])]

    def attribution(self, k: int = 3) -> list[str]:
        """Up to ``k`` phrases such as "calls to update_seat per run 1.00 → 0.40", in :meth:`significant`'s
        order; a feature whose means equal an already named one's in its group is left out (the same move)."""
        k = check_count("k", k, minimum=1)
        named: list[FeatureShift] = []
        for s in self.significant():
            # One move seen twice (a one-tool agent: its calls, its share and the tools reached are one column)
            # is named once, leaving room for the next cause.
            if not any(_same_move(s, t) for t in named):
                named.append(s)
        return [s.describe() for s in named[:k]]

    def explain(self) -> str:
        n = f"{self.n_baseline} baseline vs {self.n_candidate} candidate runs"
        test = "permutation max-T test" if self.method == "permutation" else "Hotelling T² test"
        if self.verdict is Verdict.FAIL:
            what = self.attribution(3)
            detail = (
                "; ".join(what)
                if what
                else "no single feature stands out after correcting for testing every feature"
            )
            return f"FAIL: behaviour shifted (p = {self.pvalue:.3g} ≤ {self.alpha}, {test}, {n}): {detail}."
        return (
            f"PASS: no behaviour shift detected at alpha = {self.alpha} (p = {self.pvalue:.3g}, {test}, {n}); "
            "this is absence of evidence of a shift, not evidence that the behaviour is unchanged."
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"verdict": self.verdict.value}


# The explanation's groups, from the extractor's own column lists (_extract.py): a column it adds lands in one.
_ROUTING = frozenset(("handoffs", "distinct_agents", "branches"))  # of STRUCTURE: who was reached, not how deep
_LENGTHS = frozenset(OUTPUT)
_COSTS = frozenset(COST)
_PROPORTIONS = frozenset(("recovered",))  # of ERRORS: a 0/1 indicator


def _same_move(a: FeatureShift, b: FeatureShift) -> bool:
    return a.group == b.group and math.isclose(a.baseline_mean, b.baseline_mean, rel_tol=1e-9, abs_tol=1e-12) and (
        math.isclose(a.candidate_mean, b.candidate_mean, rel_tol=1e-9, abs_tol=1e-12)
    )


def rank_shifts(shifts: Sequence[FeatureShift]) -> list[FeatureShift]:
    """The order in which an explanation names features: by group (tool calls and routing, then the
    run's structure, then answer lengths, then tokens and latency), within a group by the bounded
    :attr:`FeatureShift.effect`, largest first; ties: a named tool's feature first, then the test's
    standardised shift, then the name.

    Not the test's own statistic: a standardised shift divides by the within-arm spread, so a
    feature that barely varies (answer length 12.0 → 11.5 words) would be named before a tool that
    stopped being called in half the runs.
    """
    # Effects equal to rounding (one tool: its calls, its share and the tools reached move together): the
    # named tool first, then the larger standardised shift, then the name.
    return sorted(shifts, key=lambda s: (s.group, -round(s.effect, 9), ":" not in s.name, -s.standardized, s.name))


_PHRASES = {
    "steps": "steps per run",
    "max_depth": "maximum nesting depth",
    "handoffs": "handoffs per run",
    "distinct_agents": "distinct agents per run",
    "branches": "distinct tools used per run",
    "output_chars": "answer length (characters)",
    "output_words": "answer length (words)",
    "errors": "errors per run",
    "recovered": "share of runs recovering from an error",
    "input_tokens": "input tokens per run",
    "output_tokens": "output tokens per run",
    "latency_s": "latency per run (s)",
}
_ACTION_PHRASES = {
    "reason": "reasoning steps",
    "call_tool": "tool-call steps",
    "handoff": "handoff steps",
    "respond": "response steps",
    "error": "error steps",
}


def phrase(name: str) -> str:
    """Feature name → words a reviewer understands; unknown names are returned as they are."""
    kind, _, arg = name.partition(":")
    if kind == "calls" and arg:
        return f"calls to {arg} per run"
    if kind == "share" and arg:
        return f"share of tool calls going to {arg}"
    if kind == "frac" and arg:
        return f"share of steps that are {_ACTION_PHRASES.get(arg, arg)}"
    return _PHRASES.get(name, name)


def _num(x: float) -> str:
    ax = abs(x)
    if ax >= 100:
        return f"{x:,.0f}"
    if ax >= 1:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _as_array(name: str, data: object) -> np.ndarray:
    values = data.values if isinstance(data, FingerprintMatrix) else data
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a 2-D numeric array or a FingerprintMatrix: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows = trials, columns = features); got shape {arr.shape}")
    if arr.shape[0] < 2:
        raise ValueError(f"{name} must have at least 2 rows (trials); got {arr.shape[0]}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _resolve_names(baseline: object, candidate: object, names: object, d: int) -> tuple[str, ...]:
    given = [m.names for m in (baseline, candidate) if isinstance(m, FingerprintMatrix)]
    if len(given) == 2 and given[0] != given[1]:
        raise ValueError(
            "baseline and candidate fingerprints have different columns; extract them with "
            "extract_pair() or the same tools= list"
        )
    if names is not None:
        out = tuple(str(n) for n in names)  # type: ignore[attr-defined]
        if len(out) != d:
            raise ValueError(f"names must have one entry per column ({d}); got {len(out)}")
        return out
    if given:
        return given[0]
    return tuple(f"f{j}" for j in range(d))


def fingerprint_test(
    baseline: np.ndarray | FingerprintMatrix,
    candidate: np.ndarray | FingerprintMatrix,
    *,
    alpha: float = 0.05,
    method: str = "permutation",
    permutations: int = 2000,
    seed: int | np.random.Generator | None = None,
    names: tuple[str, ...] | list[str] | None = None,
) -> FingerprintResult:
    """Test H0 "baseline and candidate fingerprints share one distribution" against a shift.

    Rows are trials, columns features (a :class:`FingerprintMatrix` supplies its names). Features
    constant over both arms together are dropped before testing. ``method="permutation"`` is exact
    at any sample size; ``method="hotelling"`` assumes multivariate normality (see module notes).
    """
    alpha = check_open_unit("alpha", alpha)
    method = check_choice("method", method, METHODS)
    if method == "permutation":
        permutations = check_count("permutations", permutations, minimum=1)
    if seed is not None and not isinstance(seed, np.random.Generator):
        seed = check_count("seed", seed)
    xb, xc = _as_array("baseline", baseline), _as_array("candidate", candidate)
    if xb.shape[1] != xc.shape[1]:
        raise ValueError(
            f"baseline has {xb.shape[1]} columns but candidate has {xc.shape[1]}; "
            "both must hold the same features"
        )
    all_names = _resolve_names(baseline, candidate, names, xb.shape[1])
    nb, nc = xb.shape[0], xc.shape[0]
    pooled = np.vstack([xb, xc])
    spread = pooled.max(axis=0) - pooled.min(axis=0)
    scale = np.maximum(np.abs(pooled).max(axis=0), 1.0)
    keep = spread > 1e-12 * scale
    dropped = tuple(n for n, k in zip(all_names, keep, strict=True) if not k)
    kept = [n for n, k in zip(all_names, keep, strict=True) if k]
    mb, mc = xb.mean(axis=0)[keep], xc.mean(axis=0)[keep]
    common = {"method": method, "alpha": alpha, "n_baseline": nb, "n_candidate": nc, "dropped": dropped}
    if not kept:
        return FingerprintResult(Verdict.PASS, 1.0, 0.0, shifts=(), **common)
    x = pooled[:, keep]
    if method == "permutation":
        rng = np.random.default_rng(seed)
        p, stat, t_obs, adj = _permutation(x, nb, permutations, rng)
        extra: dict[str, Any] = {"permutations": permutations}
    else:
        p, stat, t_obs, adj, k = _hotelling(x, nb)
        extra = {"components": k}
    order = np.argsort(-t_obs, kind="stable")
    shifts = tuple(
        FeatureShift(kept[j], float(mb[j]), float(mc[j]), float(adj[j]), float(t_obs[j])) for j in order
    )
    verdict = Verdict.FAIL if p <= alpha else Verdict.PASS
    return FingerprintResult(verdict, float(p), float(stat), shifts=shifts, **common, **extra)


def _welch(
    sums: np.ndarray, sq: np.ndarray, tot: np.ndarray, tot_sq: np.ndarray, nb: int, n: int, floor: np.ndarray
) -> np.ndarray:
    """|mean_c − mean_b| / sqrt(s²_b/n_b + s²_c/n_c + floor) from baseline-group sums (rows = permutations)."""
    nc = n - nb
    mean_b = sums / nb
    mean_c = (tot - sums) / nc
    var_b = np.maximum(sq - nb * mean_b**2, 0.0) / (nb - 1)
    var_c = np.maximum((tot_sq - sq) - nc * mean_c**2, 0.0) / (nc - 1)
    return np.abs(mean_c - mean_b) / np.sqrt(var_b / nb + var_c / nc + floor)


def _permutation(
    x: np.ndarray, nb: int, b: int, rng: np.random.Generator
) -> tuple[float, float, np.ndarray, np.ndarray]:
    n, _ = x.shape
    # Centre and scale first: sums of squares of raw token counts would lose precision.
    x = (x - x.mean(axis=0)) / x.std(axis=0)
    x2 = x * x
    tot, tot_sq = x.sum(axis=0), x2.sum(axis=0)
    floor = _VAR_FLOOR * x.var(axis=0, ddof=1) * (1 / nb + 1 / (n - nb))
    t_obs = _welch(x[:nb].sum(axis=0), x2[:nb].sum(axis=0), tot, tot_sq, nb, n, floor)
    stat = float(t_obs.max())
    max_perm = np.empty(b)
    block = max(1, min(b, _BLOCK_CELLS // n))
    for start in range(0, b, block):
        m = min(block, b - start)
        # Row r of `member` marks which pooled rows the r-th relabelling puts in the baseline arm.
        chosen = np.argsort(rng.random((m, n)), axis=1)[:, :nb]
        member = np.zeros((m, n))
        np.put_along_axis(member, chosen, 1.0, axis=1)
        t = _welch(member @ x, member @ x2, tot, tot_sq, nb, n, floor)
        max_perm[start : start + m] = t.max(axis=1)
    tol = _TIE_RTOL * max(stat, 1e-300)
    p = (np.count_nonzero(max_perm >= stat - tol) + 1) / (b + 1)
    sorted_max = np.sort(max_perm)
    # Single-step max-T adjusted p-value of feature j: share of permutation maxima ≥ t_j.
    exceed = b - np.searchsorted(sorted_max, t_obs - _TIE_RTOL * np.maximum(t_obs, 1e-300), side="left")
    adj = (exceed + 1) / (b + 1)
    return float(p), stat, t_obs, adj


def _hotelling(x: np.ndarray, nb: int) -> tuple[float, float, np.ndarray, np.ndarray, int]:
    """Hotelling T² on the principal components holding 95% of the pooled within-arm variance.

    Features are standardised by their pooled within-arm sd first, or token counts would own every
    component. Per-feature ``adjusted_p`` are Welch t-test p-values with Holm's correction.
    """
    n = x.shape[0]
    nc = n - nb
    xb, xc = x[:nb], x[nb:]
    within = np.vstack([xb - xb.mean(axis=0), xc - xc.mean(axis=0)])
    sd = np.sqrt((within**2).sum(axis=0) / (n - 2))
    sd[sd <= 0] = 1.0  # constant inside both arms: the difference is still measured, in raw units
    z = within / sd
    cov = z.T @ z / (n - 2)
    eig, vec = np.linalg.eigh(cov)
    eig, vec = eig[::-1], vec[:, ::-1]
    pos = eig > 1e-10 * max(eig[0], 1e-300)
    eig, vec = eig[pos], vec[:, pos]
    share = np.cumsum(eig) / eig.sum() if eig.size else np.array([1.0])
    k = int(np.searchsorted(share, 0.95 - 1e-12) + 1) if eig.size else 0
    k = min(k, n - 2)  # the F reference needs n − k − 1 ≥ 1
    diff = (xc.mean(axis=0) - xb.mean(axis=0)) / sd
    if k < 1:
        p, t2 = 1.0, 0.0
    else:
        proj = diff @ vec[:, :k]
        t2 = float(nb * nc / n * np.sum(proj**2 / eig[:k]))
        f = (n - k - 1) / ((n - 2) * k) * t2
        p = float(stats.f.sf(f, k, n - k - 1))
    t_obs, raw = _welch_pvalues(xb, xc)
    adj = adjust_pvalues(raw, method="holm")
    return p, t2, t_obs, adj, k


def _welch_pvalues(xb: np.ndarray, xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    nb, nc = len(xb), len(xc)
    vb, vc = xb.var(axis=0, ddof=1) / nb, xc.var(axis=0, ddof=1) / nc
    se = np.sqrt(vb + vc)
    diff = np.abs(xc.mean(axis=0) - xb.mean(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(diff > 0, np.inf, 0.0))
        df = np.where(se > 0, (vb + vc) ** 2 / (vb**2 / (nb - 1) + vc**2 / (nc - 1) + 1e-300), 1.0)
    p = np.where(np.isinf(t), 0.0, 2 * stats.t.sf(np.where(np.isinf(t), 0.0, t), df))
    return t, p


__all__ = ["METHODS", "FeatureShift", "FingerprintResult", "fingerprint_test", "phrase", "rank_shifts"]
