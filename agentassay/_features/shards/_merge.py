"""Shards: which scenarios ``--shard i/n`` runs, and ``agentassay merge``, which makes them one run again.

A shard runs the scenarios at positions ``k`` (0-based, suite order) with ``k mod n == i - 1``, at
the levels of the *whole* suite (``alpha / m`` with ``m`` its total number of scenarios); trial
seeds depend on the scenario, not on the shard. So each scenario gets the trials, and the test, an
unsharded run would give it. What a shard cannot do alone is everything that spans scenarios: Holm
over the fixed-n regression and fingerprint p-values, and the suite decision. The merge therefore
re-derives every verdict from the trials (``compare_results`` for ``check``, a replay of the
threshold tests for ``run``) over all ``m`` scenarios, which makes the merged file the one an
unsharded run would have written, up to timing (trials in flight at a decision, times, run id).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from ..._gate import Candidate, GatePlan, SuiteDecision, decide, fixed_n_equivalent, monitor_for, replay
from ..._plugins import default_plugins
from ..._results._compare import baseline_notes, compare_results
from ..._results._model import Results, ResultsError, ScenarioResult
from ..._results._more import with_more_trials
from ..._spec import Scenario, Settings
from ..warm_start._prior import WarmPrior

if TYPE_CHECKING:
    from ..._plugins import Plugins

T = TypeVar("T")

def shard_slice(items: Sequence[T], index: int, count: int) -> list[T]:
    """The items of shard ``index`` of ``count`` (1-based): round-robin, so sizes differ by at most one."""
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"shard {index}/{count}: the index must be between 1 and the count")
    return list(items[index - 1 :: count])


def shard_note(index: int, count: int, size: int, total: int) -> str:
    """The note a shard's results carry: its decision is not the suite's."""
    return (
        f"shard {index}/{count}: {size} of the suite's {total} scenarios, tested at the levels of all {total}; "
        "Holm and the decision here cover this shard only: `agentassay merge` of all shards decides the suite"
    )


def _shard_of(r: Results, src: str) -> tuple[int, int, int]:
    shard = r.sections.get("shard")
    if shard is None:
        raise ResultsError(
            f"{src}: not a shard (written without --shard, it covers the whole suite). `agentassay merge` "
            "combines the files of `run --shard i/n` or `check --shard i/n`."
        )
    if r.kind not in ("run", "check"):
        raise ResultsError(f"{src}: a '{r.kind}' file; merge combines the shards of `run` or `check`")
    try:
        index, count, total = (int(shard[k]) for k in ("index", "count", "scenarios_total"))
    except (KeyError, TypeError, ValueError):
        raise ResultsError(
            f"{src}: malformed field 'shard' ({shard!r}); run the shard again with --shard i/n"
        ) from None
    if count < 1 or not 1 <= index <= count or total < count:
        raise ResultsError(f"{src}: impossible shard {index}/{count} of {total} scenarios; run it again")
    return index, count, total


def _label(r: Results) -> str:
    sha = r.suite.get("sha256")
    return f"'{r.suite.get('name')}'" + (f" (sha256 {str(sha)[:12]}…)" if sha else "")


def _check_alike(r: Results, src: str, first: Results, src0: str) -> None:
    """Same command, suite, shard count, settings and candidate as the first shard, or a clear error."""
    if r.kind != first.kind:
        raise ResultsError(
            f"{src}: a shard of `{r.kind}`, but {src0} is a shard of `{first.kind}`: merge the shards of one command"
        )
    if (r.suite.get("name"), r.suite.get("sha256")) != (first.suite.get("name"), first.suite.get("sha256")):
        raise ResultsError(
            f"{src}: suite {_label(r)}, but {src0}: suite {_label(first)}. All shards must run the same suite "
            "file; run the odd shard again from the same commit."
        )
    (i, n, total), (i0, n0, total0) = _shard_of(r, src), _shard_of(first, src0)
    if n != n0:
        raise ResultsError(
            f"{src}: shard {i}/{n}, but {src0}: shard {i0}/{n0}. Pass the shards of one matrix, all run with the "
            "same N in --shard I/N."
        )
    if total != total0:
        raise ResultsError(
            f"{src}: a suite of {total} scenarios, but {src0}: {total0}. All shards must run the same suite file."
        )
    a, b = r.settings.to_dict(), first.settings.to_dict()
    diff = [k for k in a if a[k] != b.get(k)]
    if diff:
        k = diff[0]
        raise ResultsError(
            f"{src}: settings differ from {src0} ({k}: {a[k]!r} vs {b[k]!r}). Run every shard with the same "
            "suite and options (--trials, --seed, --method, …)."
        )
    for key in ("entry", "version"):
        if r.agent.get(key) != first.agent.get(key):
            raise ResultsError(
                f"{src}: agent {key} {r.agent.get(key)!r}, but {src0}: {first.agent.get(key)!r}. Merge the shards "
                "of one agent version."
            )


def _ordered(shards: Sequence[Results], sources: Sequence[str]) -> list[tuple[Results, str]]:
    """The shards by index, checked to be exactly 1..n, each complete, no scenario twice."""
    first, src0 = shards[0], sources[0]
    _, count, total = _shard_of(first, src0)
    by_index: dict[int, tuple[Results, str]] = {}
    for r, src in zip(shards, sources, strict=True):
        index, _, _ = _shard_of(r, src)
        _check_alike(r, src, first, src0)
        if index in by_index:
            raise ResultsError(
                f"shard {index}/{count} given twice: {by_index[index][1]} and {src}. Pass each shard's file once."
            )
        by_index[index] = (r, src)
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        names = ", ".join(f"{i}/{count}" for i in missing)
        got = ", ".join(f"{i}/{count}" for i in sorted(by_index))
        raise ResultsError(
            f"shard {names} missing: pass all {count} shard files (got {got}). A shard that failed to run "
            "must be run again: merge cannot decide without its scenarios."
        )
    seen: dict[str, str] = {}
    for index in range(1, count + 1):
        r, src = by_index[index]
        expected = len(range(index - 1, total, count))
        if len(r.scenarios) != expected:
            raise ResultsError(
                f"{src}: shard {index}/{count} holds {len(r.scenarios)} scenarios, but shard {index} of a suite "
                f"of {total} in {count} shards holds {expected}. The file is not a complete shard; run it again."
            )
        for s in r.scenarios:
            if s.name in seen:
                raise ResultsError(
                    f"scenario '{s.name}' is in both {seen[s.name]} and {src}. Each scenario must be in exactly "
                    "one shard: run the shards again from one suite file."
                )
            seen[s.name] = src
    if len(seen) != total:  # unreachable after the size check, kept as the invariant merge relies on
        raise ResultsError(f"the shards hold {len(seen)} scenarios, but the suite has {total}")
    return [by_index[i] for i in range(1, count + 1)]


def _interleave(ordered: Sequence[Results]) -> tuple[ScenarioResult, ...]:
    """Back to suite order: position ``k`` is shard ``k mod n``'s ``k // n``-th scenario."""
    n = len(ordered)
    total = sum(len(r.scenarios) for r in ordered)
    return tuple(ordered[k % n].scenarios[k // n] for k in range(total))


def _merge_sections(ordered: Sequence[tuple[Results, str]], notes: list[tuple[str, str]]) -> dict[str, Any]:
    """Plugins' sections: equal values kept, mappings merged key by key (a section per scenario holds each
    shard's scenarios under disjoint keys), and a real conflict dropped with a note (``(key, note)``). The
    shard's own section is not merged (the merged file is the whole suite); alerts are re-made by
    ``compare_results``."""
    keys = {k for r, _ in ordered for k in r.sections if k not in ("alerts", "shard")}
    out = {}
    for key in sorted(keys):
        values = [r.sections[key] for r, _ in ordered if key in r.sections]
        try:
            out[key] = _union(values, key)
        except ValueError as exc:
            notes.append((key, f"results section '{key}' could not be merged ({exc}) and was left out"))
    return out


def _union(values: Sequence[Any], where: str) -> Any:
    if all(v == values[0] for v in values):
        return values[0]
    if all(isinstance(v, dict) for v in values):
        merged: dict[str, Any] = {}
        for k in dict.fromkeys(k for v in values for k in v):
            merged[k] = _union([v[k] for v in values if k in v], f"{where}.{k}")
        return merged
    raise ValueError(f"shards disagree on {where}")


def _plugin_sections(
    ordered: Sequence[tuple[Results, str]], notes: list[str], plugins: Plugins | None
) -> dict[str, Any]:
    """Sections plugins make again for the whole suite (``agentassay_merge_sections``), e.g. coverage."""

    shards = [r for r, _ in ordered]
    hooks = (plugins or default_plugins()).for_files(shards)
    names = [s.name for s in _interleave(shards)]
    made: dict[str, Any] = {}
    for found in hooks.call(
        "agentassay_merge_sections",
        propagate=(ResultsError,),  # shards that cannot be one run (the proxy's plan differs): exit 3
        shards=shards,
        sources=[src for _, src in ordered],
        names=names,
        notes=notes,
    ):
        made.update(found)
    notes += [f.note() for f in hooks.failures]
    return made


def _unique(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _rederive_run(
    scenarios: tuple[ScenarioResult, ...],
    settings: Settings,
    sections: dict[str, Any],
    plugins: Plugins | None,
) -> tuple[tuple[ScenarioResult, ...], SuiteDecision, list[str]]:
    """Replay each scenario's outcomes through the threshold test ``run`` used, at the total m.

    The shards already tested at the total m, so this reproduces their verdicts; replaying rather
    than trusting them means the merged decision never depends on what a shard file claims.
    A warm start is rebuilt from the prior counts the verdict recorded; the plugins' plan and
    evidence (a run's contracts) are re-derived from the merged sections, as ``compare`` does for a check.
    """

    m = len(scenarios)
    plan = GatePlan(settings, tuple(s.name for s in scenarios), sections=dict(sections))
    hooks = (plugins or default_plugins()).for_plan(plan)
    hooks.call("agentassay_plan", plan=plan)
    verdicts = {}
    fixed_n = {}
    for s in scenarios:
        scenario = Scenario(s.name, s.input, threshold=s.threshold)
        prior = WarmPrior.from_evidence(s.verdict.evidence)
        monitor = monitor_for(scenario, settings, scenarios=m, prior=prior, share=plan.taken(s.name))
        verdicts[s.name] = replay(monitor, s.outcomes)
        fixed_n[s.name] = fixed_n_equivalent(scenario, settings, scenarios=m)
    candidate = Candidate({s.name: s.trials for s in scenarios}, sections)
    evidence = [
        e
        for found in hooks.call("agentassay_scenario_evidence", plan=plan, candidate=candidate)
        for e in found
    ]
    final, decision = decide(verdicts, settings, evidence=evidence)
    notes: list[str] = []  # e.g. the coverage gate (Eq. 26) on the merged coverage, as `run` applies it
    decision = hooks.chain("agentassay_decide_files", "decision", decision, plan=plan, candidate=candidate, notes=notes)
    notes += [f.note() for f in hooks.failures]
    return (
        tuple(replace(s, verdict=final[s.name], fixed_n=fixed_n[s.name]) for s in scenarios),
        decision,
        notes,
    )


def merge_results(
    shards: Sequence[Results],
    *,
    baseline: Results | None = None,
    sources: Sequence[str] | None = None,
    baseline_source: str = "the baseline",
    plugins: Plugins | None = None,
) -> Results:
    """One results file from all ``n`` shards of a ``run`` or ``check``, every verdict re-derived.

    ``baseline``: required for shards of ``check`` (the file they were checked against; every
    scenario's recorded baseline counts must match it), refused for ``run``. ``sources`` name the
    files in messages. Raises ``ResultsError`` (exit 3) on a missing, duplicate or foreign shard.
    The result keeps the shards' kind and has no ``shard`` field: it stands for the whole suite.
    """
    if not shards:
        raise ResultsError("nothing to merge: pass the results file of every shard")
    names = list(sources) if sources is not None else [f"shard file {k + 1}" for k in range(len(shards))]
    ordered = _ordered(shards, names)
    first = ordered[0][0]
    if first.kind == "check" and baseline is None:
        raise ResultsError(
            "these are shards of `check`: pass --baseline FILE, the baseline results file the shards were "
            "checked against, so that every verdict can be re-derived over all scenarios"
        )
    if first.kind == "run" and baseline is not None:
        raise ResultsError(
            "--baseline is for shards of `check`; these are shards of `run` (a baseline recording): "
            "merge them without --baseline"
        )
    if baseline is not None and baseline.sections.get("shard") is not None:
        raise ResultsError(
            f"{baseline_source}: a shard of a baseline, not a whole one; merge the baseline's shards first "
            "(`agentassay merge ... -o BASELINE`)"
        )
    counts = baseline.baseline_counts() if baseline is not None else {}
    notes: list[str] = []
    for r, src in ordered:
        index, count, total = _shard_of(r, src)
        own = {shard_note(index, count, len(r.scenarios), total)}
        if baseline is not None:  # re-made over all scenarios by compare_results
            own |= set(baseline_notes(baseline, [s.name for s in r.scenarios], r.suite.get("name")))
            for s in r.scenarios:
                if s.baseline != counts.get(s.name):
                    got = "none" if s.baseline is None else f"{s.baseline.passes}/{s.baseline.trials}"
                    has = counts.get(s.name)
                    want = "none" if has is None else f"{has.passes}/{has.trials}"
                    raise ResultsError(
                        f"{src}: scenario '{s.name}' was checked against baseline counts {got}, but "
                        f"{baseline_source} has {want}. Pass the baseline file the shards were checked against."
                    )
        notes += [n for n in r.notes if n not in own]
    runs = [r.run_id for r, _ in ordered]
    notes.append(f"merged from {len(ordered)} shards (runs {', '.join(runs)})")
    starts = [r.started_at for r, _ in ordered if r.started_at]
    ends = [r.finished_at for r, _ in ordered if r.finished_at]
    conflicts: list[tuple[str, str]] = []
    sections = _merge_sections(ordered, conflicts)
    notes += [note for _, note in conflicts]
    made = _plugin_sections(ordered, notes, plugins)  # e.g. coverage from the shards' statistics
    remade = {note for key, note in conflicts if key in made}  # a section a plugin made again is not lost
    notes[:] = [n for n in notes if n not in remade]
    sections.update(made)
    combined = Results(
        kind=first.kind,
        suite=first.suite,
        agent=first.agent,
        settings=first.settings,
        scenarios=_interleave([r for r, _ in ordered]),
        decision=first.decision,  # re-derived below
        run_id=hashlib.blake2b("|".join(runs).encode(), digest_size=8).hexdigest(),
        started_at=min(starts, default=""),
        finished_at=max(ends, default=""),
        interrupted=any(r.interrupted for r, _ in ordered),
        versions=first.versions,
        notes=_unique(notes),
        sections=sections,
    )
    if baseline is None:
        scenarios, decision, failed = _rederive_run(
            combined.scenarios, combined.settings, dict(combined.sections), plugins
        )
        scenarios = with_more_trials(scenarios, combined.settings)  # none in a run; a stale one never survives
        return replace(combined, scenarios=scenarios, decision=decision, notes=(*combined.notes, *failed))
    out = compare_results(baseline, combined, plugins=plugins)
    return replace(
        out,
        kind=first.kind,
        started_at=combined.started_at,
        finished_at=combined.finished_at,
        notes=_unique(out.notes),
    )
