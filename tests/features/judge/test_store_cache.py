"""The trace store's generic cache (plugins' answers by namespace and key), and the LLM judge's older
``judge_cache`` table moved into it in place: a store written before keeps every answer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agentassay._features.judge import StoreCache
from agentassay._features.judge._judge import Cached
from agentassay._traces import TraceStore

# The table as AgentAssay wrote it before the generic cache.
LEGACY = """
CREATE TABLE judge_cache (
    key           TEXT PRIMARY KEY,
    grade         TEXT NOT NULL,
    reason        TEXT,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    model         TEXT,
    recorded_at   TEXT NOT NULL
);
"""


def test_values_by_namespace_and_the_first_put_wins(tmp_path: Path) -> None:
    with TraceStore(tmp_path / "s.db") as store:
        assert store.cache_get("a", "k") is None
        store.cache_put("a", "k", {"x": [1, 2]})
        store.cache_put("a", "k", {"x": "later"})  # a key is computed once
        store.cache_put("b", "k", 3.5)
        assert store.cache_get("a", "k") == {"x": [1, 2]}
        assert store.cache_get("b", "k") == 3.5
        assert (store.cache_count("a"), store.cache_count("b"), store.cache_count("c")) == (1, 1, 0)
    with TraceStore(tmp_path / "s.db") as store:  # it outlives the process that wrote it
        assert store.cache_get("a", "k") == {"x": [1, 2]}


def test_an_older_judge_cache_table_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    TraceStore(path).close()
    con = sqlite3.connect(path)
    con.executescript(LEGACY)
    con.executemany(
        "INSERT INTO judge_cache VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            ("k1", "true", "mentions the seat", 120, 8, "judge-mini", "2025-01-02T03:04:05.000000+00:00"),
            ("k2", "4", None, 0, 0, None, "2025-01-02T03:04:06.000000+00:00"),
        ],
    )
    con.commit()
    con.close()

    with TraceStore(path) as store:
        cache = StoreCache(store)  # the judge's first use moves the rows
        assert cache.get("k1") == Cached(True, "mentions the seat", 120, 8)
        assert cache.get("k2") == Cached(4, "", 0, 0)
        assert cache.get("k3") is None
        assert store.cache_count("judge") == 2
        cache.put("k3", Cached(False, "no seat", 1, 2), model="judge-mini")
        assert store.cache_get("judge", "k3") == {
            "grade": False, "reason": "no seat", "input_tokens": 1, "output_tokens": 2, "model": "judge-mini",
        }
    con = sqlite3.connect(path)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    kept = con.execute("SELECT recorded_at FROM cache WHERE key = 'k1'").fetchone()[0]
    con.close()
    assert "judge_cache" not in tables  # moved, not copied each time
    assert kept == "2025-01-02T03:04:05.000000+00:00"
    with TraceStore(path) as store:  # opening again finds nothing to move and loses nothing
        assert StoreCache(store).get("k1") == Cached(True, "mentions the seat", 120, 8)
        assert store.cache_count("judge") == 3


def test_adopt_refuses_what_is_not_a_table_name(tmp_path: Path) -> None:
    with TraceStore(tmp_path / "s.db") as store:
        with pytest.raises(ValueError, match="not a table name"):
            store.cache_adopt("x; DROP TABLE trials", "n", dict)
        assert store.cache_adopt("no_such_table", "n", dict) == 0
