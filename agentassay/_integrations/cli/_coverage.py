"""``agentassay manifest / generate / coverage``: structural and behavioural coverage (docs/coverage.md).

``manifest`` extracts (or validates) the workflow specification, ``generate`` realizes a witness
scenario per obligation bundle with DSPy into a suite file, ``coverage`` reports what a results file
exercised and what it left untested. DSPy and the agent framework are imported only when used
(this module itself loads when one of its commands runs: the CLI's LazyGroup).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..._errors import AgentAssayError, ExitCode
from ..._features.coverage._report import coverage_section, mermaid_flowchart
from ..._features.coverage._settings import CoverageConfig
from ..._features.structure import (
    derive_restrictions,
    dump_manifest,
    extract_manifest,
    generate_suite,
    load_manifest,
    objectives,
    obligations,
    realizer_lm,
)
from ..._results import ResultsError, load_results
from ..._spec import load_suite
from ..adapters import load_adapter


def _handle_errors(fn: Callable[..., int]) -> Callable[..., int]:
    """Bad manifests, entry points that do not import and bad files are usage errors: exit 3, whatever the
    error's own code (an agent that does not import is a wrong ``module:attr`` here, not a run that failed)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return fn(*args, **kwargs)
        except AgentAssayError as exc:
            click.echo(f"error: {exc}", err=True)
            return ExitCode.USAGE

    return wrapper


def _load_manifest(target: str, *, derive: bool, system: str | None) -> Any:
    """A manifest from ``module:attr`` (extracted) or from a YAML file (validated)."""

    path = Path(target)
    if path.suffix.lower() in (".yml", ".yaml") or path.is_file():
        manifest = load_manifest(path)
        return derive_restrictions(manifest) if derive and not manifest.restrict else manifest
    return extract_manifest(target, system=system, derive_restrictions=derive)


def _counts_line(manifest: Any) -> str:
    o = obligations(manifest)

    def count(n: int, noun: str) -> str:
        return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

    return (
        f"{count(len(o.agents), 'reachable agent')}, {count(len(manifest.tools), 'tool')}, "
        f"{count(len(o.allowed), 'allowed edge')}, {count(len(o.restricted), 'restricted edge')}, "
        f"{count(len(o.delegations), 'delegation')} = {count(o.total, 'obligation')}"
    )


@click.command()
@click.argument("entry", metavar="ENTRY|MANIFEST.yml")
@click.option(
    "--derive-restrictions/--no-derive-restrictions", "derive", default=True, show_default=True,
    help="Closed world: restrict every tool to the agents it is not allowed to (the paper's extractor).",
)
@click.option("--system", metavar="ID", help="System id (default: the entry's package name).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the manifest here.")
@click.option("--json", "as_json", is_flag=True, help="Print obligations as JSON instead of the YAML manifest.")
@_handle_errors
def manifest(entry: str, derive: bool, system: str | None, output: Path | None, as_json: bool) -> int:
    """Extract the workflow manifest of ENTRY (package.module:attr), or validate a manifest file.

    Prints the normalized manifest (the structural-coverage paper's Listing 1) and the obligation
    counts. Exit 0, or 3 when the entry point does not import or the manifest is not well formed.
    """

    sys.path.insert(0, str(Path.cwd()))
    m = _load_manifest(entry, derive=derive, system=system)
    text = dump_manifest(m)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    if as_json:
        o = obligations(m)
        click.echo(
            json.dumps(
                {
                    "system": m.system,
                    "entry_agent": m.entry_agent,
                    "counts": o.counts() | {"tools": len(m.tools)},
                    "obligations": {
                        "agents": list(o.agents),
                        "allowed": [list(e) for e in o.allowed],
                        "restricted": [list(e) for e in o.restricted],
                        "delegations": [list(e) for e in o.delegations],
                    },
                    "objectives": [q.id for q in objectives(o)],
                },
                indent=1,
            )
        )
    elif output is None:
        click.echo(text, nl=False)
    click.echo(_counts_line(m), err=True)
    return ExitCode.OK


def _realizer_lm(script: Path | None, lm: str | None, api_base: str | None, api_key_env: str | None, suite_root: Path) -> Any:
    if lm is not None and script is not None:
        raise click.UsageError("give either --lm (a real model) or --script (the scripted offline LM), not both")
    if lm is None and script is None:
        default = suite_root / "realizer_script.yml"
        if not default.is_file():
            raise click.UsageError(
                "no realizer LM: pass --lm PROVIDER/MODEL (with --api-key-env, and --api-base for other servers), "
                f"or --script FILE for the scripted offline LM (looked for {default})"
            )
        script = default
    if script is not None:
        return realizer_lm(None, script=script)
    return realizer_lm({"model": lm, "api_base": api_base, "api_key_env": api_key_env}, script=None)


@click.command()
@click.argument("suite", type=click.Path(path_type=Path))
@click.option("--lm", metavar="PROVIDER/MODEL", help="Realizer model for DSPy, e.g. openai/gpt-4.1-mini.")
@click.option("--api-base", metavar="URL", help="API base for --lm (OpenAI-compatible servers).")
@click.option("--api-key-env", metavar="VAR", help="Environment variable holding the API key for --lm.")
@click.option(
    "--script", type=click.Path(dir_okay=False, path_type=Path),
    help="Scripted offline realizer (YAML); default: realizer_script.yml next to the suite when no --lm.",
)
@click.option("--attempts", type=click.IntRange(min=1), default=5, show_default=True, help="Refine attempts per bundle (N).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the witness runs.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
    help="Suite file to write (default: SUITE's name with .structural.yml).",
)
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Write the realization report (JSON).")
@click.option("-q", "--quiet", is_flag=True, help="Only the summary line.")
@_handle_errors
def generate(
    suite: Path,
    lm: str | None,
    api_base: str | None,
    api_key_env: str | None,
    script: Path | None,
    attempts: int,
    seed: int,
    output: Path | None,
    report_path: Path | None,
    quiet: bool,
) -> int:
    """Realize one witness scenario per structural obligation bundle of SUITE's agent into a suite file.

    Each candidate is executed against the agent (restricted tools carry recording stubs) and kept
    only when its trace witnesses every objective of its bundle; unrealized objectives are reported
    and listed at the top of the generated file. Exit 0, 3 on bad input, 4 if the agent cannot run.
    """

    s = load_suite(suite)
    engine_lm = _realizer_lm(script, lm, api_base, api_key_env, s.root)

    cfg = s.settings.of(CoverageConfig)
    search = [Path.cwd(), s.root]
    adapter = load_adapter(s.agent.entry, factory=s.agent.factory, model=s.model, search=search, root=s.root)
    if cfg.manifest:
        m = _load_manifest(cfg.manifest, derive=cfg.derive_restrictions, system=None)
    else:
        agent = getattr(adapter, "agent", None)
        if agent is None:
            raise click.UsageError(
                f"{suite}: `generate` needs an OpenAI Agents SDK agent, or config.coverage.manifest for other frameworks"
            )

        m = extract_manifest(agent, system=s.name, derive_restrictions=cfg.derive_restrictions)
    out = output or suite.with_name(f"{suite.stem}.structural.yml")
    result = generate_suite(s, m, adapter, lm=engine_lm, attempts=attempts, seed=seed, output=out)
    report = result.report
    if report_path is not None:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(json.dumps(report.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if not quiet:
        for bundle in report.results:
            mark = "realized" if bundle.realized else "UNREALIZED"
            click.echo(f"{mark:>10}  {bundle.id}  ({len(bundle.attempts)} attempt{'s' * (len(bundle.attempts) != 1)})")
    done, missing = len(report.realized_objectives), len(report.unrealized_objectives)
    click.echo(
        f"{done} of {done + missing} objectives realized, {missing} unrealized; "
        f"{report.lm_calls} LM calls; suite written to {out}",
        err=True,
    )
    return ExitCode.OK


@click.command()
@click.argument("results_file", metavar="RESULTS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the coverage section as JSON.")
@click.option("--markdown", is_flag=True, help="Print the PR-comment coverage section (Markdown with Mermaid).")
@click.option("--mermaid", is_flag=True, help="Print only the Mermaid flowchart of the coordination graph.")
@_handle_errors
def coverage(results_file: Path, as_json: bool, markdown: bool, mermaid: bool) -> int:
    """Report the coverage recorded in a results file: structural C1–C4, the behavioural tuple, the gaps.

    C3 counts restricted-call attempts that tests elicited: each one is a finding (a hardening
    target), not a success. Exit 0, or 3 when the file is not a results file or has no coverage.
    """

    results = load_results(results_file)
    cov = results.sections.get("coverage")
    if not cov:
        raise ResultsError(
            f"{results_file}: no coverage section; it was written with `config.coverage: false` or by an "
            "older agentassay. Re-run the suite to measure coverage."
        )
    structural, behavioural = cov.get("structural"), cov.get("behavioural")
    if as_json:
        click.echo(json.dumps(cov, indent=1, ensure_ascii=False))
        return ExitCode.OK
    if mermaid:
        if not structural:
            raise ResultsError(f"{results_file}: no structural coverage (no manifest was available for this agent)")
        click.echo(mermaid_flowchart(structural))
        return ExitCode.OK
    section = coverage_section(structural, behavioural)
    if markdown:
        click.echo(f"{section['summary']}\n")
        for gap in section["gaps"]:
            click.echo(f"- {gap}")
        if section.get("mermaid"):
            click.echo(f"\n```mermaid\n{section['mermaid']}\n```")
        return ExitCode.OK
    click.echo(_terminal(structural, behavioural, cov))
    return ExitCode.OK


def _terminal(structural: dict[str, Any] | None, behavioural: dict[str, Any] | None, cov: dict[str, Any]) -> str:
    """A plain-text report; names come from user code, so nothing here is interpreted as markup."""
    lines: list[str] = []
    if structural:
        lines.append(f"structural coverage of {structural.get('system')} (entry {structural.get('entry_agent')})")
        for key in ("C1", "C2", "C3", "C4"):
            c = structural["criteria"][key]
            flag = "  (inverted: each elicited attempt is a finding)" if c.get("polarity") == "inverted" else ""
            lines.append(f"  {key} {c['label']:<34} {c['witnessed']:>3}/{c['obligations']:<3} {c['value']:.2f}{flag}")
        for key in ("C1", "C2", "C4"):
            for item in structural["criteria"][key].get("unwitnessed") or []:
                label = " → ".join(item) if isinstance(item, list) else str(item)
                lines.append(f"  gap {key}: {label}")
        for finding in structural.get("findings") or []:
            lines.append(f"  finding: {finding}")
    if behavioural:
        dims = " ".join(f"{d}={behavioural[d]:.2f}" for d in ("tool", "path", "state", "boundary", "model"))
        lines.append(f"behavioural coverage over {behavioural.get('traces')} traces: {dims}")
        lines.append(f"  overall {behavioural['overall']:.3f}; weakest: {behavioural.get('weakest')}")
        if behavioural.get("suggestion"):
            lines.append(f"  next: {behavioural['suggestion']}")
    gate = cov.get("gate") or {}
    if gate.get("min") is not None:
        lines.append(f"gate: config.coverage.min = {gate['min']:g}, overall {gate.get('overall', 0):.3f}")
    for note in cov.get("notes") or []:
        lines.append(f"note: {note}")
    return "\n".join(lines)
