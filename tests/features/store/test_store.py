"""The SQLite trace store: round trip, query/sample, bad files, and survival of SIGKILL."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agentassay._traces import Action, Cost, Step, StoreError, Trace, TraceMetadata, TraceStore

ROOT = Path(__file__).resolve().parents[3]


def trace(i: int) -> Trace:
    return Trace(
        steps=(Step(Action.CALL_TOOL, agent="A", tool="t", arguments={"i": i}, output="x"), Step(Action.RESPOND, output="ok")),
        output="ok",
        cost=Cost(10, 5, 0.1),
        metadata=TraceMetadata(scenario="s", trial=i, seed=i),
    )


def test_round_trip_query_and_sample(tmp_path: Path) -> None:
    with TraceStore(tmp_path / "s.db") as store:
        for i in range(10):
            store.add(trace(i), run_id="r", suite="suite", scenario=f"s{i % 2}", agent_version="v1", trial=i, passed=i % 3 != 0)
        store.add(trace(99), run_id="r2", suite="suite", scenario="s0", agent_version="v2", trial=0)
        assert store.versions() == ["v1", "v2"]
        rows = store.query("v1", ["s0"])
        assert [r.trial for r in rows] == [0, 2, 4, 6, 8]
        assert rows[0].trace == trace(0) and rows[0].passed is False and rows[1].passed is True
        assert store.query("v1", []) == []
        assert len(store.query("v1")) == 10
        a, b = store.sample("v1", 4, seed=1), store.sample("v1", 4, seed=1)
        assert [r.id for r in a] == [r.id for r in b] and len({r.id for r in a}) == 4
        assert all(r.agent_version == "v1" for r in a)
        assert len(store.sample("v1", 100)) == 10
        mode = store._db.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"


def test_bad_files_are_reported(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable AgentAssay trace store"):
        TraceStore(junk)
    other = tmp_path / "other.db"
    with TraceStore(other):
        pass
    con = sqlite3.connect(other)
    con.execute("UPDATE meta SET value='99' WHERE key='schema'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="schema 99"):
        TraceStore(other)


def test_sigkill_leaves_a_readable_store_with_every_finished_trial(tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'tests')!r}]
        from agentassay._integrations.adapters import CallableAdapter
        from agentassay._runner import run_suite
        from agentassay._spec import AgentConfig, Check, Scenario, Settings, Suite
        from agentassay._traces import TraceStore
        from tests._support import fixture_agents as fa
        suite = Suite("k", AgentConfig("tests._support.fixture_agents:slow_ok"),
                      tuple(Scenario(f"s{{i}}", "q", checks=(Check("contains", "ok"),)) for i in range(3)),
                      Settings(trials=400, method="fixed", concurrency=4, timeout=5))
        store = TraceStore({str(db)!r})
        def done(state, outcome, trace):
            print(state.scenario.name, outcome.index, flush=True)
        run_suite(suite, adapter=CallableAdapter(fa.slow_ok), store=store, progress=False, on_trial=done)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    finished = []
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while len(finished) < 40 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            finished.append(tuple(line.split()))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(finished) >= 40
    with TraceStore(db) as store:
        rows = store.query(store.versions()[0])
        stored = {(r.scenario, str(r.trial)) for r in rows}
        assert set(finished) <= stored
        assert all(r.trace.output == "ok" for r in rows)
