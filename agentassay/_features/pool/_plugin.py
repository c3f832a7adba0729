"""Pooled baselines (``run --full --pool PREVIOUS.json``; docs/runner.md, "Pooling baselines").

A baseline recorded with exactly the same agent, model, suite, trial settings and software as the
previous one measures the same pass rates, so its trials may join the previous file's: the next
checks compare against more trials. ``prepare`` compares the run's identity (_runner/_identity.py)
with the previous file's; any difference — or a previous file that is not a whole, uninterrupted
``run --full`` recording — pools nothing, and a note says exactly why.

Independence: the previous file's trials came from seed streams ``run`` (a plain recording) or
``run~g`` (generation ``g`` of a pooled chain), so this recording draws from the next stream,
``run~(g+1)``; no new trial repeats a pooled trial's seed (checked again when the trials are carried).
This run's own trials keep indices ``0..n-1`` (their traces, the fingerprint sample, metamorphic and
proxy pairs are this run's); the carried trials follow, renumbered, most recent first, at most
``2 x record_cap`` trials per scenario in all, and marked ``counted: false`` (they did not feed this
run's tests; a check counts every trial of its baseline). The section ``pool`` says per scenario how
many trials came from which run (its run id, when it was recorded, and the file or artifact).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ..._runner import Prepared
from ..._runner._identity import differences
from ..._spec import SpecError

if TYPE_CHECKING:
    from ..._results import Results, TrialOutcome
    from ..._runner import Prepared, Run

NAME = SECTION = "pool"


@dataclass
class _State:
    previous: Results
    source: str
    reasons: list[str] = field(default_factory=list)  # why nothing is pooled (empty: pooled)
    differs: list[str] = field(default_factory=list)  # the identity fields that differ
    generation: int = 0  # this recording's seed stream: run~generation (0: plain run)


STATE = StashKey[_State]()  # this plugin's state for one run


def _recorded_at(r: Results) -> str:
    return r.finished_at or r.started_at


def _where(state: _State) -> str:
    prev = state.previous
    return f"{state.source} (run {prev.run_id or '?'}, recorded {_recorded_at(prev) or '?'})"


def _generation(r: Results) -> int:
    section = r.sections.get(SECTION)
    try:
        return int(section.get("generation") or 0) if isinstance(section, dict) else 0
    except (TypeError, ValueError):
        return 0


def _refusals(prev: Results, identity: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Why ``prev`` cannot be pooled with a run of ``identity``: (reasons, identity fields that differ)."""

    if prev.kind != "run":
        return [f"it is a `{prev.kind}` results file, not a recorded baseline (`agentassay run --full`)"], []
    if prev.sections.get("shard") is not None:
        return ["it is one shard of a suite; merge the shards first (`agentassay merge`)"], []
    if prev.interrupted:
        return [
            "it was interrupted: its trials in flight were cancelled, so the ones that finished are not a fair sample"
        ], []
    if prev.aborted is not None:  # the agent could not be run: it stopped early and reached no decision
        return [f"it was aborted before its decision ({prev.aborted.get('reason')})"], []
    found = prev.agent.get("identity")
    diffs = differences(found if isinstance(found, dict) else None, identity)
    if diffs:
        return [what for _, what in diffs], list(dict.fromkeys(name for name, _ in diffs))
    if found.get("full") is not True:
        return [
            "it was not recorded with --full: its trial counts depend on when its tests stopped, which would "
            "bias a pooled estimate"
        ], []
    return [], []


@hookimpl
def agentassay_configure(run: Run) -> None:

    if run.options.extra.get("pool") is None:
        return
    if run.role != "run" or not run.full:
        raise SpecError(
            "--pool pools the trials of an earlier baseline into a new recording, so it needs a full recording: "
            "add --full (`agentassay run SUITE --full --pool PREVIOUS.json -o FILE`); `check` never pools"
        )
    if run.options.extra.get("shard") is not None:
        raise SpecError(
            "--pool cannot be combined with --shard: record the shards without --pool, merge them "
            "(`agentassay merge`), and pool a whole-suite recording against the merged file"
        )


@hookimpl
def agentassay_prepare(run: Run) -> Prepared | None:
    """Compare identities; a pooled recording draws its seeds from the next stream (returned: ``seed_role``)."""

    prev = run.options.extra["pool"]
    if prev is None:
        return None
    state = _State(prev, run.options.extra.get("pool_from") or "the previous results file")
    state.reasons, state.differs = _refusals(prev, run.identity)
    run.stash[STATE] = state
    if state.reasons:
        return None
    state.generation = _generation(prev) + 1
    return Prepared(seed_role=f"{run.role}~{state.generation}")


def _origins(prev: Results, name: str) -> list[tuple[int, int, dict[str, Any]]]:
    """``(lo, hi, origin)`` index ranges of ``prev``'s trials of ``name`` that ``prev`` itself pooled."""
    section = prev.sections.get(SECTION)
    scenarios = section.get("scenarios") if isinstance(section, dict) else None
    entry = scenarios.get(name) if isinstance(scenarios, dict) else None
    blocks = entry.get("from") if isinstance(entry, dict) else None
    out = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, dict):
            continue
        try:
            lo, hi = (int(i) for i in block["indices"])
        except (KeyError, TypeError, ValueError):  # a damaged block: its trials count as the file's own
            continue
        out.append((lo, hi, {k: block.get(k) for k in ("run_id", "recorded_at", "source")}))
    return out


def _origin(index: int, inherited: list[tuple[int, int, dict[str, Any]]], own: dict[str, Any]) -> dict[str, Any]:
    return next((o for lo, hi, o in inherited if lo <= index <= hi), own)


def _blocks(carried: list[tuple[TrialOutcome, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Consecutive carried trials from one origin run as one block: the run and the indices in this file."""
    blocks: list[dict[str, Any]] = []
    for t, origin in carried:
        last = blocks[-1] if blocks else None
        if last is not None and all(last[k] == origin.get(k) for k in ("run_id", "recorded_at", "source")):
            last["trials"] += 1
            last["indices"][1] = t.index
        else:
            blocks.append({**origin, "trials": 1, "indices": [t.index, t.index]})
    return blocks


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    state: _State | None = run.stash.get(STATE, None)
    if state is None:
        return None
    prev = state.previous
    where = _where(state)
    section: dict[str, Any] = {
        "source": state.source,
        "run_id": prev.run_id,
        "recorded_at": _recorded_at(prev),
        "pooled": False,
        # The stream this run's own trials came from (run~generation; 0: run): a later recording pooling
        # this file must draw from a newer one, even if this run ended up pooling nothing.
        "generation": state.generation,
        "seed_stream": run.seed_role,
        "differs": state.differs,
        "reasons": list(state.reasons),
    }
    if run.aborted and not state.reasons:
        state.reasons.append("this run was abandoned (the agent could not be run)")
        section["reasons"] = list(state.reasons)
    if state.reasons:
        run.note(f"nothing pooled from {where}: " + "; ".join(state.reasons))
        return {SECTION: section}

    record_cap = run.target_settings.record_cap
    cap = 2 * record_cap
    own = {"run_id": prev.run_id, "recorded_at": _recorded_at(prev), "source": state.source}
    per: dict[str, Any] = {}
    total = dropped = 0
    for name, st in run.states.items():
        new = st.outcomes()
        seeds = {t.seed for t in new}
        before = prev.scenario(name)
        old = sorted(before.trials, key=lambda t: t.index) if before is not None else []
        inherited = _origins(prev, name)
        room = max(0, cap - len(new))
        kept: list[tuple[TrialOutcome, dict[str, Any]]] = []
        left_out = repeated = 0
        for t in old:  # the previous file's order: its own trials first, then those it pooled, newest first
            if t.seed in seeds:  # never by construction (distinct seed streams); kept out should it ever be
                repeated += 1
                continue
            if len(kept) >= room:
                left_out += 1
                continue
            seeds.add(t.seed)
            kept.append((t, _origin(t.index, inherited, own)))
        base = max(st.started, max((t.index for t in new), default=-1) + 1)
        carried = [
            (replace(t, index=base + i, counted=False, pooled=t.pooled or str(o.get("run_id") or "?")), o)
            for i, (t, o) in enumerate(kept)
        ]
        run.pooled[name] = tuple(t for t, _ in carried)
        per[name] = {
            "new": len(new),
            "pooled": len(carried),
            "trials": len(new) + len(carried),
            "left_out": left_out,
            "from": _blocks(carried),
        }
        if repeated:
            per[name]["repeated_seeds"] = repeated
        total += len(carried)
        dropped += left_out
    section |= {"pooled": True, "generation": state.generation, "cap": cap, "trials": total, "scenarios": per}
    pooled_into = sum(1 for p in per.values() if p["pooled"])
    cut = f"; {dropped:,} older trials left out" if dropped else ""
    run.note(
        f"pooled {total:,} earlier trials into {pooled_into} of {len(per)} scenarios from {where}: the suite, "
        f"model, trial settings, agent source and versions are unchanged. The baseline holds this run's trials "
        f"and the most recent earlier ones, at most {cap} (2 x {record_cap}) per scenario{cut}; this run drew "
        f"seeds from stream '{run.seed_role}', so none repeats a pooled trial's. Verdicts are this run's own."
    )
    return {SECTION: section}
