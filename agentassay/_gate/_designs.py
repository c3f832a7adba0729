"""Sequential-regression designs: shipped for the common settings, else calibrated once per machine.

Calibrating a :class:`~agentassay._stats.SequentialDesign` takes ~0.5 s at 50 trials, ~5 s at 100
and ~30 s at 200, and a fresh CI container would pay it on every run. So:

1. ``designs.json`` next to this module ships the constants for the settings ``check`` asks for
   with the default config (written by ``python benchmarks/speed.py --designs``): the default
   baseline and cap, delta 0.1, shape 0.25, looks every 10 trials, the PASS boundary at alpha 0.05
   and the FAIL boundary at the levels ``scenario_alpha`` gives 1-10 scenarios with and without
   the built-in plugins' shares of alpha (benchmarks/speed.py lists them). The two boundaries are calibrated apart (each at its own
   level), so each has its own key;
2. anything else is calibrated once and stored in ``$AGENTASSAY_CACHE_DIR`` (default
   ``~/.cache/agentassay``); a missing or unwritable cache only costs time.

Both are keyed by every argument and ``DESIGN_ALGORITHM`` (not the package version): constants
stay valid across releases until the calibration itself changes, and then the stale shipped table
is ignored (a test recomputes entries of it, ``tests/gate/test_designs.py``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from .._stats import SequentialDesign
from .._stats._sequential import DESIGN_ALGORITHM, fail_constant, pass_constant

SHAPE = 0.25
SHIPPED = Path(__file__).with_name("designs.json")


def cache_dir() -> Path:
    env = os.environ.get("AGENTASSAY_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentassay"


LOOKS = 10  # the test looks after every 10th candidate trial (docs/decisiveness.md chose it)


def boundary_key(kind: str, nb: int, n: int, alpha: float, delta: float | None, shape: float, looks: int) -> str:
    """The key of one boundary's constant: its kind ("fail" / "pass"), every argument it depends on
    exactly (repr; the FAIL boundary does not depend on delta), and the algorithm version."""
    margin = "" if delta is None else f"|{float(delta)!r}"
    return f"algorithm {DESIGN_ALGORITHM}|{kind}|{nb}|{n}|{float(alpha)!r}{margin}|{float(shape)!r}|{int(looks)}"


@lru_cache(maxsize=4)
def shipped_designs(path: Path = SHIPPED) -> dict[str, float]:
    """The shipped table, or nothing when it is missing, damaged or of another algorithm version."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("algorithm") != DESIGN_ALGORITHM:
        return {}
    return {k: float(v) for k, v in (data.get("constants") or {}).items() if _number(v)}


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_known: dict[str, float] = {}  # this process's constants, so 300 scenarios read the cache once


def _constant(key: str, calibrate: Callable[[], float]) -> float:
    found = _known.get(key)
    if found is None:
        found = shipped_designs().get(key)
    if found is not None:
        _known[key] = found
        return found
    path = cache_dir() / "sequential-constants.json"
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        table = {}
    table = table if isinstance(table, dict) else {}
    if _number(table.get(key)):
        _known[key] = float(table[key])
        return _known[key]
    value = _known[key] = float(calibrate())
    table[key] = value
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".designs-")
        with os.fdopen(fd, "w") as f:
            json.dump(table, f)
        os.replace(tmp, path)
    except OSError:
        pass
    return value


def sequential_design(
    nb: int,
    n: int,
    alpha: float,
    delta: float,
    shape: float = SHAPE,
    *,
    pass_alpha: float | None = None,
    looks: int = LOOKS,
) -> SequentialDesign:
    """The design testing ``n`` candidate trials against ``nb`` baseline trials: FAIL at ``alpha``,
    PASS at ``pass_alpha`` (default ``alpha``), looking after every ``looks``-th trial."""
    pa = alpha if pass_alpha is None else pass_alpha
    cf = _constant(
        boundary_key("fail", nb, n, alpha, None, shape, looks), lambda: fail_constant(nb, n, float(alpha), shape, looks)
    )
    cp = _constant(
        boundary_key("pass", nb, n, pa, delta, shape, looks),
        lambda: pass_constant(nb, n, float(pa), float(delta), shape, looks),
    )
    return SequentialDesign.from_constants(nb, n, alpha, delta, shape, cf, cp, pass_alpha=pa, looks=looks)
