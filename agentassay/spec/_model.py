"""The suite spec as typed, frozen objects: what ``load_suite`` returns after validation.

The YAML shape follows the AgentAssay paper's Sec. 8.4 (``name``, ``description``, ``agent``,
``scenarios``, ``config`` with ``regression``) and extends it; docs/suite.md is the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

METHODS = ("sprt", "fixed")
ERROR_POLICIES = ("fail", "exclude")
CORRECTIONS = ("holm", "bonferroni", "none")
PROVIDERS = ("offline", "openai", "openai-compatible", "litellm")
CHECK_KINDS = (
    "exact_match",
    "contains",
    "not_contains",
    "regex",
    "json_schema",
    "python",
    "max_steps",
    "must_call",
    "must_not_call",
    "must_reach",
    "judge",
)
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

    kinds: exact_match, contains, not_contains, regex, json_schema, python, max_steps,
    must_call, must_not_call, must_reach, judge.
    """

    kind: str
    value: Any = None
    options: dict[str, Any] = field(default_factory=dict)
    # Where the check was written, so errors found later (e.g. an import failing) name the line.
    line: int | None = field(default=None, compare=False, repr=False)
    key: str | None = field(default=None, compare=False, repr=False)


# Keys of agentassay.yml that built-in plugins own and validate themselves (docs/architecture.md,
# "Hooks"): {where: {key: plugin}}. Known here, statically, so that reading a suite never has to
# import a plugin; the plugin is imported only when a suite uses its key.
BUILTIN_PLUGIN_KEYS: dict[str, dict[str, str]] = {
    "suite": {"mutation": "mutation", "contracts": "contracts", "judge": "judge"},
    "config": {"metamorphic": "metamorphic"},
    "scenario": {
        "metamorphic": "metamorphic",
        "contracts": "contracts",
        "judge": "judge",
        "match": "analyze",
    },
}


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
    # e.g. ("UseTool(faq_agent, faq_lookup_tool)", "Reach(faq_agent)"); coverage reports by them.
    witness: tuple[str, ...] = ()
    # Keys of this scenario that plugins own, by key (validated by the plugin, not the loader).
    extensions: dict[str, Extension] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class CoverageConfig:
    """``config.coverage`` (docs/coverage.md): what coverage is measured on and how it gates."""

    enabled: bool = True
    manifest: str | None = None  # a hand-written manifest (path); None: extract from the agent
    derive_restrictions: bool = True  # closed-world restrictions for an extracted manifest
    probe_restricted: bool = False  # expose restricted tools as recording stubs during runs
    min: float | None = None  # Eq. 26: PASS with overall coverage below this becomes manual
    weights: dict[str, float] | None = None  # weighted geometric mean (Remark 4.2)
    state_lambda: float = 20.0  # λ of C_state (Eq. 17)
    models: tuple[str, ...] = ()  # M_target of C_model; empty: the models run


@dataclass(frozen=True)
class AlertsConfig:
    """``config.regression.alerts`` (docs/reports.md, "Change alerts"): when a comparison warns that the
    baseline and the candidate ran in different conditions. Alerts are evidence for the reader; they
    never change a verdict."""

    enabled: bool = True
    max_age_days: float = 30.0  # a baseline older than this (against the candidate's start) is flagged
    cost_ratio: float = 1.5  # mean USD per trial changed by this factor or more (up or down)
    latency_ratio: float = 1.5  # median latency per trial changed by this factor or more (up or down)
    latency_floor_s: float = 0.5  # ... and by at least this many seconds: timer noise never alerts


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
    # Behavioural fingerprints in `check` (docs/token-efficiency.md): half of alpha goes to them.
    fingerprints: bool = True
    fingerprint_shift: float = 1.0  # smallest shift to detect, in baseline standard deviations
    fingerprint_trials: int | None = None  # None: the adaptive budget decides
    # Warm start of the threshold SPRT from recorded trials (`run --warm-start`).
    warm_start: bool = True
    warm_inflation: float = 1.5  # worst-case miss rate allowed, as a multiple of beta
    # A cheaper proxy model (docs/multifidelity.md): `run` pairs it with the target to estimate rho,
    # `check` spends proxy trials instead of some target trials (fixed method only).
    proxy: ModelConfig | None = None
    proxy_paired: int = 20  # paired runs per scenario (same seed on both models) that estimate rho
    proxy_min_target: int = 10  # target trials per scenario the allocation never goes below
    # Most USD one run may spend at the configured prices: no trial starts once finished trials cost
    # this much (trials in flight finish). None: no cap. Undecided scenarios are then inconclusive.
    budget_usd: float | None = None
    coverage: CoverageConfig = field(default_factory=CoverageConfig)
    # Change alerts in comparisons (config.regression.alerts); written to a results file only when set.
    alerts: AlertsConfig = field(default_factory=AlertsConfig)

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

    @property
    def root(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()

    def scenario(self, name: str) -> Scenario:
        for s in self.scenarios:
            if s.name == name:
                return s
        raise KeyError(name)
