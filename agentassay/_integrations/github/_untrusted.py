"""Results made by code we do not trust (a fork's pull request), judged again by the base branch's rules.

A fork's ``results.json`` was written by the fork's workflow, so every field in it is a claim. Nothing it
concludes is read here: not its decision, its verdicts, p-values or pass counts, not its settings (alpha,
method, threshold, error policy), not its per-scenario thresholds, not its list of scenarios, not its
proxy arm's counts. What remains are its measurements, the trials (and the plugins' per-trial data), and
they are replayed through the base branch's baseline and settings exactly as ``compare`` replays a file
(``compare_results``). So a file claiming DEPLOY while its trials fail is judged on its trials, and a file
that leaves a scenario of the base suite out cannot pass. The trials themselves cannot be verified: an
untrusted run can invent passing ones. That limit is why the status and comment say whose results these
are, and why docs/action.md ("Fork pull requests and trust") says a required check should not rely on them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..._features.shards._merge import _rederive_run
from ..._gate import ScenarioVerdict
from ..._results._compare import compare_results
from ..._results._model import Results, ScenarioResult, TrialOutcome
from ..._stats import Decision, Verdict

if TYPE_CHECKING:
    from ..._plugins import Plugins

_UNJUDGED = ScenarioVerdict(Verdict.INCONCLUSIVE, "none", "not judged yet", {}, 0)


def _trials(trials: tuple[TrialOutcome, ...], errors: str) -> tuple[TrialOutcome, ...]:
    """The trials as the base branch's error policy counts them: a trial with no outcome is a failure
    unless that policy excludes error trials and it did end in an error. Only the first trial of an
    index counts (a file could repeat a passing one)."""
    seen: set[int] = set()
    out = []
    for t in sorted(trials, key=lambda t: t.index):
        if t.index in seen:
            continue
        seen.add(t.index)
        excluded = t.passed is None and errors == "exclude" and bool(t.error)
        passed = None if excluded else bool(t.passed)
        out.append(t if passed == t.passed else replace(t, passed=passed))
    return tuple(out)


def rederive_untrusted(
    base: Results, cand: Results, *, origin: str, plugins: Plugins | None = None
) -> Results:
    """``cand``'s verdicts and decision made again from its trials against ``base`` and ``base``'s settings.

    The scenarios judged are the baseline's (the base branch's suite): one missing from ``cand`` has
    no trials and blocks the decision; one only ``cand`` has is left out, with a note. ``origin`` names
    who made ``cand`` (``the fork's workflow (owner/repo)``) in the notes.
    """
    settings = base.settings
    by_name: dict[str, ScenarioResult] = {}
    for s in cand.scenarios:
        by_name.setdefault(s.name, s)
    scenarios = []
    missing = []
    for b in base.scenarios:
        s = by_name.get(b.name)
        if s is None:
            missing.append(b.name)
        scenarios.append(
            ScenarioResult(
                name=b.name,
                input=b.input,
                trials=_trials(s.trials if s is not None else (), settings.errors),
                verdict=_UNJUDGED,
                threshold=b.threshold,
                data=b.data,
            )
        )
    extra = [name for name in by_name if base.scenario(name) is None]
    judged = replace(
        cand,
        settings=settings,
        scenarios=tuple(scenarios),
        # The shard record and the proxy arm's counts have no trials behind them to replay.
        sections=_without(cand.sections, "shard", "proxy"),
        notes=(),
    )
    out = compare_results(base, judged, plugins=plugins)
    notes = [
        f"results produced by {origin}, not by this repository's code: their verdicts were re-derived here from "
        "their trials against the base branch's baseline and settings (the file's own decision, verdicts, "
        "counts and settings were not read); the trials themselves cannot be verified"
    ]
    if extra:
        notes.append(f"not in the base branch's baseline, left out: {', '.join(extra)}")
    decision, scenarios = out.decision, out.scenarios
    if missing:
        why = f"FAIL: no trials in the results produced by {origin}, which leave out this scenario of the base suite"
        scenarios = tuple(
            replace(s, verdict=replace(s.verdict, verdict=Verdict.FAIL, rate_verdict=Verdict.FAIL, explanation=why))
            if s.name in missing
            else s
            for s in scenarios
        )
        counts = {v.value: sum(s.verdict.verdict is v for s in scenarios) for v in Verdict}
        decision = replace(decision, verdict=Verdict.FAIL, decision=Decision.BLOCK, counts=counts)
    return replace(out, scenarios=scenarios, decision=decision, notes=(*notes, *out.notes))


def rederive_without_baseline(cand: Results, *, origin: str, plugins: Plugins | None = None) -> Results:
    """No baseline on the base branch yet (record-only, which never gates): ``cand``'s threshold verdicts
    replayed from its trials, so the table at least says what the trials say; only the results' own
    settings exist to replay them by, and the note says nothing here could check those."""

    scenarios = tuple(
        replace(s, trials=_trials(s.trials, cand.settings.errors), verdict=_UNJUDGED) for s in cand.scenarios
    )
    scenarios, decision, failed = _rederive_run(scenarios, cand.settings, dict(cand.sections), plugins)
    note = (
        f"results produced by {origin}, not by this repository's code, and the base branch has no baseline to "
        "judge them against: their threshold verdicts were re-derived from their trials by their own settings, "
        "which nothing here can check; recorded only"
    )
    sections = _without(cand.sections, "shard", "proxy")
    return replace(cand, kind="run", scenarios=scenarios, decision=decision, sections=sections, notes=(note, *failed))


def _without(sections: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in sections.items() if k not in keys}


__all__ = ["rederive_untrusted", "rederive_without_baseline"]
