"""``agentassay stats``: the statistics core from the command line."""

from __future__ import annotations

import json
from typing import Any

import click

from ..._errors import ExitCode
from ..._stats import (
    SPRTDesign,
    deployment_decision,
    regression_verdict,
    sample_size_one_sample,
    sample_size_two_sample,
    sprt,
    suite_verdict,
    threshold_verdict,
)

VERDICT_EXIT = {"pass": 0, "fail": 1, "inconclusive": 2}


def _fail_usage(e: ValueError) -> click.UsageError:
    return click.UsageError(str(e))


def _emit(result: Any, as_json: bool) -> int:
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        click.echo(result.explain())
    return VERDICT_EXIT[result.verdict.value]


ALPHA = click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")
DELTA = click.option(
    "--delta", type=float, default=0.10, show_default=True, help="Smallest drop in pass rate that matters."
)
JSON = click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")


@click.group()
def stats() -> None:
    """Stochastic verdicts from pass counts (exit 0 pass, 1 fail, 2 inconclusive, 3 bad input)."""


@stats.command()
@click.argument("passes", type=int)
@click.argument("trials", type=int)
@click.option("--threshold", type=float, required=True, help="Required pass rate.")
@ALPHA
@click.option(
    "--method",
    type=click.Choice(["clopper-pearson", "wilson", "wilsoncc"]),
    default="clopper-pearson",
    show_default=True,
)
@JSON
def threshold(passes: int, trials: int, threshold: float, alpha: float, method: str, as_json: bool) -> int:
    """Does PASSES out of TRIALS meet the required pass rate?"""

    try:
        result = threshold_verdict(passes, trials, threshold=threshold, alpha=alpha, method=method)
    except ValueError as e:
        raise _fail_usage(e) from None
    return _emit(result, as_json)


@stats.command()
@click.argument("base_passes", type=int)
@click.argument("base_trials", type=int)
@click.argument("cand_passes", type=int)
@click.argument("cand_trials", type=int)
@ALPHA
@click.option(
    "--beta", type=float, default=0.10, show_default=True, help="Type II error (used by --rule paper)."
)
@DELTA
@click.option("--test", type=click.Choice(["fisher", "boschloo", "z"]), default="fisher", show_default=True)
@click.option(
    "--rule", type=click.Choice(["non-inferiority", "paper"]), default="non-inferiority", show_default=True
)
@JSON
def regression(
    base_passes: int,
    base_trials: int,
    cand_passes: int,
    cand_trials: int,
    alpha: float,
    beta: float,
    delta: float,
    test: str,
    rule: str,
    as_json: bool,
) -> int:
    """Did the candidate regress from the baseline? (pass counts of both)"""

    try:
        result = regression_verdict(
            base_passes,
            base_trials,
            cand_passes,
            cand_trials,
            alpha=alpha,
            beta=beta,
            delta=delta,
            test=test,
            rule=rule,
        )
    except ValueError as e:
        raise _fail_usage(e) from None
    return _emit(result, as_json)


@stats.command(name="sprt")
@click.option("--threshold", type=float, required=True, help="Pass rate under H0 (the agent is fine).")
@DELTA
@ALPHA
@click.option("--beta", type=float, default=0.10, show_default=True)
@click.option(
    "--max-trials", type=int, default=None, help="Truncate: end INCONCLUSIVE after this many trials."
)
@click.option(
    "--outcomes",
    default=None,
    help="Trial outcomes as a string of 1 (pass) and 0 (fail); omit to show the design.",
)
@JSON
def sprt_command(
    threshold: float,
    delta: float,
    alpha: float,
    beta: float,
    max_trials: int | None,
    outcomes: str | None,
    as_json: bool,
) -> int:
    """Run Wald's SPRT on OUTCOMES, or show the design's exact operating characteristic."""

    try:
        if outcomes is not None:
            if set(outcomes) - {"0", "1"}:
                raise ValueError(f"--outcomes must contain only 0 and 1; got {outcomes!r}")
            result = sprt(
                [c == "1" for c in outcomes],
                threshold=threshold,
                delta=delta,
                alpha=alpha,
                beta=beta,
                max_trials=max_trials,
            )
            return _emit(result, as_json)
        design = SPRTDesign(threshold, delta, alpha, beta, max_trials)
    except ValueError as e:
        raise _fail_usage(e) from None
    rows = []
    for p in (threshold, threshold - delta):
        oc = design.operating_characteristic(p)
        rows.append(
            {
                "p": p,
                "pass": oc.pass_probability,
                "fail": oc.fail_probability,
                "inconclusive": oc.inconclusive_probability,
                "expected_trials": oc.expected_trials,
                "p95_trials": oc.trials_quantile(0.95),
                "wald_expected_trials": design.wald_asn(p),
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return ExitCode.OK
    click.echo(
        f"SPRT H0: p >= {threshold}  vs  H1: p <= {threshold - delta:.4g}  (alpha={alpha}, beta={beta}, max_trials={max_trials})"
    )
    click.echo(
        f"{'true p':>7} {'P(pass)':>8} {'P(fail)':>8} {'P(inc.)':>8} {'E[N] exact':>11} {'E[N] Wald':>10} {'95% N':>6}"
    )
    for r in rows:
        click.echo(
            f"{r['p']:>7.3f} {r['pass']:>8.4f} {r['fail']:>8.4f} {r['inconclusive']:>8.4f} "
            f"{r['expected_trials']:>11.1f} {r['wald_expected_trials']:>10.1f} {r['p95_trials']:>6d}"
        )
    return ExitCode.OK


@stats.command(name="sample-size")
@click.option("--p", "p", type=float, required=True, help="Pass rate under H0 (the baseline).")
@DELTA
@ALPHA
@click.option("--beta", type=float, default=0.10, show_default=True)
@click.option(
    "--design", type=click.Choice(["one-sample", "two-sample"]), default="two-sample", show_default=True
)
def sample_size(p: float, delta: float, alpha: float, beta: float, design: str) -> int:
    """Trials needed to detect a drop of DELTA with power 1 - beta."""

    try:
        if design == "one-sample":
            for method in ("exact", "normal", "paper"):
                n = sample_size_one_sample(p, delta, alpha=alpha, beta=beta, method=method)
                click.echo(f"{method:>7}: {n} trials")
        else:
            for method in ("exact", "normal"):
                n = sample_size_two_sample(p, delta, alpha=alpha, beta=beta, method=method)
                click.echo(f"{method:>7}: {n} trials per arm")
    except ValueError as e:
        raise _fail_usage(e) from None
    return ExitCode.OK


@stats.command()
def example() -> int:
    """A worked example of every verdict, from the paper's examples."""

    click.echo("AgentAssay statistics: a worked example\n")
    click.echo("1. Threshold verdict (paper Example 3.1): 45 of 50 trials passed, required rate 0.85")
    for method in ("wilson", "clopper-pearson"):
        click.echo("   " + threshold_verdict(45, 50, threshold=0.85, method=method).explain())
    click.echo("\n2. Regression verdict: baseline 85/100, candidate 75/100, tolerated drop 0.10")
    ours = regression_verdict(85, 100, 75, 100)
    paper = regression_verdict(85, 100, 75, 100, rule="paper", beta=0.20)
    click.echo("   ours:  " + ours.explain())
    click.echo("   paper: " + paper.explain())
    click.echo("   (the paper's rule calls a 10-point drop a PASS; ours will not PASS without evidence)")
    click.echo("\n   baseline 90/100, candidate 91/100:")
    same = regression_verdict(90, 100, 91, 100)
    click.echo("   " + same.explain())
    click.echo("\n3. SPRT design (paper Example 3.2): threshold 0.90, delta 0.10, alpha 0.05, beta 0.10")
    d = SPRTDesign(0.90, 0.10, 0.05, 0.10)
    for p in (0.90, 0.80):
        oc = d.operating_characteristic(p)
        click.echo(
            f"   true rate {p:.2f}: P(FAIL) = {oc.fail_probability:.3f}, expected trials {oc.expected_trials:.1f} "
            f"exactly (Wald's approximation {d.wald_asn(p):.1f}; the paper printed {52 if p == 0.9 else 34})"
        )
    n_exact = sample_size_one_sample(0.9, 0.1, method="exact")
    n_paper = sample_size_one_sample(0.9, 0.1, method="paper")
    click.echo(
        f"   fixed-sample size for the same design: {n_exact} (exact binomial); Eq. 1 as printed gives {n_paper}"
    )
    suite = suite_verdict([ours.verdict, same.verdict])
    decision = deployment_decision(suite)
    click.echo(
        f"\n4. Suite of the two regression scenarios: {suite.value.upper()} -> decision: {decision.value} (exit code {decision.exit_code})"
    )
    return ExitCode.OK
