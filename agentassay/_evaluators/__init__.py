"""Evaluators (paper Def. 3.3): a scenario's checks as one callable ``E(input, trace) -> EvalResult``."""

from ._checks import CheckFn, EvalResult, Evaluator, Where, build_evaluator, outcome, resolve

__all__ = ["CheckFn", "EvalResult", "Evaluator", "Where", "build_evaluator", "outcome", "resolve"]
