"""An LLM judge that measures its own noise (docs/judge.md; the paper's Remark 3.1).

A model-based evaluator is a second source of randomness: a trial's pass is then the agent's and
the judge's at once. The judge here is one more check of a scenario (the plugin
``agentassay._features.judge._plugin`` wraps the scenario's evaluator), grades each trace ``repeats`` times,
caches every answer in the trace store so recorded traces are never paid for twice, and splits the
variance of its pass grades into the judge's share and the agent's (law of total variance).

``grade_traces`` grades recorded traces through the same cache (``agentassay analyze``);
``judge_configs`` reads a suite's judges.
"""

from ._attribution import Attribution, attribution
from ._config import SCALES, JudgeConfig, judge_configs, load_scripted, parse_judge
from ._judge import (
    Cached,
    Judge,
    JudgedEvaluator,
    JudgeStats,
    MemoryCache,
    StoreCache,
    TraceGrade,
    cache_key,
    content_digest,
    grade_traces,
)
from ._providers import PROMPT_VERSION, GradeError, Reply, Request, messages, parse_reply

__all__ = [
    "PROMPT_VERSION",
    "SCALES",
    "Attribution",
    "Cached",
    "GradeError",
    "Judge",
    "JudgeConfig",
    "JudgeStats",
    "JudgedEvaluator",
    "MemoryCache",
    "Reply",
    "Request",
    "StoreCache",
    "TraceGrade",
    "attribution",
    "cache_key",
    "content_digest",
    "grade_traces",
    "judge_configs",
    "load_scripted",
    "messages",
    "parse_judge",
    "parse_reply",
]
