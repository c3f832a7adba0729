"""Our own files: the trace store passes through; a results file is refused with where its traces are.

The store is opened read-only with SQLite (not through ``TraceStore``, whose constructor creates
tables): importing must never write to the file it reads.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from ..._traces import Trace
from ._model import ImportedTrace, ImportStats, TraceImportError

_RUN_ID = re.compile(r'"run_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def read_store(path: Path, stats: ImportStats) -> Iterator[ImportedTrace]:
    """Every stored trial's trace, oldest first, with its scenario, version and run as attributes.

    The file is checked here, at the call; the rows are read as they are iterated.
    """
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise TraceImportError(f"{path}: cannot open the trace store ({exc})") from None
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "trials"} <= tables:
            raise TraceImportError(
                f"{path}: an SQLite database, but not an AgentAssay trace store (no trials table)"
            )
        schema = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if schema is None or schema[0] not in ("1", "2", "3"):  # 3: per-trial plugin data in one column
            raise TraceImportError(
                f"{path}: trace store schema {schema[0] if schema else 'unknown'}, this version reads 1 to 3"
            )
    except sqlite3.DatabaseError as exc:
        db.close()
        raise TraceImportError(f"{path}: not a readable trace store ({exc})") from None
    except TraceImportError:
        db.close()
        raise
    return _rows(db, path, stats)


def _rows(db: sqlite3.Connection, path: Path, stats: ImportStats) -> Iterator[ImportedTrace]:
    try:
        rows = db.execute(
            "SELECT id, run_id, suite, scenario, agent_version, trial, input, passed, recorded_at, trace"
            " FROM trials ORDER BY id"
        )
        for rid, run_id, suite, scenario, version, trial, text, passed, recorded_at, raw in rows:
            try:
                trace = Trace.from_json(raw)
            except (ValueError, KeyError, TypeError):
                stats.skip("unreadable stored trace")
                continue
            stats.traces += 1
            yield ImportedTrace(
                trace_id=str(rid),
                trace=trace,
                input=text,
                attributes={
                    "run_id": run_id,
                    "suite": suite,
                    "scenario": scenario,
                    "agent_version": version,
                    "trial": trial,
                    "passed": None if passed is None else bool(passed),
                    "recorded_at": recorded_at,
                },
            )
    except sqlite3.DatabaseError as exc:
        raise TraceImportError(f"{path}: not a readable trace store ({exc})") from None
    finally:
        db.close()


def results_error(path: Path) -> TraceImportError:
    """A results file has outcomes, not traces: say so, and where the traces of its run are."""
    run_id = None
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            m = _RUN_ID.search(f.read(64 * 1024))
            run_id = m.group(1) if m else None
    except OSError:
        pass
    run = f" (run {run_id})" if run_id else ""
    return TraceImportError(
        f"{path}: an AgentAssay results file holds each trial's outcome, not its trace; the traces of its "
        f"run{run} are in the run's trace store (--store, default .agentassay/traces.db): import that file"
    )
