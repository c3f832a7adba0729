"""``config.proxy`` (docs/multifidelity.md): a cheaper model whose trials stand in for some of the target's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..._spec import FeatureSettings, ModelConfig, Settings
from ..._spec._settings import FeatureRecords

KEYS = ("model", "paired", "min_target")


@dataclass(frozen=True)
class ProxySettings(FeatureSettings):
    """``run`` pairs the proxy with the target to estimate rho (``paired`` runs per scenario, same seed on both
    models); ``check`` spends proxy trials instead of some target trials, never fewer than ``min_target``."""

    NAME: ClassVar[str] = "proxy"
    CONFIG: ClassVar[tuple[str, ...]] = ("proxy",)

    model: ModelConfig | None = None
    paired: int = 20
    min_target: int = 10

    @classmethod
    def parse(cls, reader: Any, nodes: Mapping[str, Any]) -> ProxySettings:
        node = nodes["proxy"]
        if reader.is_null(node):
            return cls()
        m = reader.mapping(node, "config.proxy", "a mapping with model (required), paired, min_target")
        reader.check_keys(m, "config.proxy", KEYS)
        if "model" not in m:
            raise reader.err(
                node,
                "config.proxy.model",
                "required: the cheaper model, written like the top-level `model:`, e.g. "
                "`model: {provider: openai, name: gpt-4.1-nano}`.",
                expected="a model",
                got="nothing",
            )
        kw: dict[str, Any] = {"model": reader.model(m["model"][1], "config.proxy.model")}
        if "paired" in m:
            kw["paired"] = reader.integer(m["paired"][1], "config.proxy.paired", 3)
        if "min_target" in m:
            kw["min_target"] = reader.integer(m["min_target"][1], "config.proxy.min_target", 1)
        return cls(**kw)

    def check(self, settings: Settings, reader: Any, nodes: Mapping[str, tuple[Any, Any]]) -> None:
        if self.model is not None and settings.method != "fixed":
            at = nodes["method"][1] if "method" in nodes else nodes["proxy"][1]
            raise reader.err(
                at,
                "config.method" if "method" in nodes else "config.proxy",
                "config.proxy needs `method: fixed`: the proxy's evidence is merged with the target's by "
                "combining p-values (weighted Stouffer), and sequential tests give no p-value. Set "
                "`method: fixed` or remove `proxy:` (docs/multifidelity.md).",
                expected="method 'fixed' with a proxy",
                got=f"method {settings.method!r}",
            )

    def to_settings(self) -> dict[str, Any]:
        return {
            "proxy": None if self.model is None else asdict(self.model),
            "proxy_paired": self.paired,
            "proxy_min_target": self.min_target,
        }

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any]) -> ProxySettings:
        model = raw.get("proxy")
        return cls(
            model=ModelConfig(**model) if isinstance(model, dict) else None,
            paired=raw.get("proxy_paired", 20),
            min_target=raw.get("proxy_min_target", 10),
        )


# Its entries in the results file's JSON Schema (merged into the kernel's by _results/_validate.py).
RECORDS = FeatureRecords(schema={"results": {"proxy": {"type": ["object", "null"]}}, "settings": {"proxy": {"type": ["object", "null"]}, "proxy_paired": {"type": "integer", "minimum": 0, "maximum": 1000000000}, "proxy_min_target": {"type": "integer", "minimum": 0, "maximum": 1000000000}}})
