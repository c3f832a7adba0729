"""What an INCONCLUSIVE regression scenario would take to decide (issue 21): ``ScenarioResult.more_trials``.

``run``/``check`` (_runner/_run.py), ``compare`` and ``merge`` (which re-derive every verdict) call
:func:`with_more_trials` on their final scenarios, so the figure always belongs to the verdict beside it.
For each INCONCLUSIVE regression scenario it stores :func:`agentassay._stats.trials_to_decide` at the
scenario's own levels, with what the additional trials would cost at its observed mean USD per trial:

``{"total", "additional", "probability", "capped", "pass_probability", "fail_probability", "spent",
"power", "limit", "usd", "usd_per_trial", "design", "alpha", "pass_alpha", "delta", "test", "base",
"cand"}`` (``base``/``cand``: ``[passes, trials]``; ``usd``: the additional trials' cost, None unpriced).

``alpha`` is the FAIL level the estimate used: the sequential test's own (``alpha / m`` already), or for
a fixed-n check whose FAILs Holm re-decides, Holm's first step ``alpha / m`` (Bonferroni: the level a
scenario is sure to be held to, so the figure errs towards more trials). ``design`` is ``sequential``
for ``method: sprt`` (the figure is for a fixed-n check; the sequential cap needs a little more).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .._spec import Settings
from .._stats import MoreTrials, Verdict, trials_to_decide
from .._stats._more import LIMIT, POWER
from ._model import ScenarioResult

_TESTS = {"regression": "fixed", "sequential-regression": "sequential"}
# What the estimate depends on besides the cost: a stored figure with the same inputs is kept as it is
# (``compare``/``merge`` of a file that already has it cost nothing; each estimate takes up to ~0.5 s).
_INPUTS = ("design", "alpha", "pass_alpha", "delta", "test", "base", "cand", "power", "limit")


def _inputs(s: ScenarioResult, settings: Settings, scenarios: int) -> dict[str, Any] | None:
    v = s.verdict
    design = _TESTS.get(v.test)
    if design is None or v.verdict is not Verdict.INCONCLUSIVE:
        return None
    ev = v.evidence
    try:
        kb, nb, kc, nc = (int(ev[k]) for k in ("base_passes", "base_trials", "cand_passes", "cand_trials"))
        alpha = float(ev["alpha"])
        pass_alpha = float(ev["pass_alpha"]) if ev.get("pass_alpha") is not None else alpha
        delta = float(ev["delta"])
    except (KeyError, TypeError, ValueError):
        return None  # no trials (no evidence), or a damaged file: no estimate
    # The gate's tests only: the paper's rule has no monotone PASS region, and Boschloo's p-value is slow.
    test, rule = str(ev.get("test", "fisher")), ev.get("rule", "non-inferiority")
    if nc <= 0 or nb <= 0 or rule != "non-inferiority" or test not in ("fisher", "z"):
        return None
    if design == "fixed" and settings.correction == "holm" and scenarios > 1:
        alpha /= scenarios  # Holm's first step (_gate/_plan.py holm_adjust): the level surely applied
    return {
        "design": design,
        "alpha": alpha,
        "pass_alpha": pass_alpha,
        "delta": delta,
        "test": test,
        "base": [kb, nb],
        "cand": [kc, nc],
        "power": POWER,
        "limit": LIMIT,
    }


def more_trials(
    s: ScenarioResult, settings: Settings, *, scenarios: int, stored: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The ``more_trials`` entry of one scenario (None unless it is an INCONCLUSIVE regression scenario
    with candidate trials). ``scenarios``: how many the verdicts were decided among (Holm's m).
    ``stored``: an earlier entry, kept when its inputs are these."""
    inputs = _inputs(s, settings, scenarios)
    if inputs is None:
        return None
    per_trial = s.usd_per_trial()
    if stored is not None and all(stored.get(k) == inputs[k] for k in _INPUTS):
        try:
            more = MoreTrials.from_dict(stored)
        except (KeyError, TypeError, ValueError):
            more = None
    else:
        more = None
    if more is None:
        (kb, nb), (kc, nc) = inputs["base"], inputs["cand"]
        more = trials_to_decide(
            kb,
            nb,
            kc,
            nc,
            alpha=inputs["alpha"],
            pass_alpha=inputs["pass_alpha"],
            delta=inputs["delta"],
            test=inputs["test"],
            power=inputs["power"],
            limit=inputs["limit"],
        )
        if more is None:
            return None
    out = more.to_dict()
    for key in ("probability", "pass_probability", "fail_probability"):
        out[key] = round(out[key], 6)
    out["usd"] = None if per_trial is None else round(more.additional * per_trial, 6)
    out["usd_per_trial"] = None if per_trial is None else round(per_trial, 6)
    return out | inputs


def with_more_trials(
    scenarios: Sequence[ScenarioResult], settings: Settings, *, m: int | None = None
) -> tuple[ScenarioResult, ...]:
    """``scenarios`` with ``more_trials`` set for every INCONCLUSIVE regression scenario (None for the rest).

    Call it on final verdicts (after Holm and the other evidence), with every scenario decided together.
    ``m``: the scenarios of the whole suite (a file of one process of several holds fewer; its levels are the whole suite's, so its
    estimates equal the merged file's and ``merge`` reuses them). Default: ``len(scenarios)``.
    """
    m = len(scenarios) if m is None else m
    out = []
    for s in scenarios:
        entry = more_trials(s, settings, scenarios=m, stored=s.more_trials)
        out.append(s if entry == s.more_trials else replace(s, more_trials=entry))
    return tuple(out)


def more_trials_text(s: ScenarioResult, settings: Settings) -> str | None:
    """The stored estimate as one sentence for a reviewer (None when the scenario has none)."""
    d = s.more_trials
    if not d:
        return None
    try:
        more = MoreTrials.from_dict(d)
        per_trial = None if d.get("usd_per_trial") is None else float(d["usd_per_trial"])
    except (KeyError, TypeError, ValueError):
        return None
    setting = "config.max_trials" if settings.max_trials is not None else "config.trials"
    return more.explain(
        usd_per_trial=per_trial,
        setting=setting,
        cap=settings.trial_cap,
        sequential=d.get("design") == "sequential",
    )
