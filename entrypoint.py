#!/usr/bin/env python3
"""The action's container entry point: hand the runner's environment to the engine, exit with its code.

Kept thin on purpose; everything (inputs, event payload, baseline, comment, status) lives in
``agentassay._integrations.github`` where it is tested.
"""

import sys

from agentassay._integrations.cli import leave
from agentassay._integrations.github import run_action

if __name__ == "__main__":
    sys.exit(leave(run_action()))  # leave: no wait for threads an agent left running (issue 22, defect 8)
