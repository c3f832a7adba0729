"""One name per concept: a results file of 0.1 wrote "p_value" where the current format writes "pvalue".
Reading it must give the same results as reading the current file (old baselines keep working)."""

from __future__ import annotations

import json
from typing import Any

from agentassay._results import Results
from tests._support.golden_cases import load_golden


def _older(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {("p" + "_value" if k == "pvalue" else k): _older(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_older(v) for v in obj]
    return obj


def test_a_file_with_the_old_key_reads_as_the_current_one() -> None:
    golden = load_golden()
    current = golden["cs_check_v2"]["results"]
    assert '"pvalue"' in json.dumps(current)
    old = dict(current)
    old["scenarios"] = [dict(s, verdict=_older(s["verdict"])) for s in current["scenarios"]]
    for key in Results.from_dict(current).sections:
        old[key] = _older(current[key])
    assert '"p_value"' in json.dumps(old)
    assert Results.from_dict(old).to_dict() == Results.from_dict(current).to_dict()
