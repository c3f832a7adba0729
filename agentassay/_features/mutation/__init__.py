"""Agent mutation testing (paper Sec. 5): would the suite catch it?

One operator registry (``OPERATORS``: class → operator) — prompt, tool, model, context and the
structural mutants of the workflow graph — and one mutant type (``Mutant``; a ``structure`` mutant
carries its graph edit, a ``StructuralMutant``). One way to decide a kill: each mutant is *checked*
against the original's recorded trials by the gate ``agentassay check`` uses, so a kill is a FAIL at a
known alpha and a survivor has shown non-inferiority; mutants with no evidence of any change are "not
activated" (Def. 5.7) and left out of the score. ``agentassay mutate`` runs it; docs/mutation.md
explains it and its benchmark. ``mutation_analysis`` runs the same structural mutants against a
structural test suite (witnessed objectives; docs/coverage.md).
"""

from __future__ import annotations

import importlib
from typing import Any

from ._config import CLASSES, MutantModel, MutationConfig, parse_config
from ._mutant import Mutant, Mutated, Target
from ._operators import OPERATORS, generate, prompt_edits
from ._run import ALPHA_EQUIV, SCHEMA, STATUSES, Classification, MutationRun, classify, run_mutation, score
from ._structural import (
    STRUCTURAL_OPERATORS,
    StructuralMutant,
    apply_to_agents,
    apply_to_manifest,
    clone_graph,
    structural_mutants,
)

# Lazy (PEP 562): the structural analysis needs the adapters and the structure model; the report plugin does not.
_LAZY = {
    "MUTATION_SCHEMA": "_analysis",
    "BaselineRun": "_analysis",
    "MutantResult": "_analysis",
    "MutationReport": "_analysis",
    "mutation_analysis": "_analysis",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ALPHA_EQUIV",
    "CLASSES",
    "MUTATION_SCHEMA",
    "OPERATORS",
    "SCHEMA",
    "STATUSES",
    "STRUCTURAL_OPERATORS",
    "BaselineRun",
    "Classification",
    "Mutant",
    "MutantModel",
    "MutantResult",
    "Mutated",
    "MutationConfig",
    "MutationReport",
    "MutationRun",
    "StructuralMutant",
    "Target",
    "apply_to_agents",
    "apply_to_manifest",
    "classify",
    "clone_graph",
    "generate",
    "mutation_analysis",
    "parse_config",
    "prompt_edits",
    "run_mutation",
    "score",
    "structural_mutants",
]
