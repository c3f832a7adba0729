"""Evidence beyond the pass rate, and the plan that fixes its level before any candidate trial.

The gate is the one place where evidence becomes a verdict. Every kind of evidence a plugin brings
is one of two stages:

* ``"rate"``: it sharpens a scenario's pass-rate p-value *before* Holm (e.g. another model's trials
  combined with the target's). It spends no alpha of its own.
* ``"test"``: a test of its own per scenario (e.g. a behaviour-shift test, a third-party check).
  Its share of alpha is declared in the :class:`GatePlan` before the candidate
  runs; the pass-rate test gets what is left (``alpha * (1 - sum of shares)``), so by Bonferroni
  across kinds and Holm within each kind the suite's false-alarm rate stays at most alpha. A test
  can only turn a verdict into FAIL: a PASS needs the pass-rate PASS and no test rejecting.

:class:`ScenarioTest` is the ready-made ``"test"`` evidence for any p-value a plugin computes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .._spec import Settings
from .._stats import Verdict, adjust_pvalues
from ._monitors import ScenarioVerdict, explain_fail

STAGES = ("rate", "test")


class Evidence(Protocol):
    """One kind of evidence for the gate, over all scenarios of a run."""

    kind: str
    stage: str  # "rate" or "test" (module docstring)

    def apply(
        self, verdicts: dict[str, ScenarioVerdict], settings: Settings
    ) -> dict[str, ScenarioVerdict]: ...


@dataclass
class GatePlan:
    """What is fixed before the candidate's first trial, per scenario: shares of alpha, samples.

    Built by ``run`` / ``check`` (``agentassay_plan`` hook) and rebuilt from the files by
    ``compare`` / ``merge``, so a verdict re-derived from files uses the levels the run used.
    ``names`` are all the suite's scenarios (m), also when this process runs only some of them.
    """

    settings: Settings
    names: tuple[str, ...]
    baseline: Any = None  # agentassay._results.Results of the baseline; None when recording
    full: bool = False  # recording every scenario to its cap
    # The candidate's results sections when re-deriving from files (compare, merge); empty in a live run.
    sections: dict[str, Any] = field(default_factory=dict)
    shares: dict[str, dict[str, float]] = field(default_factory=dict)
    samples: dict[str, dict[str, int]] = field(default_factory=dict)
    scratch: dict[str, Any] = field(default_factory=dict)  # a plugin's state from plan to evidence, by kind

    def share(self, scenario: str, kind: str, fraction: float) -> None:
        """Reserve ``fraction`` of the scenario's alpha for a test of ``kind``."""
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"a share of alpha must be in (0, 1); {kind!r} asked for {fraction!r}")
        shares = self.shares.setdefault(scenario, {})
        if sum(shares.values()) - shares.get(kind, 0.0) + fraction >= 1.0:
            raise ValueError(
                f"scenario {scenario!r}: the shares of alpha would reach 1 with {kind!r} "
                f"({shares | {kind: fraction}}), leaving nothing for the pass-rate test"
            )
        shares[kind] = fraction

    def taken(self, scenario: str) -> float:
        """The share of alpha the scenario's extra tests hold (0: the pass-rate test has all of it)."""
        return sum(self.shares.get(scenario, {}).values())

    def require(self, scenario: str, kind: str, trials: int) -> None:
        """Trials ``0..trials-1`` of the scenario run whatever its test decides (a sample fixed in advance)."""
        self.samples.setdefault(scenario, {})[kind] = int(trials)

    def min_trials(self, scenario: str) -> int:
        return max(self.samples.get(scenario, {}).values(), default=0)

    def sample(self, scenario: str, kind: str) -> int | None:
        return self.samples.get(scenario, {}).get(kind)


@dataclass(frozen=True)
class Candidate:
    """What evidence is computed from: the candidate's trials and results sections (a file in ``compare``)."""

    trials: Mapping[str, Sequence[Any]]  # scenario -> TrialOutcome in index order
    sections: Mapping[str, Any]


class ReadOnly(Mapping[str, Any]):
    """A read-only view of a mapping (the run's sections as evidence sees them): reads go through, writes fail."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"ReadOnly({self._data!r})"


@dataclass(frozen=True)
class ScenarioTest:
    """A per-scenario test of ``kind`` at ``share`` of alpha: Holm across scenarios, FAIL when rejected.

    ``pvalues[scenario]`` is the p-value of "no change" for that scenario; ``details[scenario]`` is
    kept in the verdict's evidence (``evidence[kind]``) with the adjusted p-value and the level;
    ``describe`` words a rejection (e.g. "rule 'refund-bound' broken in 7/40 trials").
    """

    kind: str
    share: float
    pvalues: Mapping[str, float]
    details: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    describe: Mapping[str, str] = field(default_factory=dict)
    stage: str = "test"

    def apply(self, verdicts: dict[str, ScenarioVerdict], settings: Settings) -> dict[str, ScenarioVerdict]:
        alpha = settings.alpha * self.share
        tested = {n: float(p) for n, p in self.pvalues.items() if n in verdicts}
        method = (
            settings.correction if settings.correction in ("holm", "bonferroni") and len(tested) > 1 else None
        )
        adjusted = adjust_pvalues(list(tested.values()), method=method) if method else list(tested.values())
        out = dict(verdicts)
        for (name, p), q in zip(tested.items(), adjusted, strict=True):
            v = verdicts[name]
            rejected = float(q) <= alpha
            info = {
                **dict(self.details.get(name, {})),
                "verdict": (Verdict.FAIL if rejected else Verdict.PASS).value,
                "pvalue": p,
                "adjusted_p": float(q),
                "alpha": alpha,
                "correction": method or "none",
            }
            changes: dict[str, Any] = {"evidence": {**v.evidence, self.kind: info}}
            if rejected:
                words = self.describe.get(name) or f"{self.kind} test rejected"
                changes |= {
                    "verdict": Verdict.FAIL,
                    "explanation": explain_fail(v, f"{self.kind.capitalize()}: {words} (p = {float(q):.3g})"),
                    "rate_verdict": v.rate_verdict if v.rate_verdict is not None else v.verdict,
                }
            out[name] = replace(v, **changes)
        return out
