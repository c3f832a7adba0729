"""Warm starts (``run --warm-start FILE``): recorded trials tell each threshold SPRT where the pass rate
probably is, so an agent well above its threshold passes sooner.

Only the PASS rule is warmed and its bound is calibrated exactly, so the miss rate stays at most
``config.warm_start.inflation`` x beta for a prior from any version (_stats/_warm.py). The gate applies
it (``monitor_for(prior=...)``, a :class:`WarmPrior` per scenario) when ``config.warm_start`` is on
and the method is ``sprt``. The HTML report's SPRT chart does not draw the warm PASS rule; its caption says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookimpl
from ..._reports import ScenarioPart
from ._prior import WarmPrior

if TYPE_CHECKING:
    from ..._reports import ReportContext, ScenarioPart
    from ..._results import Results
    from ..._runner import Run


@hookimpl
def agentassay_prepare(run: Run) -> None:
    if run.options.extra.get("warm_from") is not None:
        counts = run.options.extra.get("warm_from").baseline_counts()
        run.priors.update({name: WarmPrior(c.passes, c.trials) for name, c in counts.items()})


def _num(d: Mapping[str, Any], key: str) -> float | None:
    """A finite number from the file, or None."""
    try:
        x = float(d[key])
    except (KeyError, TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


@hookimpl
def agentassay_report_sections(results: Results, report: ReportContext) -> list[ScenarioPart] | None:
    """In the HTML report, a sentence on the SPRT chart's caption: the warm PASS rule is not drawn."""
    if report.format != "html":
        return None

    out = []
    for s in results.scenarios:
        ev = s.verdict.evidence or {}
        warm, threshold, delta = _num(ev, "warm_rate"), _num(ev, "threshold"), _num(ev, "delta")
        if warm is None or threshold is None or delta is None:
            continue
        note = (
            f"A warm start added a second PASS rule (evidence for {warm:.2f} over {threshold - delta:.2f} reaching "
            f"{_num(ev, 'warm_bound') or 0:.2f}), which is not drawn."
        )
        out.append(ScenarioPart(s.name, path_note=note))
    return out
