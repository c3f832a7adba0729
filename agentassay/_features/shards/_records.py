"""The shard record's entry in the results file's JSON Schema (merged into the kernel's by _results/_validate.py)."""

from __future__ import annotations

from ..._spec._settings import FeatureRecords

RECORDS = FeatureRecords(
    schema={
        "results": {
            "shard": {
                "type": ["object", "null"],
                "properties": {
                    "index": {"type": "integer", "minimum": 1, "maximum": 1000000},
                    "count": {"type": "integer", "minimum": 1, "maximum": 1000000},
                    "scenarios_total": {"$ref": "#/$defs/count"},
                },
            }
        }
    }
)
