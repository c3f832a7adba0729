"""Sequential designs shipped in the package: right, complete for the defaults, and free in a fresh container."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentassay import __version__
from agentassay.gate import sequential_design
from agentassay.gate._designs import SHIPPED, design_key, shipped_designs
from agentassay.stats import SequentialDesign
from agentassay.stats._sequential import DESIGN_ALGORITHM
from benchmarks.speed import default_design_args

ROOT = Path(__file__).resolve().parents[1]


def test_shipped_entries_are_what_calibration_gives() -> None:
    table = shipped_designs()
    for args in [(20, 20, 0.05, 0.1, 0.25), (30, 30, 0.0125, 0.1, 0.25), (20, 20, 0.0025, 0.1, 0.25)]:
        fresh = SequentialDesign(*args)
        assert table[design_key(*args)] == (fresh.c_fail, fresh.c_pass), args


def test_the_table_covers_the_default_settings_and_the_examples() -> None:
    table = shipped_designs()
    missing = [a for a in default_design_args() if design_key(*a) not in table]
    assert not missing
    # What `check` asked for on the examples (customer service: 4 scenarios, fingerprints; with contracts;
    # 10 scenarios; ticket routing: 2; metamorphic: fingerprints and relations, 2 scenarios).
    for args in [
        (100, 100, 0.00625), (100, 100, 0.0043749999999999995), (100, 100, 0.0025), (50, 50, 0.0125),
        (50, 50, 0.0075000000000000015),
    ]:
        assert design_key(*args, 0.1, 0.25) in table, args


def test_keys_name_the_algorithm_not_the_release(tmp_path: Path) -> None:
    key = design_key(20, 20, 0.05, 0.1, 0.25)
    assert f"algorithm {DESIGN_ALGORITHM}|" in key and __version__ not in key
    data = json.loads(SHIPPED.read_text())
    assert data["algorithm"] == DESIGN_ALGORITHM
    stale = tmp_path / "designs.json"
    stale.write_text(json.dumps({**data, "algorithm": DESIGN_ALGORITHM + 1}))
    assert shipped_designs(stale) == {}  # constants of another calibration are never used
    stale.write_text("{not json")
    assert shipped_designs(stale) == {}


_FRESH = """
import json, random, sys
from agentassay.adapters import CallableAdapter
from agentassay.runner import run_suite
from agentassay.spec import AgentConfig, Check, Scenario, Settings, Suite
from agentassay.stats._sequential import _constants

def agent(text, seed):
    return "ok" if random.Random(seed).random() < 0.9 else "no"

out = {}
for n in (20, 50):
    suite = Suite("fresh", AgentConfig("x:y"), tuple(Scenario(f"s{i}", "go", checks=(Check("contains", "ok"),))
        for i in range(2)), Settings(trials=n, seed=1, concurrency=4, timeout=10))
    go = lambda **kw: run_suite(suite, adapter=CallableAdapter(agent), progress=False, handle_signals=False, **kw)
    base = go(full=True, version="v1").results
    cand = go(baseline=base, version="v2").results
    out[n] = [s.verdict.test for s in cand.scenarios]
print(json.dumps({"tests": out, "calibrations": _constants.cache_info().misses}))
"""


def test_a_fresh_container_calibrates_no_default_design(tmp_path: Path) -> None:
    """A default `check` (sequential, fingerprints on) with an empty cache: no calibration, nothing cached."""
    cache = tmp_path / "cache"
    env = {**os.environ, "AGENTASSAY_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    res = json.loads(done.stdout.strip().splitlines()[-1])
    assert res["tests"] == {"20": ["sequential-regression"] * 2, "50": ["sequential-regression"] * 2}
    assert res["calibrations"] == 0
    assert not (cache / "sequential-designs.json").exists()


def test_other_designs_are_calibrated_once_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTASSAY_CACHE_DIR", str(tmp_path))
    args = (12, 12, 0.0123, 0.1)
    assert design_key(*args, 0.25) not in shipped_designs()
    d = sequential_design(*args)
    cached = json.loads((tmp_path / "sequential-designs.json").read_text())
    assert cached == {design_key(*args, 0.25): [d.c_fail, d.c_pass]}
