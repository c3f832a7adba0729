"""``mutation:`` in agentassay.yml and ``agentassay mutate``'s options, validated into one frozen object.

Every error names the file, the line and the key, says what was expected and how to fix it
(exit code 3), as the suite loader's errors do.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._config_check import closest, did_you_mean
from ..._integrations.adapters import AgentLoadError
from ..._integrations.adapters._resolve import import_entry
from ..._spec import PROVIDERS, ModelConfig, SpecError, Suite
from ._operators import OPERATORS

# The operator classes, in registry order: read from the one registry (`_operators.OPERATORS`), never listed twice.
CLASSES: tuple[str, ...] = tuple(OPERATORS)
KEYS = ("operators", "prompts", "models", "max_mutants", "truncate")
MODEL_KEYS = ("provider", "name", "behaviour", "base_url", "api_key_env", "temperature", "kind")
MODEL_KINDS = ("swap", "downgrade")


@dataclass(frozen=True)
class MutantModel:
    """A model the suite names for model mutants (Def. 5.4): the model and whether it is a swap or a downgrade."""

    model: ModelConfig
    kind: str = "swap"

    @property
    def label(self) -> str:
        return self.model.name or self.model.provider


@dataclass(frozen=True)
class MutationConfig:
    classes: tuple[str, ...] = CLASSES
    prompts: tuple[str, ...] = ()  # "module:ATTR" prompt strings of a plain-callable agent
    models: tuple[MutantModel, ...] = ()
    max_mutants: int | None = None
    truncate: float = 0.5  # context truncation keeps this fraction of the input
    notes: tuple[str, ...] = field(default=())


def _closest(name: str, valid: Iterable[str]) -> str:
    return did_you_mean(closest(name, valid))


def parse_classes(value: Any, where: str, error: Any) -> tuple[str, ...]:
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
    if not isinstance(items, Sequence) or isinstance(items, str) or not items:
        raise error(f"expected a list of operator classes ({', '.join(CLASSES)}), got {value!r}")
    out = []
    for item in items:
        if item not in CLASSES:
            raise error(
                f"unknown operator class {item!r}.{_closest(str(item), CLASSES)} Valid classes: {', '.join(CLASSES)}"
            )
        out.append(item)
    return tuple(dict.fromkeys(out))


def parse_config(suite: Suite, *, classes: str | None = None, max_mutants: int | None = None) -> MutationConfig:
    """The suite's ``mutation:`` section, overridden by the command line (``--operators``, ``--max-mutants``)."""
    ext = suite.extensions.get("mutation")
    raw: dict[str, Any] = {}
    file = str(suite.path) if suite.path else None

    def err(key: str | None, line: int | None = None) -> Any:
        def make(message: str) -> SpecError:
            return SpecError(message, file=file, line=line, key=key)

        return make

    if ext is not None:
        if not isinstance(ext.value, dict):
            raise ext.error(f"expected a mapping with keys {', '.join(KEYS)}, got {type(ext.value).__name__}")
        raw = dict(ext.value)
        for k in raw:
            if k not in KEYS:
                raise ext.error(f"unknown key 'mutation.{k}'.{_closest(k, KEYS)} Valid keys: {', '.join(KEYS)}")
    line = ext.line if ext is not None else None
    out: dict[str, Any] = {}
    if "operators" in raw:
        out["classes"] = parse_classes(raw["operators"], "mutation.operators", err("mutation.operators", line))
    if classes is not None:
        out["classes"] = parse_classes(classes, "--operators", err("--operators"))
    prompts = raw.get("prompts") or []
    if not isinstance(prompts, list) or not all(isinstance(p, str) and ":" in p for p in prompts):
        raise err("mutation.prompts", line)(
            f"expected a list of 'module:ATTR' names of prompt strings, got {prompts!r}; e.g. "
            "prompts: [\"my_agent.prompts:SYSTEM_PROMPT\"]"
        )
    for i, ref in enumerate(prompts):
        _check_prompt(ref, suite, err(f"mutation.prompts[{i}]", line))
    out["prompts"] = tuple(prompts)
    models = raw.get("models") or []
    if not isinstance(models, list):
        raise err("mutation.models", line)(f"expected a list of models, got {type(models).__name__}")
    out["models"] = tuple(_model(m, i, suite, err(f"mutation.models[{i}]", line)) for i, m in enumerate(models))
    if "max_mutants" in raw:
        v = raw["max_mutants"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise err("mutation.max_mutants", line)(f"expected a whole number >= 1, got {v!r}")
        out["max_mutants"] = v
    if max_mutants is not None:
        out["max_mutants"] = max_mutants
    if "truncate" in raw:
        v = raw["truncate"]
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0 < v < 1:
            raise err("mutation.truncate", line)(f"expected the fraction of the input kept, in (0, 1), got {v!r}")
        out["truncate"] = float(v)
    return MutationConfig(**out)


def _check_prompt(ref: str, suite: Suite, error: Any) -> None:
    """A prompt entry must import (from the working folder or the suite's, as the agent entry does) and be a string."""
    from pathlib import Path


    try:
        value = import_entry(ref, search=[Path.cwd(), suite.root])
    except AgentLoadError as exc:
        raise error(f"{ref!r} cannot be imported: {exc}. Name a module-level string as 'module:ATTR'") from None
    if not isinstance(value, str):
        raise error(f"{ref!r} is a {type(value).__name__}, not a string: name the prompt text itself (a module-level str)")


def _model(raw: Any, i: int, suite: Suite, error: Any) -> MutantModel:
    """``models:`` entries: a model name (the suite's provider) or a mapping like the suite's ``model:``."""
    if isinstance(raw, str):
        raw = {"name": raw}
    if not isinstance(raw, dict):
        raise error(f"expected a model name or a mapping like `model:` ({', '.join(MODEL_KEYS)}), got {raw!r}")
    for k in raw:
        if k not in MODEL_KEYS:
            raise error(f"unknown key {k!r}.{_closest(k, MODEL_KEYS)} Valid keys: {', '.join(MODEL_KEYS)}")
    kind = raw.get("kind", "swap")
    if kind not in MODEL_KINDS:
        raise error(f"kind {kind!r}: expected 'swap' (a model of the same tier) or 'downgrade' (a weaker one)")
    provider = raw.get("provider", suite.model.provider)
    if provider not in PROVIDERS:
        raise error(f"provider {provider!r}: expected one of {', '.join(PROVIDERS)}")
    if not raw.get("name"):
        raise error("a model mutant needs `name:` (the model to swap in)")
    if provider == "offline" and not raw.get("behaviour"):
        raise error(
            f"model {raw['name']!r} is not configured: the offline simulator needs `behaviour: module:ATTR` (a "
            "second behaviour table) for a model mutant; a real provider needs `provider:` and `name:`"
        )
    fields = {k: raw[k] for k in MODEL_KEYS if k in raw and k != "kind"}
    fields["provider"] = provider
    return MutantModel(ModelConfig(**fields), kind)
