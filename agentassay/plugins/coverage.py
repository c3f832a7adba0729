"""Coverage of a run (docs/coverage.md): structural C1–C4 and the behavioural tuple, from its traces.

The manifest comes from ``config.coverage.manifest`` or is extracted from the agent entry point;
``probe_restricted`` installs recording stubs for restricted tools on the adapter before any
trial, so that C3 can observe attempts. Coverage never touches the verdicts: it is computed from
the traces afterwards and only the Eq. 26 gate (``config.coverage.min``) may turn a deploy into
manual review.

Hooks: ``prepare`` (manifest, probe), ``trial_finished`` (the target's traces), ``results_sections``
(``coverage``), ``decide`` (the Eq. 26 gate) and ``report_sections`` (the PR comment's coverage gaps; in the
HTML report also the coordination graph as an inline SVG).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..adapters import AgentAdapter
from ..adapters._resolve import is_sdk_agent
from ..gate import SuiteDecision, coverage_gate
from ..spec import Suite
from ..traces import Trace
from ._hookspecs import hookimpl

if TYPE_CHECKING:
    from ..reports import ReportContext, Section
    from ..results import Results
    from ..runner import Phase, Run


@dataclass
class CoverageRun:
    """What a run needs to measure coverage: the manifest (if any), and what each trace contributed.

    Traces are folded in as they finish — the structural observation of each distinct projection (with
    the scenario that first showed it) and the behavioural accumulator — so a run of any length keeps
    only these, never its traces (``agentassay analyze`` replays 10,000s of them).
    """

    manifest: Any = None  # agentassay.structure.Manifest
    notes: list[str] = field(default_factory=list)
    observer: Any = None  # fast_observer(manifest)
    seen: dict[int, tuple[str, Any]] = field(default_factory=dict)  # id(observation) -> (label, observation)
    behavioural: Any = None  # agentassay.coverage.behavioural_accumulator
    tool_notes: list[str] = field(default_factory=list)
    count: int = 0

    def start(self, adapter: AgentAdapter) -> None:
        from ..coverage import behavioural_accumulator

        if self.manifest is not None:
            from ..structure._coverage import fast_observer

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
        self.behavioural.add(trace)


def _sdk_agent(adapter: AgentAdapter) -> Any:
    agent = getattr(adapter, "agent", None)
    return agent if is_sdk_agent(agent) else None


def prepare_coverage(suite: Suite, adapter: AgentAdapter, entry: str) -> CoverageRun | None:
    """Load or extract the manifest and install the restricted-tool probe; None when coverage is off."""
    cfg = suite.settings.coverage
    if not cfg.enabled:
        return None
    run = CoverageRun()
    from ..structure import ManifestError, extract_manifest, load_manifest

    if cfg.manifest:
        run.manifest = load_manifest(cfg.manifest, derive_restrictions=cfg.derive_restrictions)
    else:
        agent = _sdk_agent(adapter)
        if agent is not None:
            try:
                run.manifest = extract_manifest(
                    agent, system=suite.name, derive_restrictions=cfg.derive_restrictions
                )
            except (ManifestError, ValueError) as exc:
                run.notes.append(f"structural coverage skipped: {exc}")
        else:
            run.notes.append(
                "structural coverage needs an OpenAI Agents SDK agent or `config.coverage.manifest` "
                "(a hand-written manifest, docs/coverage.md#writing-a-manifest)"
            )
    if cfg.probe_restricted and run.manifest is not None:
        from ..structure._generate import install_restricted_probe

        if _sdk_agent(adapter) is None or not install_restricted_probe(adapter, run.manifest):
            run.notes.append(
                "config.coverage.probe_restricted: no probe installed (needs an OpenAI Agents SDK agent with restricted edges)"
            )
    return run


def measure_coverage(run: CoverageRun, suite: Suite, adapter: AgentAdapter) -> dict[str, Any]:
    """The ``coverage`` section of the results file."""
    from ..coverage import finish_behavioural
    from ..structure import structural_coverage

    cfg = suite.settings.coverage
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
    return out


# -- hooks ---------------------------------------------------------------------------------------

NAME = "coverage"


@dataclass
class _State:
    covering: CoverageRun
    overall: float | None = None


@hookimpl
def agentassay_prepare(run: Run) -> None:
    assert run.adapter is not None
    covering = prepare_coverage(run.suite, run.adapter, run.options.entry)
    if covering is not None:
        covering.start(run.adapter)
        run.scratch[NAME] = _State(covering)


@hookimpl
def agentassay_trial_finished(run: Run, phase: Phase, trace: Trace) -> None:
    state: _State | None = run.scratch.get(NAME)
    if state is not None and phase.name == "target":  # the proxy's traces are another model's
        state.covering.add(trace)


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:
    state: _State | None = run.scratch.get(NAME)
    if state is None:
        return None
    assert run.adapter is not None
    try:
        coverage = measure_coverage(state.covering, run.suite, run.adapter)
    except Exception as exc:  # coverage is an analysis: it must never lose the measured trials
        run.note(f"coverage could not be computed: {type(exc).__name__}: {exc}")
        return None
    state.overall = coverage["gate"]["overall"]
    return {"coverage": coverage}


@hookimpl
def agentassay_decide(run: Run, decision: SuiteDecision) -> SuiteDecision | None:
    state: _State | None = run.scratch.get(NAME)
    if state is None or "coverage" not in run.sections:
        return None
    decision, note = coverage_gate(decision, state.overall, run.settings.coverage.min)
    if note:
        run.note(note)
    return decision


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section] | None:
    cov = results.coverage
    if (
        report.format not in ("markdown", "html")
        or not cov
        or not (cov.get("structural") or cov.get("behavioural"))
    ):
        return None
    from ..reports._coverage import as_section, coverage_section, html_section

    if report.format == "html":  # the summary, the gaps and the coordination graph as an inline SVG
        return [html_section(cov.get("structural"), cov.get("behavioural"), secrets=report.secrets)]
    return [
        as_section(coverage_section(cov.get("structural"), cov.get("behavioural"), secrets=report.secrets))
    ]
