"""The suite spec: ``agentassay.yml`` read into frozen, validated objects (docs/suite.md).

Importing this package is cheap (PyYAML only): the CLI loads a suite before deciding what else
it needs.
"""

from typing import Any

from ._kinds import CheckKind, check_kinds, kind_names
from ._loader import SpecError, load_suite, parse_suite
from ._model import (
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


def __getattr__(name: str) -> Any:
    """``CHECK_KINDS``: every check kind's name, read from the registry when first asked for (features add
    kinds, and the registry is read lazily so that importing the spec imports no feature)."""
    if name == "CHECK_KINDS":
        return kind_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CHECK_KINDS",
    "CORRECTIONS",
    "ERROR_POLICIES",
    "METHODS",
    "PROPERTY_CHECKS",
    "PROVIDERS",
    "AgentConfig",
    "Check",
    "CheckKind",
    "Extension",
    "FeatureSettings",
    "ModelConfig",
    "Scenario",
    "Settings",
    "SpecError",
    "Suite",
    "check_kinds",
    "kind_names",
    "load_suite",
    "parse_suite",
]
