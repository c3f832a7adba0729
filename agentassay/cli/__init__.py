"""The ``agentassay`` command line.

Exit codes (documented in docs/cli.md): 0 deploy / pass, 1 block / fail, 2 manual /
inconclusive, 3 usage or configuration error, 4 the agent could not be run, 130 / 143
interrupted by SIGINT / SIGTERM (results so far are kept). Statistics modules and agent
frameworks are imported inside the commands so that ``agentassay --help`` stays fast.
"""

from __future__ import annotations

import signal
import sys
import threading

import click

from ._analyze import analyze
from ._coverage import coverage, generate, manifest
from ._mutate import mutate
from ._run import check, compare, demo, merge, report, run
from ._stats import stats

EXIT_USAGE = 3


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
    """Entry point: runs the CLI and turns every outcome into a documented exit code."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_term)
    try:
        rv = cli.main(args=argv, prog_name="agentassay", standalone_mode=False)
    except click.UsageError as e:
        e.show()
        return EXIT_USAGE
    except click.ClickException as e:
        e.show()
        return EXIT_USAGE
    except (click.Abort, _Terminated) as e:
        # A run latches signals from its start (results marked interrupted); this is a signal before it.
        click.echo("interrupted before any trial ran: nothing was measured and no results file was written", err=True)
        return 143 if isinstance(e, _Terminated) else 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
