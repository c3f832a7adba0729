"""Structural workflow coverage (Kahani & Bagherzadeh, Sec. II–IV): manifest → graph → obligations → tests.

* ``extract_manifest`` / ``load_manifest`` / ``dump_manifest``: the normalized workflow specification;
* ``obligations``, ``objectives``, ``merge_bundles``: Ω(S), rules R1–R4, obligation-preserving bundles;
* ``observe`` and ``structural_coverage``: runtime witnesses and C1–C4 (C3 with inverted polarity);
* ``realize`` / ``generate_suite``: DSPy-realized witness scenarios (imports DSPy only when called);
* ``structural_mutants`` / ``mutation_analysis``: does the suite notice a changed workflow graph?
"""

from ._coverage import CriterionCoverage, StructuralCoverage, structural_coverage
from ._extract import ExtractError, extract_manifest, slug
from ._generate import GenerateResult, generate_suite, witness_executor
from ._graph import merge_bundles, objectives, obligations, reachable
from ._manifest import ManifestError, derive_restrictions, dump_manifest, load_manifest, parse_manifest
from ._model import (
    RESTRICTED_CALL,
    TOOL_NOT_FOUND,
    AgentNode,
    Bundle,
    Delegation,
    Manifest,
    Objective,
    Obligations,
    Observation,
    ToolNode,
    observe,
)
from ._mutation import (
    MutationReport,
    StructuralMutant,
    apply_to_agents,
    apply_to_manifest,
    mutation_analysis,
    structural_mutants,
)
from ._realize import RealizationReport, realize, realizer_lm

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
    "MutationReport",
    "Objective",
    "Obligations",
    "Observation",
    "RealizationReport",
    "StructuralCoverage",
    "StructuralMutant",
    "ToolNode",
    "apply_to_agents",
    "apply_to_manifest",
    "derive_restrictions",
    "dump_manifest",
    "extract_manifest",
    "generate_suite",
    "load_manifest",
    "merge_bundles",
    "mutation_analysis",
    "objectives",
    "obligations",
    "observe",
    "parse_manifest",
    "reachable",
    "realize",
    "realizer_lm",
    "slug",
    "structural_coverage",
    "structural_mutants",
    "witness_executor",
]
