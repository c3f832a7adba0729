"""The trace store (paper Def. 7.5): every trial's trace in SQLite, written as the trial finishes.

Why SQLite in WAL mode with ``synchronous=NORMAL``: each trial is one small committed
transaction (tens of microseconds), a reader never blocks the writer, and a process killed
with SIGKILL loses nothing that was committed — only the trials still in flight. (Power loss
may drop the last few commits; CI runners do not lose power mid-job in a way we could help.)
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._boundary import scrub_text, stored_json
from .._errors import AgentAssayError
from ._model import Trace

# 2 added a feature's per-trial column; 3 holds every plugin's per-trial data in one JSON column, ``data``
# (1 and 2 are upgraded in place: a column beyond the kernel's folds into ``data`` under its own name).
STORE_SCHEMA_VERSION = 3

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT NOT NULL,
    suite         TEXT NOT NULL,
    scenario      TEXT NOT NULL,
    agent_version TEXT NOT NULL,
    trial         INTEGER NOT NULL,
    input         TEXT,
    passed        INTEGER,
    error         TEXT,
    recorded_at   TEXT NOT NULL,
    trace         TEXT NOT NULL,
    data          TEXT
);
CREATE INDEX IF NOT EXISTS trials_by_version ON trials (agent_version, scenario, recorded_at);
CREATE INDEX IF NOT EXISTS trials_by_suite ON trials (suite, scenario, agent_version, recorded_at);
CREATE INDEX IF NOT EXISTS trials_by_run ON trials (run_id);
-- Plugins' caches (cache_get / cache_put): a JSON value per (namespace, key), e.g. a grader's answers,
-- so that work on recorded traces is not paid for twice. A new table needs no schema bump: older versions
-- never read it, and CREATE TABLE IF NOT EXISTS adds it to an existing store.
CREATE TABLE IF NOT EXISTS cache (
    namespace   TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
);
"""


# The kernel's columns of ``trials``; any other an upgrade folds into ``data``.
_COLUMNS = frozenset(
    ["id", "run_id", "suite", "scenario", "agent_version", "trial", "input", "passed", "error", "recorded_at", "trace", "data"]
)


class StoreError(AgentAssayError):
    """The store file exists but cannot be used (wrong schema, not a database)."""


@dataclass(frozen=True)
class StoredTrial:
    """One row of the store: the trace plus the keys it was filed under."""

    id: int
    run_id: str
    suite: str
    scenario: str
    agent_version: str
    trial: int
    input: str | None
    passed: bool | None
    error: str | None
    recorded_at: str
    trace: Trace
    data: dict[str, Any] | None = None  # what plugins kept of the trial (``TrialOutcome.data``)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class TraceStore:
    """SQLite-backed, versioned collection of traces with ``query`` and ``sample``.

    Use as a context manager or call :meth:`close`. One instance belongs to one thread (the
    runner writes from its event loop thread); other processes may read concurrently.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # Plugins' caches are read and written from evaluator threads while the loop thread adds trials.
        self._lock = threading.Lock()
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_DDL)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"{self.path}: not a usable AgentAssay trace store ({exc}); delete it or pass another --store path"
            ) from exc
        if row is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(STORE_SCHEMA_VERSION),))
        elif int(row[0]) in (1, 2):
            self._upgrade()
        elif int(row[0]) != STORE_SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: trace store schema {row[0]}, this version reads {STORE_SCHEMA_VERSION}; "
                "use a new --store path"
            )

    def _upgrade(self) -> None:
        """Schema 1 or 2 to 3, in place and in one transaction (a crash leaves the old store): every row kept,
        a per-trial column beyond the kernel's (2 had one) folded into ``data`` as ``{column: value}``."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            columns = [r[1] for r in db.execute("PRAGMA table_info(trials)")]
            extra = [c for c in columns if c not in _COLUMNS]
            db.execute("ALTER TABLE trials ADD COLUMN data TEXT")
            for c in extra:
                name = '"' + c.replace('"', '""') + '"'
                rows = db.execute(f"SELECT id, {name} FROM trials WHERE {name} IS NOT NULL").fetchall()
                for rowid, value in rows:
                    try:
                        value = json.loads(value)
                    except (TypeError, ValueError):
                        continue  # unreadable before too: the row keeps its trace, without this datum
                    old = db.execute("SELECT data FROM trials WHERE id = ?", (rowid,)).fetchone()[0]
                    data = json.loads(old) if old else {}
                    data[c] = value
                    db.execute("UPDATE trials SET data = ? WHERE id = ?", (json.dumps(data), rowid))
                with contextlib.suppress(sqlite3.OperationalError):  # SQLite < 3.35: the column stays, unused
                    db.execute(f"ALTER TABLE trials DROP COLUMN {name}")
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(STORE_SCHEMA_VERSION),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # -- writing -------------------------------------------------------------------------------
    def add(
        self,
        trace: Trace,
        *,
        run_id: str,
        suite: str,
        scenario: str,
        agent_version: str,
        trial: int,
        input: str | None = None,
        passed: bool | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> int:
        """Commit one finished trial immediately (autocommit): a crash after this keeps it.

        What is written passes the boundary again (agentassay/_boundary.py): every string repaired and
        redacted, each field capped at 64 KiB and the trace at 1 MiB, the cut noted in the text.
        """

        text, error = stored_json(trace)
        cur = self._db.execute(
            "INSERT INTO trials (run_id, suite, scenario, agent_version, trial, input, passed, error,"
            " recorded_at, trace, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                suite,
                scenario,
                agent_version,
                trial,
                None if input is None else scrub_text(input),
                None if passed is None else int(passed),
                error,
                _now(),
                text,
                json.dumps(dict(data)) if data else None,
            ),
        )
        return int(cur.lastrowid or 0)

    # -- reading -------------------------------------------------------------------------------
    def _rows(self, where: str, params: Iterable[Any], tail: str = "") -> Iterator[StoredTrial]:
        sql = (
            "SELECT id, run_id, suite, scenario, agent_version, trial, input, passed, error, recorded_at,"
            f" trace, data FROM trials WHERE {where} {tail}"
        )
        for r in self._db.execute(sql, tuple(params)):
            yield StoredTrial(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                r[6],
                None if r[7] is None else bool(r[7]),
                r[8],
                r[9],
                Trace.from_dict(json.loads(r[10])),
                None if r[11] is None else json.loads(r[11]),
            )

    def query(
        self, version: str, scenarios: Iterable[str] | None = None, *, suite: str | None = None
    ) -> list[StoredTrial]:
        """Traces of agent ``version`` for the given scenarios (all when None), oldest first."""
        where, params = ["agent_version = ?"], [version]
        if suite is not None:
            where.append("suite = ?")
            params.append(suite)
        if scenarios is not None:
            names = list(scenarios)
            if not names:
                return []
            where.append(f"scenario IN ({','.join('?' * len(names))})")
            params.extend(names)
        return list(self._rows(" AND ".join(where), params, "ORDER BY recorded_at, id"))

    def sample(
        self, version: str, n: int, *, seed: int | None = None, suite: str | None = None
    ) -> list[StoredTrial]:
        """``n`` traces of ``version`` drawn uniformly without replacement (all when fewer exist)."""
        if n < 0:
            raise ValueError(f"n must be >= 0; got {n}")
        where, params = "agent_version = ?", [version]
        if suite is not None:
            where += " AND suite = ?"
            params.append(suite)
        ids = [r[0] for r in self._db.execute(f"SELECT id FROM trials WHERE {where} ORDER BY id", params)]
        chosen = sorted(random.Random(seed).sample(ids, min(n, len(ids))))
        if not chosen:
            return []
        return list(self._rows(f"id IN ({','.join('?' * len(chosen))})", chosen, "ORDER BY id"))

    def versions(self, suite: str | None = None) -> list[str]:
        sql, params = "SELECT DISTINCT agent_version FROM trials", []
        if suite is not None:
            sql += " WHERE suite = ?"
            params.append(suite)
        return sorted(r[0] for r in self._db.execute(sql, params))

    def count(self, *, run_id: str | None = None) -> int:
        if run_id is None:
            return int(self._db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])
        return int(self._db.execute("SELECT COUNT(*) FROM trials WHERE run_id = ?", (run_id,)).fetchone()[0])

    def run(self, run_id: str) -> list[StoredTrial]:
        return list(self._rows("run_id = ?", [run_id], "ORDER BY scenario, trial"))

    # -- plugins' caches ---------------------------------------------------------------------
    def cache_get(self, namespace: str, key: str) -> Any | None:
        """The cached JSON value under ``(namespace, key)``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM cache WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def cache_put(self, namespace: str, key: str, value: Any) -> None:
        """Keep one JSON value; the first value for a key wins (a key is computed once)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO cache (namespace, key, value, recorded_at) VALUES (?, ?, ?, ?)",
                (namespace, key, json.dumps(value), _now()),
            )

    def cache_count(self, namespace: str) -> int:
        with self._lock:
            return int(
                self._db.execute("SELECT COUNT(*) FROM cache WHERE namespace = ?", (namespace,)).fetchone()[0]
            )

    def cache_adopt(self, table: str, namespace: str, value: Callable[[dict[str, Any]], Any]) -> int:
        """Move the rows of a plugin's own older cache ``table`` (a ``key`` and a ``recorded_at`` column) into
        ``namespace``, each row's value ``value(row as {column: value})``, and drop the table, in one
        transaction; nothing when the table is absent. Returns the rows moved. The plugin calls this before
        it reads its cache, so a store written before the generic cache keeps its answers."""
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table):
            raise ValueError(f"not a table name: {table!r}")
        with self._lock:
            found = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
            ).fetchone()
            if found is None:
                return 0
            try:
                self._db.execute("BEGIN IMMEDIATE")
                if self._db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
                ).fetchone() is None:  # another process moved it meanwhile
                    self._db.execute("COMMIT")
                    return 0
                cur = self._db.execute(f"SELECT * FROM {table}")
                columns = [d[0] for d in cur.description]
                rows = [dict(zip(columns, r, strict=True)) for r in cur.fetchall()]
                self._db.executemany(
                    "INSERT OR IGNORE INTO cache (namespace, key, value, recorded_at) VALUES (?, ?, ?, ?)",
                    [(namespace, r["key"], json.dumps(value(r)), r.get("recorded_at") or _now()) for r in rows],
                )
                self._db.execute(f"DROP TABLE {table}")
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        return len(rows)

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> TraceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
