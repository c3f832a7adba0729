"""``@pytest.mark.agentassay(...)``: its arguments, checked at collection so a typo is an error there.

Standard library only: this module is imported with the plugin, which must cost nothing when no
test is marked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from ..._config_check import closest, did_you_mean
from ..._errors import AgentAssayError

METHODS = ("sprt", "fixed")


class MarkerError(AgentAssayError, ValueError):
    """A marker argument that cannot work; the message names the argument and the fix."""


@dataclass(frozen=True)
class MarkerSpec:
    """What a marked test runs with; defaults are the suite file's (docs/suite.md)."""

    trials: int = 50
    threshold: float = 0.80
    alpha: float = 0.05
    beta: float = 0.10
    delta: float = 0.10
    method: str = "sprt"
    concurrency: int = 1
    timeout: float | None = 120.0
    seed: int = 0
    errors: str = "fail"

    def settings(self) -> Any:
        """The engine's ``Settings`` (imported here, not at plugin import)."""
        from ..._spec import Settings  # lazy: the plugin, installed but unused, must not load yaml

        return Settings(
            trials=self.trials, threshold=self.threshold, alpha=self.alpha, beta=self.beta, delta=self.delta,
            method=self.method, concurrency=self.concurrency, timeout=self.timeout or 1e9, seed=self.seed,
            errors=self.errors,
        )


ARGUMENTS = tuple(f.name for f in fields(MarkerSpec))


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MarkerError(f"{name}={value!r}: expected a number")
    return float(value)


def _integer(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise MarkerError(f"{name}={value!r}: expected a whole number >= {minimum}")
    return value


def _open_unit(name: str, value: Any) -> float:
    x = _number(name, value)
    if not 0.0 < x < 1.0:
        raise MarkerError(f"{name}={value!r}: expected a number strictly between 0 and 1")
    return x


def parse_marker(args: tuple[Any, ...], kwargs: dict[str, Any]) -> MarkerSpec:
    """Validate ``agentassay(...)``'s arguments (keywords only) into a :class:`MarkerSpec`."""
    if args:
        raise MarkerError(
            f"positional argument {args[0]!r}: pass arguments by name, e.g. agentassay(trials=50, threshold=0.8)"
        )
    for key in kwargs:
        if key not in ARGUMENTS:
            hint = did_you_mean(closest(key, ARGUMENTS))
            raise MarkerError(f"unknown argument '{key}'.{hint} Valid arguments: {', '.join(ARGUMENTS)}")
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in ("trials", "concurrency"):
            out[key] = _integer(key, value, 1)
        elif key == "seed":
            out[key] = _integer(key, value, 0)
        elif key in ("threshold", "alpha", "beta", "delta"):
            out[key] = _open_unit(key, value)
        elif key == "method":
            if value not in METHODS:
                raise MarkerError(f"method={value!r}: expected one of {', '.join(map(repr, METHODS))}")
            out[key] = value
        elif key == "errors":
            if value not in ("fail", "exclude"):
                raise MarkerError(f"errors={value!r}: expected 'fail' (an error trial fails) or 'exclude'")
            out[key] = value
        elif key == "timeout":
            if value is not None and _number(key, value) <= 0:
                raise MarkerError(f"timeout={value!r}: expected seconds > 0 (or None for no limit)")
            out[key] = None if value is None else float(value)
    spec = MarkerSpec(**out)
    if spec.method == "sprt":
        if spec.threshold - spec.delta <= 0:
            raise MarkerError(
                f"threshold={spec.threshold:g} with delta={spec.delta:g}: the SPRT tells threshold apart from "
                "threshold - delta, which must be > 0; lower delta or raise threshold"
            )
        if spec.alpha + spec.beta >= 1:
            raise MarkerError(f"alpha={spec.alpha:g} with beta={spec.beta:g}: alpha + beta must be < 1 for the SPRT")
    return spec
