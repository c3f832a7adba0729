"""Behavioural contracts (issue 16; paper Sec. 3.7 and 8.5): preconditions, postconditions and invariants over a trace.

A suite's ``contracts:`` (top level: every scenario; in a scenario: that one) name tool orderings
(``before``), forbidden steps (``never``), argument constraints (``arguments``, ``require``), bounds
(``max_steps``, ``max_tool_calls``, ``max_tokens``, ``max_usd``, ``max_latency_s``), an
``output_schema`` and ``python`` checks. Each is a (p, δ) probabilistic oracle over the trials
(``_oracle.py``); the ``contracts`` plugin turns it into gate evidence. docs/contracts.md.

:func:`evaluate_contracts` is the pure function the plugin applies per trace, so stored traces
(``agentassay analyze``) give the same counts as the live run.
"""

from ._evaluate import EXAMPLES, Tally, counted, evaluate_contracts, record
from ._expr import ALLOWED, FUNCTIONS, ROOTS, EvalError, ExprError, Expression, compile_expression
from ._model import (
    DEFAULT_DELTA,
    DEFAULT_P,
    KINDS,
    Contract,
    Violation,
    describe_step,
    input_fields,
    suite_contracts,
)
from ._oracle import (
    INCONCLUSIVE,
    NO_TRIALS,
    SATISFIED,
    VIOLATED,
    binomial_pvalue,
    bonferroni,
    lower_bound,
    oracle_verdict,
    regression,
)

__all__ = [
    "ALLOWED",
    "DEFAULT_DELTA",
    "DEFAULT_P",
    "EXAMPLES",
    "FUNCTIONS",
    "INCONCLUSIVE",
    "KINDS",
    "NO_TRIALS",
    "ROOTS",
    "SATISFIED",
    "VIOLATED",
    "Contract",
    "EvalError",
    "ExprError",
    "Expression",
    "Tally",
    "Violation",
    "binomial_pvalue",
    "bonferroni",
    "compile_expression",
    "counted",
    "describe_step",
    "evaluate_contracts",
    "input_fields",
    "lower_bound",
    "oracle_verdict",
    "record",
    "regression",
    "suite_contracts",
]
