"""The judge at work: grading a trace k times through a cache, as a check of the scenario, in bulk.

Cache. An answer is keyed by (prompt version, rubric, scale, the judge model's identity, a digest of
the graded content — input, final output, tool calls — and the repeat index) and kept in the trace
store's cache (namespace ``judge``), or in memory for the run without a store. The seed a scripted judge
(or OpenAI's ``seed``) gets is derived from the same key. So a judge is, once cached, a fixed function
of the content: re-grading recorded traces (``agentassay analyze``) costs no call and gives the same
grades, two trials with identical replies get identical grades, and the pass rate the sequential
tests see is the agent's pass rate under that judge — the trials stay independent given it.

Concurrency. Trials run in parallel and the judged evaluator is called in their threads; one key is
graded once even when two trials ask for it at the same moment (the second waits for the first),
so the number of calls never depends on timing.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._errors import AgentAssayError
from ..._evaluators import EvalResult
from ..._integrations.adapters._base import describe_exception
from ..._runner._cost import OFFLINE, price_source, price_usd
from ..._runner._retry import backoff, is_transient
from ..._traces import Cost, Trace, TraceStore
from ._attribution import Attribution, attribution
from ._config import JudgeConfig
from ._providers import PROMPT_VERSION, GradeError, Grader, Request, make_grader, parse_reply

_REASON = 160


# -- the cache ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cached:
    grade: bool | float
    reason: str
    input_tokens: int = 0
    output_tokens: int = 0


class MemoryCache:
    """A run's answers when there is no trace store (lost at exit)."""

    def __init__(self) -> None:
        self._answers: dict[str, Cached] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Cached | None:
        with self._lock:
            return self._answers.get(key)

    def put(self, key: str, answer: Cached, model: str | None = None) -> None:
        with self._lock:
            self._answers.setdefault(key, answer)

    def __len__(self) -> int:
        return len(self._answers)


class StoreCache:
    """Answers in the trace store's generic cache (namespace ``judge``): they outlive the run.

    A store written before the generic cache kept them in its own ``judge_cache`` table; the first use
    moves those rows into the namespace (same keys, nothing re-graded)."""

    NAMESPACE = "judge"
    LEGACY_TABLE = "judge_cache"

    def __init__(self, store: TraceStore) -> None:
        self.store = store
        store.cache_adopt(self.LEGACY_TABLE, self.NAMESPACE, _legacy_answer)

    def get(self, key: str) -> Cached | None:
        row = self.store.cache_get(self.NAMESPACE, key)
        if not isinstance(row, dict) or "grade" not in row:
            return None
        return Cached(
            row["grade"], row.get("reason") or "", int(row.get("input_tokens") or 0), int(row.get("output_tokens") or 0)
        )

    def put(self, key: str, answer: Cached, model: str | None = None) -> None:
        self.store.cache_put(
            self.NAMESPACE,
            key,
            {
                "grade": answer.grade,
                "reason": answer.reason,
                "input_tokens": answer.input_tokens,
                "output_tokens": answer.output_tokens,
                "model": model,
            },
        )


def _legacy_answer(row: dict[str, Any]) -> dict[str, Any]:
    """A ``judge_cache`` row (its grade JSON-encoded) as the value :class:`StoreCache` keeps."""
    return {
        "grade": json.loads(row["grade"]),
        "reason": row.get("reason"),
        "input_tokens": int(row.get("input_tokens") or 0),
        "output_tokens": int(row.get("output_tokens") or 0),
        "model": row.get("model"),
    }


Cache = MemoryCache | StoreCache


def content_digest(request: Request) -> str:
    text = json.dumps(
        request.content(), sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()


def cache_key(config: JudgeConfig, digest: str, repeat: int) -> str:
    parts = {
        "prompt": PROMPT_VERSION,
        "rubric": config.rubric,
        "scale": config.scale,
        "model": config.identity(),
        "content": digest,
        "repeat": repeat,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def seed_of(key: str) -> int:
    """The seed of one (content, repeat): reproducible, different for every repeat."""
    return int(key[:15], 16)


# -- one trace's grades ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceGrade:
    """A trace's k grades and the judge's verdict on it (``passed`` None: not graded, see ``error``)."""

    grades: tuple[bool | float, ...] = ()
    reasons: tuple[str, ...] = ()
    passes: tuple[bool, ...] = ()  # the binary pass grade of each repeat
    passed: bool | None = None
    error: str | None = None
    calls: int = 0  # requests sent to the judge (retries included)
    hits: int = 0  # repeats answered from the cache
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float | None = None
    digest: str = ""
    config: JudgeConfig | None = field(default=None, repr=False, compare=False)
    skipped: bool = False  # not graded: the trial itself ended in an error

    @property
    def mean(self) -> float | None:
        return math.fsum(float(g) for g in self.grades) / len(self.grades) if self.grades else None

    def failure(self) -> str | None:
        """Why the judge failed the trace, as a failed trial's reason; None when it passed."""
        if self.passed:
            return None
        if self.error is not None:
            return f"judge error: {self.error}"
        reason = next((r for r, p in zip(self.reasons, self.passes, strict=True) if not p and r), "")
        why = f" — {_clip(reason)}" if reason else ""
        k, cfg = len(self.grades), self.config
        if cfg is not None and cfg.scale == "1-5":
            shown = f"{self.mean:.2g}" if k == 1 else f"mean {self.mean:.2f} of {k} repeats"
            return f"judge: grade {shown} < {cfg.threshold:g}{why}"
        if k == 1:
            return f"judge: fail{why}"
        return f"judge: {sum(self.passes)} of {k} repeats pass (a majority must){why}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "grades": list(self.grades),
            "reasons": list(self.reasons),
            "passes": list(self.passes),
            "passed": self.passed,
            "error": self.error,
            "calls": self.calls,
            "hits": self.hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": self.usd,
            "digest": self.digest,
            "skipped": self.skipped,
        }


def _clip(text: str, width: int = _REASON) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


class _Failed(AgentAssayError):
    def __init__(self, reason: str, calls: int, input_tokens: int, output_tokens: int) -> None:
        super().__init__(reason)
        self.reason, self.calls, self.input_tokens, self.output_tokens = (
            reason,
            calls,
            input_tokens,
            output_tokens,
        )


class Judge:
    """One judge configuration with its grader and cache; ``grade(input, trace)`` is thread-safe."""

    def __init__(
        self,
        config: JudgeConfig,
        *,
        cache: Cache | None = None,
        prices: dict[str, dict[str, float]] | None = None,
        retries: int = 2,
        timeout: float = 120.0,
        search: Sequence[str | os.PathLike[str]] = (),
        grader: Grader | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self.cache: Cache = cache if cache is not None else MemoryCache()
        self.prices = prices or {}
        # config.prices, else the maintained table (issue 25): a known judge model needs no configuration.
        source = price_source(config.label, config.model.provider, self.prices)
        self.priced = source is not None and source.kind != OFFLINE  # a scripted judge stays unpriced
        self.retries = retries
        self.grader = grader or make_grader(config, timeout=timeout, search=search or [os.getcwd()])
        self._sleep = sleep
        self._lock = threading.Lock()
        self._inflight: dict[str, threading.Event] = {}

    def grade(self, input: str, trace: Trace) -> TraceGrade:
        """The trace's k grades (cached ones reused) and the verdict by the pass rule."""
        cfg = self.config
        if trace.error:
            return TraceGrade(
                error=f"not graded: the trial ended in an error ({_clip(trace.error, 80)})",
                config=cfg,
                skipped=True,
            )
        request = Request.of(cfg, input, trace)
        digest = content_digest(request)
        grades: list[bool | float] = []
        reasons: list[str] = []
        calls = hits = tin = tout = 0
        error = None
        for r in range(cfg.repeats):
            try:
                answer, fresh, n = self._answer(cache_key(cfg, digest, r), request)
            except _Failed as failed:
                calls, tin, tout = (
                    calls + failed.calls,
                    tin + failed.input_tokens,
                    tout + failed.output_tokens,
                )
                error = failed.reason
                break
            if fresh:
                calls, tin, tout = calls + n, tin + answer.input_tokens, tout + answer.output_tokens
            else:
                hits += 1
            grades.append(answer.grade)
            reasons.append(answer.reason)
        usd = price_usd(Cost(tin, tout), cfg.label, self.prices, cfg.model.provider)
        passes = tuple(cfg.passes(g) for g in grades)
        if error is not None:
            return TraceGrade(
                tuple(grades), tuple(reasons), passes, None, error, calls, hits, tin, tout, usd, digest, cfg
            )
        if cfg.scale == "pass_fail":
            passed = 2 * sum(passes) > len(passes)
        else:
            passed = math.fsum(float(g) for g in grades) / len(grades) >= cfg.threshold
        return TraceGrade(
            tuple(grades), tuple(reasons), passes, passed, None, calls, hits, tin, tout, usd, digest, cfg
        )

    def _answer(self, key: str, request: Request) -> tuple[Cached, bool, int]:
        """(answer, fresh, requests): from the cache, or graded once even under concurrent asks."""
        while True:
            with self._lock:
                cached = self.cache.get(key)
                if cached is not None:
                    return cached, False, 0
                event = self._inflight.get(key)
                owner = event is None
                if owner:
                    event = self._inflight[key] = threading.Event()
            assert event is not None
            if not owner:
                event.wait()
                continue  # answered (a hit), or the owner failed and this thread tries itself
            try:
                answer, n = self._call(request, seed_of(key))
                self.cache.put(key, answer, self.config.label)
                return answer, True, n
            finally:
                with self._lock:
                    self._inflight.pop(key, None)
                event.set()

    def _call(self, request: Request, seed: int) -> tuple[Cached, int]:
        """One grade: transient errors retried with backoff, an unreadable reply retried once."""
        calls = tin = tout = transient = unreadable = 0
        while True:
            calls += 1
            try:
                reply = self.grader(request, seed + unreadable)
            except Exception as exc:
                if is_transient(exc) and transient < self.retries:
                    transient += 1
                    self._sleep(backoff(transient, exc))
                    continue
                raise _Failed(
                    f"the judge raised {_clip(describe_exception(exc), 200)}", calls, tin, tout
                ) from None
            tin, tout = tin + reply.input_tokens, tout + reply.output_tokens
            try:
                grade, reason = parse_reply(reply, self.config.scale)
            except GradeError as exc:
                if unreadable == 0:
                    unreadable += 1
                    continue
                raise _Failed(f"{exc} (after one retry)", calls, tin, tout) from None
            return Cached(grade, _clip(reason, 500), tin, tout), calls


# -- as a check of a scenario ---------------------------------------------------------------------


class JudgedEvaluator:
    """A scenario's own checks, then the judge: a trial passes only when both do.

    The judge is asked only when the checks passed (a failed check already fails the trial, so
    grading it would buy nothing). ``blocking``: the engine calls it in a thread of its own.
    """

    blocking = True

    def __init__(
        self,
        inner: Callable[[str, Trace], EvalResult],
        judge: Judge,
        *,
        on_grade: Callable[[Trace, TraceGrade | None], None] | None = None,
    ) -> None:
        self.inner = inner
        self.judge = judge
        self.on_grade = on_grade
        self.scenario = getattr(inner, "scenario", None)
        self.checks = getattr(inner, "checks", ())

    def __call__(self, input: str, trace: Trace) -> EvalResult:
        result = self.inner(input, trace)
        if not result.passed or trace.error:
            if self.on_grade is not None:
                self.on_grade(trace, None)
            return result
        grade = self.judge.grade(input, trace)
        if self.on_grade is not None:
            self.on_grade(trace, grade)
        if grade.passed:
            return result
        return EvalResult(False, (grade.failure() or "judge: fail",))

    def __repr__(self) -> str:
        return f"JudgedEvaluator({self.inner!r}, judge {self.judge.config.label})"


# -- in bulk --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeStats:
    """What grading a batch of traces cost and found: verdicts, calls vs cache hits, tokens, USD, noise split."""

    graded: int = 0  # traces with a verdict
    passed: int = 0
    errors: int = 0  # the judge could not grade (after retries)
    skipped: int = 0  # not graded: the trial itself ended in an error
    calls: int = 0
    hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float | None = None
    attribution: Attribution = field(default_factory=lambda: Attribution(0, 0))
    examples: tuple[str, ...] = ()

    @classmethod
    def of(cls, grades: Iterable[TraceGrade], *, priced: bool = False, examples: int = 3) -> JudgeStats:
        """Totals over ``grades``; ``priced``: USD is 0 rather than unknown when nothing was spent."""
        grades = list(grades)
        ok = [g for g in grades if g.passed is not None]
        usd = [g.usd for g in grades if g.usd is not None]
        shown: dict[str, None] = {}
        for g in sorted(ok, key=lambda g: bool(g.passed)):  # failing verdicts first: they explain the trials
            # The reason of a repeat that agrees with the verdict.
            pick = next(
                (
                    (gr, r)
                    for gr, r, p in zip(g.grades, g.reasons, g.passes, strict=True)
                    if r and p == g.passed
                ),
                None,
            )
            if pick is not None and len(shown) < examples:
                shown.setdefault(f"{_word(pick[0])}: {_clip(pick[1])}", None)
        return cls(
            graded=len(ok),
            passed=sum(1 for g in ok if g.passed),
            errors=sum(1 for g in grades if g.passed is None and not g.skipped),
            skipped=sum(1 for g in grades if g.skipped),
            calls=sum(g.calls for g in grades),
            hits=sum(g.hits for g in grades),
            input_tokens=sum(g.input_tokens for g in grades),
            output_tokens=sum(g.output_tokens for g in grades),
            usd=round(math.fsum(usd), 8) if usd else (0.0 if priced else None),
            attribution=attribution([g.grades for g in ok], [g.passes for g in ok]),
            examples=tuple(shown),
        )

    def to_dict(self) -> dict[str, Any]:
        a = self.attribution
        return {
            "trials_graded": self.graded,
            "judge_passed": self.passed,
            "errors": self.errors,
            "not_graded": self.skipped,
            "calls": self.calls,
            "cache_hits": self.hits,
            "disagreement": _r(a.disagreement),
            "pass_disagreement": _r(a.pass_disagreement),
            "variance": {
                "judge": _r(a.judge_variance),
                "agent": _r(a.agent_variance),
                "total": _r(a.total_variance),
            },
            "judge_share": _r(a.judge_share),
            "judge_share_se": _r(a.judge_share_se),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "usd": self.usd,
            "examples": list(self.examples),
        }


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _word(grade: bool | float) -> str:
    if isinstance(grade, bool):
        return "pass" if grade else "fail"
    return f"{grade:g}"


def grade_traces(
    judge_config: JudgeConfig,
    items: Iterable[tuple[str, Trace]],
    *,
    store: TraceStore | str | Path | None = None,
    prices: dict[str, dict[str, float]] | None = None,
    retries: int = 2,
    timeout: float = 120.0,
    concurrency: int = 1,
    search: Sequence[str | os.PathLike[str]] = (),
    grader: Grader | None = None,
) -> tuple[list[TraceGrade], JudgeStats]:
    """Grade recorded traces (``(input, trace)`` pairs) through the same cache as ``run``.

    ``store``: a TraceStore or its path, whose cached answers are reused and extended (so a
    second pass over the same traces makes no call); without it, an in-memory cache for this call.
    Returns the per-trace grades in order and their totals (calls, hits, tokens, USD, noise split).
    """
    opened = TraceStore(store) if isinstance(store, str | Path) else None
    try:
        held = opened or store
        cache: Cache = StoreCache(held) if isinstance(held, TraceStore) else MemoryCache()
        judge = Judge(
            judge_config,
            cache=cache,
            prices=prices,
            retries=retries,
            timeout=timeout,
            search=search,
            grader=grader,
        )
        pairs = list(items)
        if concurrency > 1 and len(pairs) > 1:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                grades = list(pool.map(lambda it: judge.grade(it[0], it[1]), pairs))
        else:
            grades = [judge.grade(inp, trace) for inp, trace in pairs]
    finally:
        if opened is not None:
            opened.close()
    return grades, JudgeStats.of(grades, priced=judge.priced)
