"""The runner: trials of an agent, concurrently, with sequential tests deciding when to stop."""

from ._engine import Engine, EngineOutcome, ScenarioState, run_engine, trial_seed
from ._retry import TransientError, backoff, is_transient
from ._run import Phase, Prepared, Run, RunOptions
from ._suite import RunReport, agent_version, run_suite

__all__ = [
    "Engine",
    "EngineOutcome",
    "Phase",
    "Prepared",
    "Run",
    "RunOptions",
    "RunReport",
    "ScenarioState",
    "TransientError",
    "agent_version",
    "backoff",
    "is_transient",
    "run_engine",
    "run_suite",
    "trial_seed",
]
