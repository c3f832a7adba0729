"""The suite spec: ``agentassay.yml`` read into frozen, validated objects (docs/suite.md).

Importing this package is cheap (PyYAML only): the CLI loads a suite before deciding what else
it needs.
"""

from ._loader import SpecError, load_suite, parse_suite
from ._model import (
    BUILTIN_PLUGIN_KEYS,
    CHECK_KINDS,
    CORRECTIONS,
    ERROR_POLICIES,
    METHODS,
    PROPERTY_CHECKS,
    PROVIDERS,
    AgentConfig,
    AlertsConfig,
    Check,
    CoverageConfig,
    Extension,
    ModelConfig,
    Scenario,
    Settings,
    Suite,
)

__all__ = [
    "BUILTIN_PLUGIN_KEYS",
    "CHECK_KINDS",
    "CORRECTIONS",
    "ERROR_POLICIES",
    "METHODS",
    "PROPERTY_CHECKS",
    "PROVIDERS",
    "AgentConfig",
    "AlertsConfig",
    "Check",
    "CoverageConfig",
    "Extension",
    "ModelConfig",
    "Scenario",
    "Settings",
    "SpecError",
    "Suite",
    "load_suite",
    "parse_suite",
]
