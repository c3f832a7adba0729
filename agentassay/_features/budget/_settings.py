"""``config.budget_usd``: most USD one run may spend, at ``config.prices`` or the maintained price table.

A budget needs no ``config.prices`` (issue 25): the model is priced by the table (``_runner/_cost.py``), and one
it does not list is named at the start of the run (``_plugin.py``), with how to add its price."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..._spec import FeatureSettings
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

    def to_settings(self) -> dict[str, Any]:
        return {"budget_usd": self.usd}

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any]) -> BudgetSettings:
        return cls(raw.get("budget_usd"))


# Its entries in the results file's JSON Schema (merged into the kernel's by _results/_validate.py).
RECORDS = FeatureRecords(schema={"settings": {"budget_usd": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1000000000}}})
