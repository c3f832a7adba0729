"""Evaluators (paper Def. 3.3): a scenario's checks as one callable ``E(input, trace) -> EvalResult``."""

from ._checks import EvalResult, Evaluator, build_evaluator

__all__ = ["EvalResult", "Evaluator", "build_evaluator"]
