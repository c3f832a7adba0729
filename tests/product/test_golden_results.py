"""Behaviour is pinned: every case of tests/_support/golden_cases.py writes the results (and reports) recorded in
tests/golden/results.json.gz, up to run ids, times and latencies.

The golden file was written before the run's lifecycle became hooks (issue 13), so this is the test
that the plugins reproduce the old monolithic run exactly: threshold and regression runs, fingerprints,
warm starts, coverage with the restricted probe, the proxy, the budget cap, shards and their merge,
`compare`, a plain callable, and the terminal table and PR comment of several of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("agents")

from tests._support.golden_cases import differences, load_golden, snapshot


@pytest.fixture(scope="module")
def golden() -> dict:
    return load_golden()


@pytest.fixture(scope="module")
def current(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return snapshot(tmp_path_factory.mktemp("golden"))


def test_the_same_cases_run(golden: dict, current: dict) -> None:
    assert sorted(current) == sorted(golden)


@pytest.mark.parametrize("case", sorted(load_golden()))
def test_results_and_reports_are_unchanged(case: str, golden: dict, current: dict) -> None:
    want, got = golden[case], current[case]
    diff = differences(want, got, case)
    assert not diff, "results differ from tests/golden (first differences):\n" + "\n".join(diff)


def test_golden_file_is_committed() -> None:
    assert (Path(__file__).resolve().parents[1] / "golden" / "results.json.gz").stat().st_size > 10_000
