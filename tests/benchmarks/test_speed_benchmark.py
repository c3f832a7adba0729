"""benchmarks/results/speed.json is a full run of benchmarks/speed.py, and it shows the speed targets of issues 17 and 21."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "benchmarks" / "results" / "speed.json").read_text())


def test_the_published_run_is_complete() -> None:
    assert DATA["quick"] is False
    assert set(DATA["verdict"]) == {"50", "100", "200"}
    assert DATA["files"]["scenarios"] == 300 and DATA["files"]["baseline_trials"] == 300 * 75  # 1.5 x the cap of 50
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
    for pair in ("75x50", "150x100", "300x200"):
        assert d[pair]["calibrations"] == 0  # the lookup calibrated nothing (the benchmark's own comparison aside)
        assert d[pair]["lookup_ms"] * 100 < d[pair]["calibration_s"] * 1000, d[pair]


def test_one_scenario_of_a_default_check_spends_at_most_20_ms_in_statistics() -> None:
    """Issue 21: the design, every look and the verdict of one scenario (cap 200, a 300-trial baseline)."""
    sc = DATA["scenario"]
    assert set(sc) == {"sprt 0.9", "sprt 0.83", "fixed 0.9", "fixed 0.83"}
    assert sc["sprt 0.83"]["trials"] == 200 and sc["sprt 0.9"]["trials"] < 200  # one ran to the cap
    for key in ("sprt 0.9", "sprt 0.83"):
        assert sc[key]["ms"] <= 20, (key, sc[key])
