"""``config.warm_start``: warm-starting a threshold SPRT's PASS rule from recorded trials (``run --warm-start``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..._spec import FeatureSettings
from ..._spec._settings import FeatureRecords

KEYS = ("enabled", "inflation")


@dataclass(frozen=True)
class WarmStartSettings(FeatureSettings):
    """``inflation``: the worst-case miss rate allowed, as a multiple of beta."""

    NAME: ClassVar[str] = "warm_start"
    CONFIG: ClassVar[tuple[str, ...]] = ("warm_start",)

    enabled: bool = True
    inflation: float = 1.5

    @classmethod
    def parse(cls, reader: Any, nodes: Mapping[str, Any]) -> WarmStartSettings:
        key = "config.warm_start"
        enabled, m = reader.switch(nodes["warm_start"], key, KEYS)
        if "inflation" not in m:
            return cls(enabled=enabled)
        inflation = reader.number(
            m["inflation"][1], f"{key}.inflation", "a factor >= 1 on beta (the worst-case miss rate allowed)",
            lambda x: x >= 1,
        )
        return cls(enabled=enabled, inflation=inflation)

    def to_settings(self) -> dict[str, Any]:
        return {"warm_start": self.enabled, "warm_inflation": self.inflation}

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any]) -> WarmStartSettings:
        return cls(enabled=bool(raw.get("warm_start", True)), inflation=raw.get("warm_inflation", 1.5))


# Its entries in the results file's JSON Schema (merged into the kernel's by _results/_validate.py).
RECORDS = FeatureRecords(schema={"settings": {"warm_start": {"type": "boolean"}, "warm_inflation": {"type": "number", "minimum": 1, "maximum": 1000000}}})
