"""Check kinds as a registry: the kernel's kinds, then those features add through their registry entry.

The loader validates a check by its kind's entry (the key of ``{type: KIND, ...}`` holding its value, the
further keys allowed, whether the value names code), the evaluators compile it by the kind's builder and
the run identity digests the modules of kinds that name code. The kernel's kinds are compiled by
``agentassay._evaluators``; a feature's kind names its builder as ``"module:function"``, imported only when
a suite uses it, so reading a suite imports no feature (_spec/_settings.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ._settings import builtins


@dataclass(frozen=True)
class CheckKind:
    """One check kind: how a suite writes it and who compiles it."""

    name: str
    value_key: str  # the key of ``{type: KIND, ...}`` holding the check's value
    # The further keys that form allows; None: any key, passed through to the check's function as an option.
    options: tuple[str, ...] | None = ()
    # Option names a pass-through kind's function receives from AgentAssay itself (so a suite cannot set them).
    reserved: tuple[str, ...] = ()
    names_code: bool = False  # the value is ``module:function``: validated as one, digested by the run identity
    # ``"module:function"`` compiling it, ``f(check, where) -> CheckFn`` (agentassay._evaluators); None: the kernel.
    build: str | None = None


#: The kernel's kinds, in the order error messages list them.
KERNEL_KINDS: tuple[CheckKind, ...] = (
    CheckKind("exact_match", "expected", ("field",)),
    CheckKind("contains", "text"),
    CheckKind("not_contains", "text"),
    CheckKind("regex", "pattern"),
    CheckKind("json_schema", "schema"),
    CheckKind("python", "entry", names_code=True),
    CheckKind("max_steps", "max"),
    CheckKind("must_call", "tool"),
    CheckKind("must_not_call", "tool"),
    CheckKind("must_reach", "agent"),
)


@cache
def check_kinds() -> dict[str, CheckKind]:
    """Every check kind by name: the kernel's, then the built-in features' (registry order)."""
    out = {k.name: k for k in KERNEL_KINDS}
    for b in builtins():
        for k in b.checks:
            if k.name in out:
                raise ValueError(f"check kind {k.name!r} of {b.name} is already defined")
            out[k.name] = k
    return out


@cache
def kind_names() -> tuple[str, ...]:
    """The check kinds' names, in the order error messages list them."""
    return tuple(check_kinds())


def names_code(kind: str) -> bool:
    """Whether a check of ``kind`` names a module (``module:function``) whose code decides a trial."""
    k = check_kinds().get(kind)
    return k is not None and k.names_code


__all__ = ["KERNEL_KINDS", "CheckKind", "check_kinds", "kind_names", "names_code"]
