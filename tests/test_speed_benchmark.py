"""docs/speed.json is a full run of benchmarks/speed.py, and it shows the speed targets of issue 17."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = json.loads((ROOT / "docs" / "speed.json").read_text())


def test_the_published_run_is_complete() -> None:
    assert DATA["quick"] is False
    assert set(DATA["verdict"]) == {"50", "100", "200"}
    assert DATA["files"]["scenarios"] == 300 and DATA["files"]["baseline_trials"] == 300 * 50
    assert set(DATA["cli"]) == {"compare_sprt", "merge_sprt", "compare_fixed", "merge_fixed"}
    assert all(c["reps"] >= 3 and c["exit_code"] in (0, 1, 2) for c in DATA["cli"].values())
    md = (ROOT / "docs" / "performance.md").read_text()
    assert "<!-- BEGIN GENERATED: benchmarks/speed.py -->" in md and "<!-- END GENERATED: benchmarks/speed.py -->" in md


def test_one_regression_verdict_takes_at_most_20_ms_up_to_200_per_arm() -> None:
    for n, v in DATA["verdict"].items():
        assert v["cold_ms"] <= 20 and v["warm_ms"] <= 20, (n, v)


def test_the_verdict_is_at_least_5_times_faster_than_the_table_code() -> None:
    for n, v in DATA["verdict"].items():
        assert v["cold_ms"] * 5 <= DATA["reference_ms"][n], (n, v)


def test_compare_and_merge_of_300_scenarios_take_under_5_s() -> None:
    for name, c in DATA["cli"].items():
        assert c["median_s"] < 5, (name, c)


def test_default_designs_come_from_the_table_not_a_calibration() -> None:
    d = DATA["designs"]
    for n in ("50", "100", "200"):
        assert d[n]["calibrations"] == 1  # the benchmark's own calibration, to compare; the lookup none
        assert d[n]["lookup_ms"] * 100 < d[n]["calibration_s"] * 1000, d[n]
