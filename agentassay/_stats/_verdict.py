"""The three-valued verdict and the deployment decision every procedure speaks in."""

from __future__ import annotations

from enum import Enum

from .._errors import ExitCode


class Verdict(str, Enum):
    """Outcome of a stochastic test: evidence for, evidence against, or not enough evidence."""

    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"

    def __str__(self) -> str:
        return self.value


class Decision(str, Enum):
    """Deployment decision of paper Eq. 26, mapped to process exit codes 0 / 1 / 2.

    ``ABORTED`` is no decision: the run ended before reaching one (the agent could not be run, exit 4; a
    signal, 130 / 143). No procedure returns it; the runner sets it, and the results file's ``aborted``
    says why and with which exit code (issue 22, defect 11).
    """

    DEPLOY = "deploy"
    BLOCK = "block"
    MANUAL = "manual"
    ABORTED = "aborted"

    @property
    def exit_code(self) -> int:
        return int(_EXIT[self.value])

    def __str__(self) -> str:
        return self.value


# Integer codes used inside the vectorised verdict tables.
CODE_INCONCLUSIVE, CODE_PASS, CODE_FAIL = 0, 1, 2
VERDICT_OF_CODE = {CODE_INCONCLUSIVE: Verdict.INCONCLUSIVE, CODE_PASS: Verdict.PASS, CODE_FAIL: Verdict.FAIL}


# ABORTED's own code is the process's (4 or a signal's, in the results file's ``aborted``); 4 when unsaid.
_EXIT = {"deploy": ExitCode.DEPLOY, "block": ExitCode.BLOCK, "manual": ExitCode.MANUAL, "aborted": ExitCode.AGENT}
