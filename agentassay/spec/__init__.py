"""The suite spec: ``agentassay.yml`` read into frozen, validated objects (docs/suite.md).

Importing this package is cheap (PyYAML only): the CLI loads a suite before deciding what else
it needs.
"""

from ._loader import SpecError, load_suite, parse_suite
from ._model import (
    CHECK_KINDS,
    CORRECTIONS,
    ERROR_POLICIES,
    METHODS,
    PROPERTY_CHECKS,
    PROVIDERS,
    AgentConfig,
    Check,
    Extension,
    ModelConfig,
    Scenario,
    Settings,
    Suite,
)
from ._settings import FeatureSettings

__all__ = [
    "CHECK_KINDS",
    "CORRECTIONS",
    "ERROR_POLICIES",
    "METHODS",
    "PROPERTY_CHECKS",
    "PROVIDERS",
    "AgentConfig",
    "Check",
    "Extension",
    "FeatureSettings",
    "ModelConfig",
    "Scenario",
    "Settings",
    "SpecError",
    "Suite",
    "load_suite",
    "parse_suite",
]
