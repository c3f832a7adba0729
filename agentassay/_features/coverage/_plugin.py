"""Coverage of a run (docs/coverage.md): structural C1–C4 and the behavioural tuple, from its traces.

The manifest comes from ``config.coverage.manifest`` or is extracted from the agent entry point;
``probe_restricted`` installs recording stubs for restricted tools on the adapter before any
trial, so that C3 can observe attempts. Coverage never touches the verdicts: it is computed from
the traces afterwards and only the Eq. 26 gate (``config.coverage.min``) may turn a deploy into
manual review.

Shards: a run with ``--shard i/n`` also writes ``coverage.merge``, the sufficient statistics of its
coverage (the behavioural accumulator's counts; the manifest and each distinct structural observation
with the trial and scenario that first showed it). ``agentassay merge`` combines them into the section
one unsharded run over the same trials writes, and re-applies the Eq. 26 gate to the merged overall;
files without ``--shard`` do not carry them.

Hooks: ``prepare`` (manifest, probe), ``trial_finished`` (the target's traces), ``results_sections``
(``coverage``), ``decide`` (the Eq. 26 gate), ``merge_sections`` (the shards' coverage as one),
``decide_files`` (the Eq. 26 gate in ``compare`` and ``merge``) and ``report_sections`` (the PR comment's
coverage gaps; in the HTML report also the coordination graph as an inline SVG).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._gate import SuiteDecision
from ..._integrations.adapters import AgentAdapter
from ..._integrations.adapters._resolve import is_sdk_agent
from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ..._spec import Suite
from ..._traces import Trace
from ..structure import ManifestError, extract_manifest, load_manifest, structural_coverage
from ..structure._coverage import fast_observer
from ..structure._generate import install_restricted_probe
from ..structure._manifest import manifest_to_data, parse_manifest
from ..structure._model import Observation
from . import (
    behavioural_accumulator,
    behavioural_statistics,
    finish_behavioural,
    merge_behavioural_statistics,
)
from ._gate import coverage_gate
from ._report import as_section, coverage_section, html_section, trivial
from ._settings import CoverageConfig

if TYPE_CHECKING:
    from ..._gate import Candidate, GatePlan
    from ..._reports import ReportContext, Section
    from ..._results import Results
    from ..._runner import Phase, Run


@dataclass
class CoverageRun:
    """What a run needs to measure coverage: the manifest (if any), and what each trace contributed.

    Traces are folded in as they finish — the structural observation of each distinct projection (with
    the scenario that first showed it) and the behavioural accumulator — so a run of any length keeps
    only these, never its traces (``agentassay analyze`` replays 10,000s of them).
    """

    manifest: Any = None  # agentassay._features.structure.Manifest
    notes: list[str] = field(default_factory=list)
    observer: Any = None  # fast_observer(manifest)
    seen: dict[int, tuple[str, Any]] = field(default_factory=dict)  # id(observation) -> (label, observation)
    first_trial: dict[int, Any] = field(default_factory=dict)  # id(observation) -> trial index that showed it first
    behavioural: Any = None  # agentassay._features.coverage.behavioural_accumulator
    tool_notes: list[str] = field(default_factory=list)
    count: int = 0

    def start(self, adapter: AgentAdapter) -> None:

        if self.manifest is not None:

            self.observer = fast_observer(self.manifest)
        try:
            tools = adapter.tools()
        except Exception as exc:  # describing tools must never lose the results
            tools = []
            self.tool_notes.append(f"tools could not be listed: {exc}")
        self.behavioural = behavioural_accumulator(tools)

    def add(self, trace: Trace) -> None:
        index, self.count = self.count, self.count + 1
        if self.observer is not None:
            obs = self.observer(trace)
            if id(obs) not in self.seen:  # absorbing the same projection again adds nothing
                self.seen[id(obs)] = (trace.metadata.scenario or f"trace {index}", obs)
                self.first_trial[id(obs)] = trace.metadata.trial
        self.behavioural.add(trace)


def _sdk_agent(adapter: AgentAdapter) -> Any:
    agent = getattr(adapter, "agent", None)
    return agent if is_sdk_agent(agent) else None


def _framework_agent(adapter: AgentAdapter) -> Any:
    """Another framework's agent object whose profile reads its graph (``manifest``), or None."""
    obj = getattr(adapter, "graph", None)
    profile = getattr(adapter, "profile", None)
    return obj if obj is not None and callable(getattr(profile, "manifest", None)) else None


def prepare_coverage(suite: Suite, adapter: AgentAdapter, entry: str) -> CoverageRun | None:
    """Load or extract the manifest and install the restricted-tool probe; None when coverage is off."""
    cfg = suite.settings.of(CoverageConfig)
    if not cfg.enabled:
        return None
    run = CoverageRun()

    if cfg.manifest:
        run.manifest = load_manifest(cfg.manifest, derive_restrictions=cfg.derive_restrictions)
    else:
        agent = _sdk_agent(adapter) or _framework_agent(adapter)
        if agent is not None:
            try:
                run.manifest = extract_manifest(
                    agent, system=suite.name, derive_restrictions=cfg.derive_restrictions
                )
            except (ManifestError, ValueError) as exc:
                run.notes.append(f"structural coverage skipped: {exc}")
        else:
            run.notes.append(
                "structural coverage needs an agent whose graph can be read (an OpenAI Agents SDK agent, a "
                "LangGraph graph, a PydanticAI agent) or `config.coverage.manifest` (a hand-written manifest, "
                "docs/coverage.md#writing-a-manifest)"
            )
    if (
        cfg.probe_restricted
        and run.manifest is not None
        and (_sdk_agent(adapter) is None or not install_restricted_probe(adapter, run.manifest))
    ):
        run.notes.append(
            "config.coverage.probe_restricted: no probe installed (needs an OpenAI Agents SDK agent with restricted edges)"
        )
    return run


def measure_coverage(
    run: CoverageRun, suite: Suite, adapter: AgentAdapter, *, statistics: bool = False
) -> dict[str, Any]:
    """The ``coverage`` section of the results file; with ``statistics`` (a shard) also ``merge``, what
    :func:`merge_coverage` needs to make the shards' sections one."""

    cfg = suite.settings.of(CoverageConfig)
    out: dict[str, Any] = {"structural": None, "behavioural": None, "notes": list(run.notes)}
    if run.manifest is not None:
        targeted = [w for s in suite.scenarios for w in s.witness]
        out["structural"] = structural_coverage(
            run.manifest, labelled=run.seen.values(), targeted=targeted or None
        ).to_dict()
    out["notes"] += run.tool_notes
    behavioural = finish_behavioural(
        run.behavioural,
        target_models=list(cfg.models) or None,
        weights=cfg.weights,
        state_lambda=cfg.state_lambda,
    )
    out["behavioural"] = behavioural.to_dict()
    out["gate"] = {"min": cfg.min, "overall": behavioural.overall}
    if statistics:
        out["merge"] = {
            "schema": MERGE_SCHEMA,
            "behavioural": behavioural_statistics(run.behavioural),
            "structural": None if run.manifest is None else _structural_statistics(run),
        }
    return out


# -- shards: sufficient statistics and their merge -----------------------------------------------

MERGE_SCHEMA = "agentassay.coverage-merge/1"
# The start of every note ``coverage_gate`` writes: a shard's gate is re-applied to the merged overall.
GATE_NOTE = "coverage gate (config.coverage.min"


def _structural_statistics(run: CoverageRun) -> dict[str, Any]:
    """The manifest and each distinct observation, in the order first seen, with the trial and scenario
    that first showed it: absorbed again in (trial, scenario) order, they give the labels and the
    order of ``ambiguous`` an unsharded run gives (``structural_coverage`` keeps the first label)."""

    observations = []
    for key, (label, obs) in run.seen.items():
        observations.append(
            {
                "trial": run.first_trial.get(key),
                "scenario": label,
                "agents": sorted(obs.agents),
                "tools": sorted(map(list, obs.tools)),
                "restricted": sorted(map(list, obs.restricted)),
                "delegations": sorted(map(list, obs.delegations)),
                "ambiguous": list(obs.ambiguous),
            }
        )
    return {"manifest": manifest_to_data(run.manifest), "observations": observations}


def _merge_structural(
    stats: Sequence[Mapping[str, Any]],
    sections: Sequence[Mapping[str, Any]],
    sources: Sequence[str],
    place: Mapping[str, int],
) -> dict[str, Any]:

    manifest = stats[0]["manifest"]
    for s, src in zip(stats[1:], sources[1:], strict=True):
        if s["manifest"] != manifest:
            raise ValueError(f"{src} was measured against another workflow manifest than {sources[0]}")
    targeted = sections[0].get("targeted")
    labelled = []
    for k, s in enumerate(stats):
        for j, o in enumerate(s["observations"]):
            trial = o.get("trial")
            rank = (trial if isinstance(trial, int) else math.inf, place.get(o["scenario"], len(place)), k, j)
            obs = Observation(
                agents=frozenset(o["agents"]),
                tools=frozenset(tuple(e) for e in o["tools"]),
                restricted=frozenset(tuple(e) for e in o["restricted"]),
                delegations=frozenset(tuple(e) for e in o["delegations"]),
                ambiguous=tuple(o["ambiguous"]),
            )
            labelled.append((rank, str(o["scenario"]), obs))
    labelled.sort(key=lambda x: x[0])
    m = parse_manifest(manifest, source="the shards' coverage.merge.structural.manifest")
    return structural_coverage(
        m, labelled=[(label, obs) for _, label, obs in labelled], targeted=targeted
    ).to_dict()


def merge_coverage(
    sections: Sequence[Mapping[str, Any] | None],
    sources: Sequence[str],
    names: Sequence[str],
    cfg: Any,
) -> tuple[dict[str, Any] | None, list[str]]:
    """The ``coverage`` section of the whole suite from its shards' sections, and notes for the results file.

    Exact: the behavioural tuple is finished from the merged statistics (path counts added, so Chao1
    sees the merged f1 and f2) and C1–C4 recomputed from every shard's observations against the one
    manifest (an edge witnessed in any shard is witnessed; C3 counts elicited attempts of any shard).
    Observations and unknown tools are taken in (trial index, scenario place in ``names``) order, the
    order an unsharded run with ``concurrency: 1`` meets them, so even the "witnessed by" labels agree.
    ``cfg`` is the suite's ``config.coverage``. A part that cannot be merged (a shard without
    statistics, different manifests or tool inventories) is left out with a note saying why.
    """

    if not any(sections):
        return None, []
    missing = [src for sec, src in zip(sections, sources, strict=True) if not sec or not isinstance(sec.get("merge"), Mapping)]
    if missing:
        return None, [
            f"coverage left out of the merged file: {', '.join(missing)} "
            f"{'has' if len(missing) == 1 else 'have'} no coverage statistics (`coverage.merge`, written by "
            "`--shard` runs of this version); run the shards again to merge coverage"
        ]
    stats = [sec["merge"] for sec in sections]  # type: ignore[index]
    bad = [src for s, src in zip(stats, sources, strict=True) if s.get("schema") != MERGE_SCHEMA]
    if bad:
        return None, [f"coverage left out of the merged file: {', '.join(bad)}: coverage.merge is not {MERGE_SCHEMA}"]
    notes: list[str] = []
    place = {name: i for i, name in enumerate(names)}
    out: dict[str, Any] = {"structural": None, "behavioural": None}
    structural = [s.get("structural") for s in stats]
    if all(structural):
        try:
            parts = [sec["structural"] for sec in sections]  # type: ignore[index]
            out["structural"] = _merge_structural(structural, parts, sources, place)  # type: ignore[arg-type]
        except (ValueError, KeyError, TypeError) as exc:
            notes.append(f"structural coverage left out of the merged file: {exc}")
    elif any(structural):
        notes.append("structural coverage left out of the merged file: only some shards measured it")
    overall = None
    try:
        acc = merge_behavioural_statistics([s["behavioural"] for s in stats], names, labels=sources)
        behavioural = finish_behavioural(
            acc, target_models=list(cfg.models) or None, weights=cfg.weights, state_lambda=cfg.state_lambda
        )
        out["behavioural"] = behavioural.to_dict()
        overall = behavioural.overall
    except (ValueError, KeyError, TypeError) as exc:
        notes.append(f"behavioural coverage left out of the merged file: {exc}")
    out["notes"] = list(dict.fromkeys(n for sec in sections for n in sec.get("notes") or ()))  # type: ignore[union-attr]
    out["gate"] = {"min": cfg.min, "overall": overall}
    return out, notes


# -- hooks ---------------------------------------------------------------------------------------

NAME = "coverage"


@dataclass
class _State:
    covering: CoverageRun
    overall: float | None = None


STATE = StashKey[_State]()  # this plugin's state for one run


@hookimpl
def agentassay_prepare(run: Run) -> None:
    assert run.adapter is not None
    covering = prepare_coverage(run.suite, run.adapter, run.options.entry)
    if covering is not None:
        covering.start(run.adapter)
        run.stash[STATE] = _State(covering)


@hookimpl
def agentassay_trial_finished(run: Run, phase: Phase, trace: Trace) -> None:
    state: _State | None = run.stash.get(STATE, None)
    if state is not None and phase.name == "target":  # the proxy's traces are another model's
        state.covering.add(trace)


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    state: _State | None = run.stash.get(STATE, None)
    if state is None:
        return None
    assert run.adapter is not None
    try:
        coverage = measure_coverage(
            state.covering, run.suite, run.adapter, statistics=run.options.extra.get("shard") is not None
        )
    except Exception as exc:  # coverage is an analysis: it must never lose the measured trials
        run.note(f"coverage could not be computed: {type(exc).__name__}: {exc}")
        return None
    state.overall = coverage["gate"]["overall"]
    return {"coverage": coverage}


@hookimpl
def agentassay_decide(run: Run, decision: SuiteDecision) -> SuiteDecision | None:
    state: _State | None = run.stash.get(STATE, None)
    if state is None or "coverage" not in run.sections:
        return None
    decision, note = coverage_gate(decision, state.overall, run.settings.of(CoverageConfig).min)
    if note:
        run.note(note)
    return decision


@hookimpl
def agentassay_merge_sections(
    shards: Sequence[Results], sources: Sequence[str], names: Sequence[str], notes: list[str]
) -> dict[str, Any] | None:
    if not any(r.sections.get("coverage") for r in shards):
        return None
    notes[:] = [n for n in notes if not n.startswith(GATE_NOTE)]  # each shard's gate: decided again, merged
    coverage, more = merge_coverage([r.sections.get("coverage") for r in shards], sources, names, shards[0].settings.of(CoverageConfig))
    notes.extend(more)
    return {"coverage": coverage}


@hookimpl
def agentassay_decide_files(
    plan: GatePlan, candidate: Candidate, decision: SuiteDecision, notes: list[str]
) -> SuiteDecision | None:
    coverage = candidate.sections.get("coverage")
    if not coverage:
        return None
    overall = (coverage.get("gate") or {}).get("overall")
    decision, note = coverage_gate(decision, overall, plan.settings.of(CoverageConfig).min)
    if note:
        notes.append(note)
    return decision


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section] | None:
    cov = results.sections.get("coverage")
    if (
        report.format not in ("markdown", "html")
        or not cov
        or not (cov.get("structural") or cov.get("behavioural"))
    ):
        return None

    if report.format == "html":  # the summary, the gaps and the coordination graph as an inline SVG
        return [html_section(cov.get("structural"), cov.get("behavioural"), secrets=report.secrets)]
    section = coverage_section(cov.get("structural"), cov.get("behavioural"), secrets=report.secrets)
    if trivial(cov.get("structural"), section):  # all covered, nothing to act on: not worth the comment's room
        return None
    return [as_section(section)]
