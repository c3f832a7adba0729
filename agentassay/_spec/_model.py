"""The suite spec as typed, frozen objects: what ``load_suite`` returns after validation.

The YAML shape follows the AgentAssay paper's Sec. 8.4 (``name``, ``description``, ``agent``,
``scenarios``, ``config`` with ``regression``) and extends it; docs/suite.md is the reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ._settings import F, FeatureSettings, part_by_name, settings_parts

METHODS = ("sprt", "fixed")
ERROR_POLICIES = ("fail", "exclude")
CORRECTIONS = ("holm", "bonferroni", "none")
PROVIDERS = ("offline", "openai", "openai-compatible", "litellm")
# Property keys that are also checks (``properties: [max_steps: 5]`` both records and enforces it).
PROPERTY_CHECKS = (
    "max_steps",
    "must_call",
    "must_not_call",
    "must_reach",
    "contains",
    "not_contains",
    "regex",
)


@dataclass(frozen=True)
class AgentConfig:
    """Where the agent comes from: ``module:attr``, optionally a factory called with no arguments."""

    entry: str
    factory: bool = False
    version: str | None = None  # agent version label; default: the git commit of the suite's repo
    # A callable that runs an agent framework inside: the framework whose instrumentation traces it.
    framework: str | None = None


@dataclass(frozen=True)
class ModelConfig:
    """Which model drives an OpenAI Agents SDK agent. Ignored for plain callables.

    ``offline`` is the seeded simulator (no network); ``behaviour`` names its per-agent policy
    (``module:attr`` or a YAML path); when absent the adapter looks for ``OFFLINE_BEHAVIOUR`` in
    the agent's module. Real providers are chosen here, never in code.
    """

    provider: str = "offline"
    name: str | None = None
    behaviour: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None


@dataclass(frozen=True)
class Check:
    """One evaluator check, e.g. ``Check("contains", "refund")`` or ``Check("max_steps", 5)``.

    kinds: the kernel's (exact_match, contains, not_contains, regex, json_schema, python, max_steps,
    must_call, must_not_call, must_reach) and those features add (_spec/_kinds.py).
    """

    kind: str
    value: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    # Where the check was written, so errors found later (e.g. an import failing) name the line.
    line: int | None = field(default=None, compare=False, repr=False)
    key: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Extension:
    """The raw value of a suite key a plugin owns (``agentassay_suite_keys``), with where it was written,
    so the plugin's own validation can point at the line: ``raise ext.error("expected a list")``."""

    key: str  # the dotted path, e.g. "config.my_plugin" or "scenarios[2].my_plugin"
    value: Any
    line: int | None = None
    file: str | None = None
    plugin: str | None = None

    def error(self, message: str, **parts: str | None) -> Exception:
        # a cycle: the loader builds this module's objects
        from ._loader import SpecError

        return SpecError(message, file=self.file, line=self.line, key=self.key, **parts)


@dataclass(frozen=True)
class Scenario:
    name: str
    input: str
    properties: dict[str, Any] = field(default_factory=dict)
    descriptions: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()
    threshold: float | None = None  # overrides config.threshold for this scenario
    line: int | None = None  # line in the suite file, for messages
    description: str = ""
    # Structural witness objectives this scenario was generated for (``agentassay generate``),
    # e.g. ("UseTool(faq_agent, faq_lookup_tool)", "Reach(faq_agent)"); reports group by them.
    witness: tuple[str, ...] = ()
    # Keys of this scenario that plugins own, by key (validated by the plugin, not the loader).
    extensions: dict[str, Extension] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Settings:
    """``config:`` of the suite. Defaults are what a user gets by writing nothing."""

    # The defaults were chosen by benchmarks/decisiveness.py (docs/decisiveness.md): a check looks at
    # up to 200 candidate trials against a 300-trial baseline; unchanged agents stop early.
    trials: int = 200
    max_trials: int | None = None
    baseline_trials: int | None = None  # trials per scenario `run --full` records; None: 1.5 x the cap
    threshold: float = 0.80
    alpha: float = 0.05
    beta: float = 0.10
    delta: float = 0.10
    method: str = "sprt"
    concurrency: int = 8
    timeout: float = 120.0
    retries: int = 2
    seed: int = 0
    errors: str = "fail"
    correction: str = "holm"
    baseline: str | None = None
    regression_delta: float | None = None  # config.regression.delta; falls back to delta
    # USD per million tokens, per model name as the trace reports it ("*" for any other model):
    # {"gpt-4.1-mini": {"input": 0.4, "output": 1.6}}. No network look-ups, ever.
    prices: dict[str, dict[str, float]] = field(default_factory=dict)
    # Each feature's part of `config:` (_spec/_settings.py), by feature name: what the feature validated.
    # Only parts that differ from their defaults are kept, so settings compare equal however they were made.
    features: Mapping[str, FeatureSettings] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kept = {k: v for k, v in self.features.items() if v != type(v)()}
        object.__setattr__(self, "features", kept)

    def of(self, kind: type[F]) -> F:
        """A feature's part, typed: ``settings.of(MySettings).option``; its defaults when unset."""
        part = self.features.get(kind.NAME)
        return part if isinstance(part, kind) else kind()

    def part(self, name: str) -> Any:
        """A built-in feature's part by name (its defaults when unset), for code that must not import it."""
        part = self.features.get(name)
        return part if part is not None else part_by_name()[name]()

    def with_parts(self, *parts: FeatureSettings) -> Settings:
        """These settings with ``parts`` replacing the feature parts of the same names."""
        return replace(self, features={**self.features, **{p.NAME: p for p in parts}})

    def to_dict(self) -> dict[str, Any]:
        """The results file's ``settings``: the kernel's fields, then each part's flat entries."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "features"}
        d["prices"] = {k: dict(v) for k, v in self.prices.items()}
        for kind in settings_parts():  # every built-in part, defaults included: a file states all it ran with
            d.update(self.of(kind).to_settings())
        for name, part in self.features.items():
            if name not in part_by_name():  # a part no built-in feature defines
                d.update(part.to_settings())
        return d

    @property
    def trial_cap(self) -> int:
        """Most trials one scenario may use."""
        return self.max_trials if self.max_trials is not None else self.trials

    @property
    def record_cap(self) -> int:
        """Trials per scenario a baseline records (``run --full``, the Action's record mode): more than a
        check's cap, because a baseline is paid once and every PR's check reuses it."""
        if self.baseline_trials is not None:
            return self.baseline_trials
        return -(-3 * self.trial_cap // 2)

    @property
    def margin(self) -> float:
        return self.regression_delta if self.regression_delta is not None else self.delta


@dataclass(frozen=True)
class Suite:
    name: str
    agent: AgentConfig
    scenarios: tuple[Scenario, ...]
    settings: Settings = field(default_factory=Settings)
    model: ModelConfig = field(default_factory=ModelConfig)
    description: str = ""
    path: Path | None = None  # the file it was read from; relative paths resolve against its folder
    # Top-level and config keys that plugins own, by dotted key ("my_plugin", "config.my_plugin").
    extensions: dict[str, Extension] = field(default_factory=dict, compare=False)
    # Whether the file names a model: without one, an agent of another framework than the SDK keeps its own.
    model_given: bool = field(default=False, compare=False)

    @property
    def root(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()

    def scenario(self, name: str) -> Scenario:
        for s in self.scenarios:
            if s.name == name:
                return s
        raise KeyError(name)
