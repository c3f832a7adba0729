"""The ``judge`` check kind: a grading function of the user's own, off by default (docs/judge.md).

``entry: module:function`` names a plain (synchronous) function called once per trace as::

    fn(input=<scenario input>, output=<trace.output>, properties=<scenario properties>, **options)

where ``options`` are the check's other keys. It returns ``True``/``False`` or ``(passed, reason)``;
an exception is a failed check carrying its message. The function brings its own client; its
randomness becomes part of the trial (Remark 3.1). The built-in LLM judge (``judge:`` with a rubric
and a model, this package) measures that randomness itself.

Registered in the built-in registry (agentassay/_features/__init__.py): the loader validates the YAML
from that entry, the evaluators call :func:`build` to compile each such check.
"""

from __future__ import annotations

from ..._evaluators import CheckFn, Where, outcome, resolve
from ..._spec import Check
from ..._traces import Trace


def build(check: Check, where: Where) -> CheckFn:
    """Compile one ``judge`` check: import its function now, so a typo fails the load, not every trial."""
    fn = resolve(check, where)
    who = f"judge {check.value}"
    options = dict(check.options)
    properties = dict(where.scenario.properties)

    def run(input: str, trace: Trace) -> str | None:
        try:
            result = fn(input=input, output=trace.output, properties=properties, **options)
        except Exception as e:
            return f"{who} raised {type(e).__name__}: {e}"
        return outcome(result, who)

    return run
