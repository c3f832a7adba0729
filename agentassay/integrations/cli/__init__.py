"""The ``agentassay`` command line.

Exit codes (documented in docs/cli.md): 0 deploy / pass, 1 block / fail, 2 manual /
inconclusive, 3 usage or configuration error, 4 the agent could not be run, 130 / 143
interrupted by SIGINT / SIGTERM (results so far are kept). Statistics modules and agent
frameworks are imported inside the commands so that ``agentassay --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

import click

from ..._errors import ExitCode
from ._analyze import analyze
from ._coverage import coverage, generate, manifest
from ._mutate import mutate
from ._run import check, compare, demo, merge, report, run
from ._stats import stats


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agentassay")
def cli() -> None:
    """AgentAssay: did our agent get worse? Stochastic regression testing for LLM agents."""


for _command in (
    run,
    check,
    compare,
    merge,
    report,
    analyze,
    mutate,
    demo,
    stats,
    manifest,
    generate,
    coverage,
):
    cli.add_command(_command)


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
