"""``agentassay plan``: what a check will use and cost, before it runs (no agent is imported or called).

The estimate is the gate's own (agentassay/_features/plan/_estimate.py): per scenario the exact distribution of
the candidate trials the check's test stops after, at the baseline's pass rate, and the baseline's measured
tokens per trial at the price table's or ``config.prices``' prices. docs/cli.md says how it is computed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..._errors import ExitCode
from ..._features.plan._estimate import Plan, estimate
from ..._gate import GatePlan
from ..._plugins import Plugins
from ..._spec import load_suite
from ..._visible import visible
from ._run import _handle_errors, _overrides, load_baseline, plugin_option


def _model(suite: Any, baseline: Any) -> dict[str, Any]:
    """The model whose prices apply: the suite's when it names one, else the one the baseline ran on."""
    recorded = ((baseline.agent or {}).get("config") or {}).get("model") if baseline is not None else None
    recorded = recorded if isinstance(recorded, dict) else {}
    if suite.model_given:
        return {"provider": suite.model.provider, "name": suite.model.name or recorded.get("name")}
    return recorded


def _usd(x: float | None) -> str:
    return "-" if x is None else f"${x:.4f}"


def render(plan: Plan, suite_name: str, baseline: Path | None) -> str:
    """The plan as the terminal shows it: one row per scenario, the totals, where prices came from, notes."""
    head = f"plan for suite '{visible(suite_name)}': a check against " + (
        str(baseline) if baseline is not None else "a baseline not recorded yet (estimated at the thresholds)"
    )
    rows = [("scenario", "test", "baseline", "expected", "95th pct", "cap", "USD expected", "USD 95th pct")]
    for s in plan.scenarios:
        d = s.to_dict()
        rows.append((
            visible(s.name), s.test, s.baseline or "-", f"{s.expected:.1f}", str(s.p95), str(s.cap),
            _usd(d["usd_expected"]), _usd(d["usd_p95"]),
        ))
    t = plan.totals()
    rows.append((
        "total", "", "", f"{t['expected_trials']:.1f}", str(t["p95_trials"]), str(t["cap"]),
        _usd(t["usd_expected"]), _usd(t["usd_p95"]),
    ))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    at = "the baseline's pass rates" if plan.basis == "baseline" else "the thresholds"
    lines = [head, f"candidate trials: exact distributions of the check's own tests at {at}", ""]
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip())
    if plan.prices:
        model = f" for {plan.model}" if plan.model else ""
        lines.append(f"prices: {plan.prices}{model}")
    lines += [f"note: {n}" for n in plan.notes]
    return "\n".join(lines)


@click.command()
@click.argument("suite", type=click.Path(path_type=Path))
@click.option(
    "--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Results file of the baseline (`agentassay run --full -o`); default: config.regression.baseline if it "
    "exists. Without one the estimate is taken at the thresholds (rougher, and without USD).",
)
@click.option("--trials", type=click.IntRange(min=1), help="Override config.trials (the check's cap per scenario).")
@click.option("--method", type=click.Choice(["sprt", "fixed"]), help="Override config.method.")
@click.option("--json", "as_json", is_flag=True, help="Print the estimate as JSON (the `plan` section a check records).")
@plugin_option
@_handle_errors
def plan(
    suite: Path, baseline: Path | None, trials: int | None, method: str | None, as_json: bool,
    plugin_specs: tuple[str, ...],
) -> int:
    """Estimate what `check` will use before it runs: per scenario the expected and 95th-percentile candidate
    trials and their USD.

    From the gate's own tests at the baseline's pass rates and the baseline's tokens per trial, priced by
    config.prices or the built-in price table. No agent is called. Exit 0, or 3 for a bad suite or baseline.
    """
    plugins = Plugins(plugin_specs)
    loaded = load_suite(suite, plugin_keys=plugins.suite_keys())
    loaded = _overrides(loaded, trials=trials, method=method)  # as `check` applies them
    if baseline is None and loaded.settings.baseline is not None and Path(loaded.settings.baseline).is_file():
        baseline = Path(loaded.settings.baseline)
    base = load_baseline(baseline, loaded) if baseline is not None else None  # as `check` refuses one
    names = tuple(s.name for s in loaded.scenarios)
    gate = GatePlan(loaded.settings, names, baseline=base)  # the levels plugins' tests take, as a check's
    plugins.for_plan(gate).call("agentassay_plan", plan=gate)
    result = estimate(
        loaded.scenarios,
        loaded.settings,
        baseline=base,
        model=_model(loaded, base),
        shares={n: gate.taken(n) for n in names},
        min_trials={n: gate.min_trials(n) for n in names},
    )
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=1))
    else:
        click.echo(render(result, loaded.name, baseline))
    return ExitCode.OK
