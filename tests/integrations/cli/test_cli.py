"""The ``agentassay`` command line: exit codes 0 pass / 1 fail / 2 inconclusive / 3 bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentassay._integrations.cli import main
from agentassay._stats import regression_verdict, threshold_verdict


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_stats_example(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "example")
    assert code == 0
    assert "INCONCLUSIVE" in out
    assert "109" in out  # exact fixed-sample size of Example 3.2
    assert "190" in out  # Eq. 1 as printed
    assert "[0.786, 0.957]" in out  # Example 3.1, Wilson (ERRATA)
    assert "54.4" in out and "53.5" in out  # Wald ASN (ERRATA)


def test_threshold_inconclusive_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "threshold", "45", "50", "--threshold", "0.85")
    assert code == 2
    assert out.startswith("INCONCLUSIVE")


def test_threshold_pass_and_fail_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(capsys, "stats", "threshold", "180", "200", "--threshold", "0.85", "--method", "wilson")[0] == 0
    )
    assert run(capsys, "stats", "threshold", "30", "50", "--threshold", "0.85")[0] == 1


def test_regression_fail_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "regression", "90", "100", "60", "100")
    assert code == 1
    assert out.startswith("FAIL")


def test_regression_pass_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "regression", "90", "100", "91", "100")
    assert code == 0
    assert out.startswith("PASS")


def test_regression_paper_rule_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(capsys, "stats", "regression", "85", "100", "75", "100", "--rule", "paper", "--beta", "0.2")[0]
        == 0
    )
    assert run(capsys, "stats", "regression", "85", "100", "75", "100")[0] == 2


def test_bad_counts_exit_3_and_name_the_parameter(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stats", "threshold", "5", "3", "--threshold", "0.8")
    assert code == 3
    assert "passes" in err
    assert out == ""


def test_bad_alpha_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "stats", "regression", "9", "10", "9", "10", "--alpha", "2")
    assert code == 3
    assert "alpha" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["bogus"],
        ["stats", "bogus"],
        ["stats", "threshold", "x", "50", "--threshold", "0.8"],
        ["stats", "threshold", "45", "50"],  # --threshold is required
        ["stats", "regression", "1", "2", "3", "4", "--test", "bogus"],
        ["stats", "sprt", "--threshold", "0.9", "--outcomes", "1102"],
    ],
)
def test_usage_errors_exit_3(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 3
    assert "Error" in err


def test_json_output_of_threshold(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "stats", "threshold", "45", "50", "--threshold", "0.85", "--method", "wilson", "--json"
    )
    data = json.loads(out)
    assert code == 2
    assert data["verdict"] == "inconclusive"
    expected = threshold_verdict(45, 50, threshold=0.85, method="wilson")
    assert data["ci_low"] == expected.ci_low and data["ci_high"] == expected.ci_high


def test_json_output_of_regression(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "regression", "90", "100", "91", "100", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["verdict"] == "pass"
    expected = regression_verdict(90, 100, 91, 100)
    assert data["pvalue"] == pytest.approx(expected.pvalue)
    assert data["effects"]["difference"] == pytest.approx(-0.01)


def test_sprt_on_outcomes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "sprt", "--threshold", "0.9", "--outcomes", "1" * 25, "--json")
    data = json.loads(out)
    assert code == 0
    assert data["verdict"] == "pass" and data["trials"] == 20
    code, out, _ = run(capsys, "stats", "sprt", "--threshold", "0.9", "--outcomes", "00000")
    assert code == 1 and out.startswith("FAIL")
    code, out, _ = run(
        capsys, "stats", "sprt", "--threshold", "0.9", "--outcomes", "111", "--max-trials", "3"
    )
    assert code == 2 and out.startswith("INCONCLUSIVE")


def test_sprt_design_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "sprt", "--threshold", "0.9", "--max-trials", "60", "--json")
    rows = json.loads(out)
    assert code == 0
    assert [r["p"] for r in rows] == pytest.approx([0.9, 0.8])
    for r in rows:
        assert r["pass"] + r["fail"] + r["inconclusive"] == pytest.approx(1.0)
        assert r["p95_trials"] <= 60
    code, out, _ = run(capsys, "stats", "sprt", "--threshold", "0.9")
    assert code == 0 and "E[N] exact" in out


def test_sample_size(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", "sample-size", "--p", "0.9", "--design", "one-sample")
    assert code == 0
    assert "109" in out and "102" in out and "190" in out
    code, out, _ = run(capsys, "stats", "sample-size", "--p", "0.9", "--delta", "0.3")
    assert code == 0 and "per arm" in out
    assert run(capsys, "stats", "sample-size", "--p", "0.05")[0] == 3  # p - delta <= 0


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "stats" in out
    code, out, _ = run(capsys, "stats", "--help")
    assert code == 0 and "regression" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and "0.1.0" in out


def test_python_dash_m_help() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentassay", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert "stats" in proc.stdout


def test_python_dash_m_exit_code_is_the_verdict() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentassay", "stats", "regression", "90", "100", "60", "100"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("FAIL")


def test_importing_the_cli_does_not_import_scipy() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import agentassay._integrations.cli, sys; assert 'scipy' not in sys.modules, 'scipy imported'",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_lazy_command_table_matches_the_commands() -> None:
    """`agentassay --help` lists commands from COMMANDS without importing them; the table must say what they say."""
    import click

    from agentassay._integrations.cli import COMMANDS, cli

    ctx = click.Context(cli)
    for name, (_module, _attr, short_help) in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None and command.name.replace("_", "-") in (name, "sprt")
        assert command.get_short_help_str(limit=10**6) == short_help, name
    assert cli.get_command(ctx, "nope") is None


def test_help_lists_every_command_without_importing_them() -> None:
    code = (
        "import sys; from agentassay._integrations.cli import main; main(['--help'])\n"
        "loaded = [m for m in sys.modules if m.startswith('agentassay._integrations.cli.')]\n"
        "assert not loaded, loaded"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for name in ("analyze", "check", "compare", "coverage", "demo", "generate", "init", "manifest", "merge", "mutate",
                 "report", "run", "stats"):
        assert f"  {name} " in proc.stdout
