"""``import_traces``: stream a file's spans into a staging table, then build one trace at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..._boundary import clean_trace, redactor, scrub
from . import _otlp, _sdk
from ._build import build
from ._detect import detect_format
from ._json import JsonScanner
from ._model import FORMATS, ImportedTrace, ImportStats, TraceImportError
from ._staging import SPAN, Staging, roundtrip
from ._store import read_store, results_error

_FAMILY = {
    "otlp-json": "otlp",
    "openinference": "otlp",  # the same container; the attribute vocabulary is read per span either way
    "jsonl-spans": "spans",
    "agents-sdk": "sdk",
    "agentassay-store": "store",
    "agentassay-results": "results",
}
_READERS: dict[str, Callable[[JsonScanner, Staging, ImportStats], None]] = {
    "otlp": _otlp.read_documents,
    "spans": _otlp.read_spans,
    "sdk": _sdk.read,
}
NO_CONTENT = "no agent, tool or model span in its trace"
TOO_DEEP_FIX = (
    "Telemetry nests a few levels; export the traces again without the offending attribute (or drop that "
    "span), see docs/trace-first.md, \"Limits\""
)


#: A framework profile's repair of one trace's OTLP span objects (agentassay/_integrations/adapters/_otel):
#: agent names, decoded arguments, handoff tools as handoffs. Applied to a file's traces as to a live trial's.
SpanFix = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def import_traces(
    path: str | Path,
    *,
    format: str | None = None,
    stats: ImportStats | None = None,
    fix_spans: SpanFix | None = None,
) -> Iterator[ImportedTrace]:
    """The traces recorded in ``path``, one :class:`ImportedTrace` per trace id, in order of first appearance.

    ``format`` (default: :func:`detect_format`) must agree with the file; ``stats``, if given, is
    filled in as the import runs. The file is read once, streamed; memory is bounded by the largest
    trace. Raises :class:`TraceImportError` for an unreadable file or the wrong format (at the
    call for what the file's head shows, while iterating for what comes later). ``fix_spans`` (a
    framework profile's, see ``agentassay analyze --framework``) repairs each OTLP trace's spans first.
    """
    p = Path(path)
    detected = detect_format(p)
    fmt = detected if format is None else format
    if fmt not in FORMATS:
        raise TraceImportError(f"{p}: unknown format {fmt!r}; one of {', '.join(FORMATS)}")
    if _FAMILY[fmt] != _FAMILY[detected]:
        raise TraceImportError(f"{p}: not {fmt}: the file looks like {detected}")
    if fmt == "agentassay-results":
        raise results_error(p)
    counts = stats if stats is not None else ImportStats()
    if fmt == "agentassay-store":
        return _cleaned(read_store(p, counts))
    return _cleaned(_imported(p, fmt, counts, fix_spans))


def _cleaned(items: Iterator[ImportedTrace]) -> Iterator[ImportedTrace]:
    """Each imported trace through the boundary (agentassay/_boundary.py), as a live trial's is: every string
    repaired (a ``\\ud83d`` escape in the file is a lone surrogate once parsed) and redacted."""

    red = redactor()
    for item in items:
        yield ImportedTrace(
            trace_id=scrub(item.trace_id, red),
            trace=clean_trace(item.trace, red),
            input=None if item.input is None else scrub(item.input, red),
            attributes=scrub(item.attributes, red),
        )


def _imported(path: Path, fmt: str, stats: ImportStats, fix: SpanFix | None) -> Iterator[ImportedTrace]:
    staging = Staging()
    try:
        try:
            with path.open(encoding="utf-8-sig", newline="") as fp:
                scanner = JsonScanner(fp, str(path))
                _READERS[_FAMILY[fmt]](scanner, staging, stats)
        except OSError as exc:
            raise TraceImportError(f"{path}: cannot read ({exc.strerror or exc})") from None
        except _otlp.ValueTooDeep as exc:
            raise scanner.error(f"{exc}. {TOO_DEEP_FIX}") from None
        except RecursionError:  # the safety net under the explicit bounds: never a traceback
            raise scanner.error(f"nested too deep to read. {TOO_DEEP_FIX}") from None
        for trace_id, rows in staging.traces():
            try:
                if fix is not None and fmt != "agents-sdk":
                    rows = _fixed(trace_id, rows, fix, stats)
                item = _one(trace_id, rows, fmt, staging.resource, stats)
            except RecursionError:
                raise TraceImportError(f"{path}: trace {trace_id!r}: nested too deep to read. {TOO_DEEP_FIX}") from None
            if item is not None:
                stats.traces += 1
                yield item
    finally:
        staging.close()


def import_spans(
    spans: Iterable[Any],
    *,
    resource: dict[str, Any] | None = None,
    stats: ImportStats | None = None,
    fix_spans: SpanFix | None = None,
) -> list[ImportedTrace]:
    """The traces of OTLP span objects already in memory (the ``jsonl-spans`` shape), one per trace id.

    The live capture (agentassay/_integrations/frameworks) hands each trial's spans here, so a trial's
    trace is built by exactly the steps ``agentassay analyze`` applies to the same spans in a file:
    the same record, the same staging round trip, the same fix-ups, nodes, build and boundary — with no
    temporary file.
    """
    counts = stats if stats is not None else ImportStats()
    if fix_spans is not None:
        spans = _fixed_objects(list(spans), fix_spans, counts)
    grouped: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
    for seq, obj in enumerate(spans):
        normalised = _otlp.span_record(obj, counts)
        if normalised is not None:
            tid, rec = normalised
            if resource is not None:
                rec["r"] = 0
            grouped.setdefault(tid, []).append((seq, SPAN, roundtrip(rec)))
    attrs = dict(resource or {})
    out: list[ImportedTrace] = []
    for trace_id, rows in grouped.items():
        item = _one(trace_id, rows, "otlp-json", lambda rid: attrs if rid == 0 else {}, counts)
        if item is not None:
            counts.traces += 1
            out.append(item)
    return list(_cleaned(iter(out)))


def _fixed(
    trace_id: str, rows: list[tuple[int, int, dict[str, Any]]], fix: SpanFix, stats: ImportStats
) -> list[tuple[int, int, dict[str, Any]]]:
    """One trace's staged spans after a profile's fix-ups: records back to span objects, fixed, and read
    again as any span is. A fix-up that fails on a file's odd spans leaves the trace as exported (counted)."""
    spans = [(seq, rec) for seq, kind, rec in rows if kind == SPAN]
    if not spans:
        return rows
    resource = spans[0][1].get("r")
    scratch = ImportStats()  # these spans were counted once already
    try:
        fixed = fix([_otlp.span_object(trace_id, rec) for _, rec in spans])
        out: list[tuple[int, int, dict[str, Any]]] = []
        for n, obj in enumerate(fixed):
            normalised = _otlp.span_record(obj, scratch)
            if normalised is None:
                continue
            rec = normalised[1]
            if resource is not None:
                rec["r"] = resource
            out.append((spans[0][0] + n, SPAN, roundtrip(rec)))
    except Exception:  # a profile's bug on untrusted input must not end the import
        stats.unfixed += 1
        return rows
    return out + [row for row in rows if row[1] != SPAN]


def _fixed_objects(spans: list[Any], fix: SpanFix, stats: ImportStats) -> list[Any]:
    """Span objects after a profile's fix-ups, trace by trace (what :func:`_fixed` does to a file's)."""
    by_trace: dict[Any, list[Any]] = {}
    for obj in spans:
        by_trace.setdefault(obj.get("traceId") if type(obj) is dict else None, []).append(obj)
    out: list[Any] = []
    for trace_id, objs in by_trace.items():
        if trace_id is None:
            out.extend(objs)
            continue
        try:
            out.extend(fix(objs))
        except Exception:  # as for a file: the trace as captured, counted
            stats.unfixed += 1
            out.extend(objs)
    return out


def _one(
    trace_id: str,
    rows: list[tuple[int, int, dict[str, Any]]],
    fmt: str,
    resource: Callable[[int | None], dict[str, Any]],
    stats: ImportStats,
) -> ImportedTrace | None:
    before = stats.skipped
    record: dict[str, Any] = {}
    if fmt == "agents-sdk":
        nodes, record = _sdk.nodes(rows, stats)
    else:
        nodes = _otlp.nodes(rows, stats, openinference=fmt == "openinference")
    if not nodes:
        return None  # an SDK trace object without spans
    built = build(nodes, trace_id=trace_id, source=fmt)
    for reason, n in built.dropped.items():
        stats.skip(reason, n)
    if built.trace is None:
        stats.skip(NO_CONTENT, max(0, len(nodes) - (stats.skipped - before)))
        return None
    if fmt == "agents-sdk":
        attributes = _sdk.attributes(record, built.root)
    else:
        root = built.root
        attributes = dict(root.attrs) if root is not None else {}
        for key, value in resource(root.resource if root is not None else None).items():
            attributes.setdefault(key, value)
    return ImportedTrace(trace_id=trace_id, trace=built.trace, input=built.input, attributes=attributes)
