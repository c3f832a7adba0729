"""Group streamed spans by trace id on disk, then read them back one trace at a time.

Spans of one trace can be anywhere in a file (exporters write batches as spans end, and several
runs interleave), so a trace is complete only at the end of the file. Holding every span until
then would make memory grow with the file; a temporary SQLite table does the grouping instead,
so memory is bounded by the largest trace. The table lives in a private temporary directory with
no journal and no fsync (it is scratch space) and is deleted when the import ends.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._model import TraceImportError

_BATCH = 1024
# ASCII: a "\ud83d" escape in the file parses to a lone surrogate, which SQLite cannot encode as UTF-8;
# escaped it round-trips, and the boundary (agentassay/_boundary.py) repairs it when the trace is built.
_DUMPS = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str).encode
_LOADS = json.loads


def roundtrip(record: dict[str, Any]) -> dict[str, Any]:
    """A record as the staging table gives it back (JSON types, escaped surrogates): for in-memory imports."""
    return _LOADS(_DUMPS(record))

SPAN = 0
TRACE_RECORD = 1  # an Agents SDK ``trace`` object: workflow name, group, metadata


class Staging:
    """An append-only table of (trace id, kind, record) in insertion order, plus resources."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="agentassay-import-")
        try:
            self._db = sqlite3.connect(str(Path(self._dir) / "spans.db"), isolation_level=None)
            for pragma in (
                "journal_mode=OFF",
                "synchronous=OFF",
                "temp_store=FILE",
                "cache_size=-2048",  # 2 MiB of page cache: the bound on SQLite's share of memory
            ):
                self._db.execute(f"PRAGMA {pragma}")
            self._db.execute(
                "CREATE TABLE spans (seq INTEGER PRIMARY KEY, tid TEXT NOT NULL, kind INTEGER, rec TEXT)"
            )
            self._db.execute("CREATE TABLE resources (rid INTEGER PRIMARY KEY, attrs TEXT)")
        except sqlite3.Error as exc:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise TraceImportError(
                f"cannot create the temporary staging table in {self._dir}: {exc}"
            ) from exc
        self._rows: list[tuple[str, int, str]] = []
        self._next_rid = 0
        self._resource_cache: dict[int, dict[str, Any]] = {}

    # -- writing ----------------------------------------------------------------------------------
    def add(self, trace_id: str, record: dict[str, Any], kind: int = SPAN) -> None:
        self._rows.append((trace_id, kind, _DUMPS(record)))
        if len(self._rows) >= _BATCH:
            self._flush()

    def new_resource(self) -> int:
        """A resource id to file spans under before the resource's attributes are known."""
        self._next_rid += 1
        return self._next_rid

    def set_resource(self, rid: int, attrs: dict[str, Any]) -> None:
        if attrs:
            self._db.execute("INSERT OR REPLACE INTO resources VALUES (?, ?)", (rid, _DUMPS(attrs)))

    def _flush(self) -> None:
        if not self._rows:
            return
        self._db.execute("BEGIN")
        self._db.executemany("INSERT INTO spans (tid, kind, rec) VALUES (?, ?, ?)", self._rows)
        self._db.execute("COMMIT")
        self._rows.clear()

    # -- reading ----------------------------------------------------------------------------------
    def traces(self) -> Iterator[tuple[str, list[tuple[int, int, dict[str, Any]]]]]:
        """Each trace id (in order of first appearance) with its records as (seq, kind, record)."""
        self._flush()
        self._db.execute("CREATE INDEX spans_by_trace ON spans (tid)")
        outer = self._db.execute("SELECT tid FROM spans GROUP BY tid ORDER BY MIN(seq)")
        for (tid,) in outer:
            rows = self._db.execute("SELECT seq, kind, rec FROM spans WHERE tid = ? ORDER BY seq", (tid,))
            yield tid, [(seq, kind, _LOADS(rec)) for seq, kind, rec in rows]

    def resource(self, rid: int | None) -> dict[str, Any]:
        """A resource's attributes (cached: many spans share one)."""
        if rid is None:
            return {}
        found = self._resource_cache.get(rid)
        if found is None:
            row = self._db.execute("SELECT attrs FROM resources WHERE rid = ?", (rid,)).fetchone()
            found = _LOADS(row[0]) if row else {}
            if len(self._resource_cache) > 256:
                self._resource_cache.clear()
            self._resource_cache[rid] = found
        return found

    def close(self) -> None:
        try:
            self._db.close()
        finally:
            shutil.rmtree(self._dir, ignore_errors=True)
