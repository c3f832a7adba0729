"""The LLM judge (``judge:``; docs/judge.md): one more check of a scenario, and a measure of its own noise.

``configure`` reads and validates the suite's and the scenarios' ``judge:`` (exit 3 naming the key);
``prepare`` wraps each judged scenario's evaluator (``JudgedEvaluator``, called off the event loop),
so the sequential tests see the judged outcome trial by trial; every grade is recorded by trial;
``results_sections`` writes the ``judge`` section — per scenario the trials graded, calls and cache
hits, the disagreement rate across repeats and the agent/judge variance split — and
``report_sections`` renders it, with the judge's USD in the cost line.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookimpl
from ..._plugins._stash import StashKey
from ..._reports import Section
from ..._spec import SpecError
from . import Judge, JudgedEvaluator, JudgeStats, MemoryCache, StoreCache, judge_configs, parse_judge

if TYPE_CHECKING:
    from ..._reports import ReportContext, Section
    from ..._results import Results
    from ..._runner import Run
    from ..._traces import Trace
    from . import Judge, JudgeConfig, TraceGrade

NAME = "judge"


@dataclass
class _State:
    configs: dict[str, JudgeConfig]
    default: JudgeConfig | None
    judges: dict[JudgeConfig, Judge] = field(default_factory=dict)
    # The target's grades by scenario and trial; other phases' (the proxy's) count in the totals only.
    grades: dict[str, dict[int, TraceGrade | None]] = field(default_factory=dict)
    other: list[TraceGrade] = field(default_factory=list)
    cache: str = "memory"
    lock: threading.Lock = field(default_factory=threading.Lock)


STATE = StashKey[_State]()  # this plugin's state for one run


@hookimpl
def agentassay_configure(run: Run) -> None:

    configs = judge_configs(run.suite, run.search)
    top = run.suite.extensions.get("judge")
    default = parse_judge(top) if top is not None else None
    run.stash[STATE] = _State(configs, default)


@hookimpl
def agentassay_prepare(run: Run) -> None:

    state: _State | None = run.stash.get(STATE, None)
    if state is None:
        return
    store = run.options.store
    cache = StoreCache(store) if store is not None else MemoryCache()  # one per run: scenarios share answers
    state.cache = "store" if store is not None else "memory"
    settings = run.settings
    judged = [s for s in run.scenarios if s.name in state.configs]
    for config in dict.fromkeys(
        state.configs[s.name] for s in judged
    ):  # every judge first, then wrap: all or none
        try:
            state.judges[config] = Judge(
                config,
                cache=cache,
                prices=settings.prices,
                retries=settings.retries,
                timeout=settings.timeout,
                search=run.search,
            )
        except Exception as exc:  # a client that cannot be made is the suite's problem, before any trial

            raise SpecError(
                f"the judge ({config.model.provider}: {config.label}) could not be set up: {type(exc).__name__}: {exc}",
                file=str(run.suite.path) if run.suite.path else None,
                key="judge.model",
            ) from exc
    for scenario in judged:
        state.grades[scenario.name] = {}
        run.evaluators[scenario.name] = JudgedEvaluator(
            run.evaluators[scenario.name],
            state.judges[state.configs[scenario.name]],
            on_grade=_recorder(run, state, scenario.name),
        )


def _recorder(run: Run, state: _State, scenario: str) -> Any:
    def record(trace: Trace, grade: TraceGrade | None) -> None:
        meta = trace.metadata
        with state.lock:
            if meta.agent_version == run.version and meta.trial is not None:
                state.grades[scenario][meta.trial] = grade
            elif grade is not None:
                state.other.append(grade)

    return record


def _scenario_info(
    config: JudgeConfig, by_trial: dict[int, TraceGrade | None], priced: bool
) -> dict[str, Any]:

    grades = [g for _, g in sorted(by_trial.items()) if g is not None]
    stats = JudgeStats.of(grades, priced=priced)
    info = {
        "rubric": config.rubric,
        "model": config.label,
        "scale": config.scale,
        "threshold": config.threshold if config.scale == "1-5" else None,
        "repeats": config.repeats,
    }
    info |= stats.to_dict()
    info["not_graded"] += sum(
        1 for g in by_trial.values() if g is None
    )  # the scenario's own checks failed first
    # Every graded trial's grades, so the split can be recomputed (or pooled) from the file alone.
    info["grades"] = [
        [i, list(g.grades)] for i, g in sorted(by_trial.items()) if g is not None and g.passed is not None
    ]
    return info


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:

    state: _State | None = run.stash.get(STATE, None)
    if state is None or not state.grades:
        return None
    priced_by = {config: judge.priced for config, judge in state.judges.items()}  # config.prices or the table
    priced = bool(run.settings.prices) or any(priced_by.values())
    with state.lock:
        per = {name: dict(by_trial) for name, by_trial in state.grades.items()}
        other = list(state.other)
    scenarios = {
        name: _scenario_info(state.configs[name], by_trial, priced_by.get(state.configs[name], priced))
        for name, by_trial in per.items()
    }
    target = [g for by_trial in per.values() for g in by_trial.values() if g is not None]
    everything = JudgeStats.of(target + other, priced=priced)
    default = state.default or (
        next(iter(state.configs.values())) if len(set(state.configs.values())) == 1 else None
    )
    section: dict[str, Any] = {
        "rule": default.rule() if default is not None else "per scenario (see each scenario's judge)",
        **({} if default is None else {k: v for k, v in default.to_dict().items() if k != "rule"}),
        "cache": state.cache,
        "calls": everything.calls,
        "cache_hits": everything.hits,
        "input_tokens": everything.input_tokens,
        "output_tokens": everything.output_tokens,
        "usd": everything.usd,
        "other_phases": {"trials_graded": len(other), "calls": sum(g.calls for g in other)}
        if other
        else None,
        "scenarios": scenarios,
    }
    return {NAME: section}


# -- the report -----------------------------------------------------------------------------------


def _usd(x: float) -> str:
    """Plain text, like every string of the section: the renderer escapes it (``report.usd`` is markup)."""
    return f"${float(x):.4f}"


def _f(x: Any, digits: int = 2) -> str:
    return (
        "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{max(0.0, float(x)):.{digits}f}"
    )


def scenario_line(name: str, s: dict[str, Any], usd: Callable[[float], str], default: dict[str, Any]) -> str:
    """One scenario's judge figures in words (plain text: every renderer escapes it)."""
    graded = s.get("trials_graded", 0)
    own = (
        ""
        if all(s.get(k) == default.get(k) for k in ("model", "scale", "repeats", "rubric"))
        else (f" (own judge: {s.get('model')}, {s.get('scale')}, {s.get('repeats')} repeats)")
    )
    parts = [f"{name}{own}: {graded} graded ({s.get('judge_passed', 0)} passed by the judge)"]
    if s.get("errors"):
        parts.append(f"{s['errors']} judge errors")
    if s.get("repeats", 1) > 1 and graded:
        v = s.get("variance") or {}
        share = s.get("judge_share")
        se = s.get("judge_share_se")
        share_text = "—" if share is None else _f(share) + ("" if se is None else f" ± {_f(se)}")
        parts.append(f"disagreement {_f(s.get('disagreement'))}")
        parts.append(
            f"variance judge {_f(v.get('judge'), 3)} + agent {_f(v.get('agent'), 3)} (judge share {share_text})"
        )
    parts.append(f"{s.get('calls', 0)} calls, {s.get('cache_hits', 0)} cache hits")
    if s.get("usd") is not None:
        parts.append(usd(float(s["usd"])))
    line = "; ".join(parts)
    examples = s.get("examples") or []
    return line + (f'; e.g. "{examples[0]}"' if examples else "")


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[Section] | None:

    section = results.sections.get(NAME)
    if not isinstance(section, dict):
        return None
    scenarios = section.get("scenarios") or {}
    tokens = int(section.get("input_tokens") or 0) + int(section.get("output_tokens") or 0)
    usd = section.get("usd")
    head = []
    if section.get("label"):
        scale = section.get("scale")
        threshold = (
            f", pass at >= {section['threshold']:g}" if scale == "1-5" and section.get("threshold") else ""
        )
        rubric = str(section.get("rubric") or "")
        rubric = rubric if len(rubric) <= 300 else rubric[:299] + "…"
        head.append(
            f"{section['label']} ({scale}{threshold}, {section.get('repeats', 1)} repeats); rubric: {rubric}"
        )
    spent = "unpriced" if usd is None else _usd(usd)
    head.append(
        f"{section.get('calls', 0)} judge calls, {section.get('cache_hits', 0)} cache hits ({section.get('cache')}), "
        f"{tokens:,} tokens, {spent}. A trial passes when its checks pass and {section.get('rule', '')}."
    )
    default = {
        "model": section.get("label"),
        "scale": section.get("scale"),
        "repeats": section.get("repeats"),
        "rubric": section.get("rubric"),
    }
    items = tuple(scenario_line(name, s, _usd, default) for name, s in scenarios.items())
    extra = () if usd is None else (("judge", float(usd)),)
    return [
        Section(
            key=NAME,
            title="LLM judge",
            paragraphs=tuple(head),
            items=items,
            noun="scenarios",
            extra_usd=extra,
        )
    ]
