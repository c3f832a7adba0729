"""One error root and one exit-code enum: every error the package raises says how the process ends.

A command, the Action or a library caller that catches :class:`AgentAssayError` knows it came from us,
and ``exc.exit_code`` is what the CLI exits with — no table of classes to keep in step in five places.
Kept import-free: every layer (and ``agentassay --help``) imports it.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The process's exit codes (docs/cli.md, "Exit codes"). 0–2 are the suite decision's, so that a CI
    step reads them without parsing; 2 always means INCONCLUSIVE (click's own usage errors are remapped to 3)."""

    #: deploy: every scenario passed (a PASS is a claim at the suite's alpha)
    DEPLOY = 0
    #: the same 0, for a command that decides nothing (``stats``, ``manifest``): it did its job
    OK = 0
    #: block: a scenario failed against its baseline or threshold (family-wise at alpha)
    BLOCK = 1
    #: manual review: some scenario is INCONCLUSIVE, or evidence (a plugin's gate, a failed plugin) was missing
    MANUAL = 2
    #: bad input or configuration: a suite, results file, trace file, option or plugin — the message names it
    USAGE = 3
    #: the agent could not be run: import, factory, credentials (preflight or rejected), or no trial completed
    AGENT = 4
    #: interrupted by SIGINT (128 + 2); the results file says ``"decision": "aborted"``
    SIGINT = 130
    #: interrupted by SIGTERM (128 + 15)
    SIGTERM = 143

    @classmethod
    def for_signal(cls, name: str) -> ExitCode:
        """The code of a signal by name (``"SIGINT"``, ``"SIGTERM"``); an unknown one reads as SIGINT."""
        return cls.SIGTERM if name == "SIGTERM" else cls.SIGINT


class AgentAssayError(Exception):
    """The root of every error AgentAssay raises; ``exit_code`` is how the CLI ends when it is not caught
    sooner (a class sets its own; an instance may carry another, as the provider preflight's does)."""

    exit_code: ExitCode = ExitCode.USAGE


__all__ = ["AgentAssayError", "ExitCode"]
