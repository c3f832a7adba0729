"""Argument checks shared by every procedure.

Each check raises ``ValueError`` naming the parameter, the value given and the valid
range, so that a user sees at once which argument to change and to what.
"""

from __future__ import annotations

import math
import numbers


def check_count(name: str, value: object, *, minimum: int = 0) -> int:
    """An integer ``>= minimum`` (bools are refused: ``True`` is not a trial count)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}")
    return int(value)


def check_passes(name: str, passes: object, trials_name: str, trials: int) -> int:
    """A pass count in ``[0, trials]``."""
    k = check_count(name, passes)
    if k > trials:
        raise ValueError(f"{name} must be between 0 and {trials_name} ({trials}); got {k}")
    return k


def check_arms(
    base_passes: object, base_trials: object, cand_passes: object, cand_trials: object
) -> tuple[int, int, int, int]:
    """Pass counts and trial counts of a baseline and a candidate: (kb, nb, kc, nc)."""
    nb = check_count("base_trials", base_trials, minimum=1)
    kb = check_passes("base_passes", base_passes, "base_trials", nb)
    nc = check_count("cand_trials", cand_trials, minimum=1)
    kc = check_passes("cand_passes", cand_passes, "cand_trials", nc)
    return kb, nb, kc, nc


def check_open_unit(name: str, value: object) -> float:
    """A probability strictly inside (0, 1), e.g. alpha or beta."""
    x = _real(name, value, "a number in (0, 1)")
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name} must be in (0, 1) (exclusive); got {x}")
    return x


def check_closed_unit(name: str, value: object) -> float:
    """A rate in [0, 1]."""
    x = _real(name, value, "a number in [0, 1]")
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must be in [0, 1]; got {x}")
    return x


def check_margin(name: str, value: object) -> float:
    """A regression margin delta in (0, 1)."""
    x = _real(name, value, "a number in (0, 1)")
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name} must be in (0, 1) (a drop in pass rate, e.g. 0.1); got {x}")
    return x


def check_threshold_and_delta(threshold: float, delta: float) -> None:
    """SPRT needs both hypothesised rates, threshold and threshold - delta, inside (0, 1)."""
    if not threshold - delta > 0.0:
        raise ValueError(
            f"threshold - delta must be > 0 (the alternative rate); got "
            f"threshold={threshold}, delta={delta} -> {threshold - delta:.6g}"
        )


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return str(value)


def _real(name: str, value: object, expected: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be {expected}; got {value!r}")
    x = float(value)
    if math.isnan(x):
        raise ValueError(f"{name} must be {expected}; got nan")
    return x
