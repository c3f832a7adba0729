"""The results file: versioned JSON, what ``-o`` writes and what the Action keeps as a baseline.

It holds every trial's outcome in trial order (so any verdict can be re-derived, which is
how ``agentassay compare`` works), each scenario's verdict with its evidence, the suite
decision, the settings and the software versions. Reading one validates it and names the
file, the field and the fix on error.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .._boundary import FIELD_LIMIT, scrub_document
from .._errors import AgentAssayError, ExitCode
from .._gate import BaselineCounts, ScenarioVerdict, SuiteDecision
from .._spec import Settings
from .._spec._settings import fixed_sections, record_keys, savings_adjusters, settings_parts
from .._stats import Decision, Verdict

RESULTS_SCHEMA = "agentassay.results/1"
# The file's own top-level keys; any other key is a plugin's section (``Results.sections``).
TOP_LEVEL = frozenset(
    ["schema", "kind", "run_id", "started_at", "finished_at", "interrupted", "aborted", "suite", "agent", "settings", "versions", "decision", "cost", "savings", "notes", "scenarios"]
)
# Why a run ended before its decision: "agent" (it could not be run, exit 4) or "signal" (SIGINT 130, SIGTERM 143).
ABORT_CAUSES = ("agent", "signal")


class ResultsError(AgentAssayError):
    """A results file is missing, not JSON, or not an AgentAssay results file (exit code 3)."""


def _data(d: dict[str, Any], kernel: frozenset[str], where: str) -> dict[str, Any]:
    """A record's keys that are not the kernel's: plugin data, read by the owning feature's reader (a damaged
    value is None, so it costs only that feature's test, never the file); nulls are absent."""
    if len(d) <= len(kernel) and d.keys() <= kernel:
        return {}
    readers = record_keys(where)
    out = {}
    for k, v in d.items():
        if k in kernel or v is None:
            continue
        read = readers.get(k)
        v = v if read is None else read(v)
        if v is not None:
            out[k] = v
    return out


def _flat(d: dict[str, Any], data: Mapping[str, Any], where: str) -> None:
    """Write plugin data flat into a record: the built-ins' own keys always (null when absent), then the rest."""
    for k in record_keys(where):
        d[k] = data.get(k)
    for k, v in data.items():
        if k not in d:
            d[k] = v


# Renamed keys of older files, applied on load (0.1 files wrote "p_value"; one name per concept: "pvalue").
_RENAMED = {"p" + "_value": "pvalue"}


def _renamed(obj: Any, depth: int = 0) -> Any:
    """``obj`` with the renamed keys of older files under their current names, at any depth (bounded by the
    validated file's depth). Applied to sections and verdicts only: trial records never had them."""
    if isinstance(obj, dict):
        return {_RENAMED.get(k, k): _renamed(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_renamed(v, depth + 1) for v in obj]
    return obj


def _sections(d: dict[str, Any]) -> dict[str, Any]:
    """Every key of the file that is not the kernel's; a built-in's always-written section that is null or
    empty is absent (it did not run)."""
    fixed = fixed_sections()
    return {k: _renamed(v) for k, v in d.items() if k not in TOP_LEVEL and (v or k not in fixed)}


def settings_from(raw: dict[str, Any]) -> Settings:
    """A results file's ``settings``: the kernel's fields, each feature's part (defaults where an older file
    has none of its entries)."""
    known = {f.name for f in fields(Settings)} - {"features"}
    kernel = {k: v for k, v in raw.items() if k in known}
    return Settings(**kernel, features={p.NAME: p.from_settings(raw) for p in settings_parts()})


@dataclass(frozen=True)
class TrialOutcome:
    """One finished trial. ``passed`` is None for an error trial excluded by ``errors: exclude``."""

    index: int
    passed: bool | None
    seed: int
    error: str | None = None
    failures: tuple[str, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    usd: float | None = None
    attempts: int = 1
    counted: bool = True  # fed to the scenario's test (False: finished after the decision)
    # What plugins keep of the trial (``agentassay_trial_data``), written flat into its record after
    # ``counted``; read back from the record's keys that are not the kernel's.
    data: Mapping[str, Any] = field(default_factory=dict)
    # The run id of the baseline this trial was recorded in, when a later recording pooled it (``run --pool``;
    # its seed and outcome are as recorded there). None: this run's own trial. Written only when set.
    pooled: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # Field by field rather than dataclasses.asdict, whose deep copy was most of a 300-scenario save.
        d = {name: getattr(self, name) for name in _TRIAL_FIELDS}
        d["failures"] = list(self.failures)
        d["latency_s"] = round(self.latency_s, 6)
        # Plugin data is written as given (full precision: a rounded baseline compared with an unrounded
        # candidate would differ in every fractional value).
        _flat(d, self.data, "trial")
        if self.pooled is not None:
            d["pooled"] = self.pooled
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrialOutcome:
        return cls(
            index=int(d["index"]),
            passed=None if d.get("passed") is None else bool(d["passed"]),
            seed=int(d.get("seed", 0)),
            error=d.get("error"),
            failures=tuple(d.get("failures") or ()),
            input_tokens=int(d.get("input_tokens", 0)),
            output_tokens=int(d.get("output_tokens", 0)),
            latency_s=float(d.get("latency_s", 0.0)),
            usd=d.get("usd"),
            attempts=int(d.get("attempts", 1)),
            counted=bool(d.get("counted", True)),
            data=_data(d, _TRIAL_KEYS, "trial"),
            pooled=None if d.get("pooled") is None else str(d["pooled"]),
        )


_TRIAL_FIELDS = tuple(f.name for f in fields(TrialOutcome) if f.name not in ("data", "pooled"))
_TRIAL_KEYS = frozenset((*_TRIAL_FIELDS, "pooled"))


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    input: str
    trials: tuple[TrialOutcome, ...]
    verdict: ScenarioVerdict
    baseline: BaselineCounts | None = None
    threshold: float | None = None  # the scenario's own threshold, when it overrides config
    fixed_n: int | None = None  # trials a fixed-n design with the same alpha and beta would need
    # What plugins keep of the scenario (``agentassay_scenario_data``: a sample size fixed in advance, …),
    # written flat after ``fixed_n``; read back from the record's keys that are not the kernel's.
    data: Mapping[str, Any] = field(default_factory=dict)
    # An INCONCLUSIVE regression scenario: the candidate trials a check would need to decide it, and their
    # USD (_results/_more.py, stats.trials_to_decide). None otherwise; in the file only when set.
    more_trials: dict[str, Any] | None = None

    @property
    def outcomes(self) -> list[bool | None]:
        """Outcomes in trial-index order (None: excluded error trial)."""
        return [t.passed for t in sorted(self.trials, key=lambda t: t.index)]

    @property
    def passes(self) -> int:
        return sum(1 for t in self.trials if t.passed)

    @property
    def counted_trials(self) -> int:
        """Trials with an outcome (error trials excluded by policy are not counted)."""
        return sum(1 for t in self.trials if t.passed is not None)

    @property
    def errors(self) -> int:
        return sum(1 for t in self.trials if t.error)

    @property
    def pooled_trials(self) -> int:
        """Trials carried over from an earlier baseline (``run --pool``): they weigh in a check, cost nothing here."""
        return sum(1 for t in self.trials if t.pooled is not None)

    def cost(self) -> dict[str, Any]:
        """What this run's own trials cost (pooled trials were paid for by the run that recorded them)."""
        own = [t for t in self.trials if t.pooled is None]
        usd = [t.usd for t in own if t.usd is not None]
        return {
            "trials": len(own),
            "input_tokens": sum(t.input_tokens for t in own),
            "output_tokens": sum(t.output_tokens for t in own),
            "latency_s": round(sum(t.latency_s for t in own), 6),
            "usd": round(sum(usd), 6) if usd else None,
        }

    def usd_per_trial(self) -> float | None:
        """Mean USD of a priced trial (None when no trial was priced)."""
        usd = [t.usd for t in self.trials if t.usd is not None]
        return sum(usd) / len(usd) if usd else None

    def failure_reasons(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for t in self.trials:
            for reason in (t.error,) if t.error else t.failures:
                counts[reason] = counts.get(reason, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    def to_dict(self) -> dict[str, Any]:
        head = {
            "name": self.name,
            "input": self.input,
            "passes": self.passes,
            "trials_run": len(self.trials),
            "counted_trials": self.counted_trials,
            "errors": self.errors,
            "verdict": self.verdict.to_dict(),
            "baseline": None if self.baseline is None else asdict(self.baseline),
            "threshold": self.threshold,
            "fixed_n": self.fixed_n,
        }
        _flat(head, self.data, "scenario")
        return {
            **head,
            **({"pooled_trials": self.pooled_trials} if self.pooled_trials else {}),
            **({} if self.more_trials is None else {"more_trials": dict(self.more_trials)}),
            "cost": self.cost(),
            "failure_reasons": self.failure_reasons(),
            "trials": [t.to_dict() for t in sorted(self.trials, key=lambda t: t.index)],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScenarioResult:
        b = d.get("baseline")
        return cls(
            name=str(d["name"]),
            input=str(d.get("input", "")),
            trials=tuple(TrialOutcome.from_dict(t) for t in d.get("trials") or ()),
            verdict=ScenarioVerdict.from_dict(_renamed(d["verdict"])),
            baseline=None if not b else BaselineCounts(int(b["passes"]), int(b["trials"])),
            threshold=None if d.get("threshold") is None else float(d["threshold"]),
            fixed_n=None if d.get("fixed_n") is None else int(d["fixed_n"]),
            data=_data(d, _SCENARIO_KEYS, "scenario"),
            more_trials=d["more_trials"] if isinstance(d.get("more_trials"), dict) else None,
        )


# A scenario record's own keys (the rest is plugin data); the counts and cost are derived from the trials.
_SCENARIO_KEYS = frozenset(
    ["name", "input", "passes", "trials_run", "counted_trials", "errors", "verdict", "baseline", "threshold", "fixed_n", "pooled_trials", "more_trials", "cost", "failure_reasons", "trials"]
)


@dataclass(frozen=True)
class Results:
    kind: str  # "run" | "check" | "compare" (a merged file keeps the kind of its parts)
    suite: dict[str, Any]
    agent: dict[str, Any]
    settings: Settings
    scenarios: tuple[ScenarioResult, ...]
    decision: SuiteDecision
    run_id: str
    started_at: str
    finished_at: str
    interrupted: bool = False
    versions: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # Sections plugins add (``agentassay_results_sections``), each a top-level key of the file; the features
    # document theirs (docs/plugins.md). A section a built-in always writes is null in the file when absent.
    sections: dict[str, Any] = field(default_factory=dict)
    # A run that ended before its decision (issue 22, defect 11): {"reason": str, "exit_code": int (the
    # process's: 4, 130 or 143), "cause": "agent" | "signal"}; ``decision.decision`` is then ``ABORTED`` and the
    # file's ``decision`` says "aborted" with a null verdict. The trials and the verdicts of scenarios already
    # decided are kept; the file is never a baseline (``refuse_aborted``). None: the run reached its decision.
    aborted: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.aborted is not None and self.decision.decision is not Decision.ABORTED:
            # however it was built, an aborted run's decision reads as none reached, in memory as in the file
            object.__setattr__(self, "decision", replace(self.decision, decision=Decision.ABORTED))

    def scenario(self, name: str) -> ScenarioResult | None:
        return next((s for s in self.scenarios if s.name == name), None)

    def baseline_counts(self) -> dict[str, BaselineCounts]:
        """Per-scenario counts for use as a baseline: every finished, counted trial."""
        return {s.name: BaselineCounts(s.passes, s.counted_trials) for s in self.scenarios}

    def cost(self) -> dict[str, Any]:
        per = [s.cost() for s in self.scenarios]
        usd = [c["usd"] for c in per if c["usd"] is not None]
        return {
            "trials": sum(c["trials"] for c in per),
            "input_tokens": sum(c["input_tokens"] for c in per),
            "output_tokens": sum(c["output_tokens"] for c in per),
            "latency_s": round(sum(c["latency_s"] for c in per), 6),
            "usd": round(sum(usd), 6) if usd else None,
        }

    def savings(self) -> dict[str, Any] | None:
        """Trials run against the fixed-n designs with the same alpha and beta (None if unknown).

        Trials count the target model's; what trials standing in for them cost (a plugin's, e.g. a cheaper
        model's; ``savings`` of its registry entry) is taken off the saving, and the plugin adds its entries.
        """
        if not self.scenarios or any(s.fixed_n is None for s in self.scenarios):
            return None
        run = sum(len(s.trials) - s.pooled_trials for s in self.scenarios)
        fixed = sum(int(s.fixed_n or 0) for s in self.scenarios)
        out: dict[str, Any] = {"trials_run": run, "fixed_n_trials": fixed, "trials_saved": fixed - run}
        out["fraction_saved"] = round((fixed - run) / fixed, 4) if fixed else None
        usd = self.cost()["usd"]
        adjusted = [adjust(self) for adjust in savings_adjusters(self.sections)]
        spent = sum(usd for usd, _ in adjusted) if adjusted else 0.0
        out["usd_saved"] = round(usd / run * (fixed - run) - spent, 6) if usd is not None and run else None
        for _, entries in adjusted:
            out.update(entries)
        return out

    def to_dict(self) -> dict[str, Any]:
        decision = self.decision.to_dict()
        if self.aborted is not None:  # no verdict claimed: the exit code is the process's
            decision.update(verdict=None, decision=Decision.ABORTED.value, exit_code=int(self.aborted["exit_code"]))
        return {
            "schema": RESULTS_SCHEMA,
            "kind": self.kind,
            "run_id": self.run_id,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "interrupted": self.interrupted,
            **({} if self.aborted is None else {"aborted": dict(self.aborted)}),
            "suite": self.suite,
            "agent": self.agent,
            "settings": self.settings.to_dict(),
            "versions": self.versions,
            "decision": decision,
            "cost": self.cost(),
            "savings": self.savings(),
            "notes": list(self.notes),
            **dict.fromkeys(fixed_sections()),
            **{k: v for k, v in self.sections.items() if k not in TOP_LEVEL},
            "scenarios": [s.to_dict() for s in self.scenarios],
        }

    def save(self, path: str | Path) -> Path:
        """Write atomically (temp file + rename): a reader never sees half a file, and a write that fails
        (read-only or full filesystem) leaves no temp file behind; the OSError is the caller's to report
        (``_integrations/cli/_run.py`` keeps the results elsewhere and says where)."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(p, self.to_json())
        return p

    def to_json(self) -> str:
        """The results file's text, through the boundary again (redacted, repaired, each field capped): every
        copy written anywhere — ``-o``, the temp file a failed write falls back to, stdout — is this text.
        Serialized once; the boundary reads that text and walks the data only when something would change."""

        data = self.to_dict()
        text = _json_text(data)
        cleaned = scrub_document(data, limit=FIELD_LIMIT, to_text=True, text=text)
        return text if cleaned is data else _json_text(cleaned)

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "<results>") -> Results:
        if not isinstance(d, dict):
            raise ResultsError(f"{source}: expected a JSON object at the top level, got {type(d).__name__}")
        schema = d.get("schema")
        if schema != RESULTS_SCHEMA:
            raise ResultsError(
                f"{source}: field 'schema' is {schema!r}, expected {RESULTS_SCHEMA!r}. Pass a file written by "
                "`agentassay run -o` or `agentassay check -o`."
            )
        where = "settings"
        try:
            settings = settings_from(dict(d.get("settings") or {}))
            where = "aborted"
            aborted = _aborted(d.get("aborted"))
            where = "decision"
            dec = d["decision"]
            decided = Decision(dec["decision"])
            if (decided is Decision.ABORTED) != (aborted is not None):
                raise ValueError(
                    "'decision' is \"aborted\" without an 'aborted' record"
                    if aborted is None
                    else f"the run was aborted ('aborted' is set) but 'decision' claims {decided.value!r}"
                )
            decision = SuiteDecision(
                Verdict.INCONCLUSIVE if aborted is not None else Verdict(dec["verdict"]), decided,
                dict(dec.get("counts") or {}), str(dec.get("correction", "holm")),
            )
            scenarios = []
            for i, s in enumerate(d["scenarios"]):
                where = f"scenarios[{i}]"
                scenarios.append(ScenarioResult.from_dict(s))
            where = "suite"
            return cls(
                kind=str(d.get("kind", "run")),
                suite=dict(d["suite"]),
                agent=dict(d.get("agent") or {}),
                settings=settings,
                scenarios=tuple(scenarios),
                decision=decision,
                run_id=str(d.get("run_id", "")),
                started_at=str(d.get("started_at", "")),
                finished_at=str(d.get("finished_at", "")),
                interrupted=bool(d.get("interrupted", False)),
                versions=dict(d.get("versions") or {}),
                notes=tuple(d.get("notes") or ()),
                sections=_sections(d),
                aborted=aborted,
            )
        except (KeyError, TypeError, ValueError) as exc:
            what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ResultsError(
                f"{source}: malformed field '{where}' ({what}). The file is not a complete AgentAssay results "
                "file; record it again with `agentassay run SUITE -o FILE`."
            ) from exc


def _write_atomic(p: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


#: What the writability probe writes (and removes) before the first trial: enough to meet a full disk.
_PROBE_BYTES = 64 * 1024


def check_writable(path: str | Path, option: str = "-o") -> None:
    """Before the first trial: a results file that cannot be written would lose the run's verdict.

    Creates the folder, writes and syncs a 64 kB probe beside the target and removes it, so a read-only
    folder, a path under a file, a full filesystem or a file-size limit is exit 3 before anything is spent.
    """
    p = Path(path)
    if p.is_dir():
        raise ResultsError(f"{p}: {option} names a directory; give a file in it, e.g. `{option} {p / 'results.json'}`")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.probe.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(b"\0" * _PROBE_BYTES)
                f.flush()
                os.fsync(f.fileno())
        finally:
            os.unlink(tmp)
    except OSError as exc:
        raise ResultsError(
            f"{p}: cannot write the results file there ({_why(p, exc)}); no trial was run. Pass "
            f"`{option} FILE` in a writable folder with free space, or fix the permissions of {p.parent}."
        ) from None


def _why(p: Path, exc: OSError) -> str:
    """The OS's reason, or the plainer one when a folder on the way is a file ("File exists" says little)."""
    for folder in reversed(p.parents):
        if folder.exists() and not folder.is_dir():
            return f"{folder} is a file, not a folder"
    return exc.strerror or str(exc)


def keep_elsewhere(results: Results, path: Path, exc: OSError) -> tuple[Path | None, str]:
    """``-o`` failed after the run (the folder went read-only, the disk filled): keep the results in a temp
    file and return it with the message saying where; (None, message) when even that fails — the caller
    then prints the results file to stdout, the last place left."""
    text = results.to_json()
    why = _why(path, exc)
    fd, tmp = -1, ""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"agentassay-{path.stem}-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as second:
        with contextlib.suppress(OSError):
            if tmp:
                os.unlink(tmp)
        return None, (
            f"cannot write the results file {path} ({why}), nor a temporary file ({second.strerror or second}); "
            "the results file is printed to stdout below: save it and move it to where it belongs"
        )
    return Path(tmp), (
        f"cannot write the results file {path} ({why}); the results were kept in {tmp}: move it where it belongs "
        f"(`mv {tmp} {path}`) once {path.parent} is writable and has space"
    )


def _aborted(raw: Any) -> dict[str, Any] | None:
    """The ``aborted`` record, checked: a reason, the process's exit code, the cause."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise TypeError(f"expected a mapping with reason, exit_code and cause, got {type(raw).__name__}")
    code, cause = raw.get("exit_code"), raw.get("cause")
    if isinstance(code, bool) or not isinstance(code, int) or not 1 <= code <= 255:
        raise ValueError(
            f"'exit_code' is {code!r}, expected the process's exit code: 4 (the agent could not be run), 130 or "
            "143 (SIGINT / SIGTERM), 2 (an interrupted pytest session)"
        )
    if cause not in ABORT_CAUSES:
        raise ValueError(f"'cause' is {cause!r}, expected one of {', '.join(ABORT_CAUSES)}")
    return {"reason": str(raw.get("reason") or ""), "exit_code": code, "cause": cause}


def aborted_record(*, aborted: str | None, interrupted: str | None, trials: int) -> dict[str, Any] | None:
    """The ``aborted`` record of a run that ended before its decision (None when it reached one).

    The exit codes are the CLI's: 4 when the agent could not be run (it wins over a signal, as the process's
    own exit code does), 130 / 143 for SIGINT / SIGTERM.
    """
    if aborted:
        return {"reason": aborted, "exit_code": int(ExitCode.AGENT), "cause": "agent"}
    if interrupted:
        code = int(ExitCode.for_signal(interrupted))
        done = f"after {trials} trial{'s' if trials != 1 else ''}" if trials else "before the first trial"
        return {
            "reason": f"interrupted by {interrupted} {done}: the trials that finished are kept; no suite decision",
            "exit_code": code,
            "cause": "signal",
        }
    return None


def refuse_aborted(results: Results, path: str | Path, role: str) -> None:
    """An aborted run's file is never a baseline, a candidate or a part to merge: its decision was not reached,
    and its trials are what was measured before it stopped, not the sample its tests were designed for."""
    if results.aborted is None:
        return
    a = results.aborted
    raise ResultsError(
        f"{path}: this run was aborted (exit {a['exit_code']}: {a['reason']}) and reached no decision, so it "
        f"cannot be used as the {role}. Record it again to the end (`agentassay run SUITE --full -o FILE` for a "
        "baseline); `agentassay report` still shows what it measured."
    )


def _json_text(data: dict[str, Any]) -> str:
    """One top-level field per line and one scenario per line, each line by the C encoder.

    ``json.dump(..., indent=1)`` takes the pure-Python encoder: 0.53 s for the 12 MB of 300 scenarios x
    100 trials, against 0.13 s here; and a line per scenario still diffs well.
    """

    def enc(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, default=str)

    lines = []
    for key, value in data.items():
        if key == "scenarios" and isinstance(value, list) and value:
            lines.append(f"{enc(key)}: [\n  " + ",\n  ".join(enc(s) for s in value) + "\n ]")
        else:
            lines.append(f"{enc(key)}: {enc(value)}")
    return "{\n " + ",\n ".join(lines) + "\n}\n"


def load_results(path: str | Path) -> Results:
    """Read and validate a results file (untrusted input: docs/runner.md, "Validation on load").

    Raises ResultsError (exit 3) naming the file, the JSON path at fault and the fix: over the size
    bound (checked before reading), not UTF-8 JSON, nested too deep, a field of the wrong type or out of
    its bounds, a non-finite number, an unknown ``kind``, counts that disagree with the trial records.
    """
    # a cycle: _validate raises this module's ResultsError
    from ._validate import read_json, validate

    p = Path(path)
    data, text = read_json(p, with_text=True)
    validate(data, str(p))

    # A file made elsewhere passes the boundary as it is read: repaired (no lone surrogates from
    # "\ud83d" escapes) and redacted, so no report or comment made from it can leak what it holds.
    return Results.from_dict(scrub_document(data, text=text), source=str(p))
