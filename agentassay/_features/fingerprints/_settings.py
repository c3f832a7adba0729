"""``config.fingerprints`` (docs/token-efficiency.md): the behavioural fingerprint test in ``check``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..._spec import FeatureSettings

KEYS = ("enabled", "shift", "trials")


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
        enabled, m = reader.switch(nodes["fingerprints"], key, KEYS)
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
