"""Sequential designs shipped in the package: right, complete for the defaults, and free in a fresh container."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentassay import __version__
from agentassay._gate import sequential_design
from agentassay._gate._designs import LOOKS, SHIPPED, boundary_key, shipped_designs
from agentassay._stats._sequential import DESIGN_ALGORITHM, fail_constant, pass_constant
from benchmarks.speed import default_boundaries

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_entries_are_what_calibration_gives() -> None:
    table = shipped_designs()
    for nb, n, alpha in [(75, 50, 0.025), (50, 50, 0.0025), (150, 100, 0.00625)]:
        assert table[boundary_key("fail", nb, n, alpha, None, 0.25, LOOKS)] == fail_constant(nb, n, alpha, 0.25, LOOKS)
    assert table[boundary_key("pass", 75, 50, 0.05, 0.1, 0.25, LOOKS)] == pass_constant(75, 50, 0.05, 0.1, 0.25, LOOKS)


def test_the_table_covers_the_default_settings_and_the_examples() -> None:
    table = shipped_designs()
    missing = [a for a in default_boundaries() if boundary_key(*a, 0.25, LOOKS) not in table]
    assert not missing
    # What `check` asks for at the default cap and baseline (300 / 200): 4 scenarios with fingerprints,
    # with contracts, 10 scenarios with fingerprints, 2 with fingerprints and metamorphic relations; the
    # PASS boundary at the suite's alpha whatever the scenario count.
    for alpha in (0.00625, 0.0043749999999999995, 0.0025, 0.0075000000000000015):
        assert boundary_key("fail", 300, 200, alpha, None, 0.25, LOOKS) in table, alpha
    assert boundary_key("pass", 300, 200, 0.05, 0.1, 0.25, LOOKS) in table


def test_keys_name_the_boundary_and_the_algorithm_not_the_release(tmp_path: Path) -> None:
    key = boundary_key("fail", 20, 20, 0.05, None, 0.25, LOOKS)
    assert key.startswith(f"algorithm {DESIGN_ALGORITHM}|fail|") and __version__ not in key
    assert boundary_key("pass", 20, 20, 0.05, 0.1, 0.25, LOOKS) != key.replace("fail", "pass")  # delta in the key
    data = json.loads(SHIPPED.read_text())
    assert data["algorithm"] == DESIGN_ALGORITHM
    stale = tmp_path / "designs.json"
    stale.write_text(json.dumps({**data, "algorithm": DESIGN_ALGORITHM + 1}))
    assert shipped_designs(stale) == {}  # constants of another calibration are never used
    stale.write_text("{not json")
    assert shipped_designs(stale) == {}


_FRESH = """
import json, random, sys
from agentassay._integrations.adapters import CallableAdapter
from agentassay._runner import run_suite
from agentassay._spec import AgentConfig, Check, Scenario, Settings, Suite
from agentassay._stats._sequential import fail_constant, pass_constant

def agent(text, seed):
    return "ok" if random.Random(seed).random() < 0.9 else "no"

out = {}
for n in (50, 100):
    suite = Suite("fresh", AgentConfig("x:y"), tuple(Scenario(f"s{i}", "go", checks=(Check("contains", "ok"),))
        for i in range(2)), Settings(trials=n, seed=1, concurrency=4, timeout=10))
    go = lambda **kw: run_suite(suite, adapter=CallableAdapter(agent), progress=False, handle_signals=False, **kw)
    base = go(full=True, version="v1").results
    cand = go(baseline=base, version="v2").results
    out[n] = [s.verdict.test for s in cand.scenarios] + [s.baseline.trials for s in cand.scenarios]
calibrations = fail_constant.cache_info().misses + pass_constant.cache_info().misses
print(json.dumps({"tests": out, "calibrations": calibrations}))
"""


def test_a_fresh_container_calibrates_no_default_design(tmp_path: Path) -> None:
    """A default `check` (sequential, fingerprints on) with an empty cache: no calibration, nothing cached."""
    cache = tmp_path / "cache"
    env = {**os.environ, "AGENTASSAY_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    res = json.loads(done.stdout.strip().splitlines()[-1])
    seq = ["sequential-regression"] * 2
    assert res["tests"] == {"50": [*seq, 75, 75], "100": [*seq, 150, 150]}  # baselines of 1.5 x the cap
    assert res["calibrations"] == 0
    assert not (cache / "sequential-constants.json").exists()


def test_other_designs_are_calibrated_once_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTASSAY_CACHE_DIR", str(tmp_path))
    args = (12, 12, 0.0123, 0.1)
    fail = boundary_key("fail", 12, 12, 0.0123, None, 0.25, LOOKS)
    passed = boundary_key("pass", 12, 12, 0.04, 0.1, 0.25, LOOKS)
    assert fail not in shipped_designs() and passed not in shipped_designs()
    d = sequential_design(*args, pass_alpha=0.04)
    cached = json.loads((tmp_path / "sequential-constants.json").read_text())
    assert cached == {fail: d.c_fail, passed: d.c_pass}
    assert (d.alpha, d.pass_alpha, d.looks) == (0.0123, 0.04, LOOKS)
