"""Coverage of a run (docs/coverage.md): structural C1–C4 and the behavioural tuple, from its traces.

The manifest comes from ``config.coverage.manifest`` or is extracted from the agent entry point;
``probe_restricted`` installs recording stubs for restricted tools on the adapter before any
trial, so that C3 can observe attempts. Coverage never touches the verdicts: it is computed from
the traces afterwards and only the Eq. 26 gate (``config.coverage.min``) may turn a deploy into
manual review.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..adapters import AgentAdapter
from ..adapters._resolve import is_sdk_agent
from ..spec import Suite
from ..traces import Trace


@dataclass
class CoverageRun:
    """What a run needs to measure coverage: the manifest (if any) and the traces seen so far."""

    manifest: Any = None  # agentassay.structure.Manifest
    traces: list[Trace] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, trace: Trace) -> None:
        self.traces.append(trace)


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
                run.manifest = extract_manifest(agent, system=suite.name, derive_restrictions=cfg.derive_restrictions)
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
            run.notes.append("config.coverage.probe_restricted: no probe installed (needs an OpenAI Agents SDK agent with restricted edges)")
    return run


def measure_coverage(run: CoverageRun, suite: Suite, adapter: AgentAdapter) -> dict[str, Any]:
    """The ``coverage`` section of the results file."""
    from ..coverage import behavioural_coverage
    from ..structure import structural_coverage

    cfg = suite.settings.coverage
    out: dict[str, Any] = {"structural": None, "behavioural": None, "notes": list(run.notes)}
    if run.manifest is not None:
        targeted = [w for s in suite.scenarios for w in s.witness]
        out["structural"] = structural_coverage(run.manifest, run.traces, targeted=targeted or None).to_dict()
    try:
        tools = adapter.tools()
    except Exception as exc:  # describing tools must never lose the results
        tools = []
        out["notes"].append(f"tools could not be listed: {exc}")
    behavioural = behavioural_coverage(
        run.traces,
        tools=tools,
        target_models=list(cfg.models) or None,
        weights=cfg.weights,
        state_lambda=cfg.state_lambda,
    )
    out["behavioural"] = behavioural.to_dict()
    out["gate"] = {"min": cfg.min, "overall": behavioural.overall}
    return out
