"""How a feature owns a slice of ``config:``: the kernel's ``Settings`` holds each feature's part by name.

``Settings`` knows the kernel's keys only (trials, levels, method, …). A feature adds its keys by a frozen
dataclass deriving from :class:`FeatureSettings` and naming it in its registry entry (``settings``): the
loader hands the part the YAML nodes of its keys, the results file writes and reads the part's flat
entries (so a file reads exactly as before the split), the run identity takes what the part says shapes a
trial. Third-party plugins own keys through ``agentassay_suite_keys`` instead and validate them themselves.

The registry of built-in features is read by module name (``agentassay._features``, as pytest names its
built-in plugins), so the kernel imports no feature; each part's module is imported only when needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    import yaml

    from ._kinds import CheckKind
    from ._model import Settings

REGISTRY = "agentassay._features"  # the module whose BUILTINS lists the built-in features

F = TypeVar("F", bound="FeatureSettings")


@dataclass(frozen=True)
class BuiltinPlugin:
    """A built-in plugin: its hooks' module, its part of ``config:`` and when a run, a report or a re-derivation
    from files needs it (``for_run(run)``, ``for_results(results)``, ``for_plan(plan)``)."""

    name: str
    module: str
    for_run: Callable[[Any], bool]
    for_results: Callable[[Any], bool] = lambda results: False
    for_plan: Callable[[Any], bool] = lambda plan: False
    settings: str | None = None  # "module:Class" of its FeatureSettings, if it owns kernel-validated keys
    # Suite keys it validates itself (kept raw in ``extensions``): {"suite" | "config" | "scenario": keys}.
    keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Results-file keys of its own that every file carries, null when it did not run (the format had them as
    # fixed fields before features were plugins; readers of older files expect them).
    sections: tuple[str, ...] = ()
    # "module:function" adjusting ``Results.savings()`` for trials of its own that stand in for the target's:
    # ``f(results) -> (usd those trials cost, entries to add)``; imported only when its section is present.
    savings: str | None = None
    # Check kinds it adds (_spec/_kinds.py): validated by the loader from the entry, compiled by its builder.
    checks: tuple[CheckKind, ...] = ()
    # Words naming how it grades a scenario through its ``keys`` (the no-checks error lists them): a scenario
    # with no checks is graded when it sets such a key, or the suite does and the scenario does not turn it
    # off (``false``). Empty: it grades nothing.
    grades: str = ""
    # "module:attr" of its :class:`FeatureRecords`: keys of its own in the results file's trial, scenario and
    # verdict records, how to read them back and their JSON Schema; imported when a results file is read.
    records: str | None = None
    # Module of hook specifications it adds (hooks it calls and other plugins implement), e.g. its own merge.
    hookspecs: str | None = None


@dataclass(frozen=True)
class FeatureRecords:
    """A feature's keys inside the results file's records (the kernel writes plugin data flat, so a key a
    feature owns sits where it always did).

    ``trial`` / ``scenario`` / ``verdict``: ``{key: read}`` for the keys it owns in a trial record, a scenario
    record (beside ``fixed_n``) and a scenario's verdict; every file carries them (null when absent), and
    ``read(raw)`` turns a file's value into the in-memory one (None: unusable, so a damaged value costs only
    the feature's own test, never the file). ``schema``: JSON Schema ``properties`` it adds to the results
    schema's ``$defs`` (``{"settings" | "scenario" | "scenario_verdict" | "trial": {key: schema}}``), or to its
    top level (``"results"``: the feature's own sections).
    """

    trial: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    scenario: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    verdict: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    schema: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class FeatureSettings:
    """A feature's part of ``config:``. Subclasses are frozen dataclasses whose defaults are what a user gets by
    writing nothing; they set the class variables and, where the generic rule does not fit, override the methods.
    """

    NAME: ClassVar[str]  # its name in ``Settings.features`` (the feature's)
    CONFIG: ClassVar[tuple[str, ...]]  # keys of ``config:`` it owns; "regression.x" for a key under regression

    @classmethod
    def parse(cls: type[F], reader: Any, nodes: Mapping[str, yaml.Node]) -> F:
        """The part from the YAML value nodes of its keys (``{config key: node}``); ``reader`` is the suite
        loader's typed reader (``reader.number(node, key, expected, ok)``, ``reader.err(...)``, …)."""
        raise NotImplementedError

    def check(self, settings: Settings, reader: Any, nodes: Mapping[str, tuple[yaml.Node, yaml.Node]]) -> None:
        """Validate against the kernel's settings once they are read (``nodes``: every ``config:`` key); raise
        ``reader.err(...)``."""

    def to_settings(self) -> dict[str, Any]:
        """Its entries in the results file's ``settings`` (flat keys, JSON values)."""
        raise NotImplementedError

    @classmethod
    def from_settings(cls: type[F], raw: Mapping[str, Any]) -> F:
        """The part from a results file's ``settings`` (missing or damaged entries: the defaults)."""
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        """Entries of the run identity's trial settings: what in this part changes how one trial runs."""
        return {}


def dataclass_fields(cls: type) -> set[str]:
    return {f.name for f in fields(cls)}


@cache
def builtins() -> tuple[BuiltinPlugin, ...]:
    """The built-in plugins, in call order (first called first)."""
    return tuple(__import__(REGISTRY, fromlist=["_"]).BUILTINS)


def _load(path: str) -> type[FeatureSettings]:
    module, _, attr = path.partition(":")
    return getattr(__import__(module, fromlist=["_"]), attr)


@cache
def settings_parts() -> tuple[type[FeatureSettings], ...]:
    """Every built-in feature's settings class, in registry order."""
    return tuple(_load(b.settings) for b in builtins() if b.settings)


@cache
def part_by_name() -> dict[str, type[FeatureSettings]]:
    return {p.NAME: p for p in settings_parts()}


@cache
def builtin_keys() -> dict[str, dict[str, str]]:
    """Suite keys built-in plugins validate themselves: ``{where: {key: plugin}}`` (static: reading a suite
    imports no plugin)."""
    out: dict[str, dict[str, str]] = {"suite": {}, "config": {}, "scenario": {}}
    for b in builtins():
        for where, keys in b.keys.items():
            for k in keys:
                out[where][k] = b.name
    return out


@cache
def graders() -> tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...]:
    """The built-ins that grade a scenario without checks: (their suite keys, scenario keys, words)."""
    return tuple(
        (tuple(b.keys.get("suite", ())), tuple(b.keys.get("scenario", ())), b.grades) for b in builtins() if b.grades
    )


@cache
def fixed_sections() -> tuple[str, ...]:
    """Results-file sections every file carries (null when their feature did not run)."""
    return tuple(k for b in builtins() for k in b.sections)


@cache
def feature_records() -> tuple[FeatureRecords, ...]:
    """Every built-in feature's record keys, in registry order."""
    return tuple(_load(b.records) for b in builtins() if b.records)  # type: ignore[misc]


@cache
def record_keys(where: str) -> dict[str, Callable[[Any], Any]]:
    """The built-ins' own keys of a ``"trial"``, ``"scenario"`` or ``"verdict"`` record, with their readers."""
    return {k: read for r in feature_records() for k, read in getattr(r, where).items()}


def savings_adjusters(sections: Mapping[str, Any]) -> list[Callable[[Any], tuple[float, dict[str, Any]]]]:
    """The savings adjusters of the built-ins whose sections ``sections`` has."""
    return [_load(b.savings) for b in builtins() if b.savings and any(sections.get(k) for k in b.sections)]  # type: ignore[misc]


def defaults() -> dict[str, FeatureSettings]:
    """Every built-in part with its defaults, by name."""
    return {p.NAME: p() for p in settings_parts()}


__all__ = [
    "REGISTRY",
    "BuiltinPlugin",
    "FeatureRecords",
    "FeatureSettings",
    "builtin_keys",
    "builtins",
    "defaults",
    "feature_records",
    "fixed_sections",
    "graders",
    "record_keys",
    "savings_adjusters",
    "settings_parts",
]
