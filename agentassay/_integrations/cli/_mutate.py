"""``agentassay mutate SUITE``: would the suite catch it? (docs/mutation.md)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from ..._errors import ExitCode
from ..._features.budget._settings import BudgetSettings
from ..._features.mutation import parse_config, run_mutation
from ..._features.mutation._plugin import WORD, score_text
from ..._spec import load_suite
from ._run import _handle_errors, _overrides, _plugins, plugin_option


def _table(section: dict[str, Any]) -> str:
    rows = [("mutant", "class", "verdict", "trials", "diff / evidence")]
    for m in section["mutants"]:
        reason = " ".join(str(m.get("reason") or "").split())
        reason = reason if len(reason) <= 140 else reason[:139] + "…"  # the whole evidence is in the results file
        rows.append((m["id"], m["class"], WORD.get(m["status"], m["status"]), str(m.get("trials") or 0),
                     f"{m['diff']} — {reason}"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)) + "  " + r[4] for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 16)
    scores = section["scores"]
    lines += ["", score_text("mutation score", scores["overall"])]
    lines += [score_text(f"  {c}", s) for c, s in scores["by_class"].items()]
    lines.append(f"{section['trials']} trials" + (f", ${section['usd']:.4f}" if section["usd"] else ""))
    lines += [f"hint: {h}" for h in section["hints"]]
    lines += [f"note: {n}" for n in section["notes"]]
    return "\n".join(lines)


@click.command()
@click.argument("suite", type=click.Path(path_type=Path))
@click.option("--operators", metavar="CLASSES", default=None,
              help="Comma-separated operator classes: prompt, tool, model, context, structure (default: all).")
@click.option("--max-mutants", type=click.IntRange(min=1), default=None, help="Run at most N mutants.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the original's results file, with the `mutation` section, here.")
@click.option("--agent", "agent_entry", metavar="MODULE:ATTR", help="Mutate this agent instead of the suite's.")
@click.option("--trials", type=click.IntRange(min=1), help="Override config.trials.")
@click.option("--concurrency", type=click.IntRange(min=1), help="Override config.concurrency (shared by the mutants).")
@click.option("--seed", type=int, help="Override config.seed.")
@click.option("--budget-usd", type=float, default=None, help="Stop starting mutants once the analysis cost this much.")
@click.option("-q", "--quiet", is_flag=True, help="No progress, no table.")
@plugin_option
@_handle_errors
def mutate(suite: Path, operators: str | None, max_mutants: int | None, output: Path | None, agent_entry: str | None,
           trials: int | None, concurrency: int | None, seed: int | None, budget_usd: float | None, quiet: bool,
           plugin_specs: tuple[str, ...]) -> int:
    """Mutation testing: record the original, check every mutant against it, score the suite.

    A mutant is killed when `check` would block it (a FAIL at the gate's alpha); mutants with no
    evidence of any change are "not activated" and left out of the score. Exit 0 (the score is the
    finding), 3 bad suite or options, 4 the agent could not be run.
    """

    plugins = _plugins(plugin_specs)
    loaded = load_suite(suite, plugin_keys=plugins.suite_keys())
    loaded = _overrides(loaded, trials=trials, concurrency=concurrency, seed=seed)
    if budget_usd is not None:
        loaded = replace(loaded, settings=loaded.settings.with_parts(BudgetSettings(budget_usd)))
    config = parse_config(loaded, classes=operators, max_mutants=max_mutants)
    run = run_mutation(loaded, config=config, entry=agent_entry, plugins=plugins,
                       progress=None if quiet else (lambda text: click.echo(f"[mutate] {text}", err=True)))
    if output is not None:
        run.results.save(output)
    if run.aborted:
        click.echo(f"error: the original could not be run: {run.aborted}", err=True)
        return ExitCode.AGENT
    if run.interrupted:
        click.echo(f"interrupted by {run.interrupted}: nothing was mutated", err=True)
        return ExitCode.SIGINT
    if not quiet:
        click.echo(_table(run.results.sections["mutation"]))
    return ExitCode.OK
