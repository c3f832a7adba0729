"""``config.regression.alerts`` (docs/reports.md, "Change alerts")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from ..._spec import FeatureSettings
from ..._spec._settings import FeatureRecords, dataclass_fields

KEYS = ("enabled", "max_age_days", "cost_ratio", "latency_ratio", "latency_floor_s")


@dataclass(frozen=True)
class AlertsConfig(FeatureSettings):
    """When a comparison warns that the baseline and the candidate ran in different conditions. Alerts are
    evidence for the reader; they never change a verdict."""

    NAME: ClassVar[str] = "alerts"
    CONFIG: ClassVar[tuple[str, ...]] = ("regression.alerts",)

    enabled: bool = True
    max_age_days: float = 30.0  # a baseline older than this (against the candidate's start) is flagged
    cost_ratio: float = 1.5  # mean USD per trial changed by this factor or more (up or down)
    latency_ratio: float = 1.5  # median latency per trial changed by this factor or more (up or down)
    latency_floor_s: float = 0.5  # ... and by at least this many seconds: timer noise never alerts

    @classmethod
    def parse(cls, reader: Any, nodes: Mapping[str, Any]) -> AlertsConfig:
        key, node = "config.regression.alerts", nodes["regression.alerts"]
        if reader.is_bool(node):
            return cls(enabled=reader.boolean(node, key))
        if reader.is_null(node):
            return cls()
        m = reader.mapping(node, key, f"true, false, or a mapping with {', '.join(KEYS)}")
        reader.check_keys(m, key, KEYS)
        kw: dict[str, Any] = {}
        for k, (_, vnode) in m.items():
            sub = f"{key}.{k}"
            if k == "enabled":
                kw[k] = reader.boolean(vnode, sub)
            elif k == "max_age_days":
                kw[k] = reader.number(vnode, sub, "a number of days > 0", lambda x: x > 0)
            elif k in ("cost_ratio", "latency_ratio"):
                kw[k] = reader.number(vnode, sub, "a ratio > 1 (1.5: a change by half or more)", lambda x: x > 1)
            else:
                kw[k] = reader.number(vnode, sub, "a number of seconds >= 0", lambda x: x >= 0)
        return cls(**kw)

    def to_settings(self) -> dict[str, Any]:
        # Written only when the suite set it, so a file that does not use change alerts reads exactly as before
        # they existed (older files load with the defaults).
        return {} if self == AlertsConfig() else {"alerts": asdict(self)}

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any]) -> AlertsConfig:
        a = raw.get("alerts")
        if not isinstance(a, dict):  # absent or damaged: the defaults (alerts are for the reader)
            return cls()
        return cls(**{k: v for k, v in a.items() if k in dataclass_fields(cls)})


# Its entries in the results file's JSON Schema (merged into the kernel's by _results/_validate.py).
RECORDS = FeatureRecords(schema={"settings": {"alerts": {"type": ["object", "null"]}}})
