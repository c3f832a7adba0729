"""``agentassay analyze``: everything a run reports, from traces already recorded, with no agent call.

Sources: our trace store, a results file (its run's traces, from the store beside it or ``--store``),
and recorded traces in OpenTelemetry GenAI, OpenInference or Agents SDK form (``agentassay._integrations.importers``).
Each trace is matched to a scenario — by its stored scenario name, or by the scenario's ``match:``
rule (an input regex or a span attribute), or by its input text — and the matched traces are replayed
through ``run_suite`` (``ReplayAdapter``): the suite's current checks re-derive every outcome, and
contracts, coverage, the judge (cached) and metamorphic pairs (where recorded) are computed by the same
plugins as in a live run. The result is a results file of kind ``analyze``, which can serve as the
baseline of a ``check``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..._errors import AgentAssayError
from ..._integrations.adapters._otel import PROFILES, detect, load_profile
from ..._integrations.adapters._resolve import import_entry, is_sdk_agent
from ..._integrations.importers import ImportStats, detect_format, import_traces
from ..._integrations.importers._import import SpanFix
from ..._limits import UserPattern, compile_pattern, regex_error
from ..._plugins import default_plugins
from ..._results import Results, ResultsError, load_results
from ..._runner import run_suite, trial_seed
from ..._spec import Suite
from ..._traces import Trace, TraceStore
from ..budget._settings import BudgetSettings
from ..coverage._settings import CoverageConfig
from ..proxy._settings import ProxySettings
from ._replay import ReplayAdapter

MATCH_KEYS = ("input", "attribute", "equals", "regex")


class AnalyzeError(AgentAssayError):
    """Nothing to analyze (no trace matched, an unusable source): exit 3, naming the file and the fix."""


@dataclass(frozen=True)
class Rule:
    """How traces are matched to one scenario (``match:``); None fields are unused."""

    scenario: str
    input: UserPattern | None = None
    attribute: str | None = None
    equals: Any = None
    regex: UserPattern | None = None

    def matches(self, text: str | None, attributes: dict[str, Any]) -> bool:
        if self.input is not None:
            return text is not None and self.input.search(text) is not None
        if self.attribute is not None:
            if self.attribute not in attributes:
                return False
            value = attributes[self.attribute]
            if self.regex is not None:
                return self.regex.search(str(value)) is not None
            return value == self.equals
        return False


def rules_of(suite: Suite) -> dict[str, Rule | None]:
    """Each scenario's ``match:`` rule (validated, with the key and line in every error)."""
    out: dict[str, Rule | None] = {}
    for s in suite.scenarios:
        ext = s.extensions.get("match")
        if ext is None:
            out[s.name] = None
            continue
        raw = ext.value
        if not isinstance(raw, dict) or not raw:
            raise ext.error(
                "expected a mapping: `match: {input: REGEX}` or `match: {attribute: KEY, equals: VALUE}` (or `regex:`)"
            )
        unknown = [k for k in raw if k not in MATCH_KEYS]
        if unknown:
            raise ext.error(f"unknown key {unknown[0]!r}; valid keys: {', '.join(MATCH_KEYS)}")
        try:
            if "input" in raw:
                if set(raw) != {"input"}:
                    raise ext.error("`match: {input: REGEX}` takes no other key")
                out[s.name] = Rule(s.name, input=compile_pattern(str(raw["input"])))
            elif "attribute" in raw:
                if ("equals" in raw) == ("regex" in raw):
                    raise ext.error(
                        "`match: {attribute: KEY, ...}` needs exactly one of `equals:` and `regex:`"
                    )
                rx = compile_pattern(str(raw["regex"])) if "regex" in raw else None
                out[s.name] = Rule(
                    s.name, attribute=str(raw["attribute"]), equals=raw.get("equals"), regex=rx
                )
            else:
                raise ext.error(
                    "`match:` needs `input:` (a regex on the trace's input) or `attribute:` (a span attribute)"
                )
        except regex_error() as exc:
            raise ext.error(f"not a valid regular expression: {exc}") from None
    return out


class Spool:
    """Matched traces on disk (a temporary SQLite file), read back one at a time by the replay: memory stays
    bounded by one trace, however many the sources hold."""

    def __init__(self) -> None:
        import sqlite3
        import tempfile

        self._dir = tempfile.TemporaryDirectory(prefix="agentassay-analyze-")
        self.db = sqlite3.connect(str(Path(self._dir.name) / "spool.db"))
        self.db.execute(
            "CREATE TABLE t (scenario TEXT, input TEXT, idx INTEGER, trace TEXT, PRIMARY KEY (scenario, input, idx))"
        )

    def add(self, scenario: str, input: str, idx: int, trace: Trace) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO t VALUES (?, ?, ?, ?)", (scenario, input, idx, trace.to_json())
        )

    def get(self, scenario: str, input: str, idx: int) -> Trace | None:
        import json

        row = self.db.execute(
            "SELECT trace FROM t WHERE scenario = ? AND input = ? AND idx = ?", (scenario, input, idx)
        ).fetchone()
        return None if row is None else Trace.from_dict(json.loads(row[0]))

    def close(self) -> None:
        self.db.close()
        self._dir.cleanup()


@dataclass
class Gathered:
    """How many recorded traces each scenario has (the traces themselves in the spool, in trial order) and
    the keys of recorded metamorphic follow-ups (scenario, follow-up input, source index)."""

    spool: Spool = field(default_factory=Spool)
    counts: dict[str, int] = field(default_factory=dict)
    followups: set[tuple[str, str, int]] = field(default_factory=set)
    sources: list[dict[str, Any]] = field(default_factory=list)
    unmatched: int = 0
    unmatched_examples: list[str] = field(default_factory=list)

    def add(self, scenario: str, input: str, trace: Trace) -> int:
        idx = self.counts.get(scenario, 0)
        self.spool.add(scenario, input, idx, trace)
        self.counts[scenario] = idx + 1
        return idx


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _from_store(
    g: Gathered, path: Path, suite: Suite, *, run_id: str | None, version: str | None, label: str
) -> None:
    by_name = {s.name: s for s in suite.scenarios}
    where, params = ["1 = 1"], []
    if run_id:
        where.append("run_id = ?")
        params.append(run_id)
    if version is not None:
        where.append("(agent_version = ? OR agent_version LIKE ?)")
        params += [version, f"{version}+mr:%"]
    taken = 0
    positions: dict[tuple[str, str, int], int] = {}
    with TraceStore(path) as store:
        clause = " AND ".join(where)
        for r in store._rows(
            clause + " AND agent_version NOT LIKE '%+proxy:%' AND agent_version NOT LIKE '%+mr:%'",
            params,
            "ORDER BY run_id, scenario, trial, id",
        ):
            if r.scenario not in by_name:
                continue
            positions[(r.run_id, r.scenario, r.trial)] = g.add(r.scenario, by_name[r.scenario].input, r.trace)
            taken += 1
        for r in store._rows(clause + " AND agent_version LIKE '%+mr:%'", params, "ORDER BY id"):
            key = (r.run_id, r.scenario, r.trial)  # a metamorphic follow-up, paired with its source trial
            if key in positions and r.input is not None:
                g.spool.add(r.scenario, r.input, positions[key], r.trace)
                g.followups.add((r.scenario, r.input, positions[key]))
    g.sources.append(
        {"source": label, "format": "agentassay-store", "traces": taken, "run_id": run_id, "version": version}
    )


def _from_import(
    g: Gathered,
    path: Path,
    suite: Suite,
    rules: dict[str, Rule | None],
    label: str,
    framework: str | None = None,
) -> dict[str, Any]:

    stats = ImportStats()
    fmt = detect_format(path)
    by_input = {" ".join(s.input.split()): s.name for s in suite.scenarios}
    matched = 0
    fix: SpanFix | None = load_profile(framework).fix_spans if framework else None
    for item in import_traces(path, format=fmt, stats=stats, fix_spans=fix):
        name = next(
            (n for n, r in rules.items() if r is not None and r.matches(item.input, item.attributes)), None
        )
        if name is None and item.input is not None:
            name = by_input.get(" ".join(item.input.split()))
        if name is None:
            g.unmatched += 1
            if len(g.unmatched_examples) < 5:
                g.unmatched_examples.append(f"trace {item.trace_id}: input {str(item.input)[:80]!r}")
            continue
        g.add(name, next(s.input for s in suite.scenarios if s.name == name), item.trace)
        matched += 1
    info = {"source": label, "format": fmt, "traces": matched, "import": stats.summary()}
    if framework:
        info["framework"] = framework
    g.sources.append(info)
    return info


def gather(
    sources: Sequence[str | Path],
    suite: Suite,
    *,
    store: Path | None = None,
    run_id: str | None = None,
    version: str | None = None,
    framework: str | None = None,
) -> Gathered:
    """Every source's traces, matched to the suite's scenarios; ``framework``'s span fix-ups applied to
    OpenTelemetry files (so an app's exported spans read as a live run of that framework's agent does)."""
    rules = rules_of(suite)
    g = Gathered()
    for src in sources:
        path = Path(src)
        label = str(src)
        if not path.exists():
            raise AnalyzeError(f"{label}: no such file")
        if _is_sqlite(path):
            _from_store(g, path, suite, run_id=run_id, version=version, label=label)
            continue
        results = _try_results(path)
        if results is not None:
            db = store or next(
                (p for p in (path.with_name("traces.db"), Path(".agentassay/traces.db")) if p.is_file()), None
            )
            if db is None or not Path(db).is_file():
                raise AnalyzeError(
                    f"{label}: a results file holds outcomes, not traces; its traces are in the trace store of its run: "
                    "pass it with --store (or give the store itself as the source)"
                )
            _from_store(
                g,
                Path(db),
                suite,
                run_id=results.run_id,
                version=version,
                label=f"{label} (traces from {db})",
            )
            continue
        _from_import(g, path, suite, rules, label, framework)
    return g


def _try_results(path: Path) -> Results | None:
    if path.suffix.lower() != ".json":
        return None
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError as exc:
        raise AnalyzeError(f"{path}: cannot read ({exc.strerror})") from None
    if '"agentassay.results/1"' not in head:
        return None
    try:
        return load_results(path)
    except ResultsError as exc:
        raise AnalyzeError(str(exc)) from None


def replay_suite(suite: Suite, g: Gathered) -> tuple[Suite, Any, dict[str, int]]:
    """The suite as replayed — a fixed cap of the most traces any scenario has, each scenario limited to its
    own — and the adapter's keys and fetch: recorded trial i of a scenario answers the replay's trial i
    (its input, the replay's seed); a follow-up, its own input with its source's seed."""

    counts = {s.name: g.counts.get(s.name, 0) for s in suite.scenarios}
    cap = max(counts.values(), default=0)
    settings = replace(
        suite.settings,
        trials=max(cap, 1),
        max_trials=None,
    ).with_parts(
        BudgetSettings(),
        ProxySettings(),
        replace(suite.settings.of(CoverageConfig), probe_restricted=False),
    )
    where: dict[tuple[str, int], tuple[str, str, int]] = {}
    for s in suite.scenarios:
        for i in range(counts[s.name]):
            where[(s.input, trial_seed(settings.seed, "run", s.name, i))] = (s.name, s.input, i)
    for name, text, i in g.followups:
        where[(text, trial_seed(settings.seed, "run", name, i))] = (name, text, i)

    def fetch(input: str, seed: int) -> Trace | None:
        key = where.get((input, seed))
        return None if key is None else g.spool.get(*key)

    return replace(suite, settings=settings), (set(where), fetch), counts


def analyze(
    sources: Sequence[str | Path],
    suite: Suite,
    *,
    store: Path | None = None,
    run_id: str | None = None,
    version: str | None = None,
    plugins: Any = None,
    progress: bool = True,
    framework: str | None = None,
) -> Any:
    """Analyze recorded traces with ``suite``; returns the ``RunReport`` of the replay (results kind ``analyze``).

    ``framework`` names whose span fix-ups apply to OpenTelemetry files (docs/frameworks.md); by default the
    suite agent's (its ``framework:``, or the framework of the object it names, when that imports)."""

    obj = _agent_object(suite)
    g = gather(
        sources, suite, store=store, run_id=run_id, version=version,
        framework=_framework(suite, obj, framework),
    )  # fmt: skip
    try:
        return _analyze(g, sources, suite, obj, store=store, plugins=plugins, progress=progress)
    finally:
        g.spool.close()


def _agent_object(suite: Suite) -> Any:
    """The suite's agent object, or None: the analysis never needs the agent to run, only to read it."""
    try:
        return import_entry(suite.agent.entry, search=[Path.cwd(), suite.root])
    except Exception:  # coverage falls back to behavioural only, and no framework's fix-ups apply
        return None


def _framework(suite: Suite, obj: Any, given: str | None) -> str | None:
    """The framework whose fix-ups apply: the one asked for, else the suite agent's."""
    name = given or suite.agent.framework or (detect(obj) if obj is not None else None)
    if name is not None and name not in PROFILES:
        raise AnalyzeError(f"--framework {name}: unknown framework; one of {', '.join(sorted(PROFILES))}")
    return name


def _analyze(
    g: Gathered,
    sources: Sequence[str | Path],
    suite: Suite,
    obj: Any,
    *,
    store: Path | None,
    plugins: Any,
    progress: bool,
) -> Any:

    matched = sum(g.counts.values())
    if not matched:
        hint = (
            f" ({g.unmatched} traces matched no scenario, e.g. {g.unmatched_examples[0]})"
            if g.unmatched
            else ""
        )
        raise AnalyzeError(
            f"{', '.join(map(str, sources))}: no trace matched a scenario of {suite.path or suite.name}{hint}; give "
            "scenarios a `match:` rule (an input regex or a span attribute; docs/trace-first.md)"
        )
    replayed, (keys, fetch), counts = replay_suite(suite, g)
    agent = obj if obj is not None and is_sdk_agent(obj) else None

    adapter = ReplayAdapter(keys, fetch, agent=agent, sources=[str(s) for s in sources])
    cache = TraceStore(store) if store is not None and _is_sqlite(Path(store)) else None
    try:
        report = run_suite(
            replayed,
            adapter=adapter,
            full=True,
            progress=progress,
            handle_signals=True,
            plugins=(plugins or default_plugins()).without("store"),
            limits=counts,
            store=cache,
            version=f"analyze:{Path(str(sources[0])).name}",
        )
    finally:
        if cache is not None:
            cache.close()
    section = {
        "sources": g.sources,
        "matched": {name: n for name, n in counts.items()},
        "unmatched": g.unmatched,
        "unmatched_examples": g.unmatched_examples,
        "followups": len(g.followups),
        "agent_calls": 0,
    }
    results = replace(
        report.results,
        kind="analyze",
        sections={**report.results.sections, "analyze": section},
        notes=(
            *report.results.notes,
            *(
                [
                    f"{g.unmatched} recorded traces matched no scenario (skipped): e.g. {g.unmatched_examples[0]}"
                ]
                if g.unmatched
                else []
            ),
            *(f"scenario '{n}': no recorded trace; not analyzed" for n, c in counts.items() if not c),
        ),
    )
    return replace(report, results=results)


__all__ = ["AnalyzeError", "Gathered", "Rule", "analyze", "gather", "replay_suite", "rules_of"]
