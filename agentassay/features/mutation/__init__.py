"""Agent mutation testing (paper Sec. 5): would the suite catch it?

One operator registry — prompt, tool, model, context and the structural mutants of the workflow
graph — and one way to decide a kill: each mutant is *checked* against the original's recorded
trials by the gate ``agentassay check`` uses, so a kill is a FAIL at a known alpha and a survivor has
shown non-inferiority; mutants with no evidence of any change are "not activated" (Def. 5.7) and left
out of the score. ``agentassay mutate`` runs it; docs/mutation.md explains it and its benchmark.
"""

from ._config import CLASSES, MutantModel, MutationConfig, parse_config
from ._operators import REGISTRY, Mutant, Mutated, Target, generate, prompt_edits
from ._run import ALPHA_EQUIV, SCHEMA, STATUSES, Classification, MutationRun, classify, run_mutation, score

__all__ = [
    "ALPHA_EQUIV",
    "CLASSES",
    "REGISTRY",
    "SCHEMA",
    "STATUSES",
    "Classification",
    "Mutant",
    "MutantModel",
    "Mutated",
    "MutationConfig",
    "MutationRun",
    "Target",
    "classify",
    "generate",
    "parse_config",
    "prompt_edits",
    "run_mutation",
    "score",
]
