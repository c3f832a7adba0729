"""The ``agentassay`` command line.

Exit codes (documented in docs/cli.md): 0 deploy / pass, 1 block / fail, 2 manual /
inconclusive, 3 usage or configuration error, 4 the agent could not be run, 130 / 143
interrupted by SIGINT / SIGTERM (results so far are kept).

A command's module is imported only when that command runs (:class:`LazyGroup`, click's documented
lazy-loading pattern), so ``agentassay --help`` loads neither the engine nor SciPy and each command module
imports what it uses at its top.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading

import click

from ..._errors import ExitCode

# name -> (module, attribute, the command's short help). The short help is written here so that listing the
# commands imports none of them; tests/integrations/cli/test_cli.py checks it against each command's own.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "analyze": (
        "._analyze", "analyze",
        "Analyse recorded traces with SUITE — our trace store, a results file (its run's traces), "
        "OpenTelemetry GenAI (OTLP/JSON), OpenInference, Agents SDK exports or JSONL spans — with no "
        "agent call.",
    ),
    "check": (
        "._run", "check",
        "Run the candidate agent of SUITE and test each scenario for regression against BASELINE.",
    ),
    "compare": (
        "._run", "compare",
        "Regression verdicts from two results files, with no agent calls.",
    ),
    "coverage": (
        "._coverage", "coverage",
        "Report the coverage recorded in a results file: structural C1–C4, the behavioural tuple, the "
        "gaps.",
    ),
    "demo": (
        "._run", "demo",
        "The offline example end to end: record a baseline of v1, check the regressed v2.",
    ),
    "generate": (
        "._coverage", "generate",
        "Realize one witness scenario per structural obligation bundle of SUITE's agent into a suite "
        "file.",
    ),
    "init": (
        "._init", "init",
        "Write a first suite for the agent in PATH, the CI workflows, and print the next commands.",
    ),
    "manifest": (
        "._coverage", "manifest",
        "Extract the workflow manifest of ENTRY (package.module:attr), or validate a manifest file.",
    ),
    "merge": (
        "._run", "merge",
        "Combine the results files of all N shards (`run`/`check --shard I/N`) into one, and decide.",
    ),
    "mutate": (
        "._mutate", "mutate",
        "Mutation testing: record the original, check every mutant against it, score the suite.",
    ),
    "plan": (
        "._plan", "plan",
        "Estimate what `check` will use before it runs: per scenario the expected and 95th-percentile "
        "candidate trials and their USD.",
    ),
    "report": (
        "._run", "report",
        "Render a results file: HTML, JUnit XML, the PR comment's Markdown; the terminal table without "
        "options.",
    ),
    "run": (
        "._run", "run",
        "Run every scenario of SUITE and give threshold verdicts.",
    ),
    "stats": (
        "._stats", "stats",
        "Stochastic verdicts from pass counts (exit 0 pass, 1 fail, 2 inconclusive, 3 bad input).",
    ),
}


class LazyGroup(click.Group):
    """A group whose commands are imported when one runs (or shows its own ``--help``), not when the group loads."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        return getattr(importlib.import_module(module, __package__), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``agentassay --help`` from the table, as click would print it from the commands."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, click.Command(name, help=COMMANDS[name][2]).get_short_help_str(limit)) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agentassay")
def cli() -> None:
    """AgentAssay: did our agent get worse? Stochastic regression testing for LLM agents."""


class _Terminated(BaseException):
    """SIGTERM outside a run (start-up, reading files): ended like Ctrl-C, with exit code 143."""


def _on_term(signum: int, frame: object) -> None:
    raise _Terminated


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the CLI and turns every outcome into a documented exit code.

    Called without ``argv`` (the console script, ``python -m agentassay``) it is the process: when it is done
    it does not wait for threads the agent left running (:func:`leave`). With ``argv`` (tests, embedding) it
    only returns the code.
    """
    code = _main(argv)
    return leave(code) if argv is None else code


def lingering() -> list[threading.Thread]:
    """Threads that would keep the interpreter from exiting: alive, not daemons, not the main thread."""
    main_thread = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main_thread and not t.daemon and t.is_alive()]


def leave(code: int) -> int:
    """Return ``code``, or end the process with it now if user code left non-daemon threads running.

    Issue 22, defect 8: an agent that starts a thread blocking forever would hang the process after the results
    were written, since the interpreter joins every non-daemon thread before it exits. Everything of ours is
    written and closed by now (results file, trace store, reports), so the process flushes its output and
    ends with ``os._exit``; the agent's own ``atexit`` handlers do not run then (docs/runner.md). Only for a
    process's entry point (the CLI, the Action's container): never in a library or the pytest plugin.
    """
    left = lingering()
    if not left:
        return code
    names = ", ".join(sorted({t.name for t in left}))
    click.echo(
        f"note: exiting without waiting for {len(left)} thread{'s' if len(left) != 1 else ''} the agent left "
        f"running ({names}); the results are complete",
        err=True,
    )
    if "logging" in sys.modules:
        import logging

        logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
            stream.flush()
    os._exit(code)


def _main(argv: list[str] | None) -> int:
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_term)
    try:
        rv = cli.main(args=argv, prog_name="agentassay", standalone_mode=False)
    except click.UsageError as e:
        e.show()
        return ExitCode.USAGE
    except click.ClickException as e:
        e.show()
        return ExitCode.USAGE
    except (click.Abort, _Terminated) as e:
        # A run latches signals from its start (results marked interrupted); this is a signal before it.
        click.echo("interrupted before any trial ran: nothing was measured and no results file was written", err=True)
        return ExitCode.SIGTERM if isinstance(e, _Terminated) else ExitCode.SIGINT
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return rv if isinstance(rv, int) else ExitCode.DEPLOY


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
