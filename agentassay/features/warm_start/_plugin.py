"""Warm starts (``run --warm-start FILE``): recorded trials tell each threshold SPRT where the pass rate
probably is, so an agent well above its threshold passes sooner.

Only the PASS rule is warmed and its bound is calibrated exactly, so the miss rate stays at most
``config.warm_start.inflation`` x beta for a prior from any version (stats/_warm.py). The gate applies
it (``monitor_for(prior=...)``, a :class:`WarmPrior` per scenario) when ``config.warm_start`` is on
and the method is ``sprt``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...plugins._hookspecs import hookimpl
from ._prior import WarmPrior

if TYPE_CHECKING:
    from ...runner import Run


@hookimpl
def agentassay_prepare(run: Run) -> None:
    if run.options.extra.get("warm_from") is not None:
        counts = run.options.extra.get("warm_from").baseline_counts()
        run.priors.update({name: WarmPrior(c.passes, c.trials) for name, c in counts.items()})
