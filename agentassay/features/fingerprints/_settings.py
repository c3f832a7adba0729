"""``config.fingerprints`` (docs/token-efficiency.md): the behavioural fingerprint test in ``check``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ...spec import FeatureSettings

KEYS = ("enabled", "shift", "trials")


def switch(reader: Any, node: Any, key: str, keys: tuple[str, ...]) -> tuple[bool, dict[str, tuple[Any, Any]]]:
    """``true`` / ``false`` or a mapping with ``enabled`` and the feature's options: (enabled, the options)."""
    if reader.is_bool(node):
        return reader.boolean(node, key), {}
    m = reader.mapping(node, key, f"true, false, or a mapping with {', '.join(keys)}")
    reader.check_keys(m, key, keys)
    enabled = reader.boolean(m["enabled"][1], f"{key}.enabled") if "enabled" in m else True
    return enabled, {k: v for k, v in m.items() if k != "enabled"}


@dataclass(frozen=True)
class FingerprintSettings(FeatureSettings):
    """Half of alpha goes to the fingerprint test; ``shift`` is the smallest shift to detect, in baseline
    standard deviations; ``trials`` fixes the sample (None: the adaptive budget decides)."""

    NAME: ClassVar[str] = "fingerprints"
    CONFIG: ClassVar[tuple[str, ...]] = ("fingerprints",)

    enabled: bool = True
    shift: float = 1.0
    trials: int | None = None

    @classmethod
    def parse(cls, reader: Any, nodes: Mapping[str, Any]) -> FingerprintSettings:
        key = "config.fingerprints"
        enabled, m = switch(reader, nodes["fingerprints"], key, KEYS)
        kw: dict[str, Any] = {"enabled": enabled}
        if "shift" in m:
            kw["shift"] = reader.number(m["shift"][1], f"{key}.shift", "a shift in standard deviations > 0",
                                        lambda x: x > 0)
        if "trials" in m:
            node = m["trials"][1]
            kw["trials"] = None if reader.is_null(node) else reader.integer(node, f"{key}.trials", 3)
        return cls(**kw)

    def to_settings(self) -> dict[str, Any]:
        return {"fingerprints": self.enabled, "fingerprint_shift": self.shift, "fingerprint_trials": self.trials}

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any]) -> FingerprintSettings:
        d = cls()
        return cls(
            enabled=bool(raw.get("fingerprints", d.enabled)),
            shift=raw.get("fingerprint_shift", d.shift),
            trials=raw.get("fingerprint_trials", d.trials),
        )
