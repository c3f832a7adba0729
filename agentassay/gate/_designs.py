"""Sequential-regression designs, calibrated once per machine and cached on disk.

Calibrating a :class:`~agentassay.stats.SequentialDesign` takes ~1 s at 60 trials and
~30 s at 200; CI runs the same suite again and again, so the constants are stored in
``$AGENTASSAY_CACHE_DIR`` (default ``~/.cache/agentassay``) keyed by every argument and the
package version. A missing or unwritable cache only costs time.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from ..stats import SequentialDesign

SHAPE = 0.25


def cache_dir() -> Path:
    env = os.environ.get("AGENTASSAY_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentassay"


def _key(nb: int, n: int, alpha: float, delta: float, shape: float) -> str:
    from .. import __version__

    return f"{__version__}|{nb}|{n}|{alpha!r}|{delta!r}|{shape!r}"


def sequential_design(nb: int, n: int, alpha: float, delta: float, shape: float = SHAPE) -> SequentialDesign:
    path = cache_dir() / "sequential-designs.json"
    key = _key(nb, n, alpha, delta, shape)
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        table = {}
    if isinstance(table, dict) and isinstance(table.get(key), list) and len(table[key]) == 2:
        cf, cp = table[key]
        return SequentialDesign.from_constants(nb, n, alpha, delta, shape, cf, cp)
    design = SequentialDesign(nb, n, alpha, delta, shape)
    table = table if isinstance(table, dict) else {}
    table[key] = [design.c_fail, design.c_pass]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".designs-")
        with os.fdopen(fd, "w") as f:
            json.dump(table, f)
        os.replace(tmp, path)
    except OSError:
        pass
    return design
