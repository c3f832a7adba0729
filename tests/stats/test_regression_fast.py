"""The fast fixed-n evidence (agentassay/_stats/_ni.py) gives the table code's numbers, verdict by verdict.

The reference is the table implementation as it was (tests/_support/regression_reference.py, kept verbatim):
the same verdict, the p-value and the non-inferiority p-value within 1e-12, and the drop bound the
upper end of the bracket the reference's first 16 halvings left: never below the reference's figure
(22 halvings), at most 2**-15 above it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentassay._stats import _ni, regression_verdict
from agentassay._stats._regression import _NEAR, _code, regression_codes
from tests._support import regression_reference as ref

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "regression_reference.json"


RESOLUTION = 2.0 ** (1 - _ni.HALVINGS)  # the width of the bracket the bound's halvings leave


def _bound_ok(got: float, want: float) -> bool:
    """The fast bound is the reference bisection stopped early: the upper end of a bracket holding ``want``."""
    return want <= got <= want + RESOLUTION


def _same(xb: int, nb: int, xc: int, nc: int, alpha: float, delta: float, test: str) -> None:
    want = ref.reference_verdict(xb, nb, xc, nc, alpha=alpha, delta=delta, test=test)
    r = regression_verdict(xb, nb, xc, nc, alpha=alpha, delta=delta, test=test)
    got = (r.verdict.value, r.pvalue, r.noninferiority_pvalue, r.drop_upper_bound)
    assert got[0] == want[0], (xb, nb, xc, nc, alpha, delta, test, want, got)
    assert got[1:3] == pytest.approx(want[1:3], abs=1e-12, rel=0), (xb, nb, xc, nc, alpha, delta, test, want, got)
    assert _bound_ok(got[3], want[3]), (xb, nb, xc, nc, alpha, delta, test, want, got)


@pytest.mark.parametrize(("nb", "nc"), [(1, 1), (2, 5), (6, 6), (9, 4)])
def test_every_outcome_of_small_arms_matches_the_tables(nb: int, nc: int) -> None:
    for xb in range(nb + 1):
        for xc in range(nc + 1):
            _same(xb, nb, xc, nc, 0.05, 0.1, "fisher")


@pytest.mark.parametrize(
    ("nb", "nc", "alpha", "delta", "test"),
    [
        (20, 20, 0.05, 0.1, "fisher"),
        (25, 40, 0.01, 0.05, "fisher"),
        (30, 30, 0.00625, 0.1, "fisher"),
        (40, 15, 0.1, 0.2, "z"),
        (50, 50, 0.05, 0.15, "fisher"),
    ],
)
def test_a_sample_of_outcomes_matches_the_tables(nb: int, nc: int, alpha: float, delta: float, test: str) -> None:
    rng = np.random.default_rng(nb * 1000 + nc)
    outcomes = {(nb, 0), (0, nc), (nb, nc), (0, 0), (int(0.9 * nb), int(0.85 * nc))}
    outcomes |= {(int(rng.integers(0, nb + 1)), int(rng.integers(0, nc + 1))) for _ in range(12)}
    for xb, xc in sorted(outcomes):
        _same(xb, nb, xc, nc, alpha, delta, test)


def test_large_arms_match_the_stored_reference() -> None:
    """n = 100-200 per arm: reference values computed by the table code once (seconds each), stored."""
    cases = json.loads(FIXTURE.read_text())["cases"]
    assert {(c["nb"], c["nc"], c["xb"], c["xc"], c["alpha"]) for c in cases} == set(ref.LARGE)
    for c in cases:
        r = regression_verdict(c["xb"], c["nb"], c["xc"], c["nc"], alpha=c["alpha"], delta=c["delta"])
        assert r.verdict.value == c["verdict"], c
        for field in ("pvalue", "noninferiority_pvalue"):
            assert getattr(r, field) == pytest.approx(c[field], abs=1e-12, rel=0), (field, c)
        assert _bound_ok(r.drop_upper_bound, c["drop_upper_bound"]), c


def test_the_bound_replays_the_bisection_where_the_pvalue_is_not_monotone() -> None:
    """At 10/20 vs 18/30 the exact NI p-value crosses 0.05 three times between margins 0.138 and 0.152
    (it jumps up where the ordering of outcomes changes); the bisection lands on the last crossing, and so
    must the fast code (a search assuming monotonicity lands on the first, 0.1412), up to its resolution."""
    step = 2.0**-21
    ps = [_ni.ni_pvalue(20, 30, 10, 18, -1 + round((d + 1) / step) * step) for d in (0.141, 0.145, 0.146, 0.149)]
    assert ps[0] > 0.05 > ps[1] and ps[2] > 0.05 > ps[3]
    _same(10, 20, 18, 30, 0.05, 0.1, "fisher")
    assert 0.148596 <= regression_verdict(10, 20, 18, 30).drop_upper_bound <= 0.148597 + RESOLUTION


@pytest.mark.parametrize(("nb", "nc"), [(10, 10), (20, 35), (50, 50), (60, 20)])
def test_the_statistic_is_a_staircase_and_its_entries_are_the_tables(nb: int, nc: int) -> None:
    """The row-by-row search relies on the statistic rising with x_c and falling with x_b (rows nested)."""
    rng = np.random.default_rng(nb + nc)
    for delta in [0.1, 0.05, -0.3, 0.0, 2.0**-21, 0.999, *rng.uniform(-1, 1, 6)]:
        table = ref.ni_statistic.__wrapped__(nb, nc, float(delta))
        assert (np.diff(table, axis=1) >= 0).all() and (np.diff(table, axis=0) <= 0).all(), delta
        for xb, xc in [(0, 0), (nb, nc), (nb // 2, nc // 3), (int(rng.integers(0, nb + 1)), int(rng.integers(0, nc + 1)))]:
            assert _ni.exact_statistic(nb, nc, xb, xc, float(delta)) == table[xb, xc]  # bit for bit
        thr = float(table[nb // 2, nc // 2]) - 1e-9
        c = _ni._crossings(nb, nc, float(delta), thr)
        assert (c == (table < thr).sum(axis=1)).all(), delta


def test_a_pvalue_at_alpha_is_decided_by_the_table() -> None:
    """Within _NEAR of alpha the verdict's code comes from the verdict table itself."""
    table = regression_codes(20, 20, alpha=0.05, beta=0.1, delta=0.1, test="fisher", rule="non-inferiority")
    for xb, xc in [(18, 18), (15, 19), (20, 12)]:
        p = ref.regression_pvalues(20, 20, "fisher")[xb, xc]
        for ni_p in (0.05, 0.05 * (1 + _NEAR / 2), float("nan")):
            assert _code(xb, 20, xc, 20, 0.05, 0.1, 0.1, "fisher", "non-inferiority", p, ni_p) == table[xb, xc]


def test_certificates_decide_only_what_the_full_computation_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    """Halvings far from the bound are settled by half-plane certificates, without the staircase. Turned
    off, every halving is computed in full: the bounds must be the same, and the certificates must have
    settled a good share of the halvings (else this test shows nothing)."""
    rng = np.random.default_rng(2026)
    cases = [(200, 200, 180, 170, 0.05), (40, 40, 3, 3, 0.01), (20, 30, 10, 18, 0.05), (2, 2, 1, 2, 0.1)]
    for n in (1, 3, 10, 30, 60, 150):
        m = int(rng.choice([n, max(1, n // 2), 2 * n]))
        for _ in range(6):
            alpha = float(rng.choice([0.05, 0.01, 0.2, 0.00625]))
            cases.append((n, m, int(rng.integers(0, n + 1)), int(rng.integers(0, m + 1)), alpha))
    settled = []
    real = _ni._certified_side

    def counting(*args: object) -> bool | None:
        side = real(*args)  # type: ignore[arg-type]
        settled.append(side is not None)
        return side

    monkeypatch.setattr(_ni, "_certified_side", counting)
    _ni.drop_upper_bound.cache_clear()
    with_certificates = [_ni.drop_upper_bound(*c) for c in cases]
    monkeypatch.setattr(_ni, "_CERTIFY_WIDTH", float("inf"))
    _ni.drop_upper_bound.cache_clear()
    in_full = [_ni.drop_upper_bound(*c) for c in cases]
    _ni.drop_upper_bound.cache_clear()
    assert with_certificates == in_full
    assert sum(settled) >= 3 * len(cases), (sum(settled), len(cases))
