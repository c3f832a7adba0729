"""Behavioural fingerprints: extraction numbers, calibration of the shift test, power, wording, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentassay._features.fingerprints import (
    FingerprintMatrix,
    extract,
    extract_pair,
    feature_names,
    fingerprint_test,
    phrase,
)
from agentassay._stats import Verdict
from agentassay._traces._model import Action, Cost, Step, Trace

ALPHA = 0.05


def _hand_built() -> Trace:
    return Trace(
        steps=(
            Step(Action.REASON, agent="Triage"),
            Step(Action.HANDOFF, agent="Triage", target="Seat"),
            Step(Action.CALL_TOOL, agent="Seat", tool="update_seat", error="invalid seat", depth=1),
            Step(Action.CALL_TOOL, agent="Seat", tool="update_seat", depth=1),
            Step(Action.CALL_TOOL, agent="Seat", tool="faq_lookup_tool", depth=2),
            Step(Action.RESPOND, agent="Seat", output="done"),
        ),
        output="Updated seat to 14C.",
        cost=Cost(input_tokens=1200, output_tokens=80, latency_s=1.5),
    )


def test_extract_hand_built_trace() -> None:
    fm = extract([_hand_built()])
    row = dict(zip(fm.names, fm.values[0], strict=True))
    assert row["calls:update_seat"] == 2 and row["calls:faq_lookup_tool"] == 1
    assert row["share:update_seat"] == pytest.approx(2 / 3)
    assert row["share:faq_lookup_tool"] == pytest.approx(1 / 3)
    assert row["steps"] == 6 and row["max_depth"] == 2 and row["handoffs"] == 1
    assert row["distinct_agents"] == 2 and row["branches"] == 2
    assert row["output_chars"] == len("Updated seat to 14C.") and row["output_words"] == 4
    assert row["frac:call_tool"] == pytest.approx(0.5)
    assert row["frac:reason"] == row["frac:handoff"] == row["frac:respond"] == pytest.approx(1 / 6)
    assert row["frac:error"] == 0
    assert row["errors"] == 1 and row["recovered"] == 1
    assert (row["input_tokens"], row["output_tokens"], row["latency_s"]) == (1200, 80, 1.5)
    assert fm.column("steps").tolist() == [6.0]
    assert fm.tools == ("faq_lookup_tool", "update_seat")


def test_extract_errors_empty_trace_and_no_tools() -> None:
    failed = Trace(steps=(Step(Action.ERROR, agent="A", error="boom"),), error="timeout")
    empty = Trace()
    fm = extract([failed, empty], tools=["t"])
    errors, recovered = fm.column("errors"), fm.column("recovered")
    assert errors.tolist() == [2.0, 0.0] and recovered.tolist() == [0.0, 0.0]
    assert fm.column("share:t").tolist() == [0.0, 0.0]  # no tool called: all shares zero
    assert fm.column("steps").tolist() == [1.0, 0.0]
    assert fm.column("output_chars").tolist() == [0.0, 0.0]
    assert extract([]).values.shape == (0, len(feature_names([])))


def test_names_stable_and_column_errors() -> None:
    fm = extract([_hand_built()], tools=["update_seat", "x"])
    assert fm.names == feature_names(["update_seat", "x"])
    assert fm.names[:4] == ("calls:update_seat", "calls:x", "share:update_seat", "share:x")
    assert fm.names[-3:] == ("input_tokens", "output_tokens", "latency_s")
    assert fm.column("calls:x").tolist() == [0.0]
    assert fm.column("share:update_seat").tolist() == [1.0]  # shares over the listed tools only
    assert fm.column("branches").tolist() == [2.0]  # the unlisted tool still counts as a branch
    with pytest.raises(ValueError, match="unknown feature 'nope'"):
        fm.column("nope")
    with pytest.raises(ValueError, match="must not repeat"):
        extract([], tools=["a", "a"])
    assert not fm.values.flags.writeable


def test_extract_pair_aligns_tools() -> None:
    base = [Trace(steps=(Step(Action.CALL_TOOL, tool="a"),))]
    cand = [Trace(steps=(Step(Action.CALL_TOOL, tool="b"),))]
    fb, fc = extract_pair(base, cand)
    assert fb.names == fc.names and fb.tools == ("a", "b")
    assert fb.column("calls:b").tolist() == [0.0] and fc.column("calls:b").tolist() == [1.0]
    # Separately extracted matrices disagree, and the test refuses to compare them.
    with pytest.raises(ValueError, match="different columns"):
        fingerprint_test(extract(base * 2), extract(cand * 2))


def _features(rng: np.random.Generator, n: int) -> np.ndarray:
    """Constant, sum-to-one, integer, rare-binary and skewed columns, like real fingerprints."""
    calls = rng.poisson(1.0, (n, 3)).astype(float)
    total = calls.sum(axis=1, keepdims=True)
    shares = np.divide(calls, total, out=np.zeros_like(calls), where=total > 0)
    const = np.full((n, 2), 3.0)
    steps = rng.integers(2, 7, (n, 1)).astype(float)
    rare = (rng.random((n, 2)) < 0.05).astype(float)
    tokens = rng.lognormal(6.0, 0.6, (n, 1))
    return np.hstack([calls, shares, const, steps, rare, tokens])


@pytest.mark.parametrize("n", [10, 20, 50])
def test_permutation_aa_calibration(n: int) -> None:
    rng = np.random.default_rng(1000 + n)
    reps = 400
    alarms = sum(
        fingerprint_test(_features(rng, n), _features(rng, n), permutations=199, seed=rng).pvalue <= ALPHA
        for _ in range(reps)
    )
    rate = alarms / reps
    assert rate <= ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / reps), rate


def test_power_one_extra_tool_call_in_half_the_runs() -> None:
    rng = np.random.default_rng(7)
    n, reps, detected = 30, 60, 0
    tools = ["faq_lookup_tool", "update_seat"]
    for _ in range(reps):

        def batch(extra: bool) -> list[Trace]:
            out = []
            for _ in range(n):
                calls = ["update_seat"] * int(rng.random() < 0.5) + ["faq_lookup_tool"] * int(
                    rng.random() < 0.5
                )
                if extra and rng.random() < 0.5:
                    calls.append("update_seat")
                steps = tuple(Step(Action.CALL_TOOL, agent="A", tool=t) for t in calls)
                out.append(Trace(steps=(*steps, Step(Action.RESPOND, agent="A")), output="ok"))
            return out

        fb, fc = extract(batch(False), tools=tools), extract(batch(True), tools=tools)
        detected += fingerprint_test(fb, fc, permutations=199, seed=rng).verdict is Verdict.FAIL
    assert detected / reps >= 0.6, detected / reps


def test_attribution_wording_and_verdicts() -> None:
    rng = np.random.default_rng(3)
    n = 40
    base = np.column_stack([np.ones(n), rng.integers(3, 5, n), rng.normal(100, 5, n)])
    cand = np.column_stack(
        [(rng.random(n) < 0.4).astype(float), rng.integers(3, 5, n) + 1.5, rng.normal(100, 5, n)]
    )
    names = ("calls:update_seat", "steps", "output_chars")
    res = fingerprint_test(base, cand, names=names, seed=0)
    assert res.verdict is Verdict.FAIL and res.shifted and res.pvalue <= ALPHA
    top = res.attribution(k=2)
    assert len(top) == 2
    assert all(s.startswith(("calls to update_seat per run 1.0 → 0.", "steps per run 3.")) for s in top)
    assert "answer length" not in " ".join(top)  # unchanged feature is not blamed
    assert res.explain().startswith("FAIL: behaviour shifted")
    assert "calls to update_seat per run" in res.explain()
    assert res.to_dict()["verdict"] == "fail" and res.permutations == 2000

    same = fingerprint_test(base, base[::-1].copy(), names=names, seed=0)
    assert same.verdict is Verdict.PASS and "not evidence that the behaviour is unchanged" in same.explain()
    assert phrase("share:x") == "share of tool calls going to x"
    assert phrase("output_chars") == "answer length (characters)"
    assert phrase("frac:call_tool") == "share of steps that are tool-call steps"


def test_constant_columns_dropped_and_all_constant() -> None:
    a = np.column_stack([np.ones(5), np.arange(5.0)])
    res = fingerprint_test(a, a + np.array([0, 0.5]), names=["c", "v"], seed=1)
    assert res.dropped == ("c",) and [s.name for s in res.shifts] == ["v"]
    flat = fingerprint_test(np.ones((3, 2)), np.ones((4, 2)))
    assert flat.verdict is Verdict.PASS and flat.pvalue == 1.0 and flat.shifts == ()


def test_permutation_pvalue_convention_and_seed() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(8, 3)), rng.normal(size=(8, 3)) + 5
    res = fingerprint_test(a, b, permutations=99, seed=4)
    assert res.pvalue == pytest.approx(1 / 100)  # nothing beats the observed split: (0 + 1) / (B + 1)
    assert fingerprint_test(a, b, permutations=99, seed=4) == res


def test_hotelling_runs_and_reports_components() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(30, 4)), rng.normal(size=(30, 4)) + np.array([1.5, 0, 0, 0])
    res = fingerprint_test(a, b, method="hotelling")
    assert res.method == "hotelling" and res.components is not None and 1 <= res.components <= 4
    assert res.verdict is Verdict.FAIL and res.shifts[0].name == "f0"
    assert "Hotelling" in res.explain()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"baseline": np.zeros((5, 3)), "candidate": np.zeros((5, 4))},
            "baseline has 3 columns but candidate has 4",
        ),
        ({"baseline": np.zeros((1, 3)), "candidate": np.zeros((5, 3))}, "baseline must have at least 2 rows"),
        ({"baseline": np.zeros(5), "candidate": np.zeros((5, 1))}, "baseline must be 2-D"),
        ({"alpha": 1.5}, r"alpha must be in \(0, 1\)"),
        ({"alpha": 0}, r"alpha must be in \(0, 1\)"),
        ({"method": "anova"}, "method must be one of 'permutation', 'hotelling'; got 'anova'"),
        ({"permutations": 0}, "permutations must be an integer >= 1"),
        ({"names": ["a"]}, r"names must have one entry per column \(2\)"),
        ({"candidate": np.array([[np.nan, 1.0], [1.0, 2.0]])}, "candidate contains NaN"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    args = {"baseline": np.arange(6.0).reshape(3, 2), "candidate": np.arange(6.0).reshape(3, 2)} | kwargs
    with pytest.raises(ValueError, match=message):
        fingerprint_test(**args)


def test_matrix_validation() -> None:
    with pytest.raises(ValueError, match="2 columns but 1 names"):
        FingerprintMatrix(np.zeros((2, 2)), ("a",))
