"""Per-scenario tests fed one outcome at a time, in trial-index order.

The runner and ``agentassay compare`` share these objects, so a verdict re-derived from a
results file is the verdict the run reached. Sequential monitors stop at the first boundary
crossing; outcomes offered afterwards are refused (``decided`` is True), which is what keeps
the sequential error guarantees: see docs/runner.md, "Concurrency and sequential validity".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .._spec._settings import record_keys
from .._stats import (
    SPRT,
    RegressionResult,
    SequentialRegression,
    Verdict,
    regression_verdict,
    threshold_verdict,
)
from ._designs import LOOKS, sequential_design

if TYPE_CHECKING:
    from .._spec import Settings


@dataclass(frozen=True)
class ScenarioVerdict:
    """The decision for one scenario and the evidence behind it."""

    verdict: Verdict
    test: str
    explanation: str
    evidence: dict[str, Any]
    trials_used: int
    pvalue: float | None = None
    notes: tuple[str, ...] = ()
    # What plugins' evidence adds to the verdict record (a test of their own: its verdict, p-value, plan…),
    # written flat after ``notes``; a built-in's own keys are always written (null when absent).
    data: dict[str, Any] = field(default_factory=dict)
    rate_verdict: Verdict | None = None  # the pass-rate test's own verdict, before combining

    def to_dict(self) -> dict[str, Any]:
        d = {
            "verdict": self.verdict.value,
            "test": self.test,
            "explanation": self.explanation,
            "evidence": self.evidence,
            "trials_used": self.trials_used,
            "pvalue": self.pvalue,
            "notes": list(self.notes),
        }
        for k in record_keys("verdict"):
            d[k] = self.data.get(k)
        d.update((k, v) for k, v in self.data.items() if k not in d)
        d["rate_verdict"] = None if self.rate_verdict is None else self.rate_verdict.value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScenarioVerdict:
        readers = record_keys("verdict")
        data = {}
        for k, v in d.items():
            if k not in _VERDICT_KEYS and v is not None:
                v = readers[k](v) if k in readers else v
                if v is not None:
                    data[k] = v
        return cls(
            Verdict(d["verdict"]),
            str(d["test"]),
            str(d.get("explanation", "")),
            dict(d.get("evidence") or {}),
            int(d.get("trials_used", 0)),
            d.get("pvalue"),
            tuple(d.get("notes") or ()),
            data,
            None if d.get("rate_verdict") is None else Verdict(d["rate_verdict"]),
        )


def explain_fail(v: ScenarioVerdict, finding: str) -> str:
    """The explanation of a verdict that a further test (a ``"test"`` kind of evidence) turns into FAIL.

    The one place that words a combined FAIL, so every report names the causes in one order: the pass-rate
    evidence first (baseline -> candidate rate, counts, the test's p-value where it has one), then each
    finding in the order the tests ran. ``finding`` is one sentence, e.g. "Behaviour shifted (p = 0.001):
    calls to issue_refund per run 0.97 → 0.52".
    """
    finding = finding.strip().rstrip(".")
    text = " ".join(v.explanation.split())
    if v.verdict is Verdict.FAIL:  # the pass rate failed (its evidence leads), or an earlier finding is there
        text = text or "FAIL."
        return f"{text if text.endswith('.') else text + '.'} {finding}."
    # The pass rate held (or was undecided): its figures lead, briefly (the clause before the first ';'),
    # so that the cause follows at once.
    head = text.split(";", 1)[0].rstrip(". ") or v.verdict.value.upper()
    return f"FAIL. Pass rate: {head}. {finding}."


_VERDICT_KEYS = frozenset(["verdict", "test", "explanation", "evidence", "trials_used", "pvalue", "notes", "rate_verdict"])


class Start(Protocol):
    """A threshold SPRT recalibrated by what a plugin knew before the first trial (:class:`Prior`)."""

    kind: str  # its key in the verdict's evidence

    def sprt(self) -> SPRT: ...

    def to_dict(self) -> dict[str, Any]: ...

    def explain(self) -> str: ...


class Prior(Protocol):
    """What a plugin knows of a scenario before its first trial (``monitor_for(prior=...)``).

    The gate fixes the SPRT's level (the scenario's share of alpha); the plugin decides, from its own
    config, whether and how that knowledge recalibrates the test (None: the plain SPRT).
    """

    def start(self, settings: Settings, *, threshold: float, alpha: float) -> Start | None: ...


class Monitor(Protocol):
    """A test consuming outcomes in trial order. ``decided`` turns True at most once."""

    decided: bool

    def update(self, passed: bool) -> bool: ...

    def finish(self) -> ScenarioVerdict: ...


@dataclass
class _Base:
    cap: int
    notes: tuple[str, ...] = ()
    passes: int = 0
    trials: int = 0
    decided: bool = False

    def _count(self, passed: bool) -> None:
        if self.decided:
            raise RuntimeError("this scenario is already decided; later outcomes must not be fed")
        self.trials += 1
        self.passes += bool(passed)


@dataclass
class ThresholdSPRT(_Base):
    """Wald's SPRT of H0: p >= threshold against H1: p <= threshold - delta, capped at ``cap``."""

    threshold: float = 0.8
    delta: float = 0.1
    alpha: float = 0.05
    beta: float = 0.1
    start: Start | None = None  # a plugin's recalibration (Prior.start), at these same settings
    test: SPRT = field(init=False)

    def __post_init__(self) -> None:
        if self.start is not None:
            self.test = self.start.sprt()
        else:
            self.test = SPRT(
                threshold=self.threshold, delta=self.delta, alpha=self.alpha, beta=self.beta, max_trials=self.cap
            )

    def update(self, passed: bool) -> bool:
        self._count(passed)
        self.decided = self.test.update(passed) is not None
        return self.decided

    def finish(self) -> ScenarioVerdict:
        r = self.test.result()
        evidence = r.to_dict()
        notes = self.notes
        if self.start is not None:
            evidence[self.start.kind] = self.start.to_dict()
            notes = (*notes, self.start.explain())
        return ScenarioVerdict(r.verdict, "sprt", r.explain(), evidence, r.trials, notes=notes)


@dataclass
class ThresholdFixed(_Base):
    """Fixed-n threshold verdict (exact Clopper-Pearson interval) after ``cap`` trials."""

    threshold: float = 0.8
    alpha: float = 0.05

    def update(self, passed: bool) -> bool:
        self._count(passed)
        self.decided = self.trials >= self.cap
        return self.decided

    def finish(self) -> ScenarioVerdict:
        if self.trials == 0:
            return _no_trials("threshold", self.notes)
        r = threshold_verdict(self.passes, self.trials, threshold=self.threshold, alpha=self.alpha)
        return ScenarioVerdict(r.verdict, "threshold", r.explain(), r.to_dict(), r.trials, notes=self.notes)


@dataclass
class RegressionSequential(_Base):
    """Group-sequential regression test against a finite baseline, up to ``cap`` candidate trials."""

    base_passes: int = 0
    base_trials: int = 1
    alpha: float = 0.05  # the FAIL level (multiplicity-corrected by the plan)
    delta: float = 0.1
    pass_alpha: float | None = None  # the PASS level (the suite's alpha); None: alpha
    looks: int = LOOKS
    test: SequentialRegression = field(init=False)

    def __post_init__(self) -> None:
        design = sequential_design(
            self.base_trials, self.cap, self.alpha, self.delta, pass_alpha=self.pass_alpha, looks=self.looks
        )
        self.test = SequentialRegression(
            self.base_passes, self.base_trials, max_trials=self.cap, alpha=self.alpha, delta=self.delta,
            design=design,
        )

    def update(self, passed: bool) -> bool:
        self._count(passed)
        self.decided = self.test.update(passed) is not None
        return self.decided

    def finish(self) -> ScenarioVerdict:
        if self.trials == 0:
            return _no_trials("sequential-regression", self.notes)
        r = self.test.result()
        return ScenarioVerdict(
            r.verdict, "sequential-regression", r.explain(), r.to_dict(), r.cand_trials, notes=self.notes
        )


@dataclass
class RegressionFixed(_Base):
    """Fixed-n regression verdict (exact tests) after ``cap`` candidate trials."""

    base_passes: int = 0
    base_trials: int = 1
    alpha: float = 0.05  # the FAIL level (multiplicity-corrected by the plan, or Holm later)
    beta: float = 0.1
    delta: float = 0.1
    pass_alpha: float | None = None  # the PASS level (the suite's alpha); None: alpha
    result: RegressionResult | None = None

    def update(self, passed: bool) -> bool:
        self._count(passed)
        self.decided = self.trials >= self.cap
        return self.decided

    def finish(self) -> ScenarioVerdict:
        if self.trials == 0:
            return _no_trials("regression", self.notes)
        r = regression_verdict(
            self.base_passes, self.base_trials, self.passes, self.trials,
            alpha=self.alpha, beta=self.beta, delta=self.delta, pass_alpha=self.pass_alpha,
        )
        self.result = r
        return ScenarioVerdict(r.verdict, "regression", r.explain(), r.to_dict(), r.cand_trials, r.pvalue, self.notes)


def _no_trials(test: str, notes: tuple[str, ...]) -> ScenarioVerdict:
    return ScenarioVerdict(
        Verdict.INCONCLUSIVE, test, "INCONCLUSIVE: no trial of this scenario completed.", {}, 0, notes=notes
    )


def replay(monitor: Monitor, outcomes: list[bool | None]) -> ScenarioVerdict:
    """Feed recorded outcomes in trial order, stopping where the live run stopped."""
    for outcome in outcomes:
        if outcome is None:  # an excluded error trial
            continue
        if monitor.update(outcome):
            break
    return monitor.finish()
