"""Structural workflow coverage (Kahani & Bagherzadeh, Sec. II–IV): manifest → graph → obligations → tests.

* ``extract_manifest`` / ``load_manifest`` / ``dump_manifest``: the normalized workflow specification;
* ``obligations``, ``objectives``, ``merge_bundles``: Ω(S), rules R1–R4, obligation-preserving bundles;
* ``observe`` and ``structural_coverage``: runtime witnesses and C1–C4 (C3 with inverted polarity);
* ``realize`` / ``generate_suite``: DSPy-realized witness scenarios (imports DSPy only when called);
* ``parse_objective``: an objective from its id (the inverse of ``Objective.id``).

Structural mutants of this graph are operators of the mutation registry (``agentassay._features.mutation``).
"""

from __future__ import annotations

import importlib
from typing import Any

# Lazy (PEP 562): `agentassay run` needs only the manifest error, not DSPy glue or YAML dumps.
_EXPORTS = {
    "AgentNode": "_model",
    "Bundle": "_model",
    "CriterionCoverage": "_coverage",
    "Delegation": "_model",
    "ExtractError": "_extract",
    "GenerateResult": "_generate",
    "Manifest": "_model",
    "ManifestError": "_manifest",
    "Objective": "_model",
    "Obligations": "_model",
    "Observation": "_model",
    "RESTRICTED_CALL": "_model",
    "RealizationReport": "_realize",
    "StructuralCoverage": "_coverage",
    "TOOL_NOT_FOUND": "_model",
    "ToolNode": "_model",
    "derive_restrictions": "_manifest",
    "dump_manifest": "_manifest",
    "extract_manifest": "_extract",
    "generate_suite": "_generate",
    "load_manifest": "_manifest",
    "merge_bundles": "_graph",
    "objectives": "_graph",
    "obligations": "_graph",
    "observe": "_model",
    "parse_manifest": "_manifest",
    "parse_objective": "_model",
    "reachable": "_graph",
    "realize": "_realize",
    "realizer_lm": "_realize",
    "slug": "_extract",
    "structural_coverage": "_coverage",
    "witness_executor": "_generate",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

__all__ = [
    "RESTRICTED_CALL",
    "TOOL_NOT_FOUND",
    "AgentNode",
    "Bundle",
    "CriterionCoverage",
    "Delegation",
    "ExtractError",
    "GenerateResult",
    "Manifest",
    "ManifestError",
    "Objective",
    "Obligations",
    "Observation",
    "RealizationReport",
    "StructuralCoverage",
    "ToolNode",
    "derive_restrictions",
    "dump_manifest",
    "extract_manifest",
    "generate_suite",
    "load_manifest",
    "merge_bundles",
    "objectives",
    "obligations",
    "observe",
    "parse_manifest",
    "parse_objective",
    "reachable",
    "realize",
    "realizer_lm",
    "slug",
    "structural_coverage",
    "witness_executor",
]
