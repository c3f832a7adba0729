"""``config.budget_usd``: most USD one run may spend at the configured prices."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..._spec import FeatureSettings, Settings
from ..._spec._settings import FeatureRecords


@dataclass(frozen=True)
class BudgetSettings(FeatureSettings):
    """No trial starts once finished trials cost ``usd`` (trials in flight finish). None: no cap. Undecided
    scenarios are then inconclusive."""

    NAME: ClassVar[str] = "budget"
    CONFIG: ClassVar[tuple[str, ...]] = ("budget_usd",)

    usd: float | None = None

    @classmethod
    def parse(cls, reader: Any, nodes: Mapping[str, Any]) -> BudgetSettings:
        node = nodes["budget_usd"]
        return cls(None if reader.is_null(node) else reader.number(node, "config.budget_usd", "USD > 0", lambda x: x > 0))

    def check(self, settings: Settings, reader: Any, nodes: Mapping[str, tuple[Any, Any]]) -> None:
        if self.usd is not None and not settings.prices:
            raise reader.err(
                nodes["budget_usd"][1],
                "config.budget_usd",
                "a budget needs prices: add `config.prices` (USD per million input and output tokens per "
                'model, or `"*"` for any model) so that trials have a cost to count.',
                expected="config.prices with budget_usd",
                got="no prices",
            )

    def to_settings(self) -> dict[str, Any]:
        return {"budget_usd": self.usd}

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any]) -> BudgetSettings:
        return cls(raw.get("budget_usd"))


# Its entries in the results file's JSON Schema (merged into the kernel's by _results/_validate.py).
RECORDS = FeatureRecords(schema={"settings": {"budget_usd": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1000000000}}})
