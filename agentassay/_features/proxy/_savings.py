"""What the proxy's trials mean for a results file's cost and savings (``Results.savings()``).

Proxy trials stand in for target trials, so what they cost is taken off the USD a run saved against the
fixed-n design, and the savings say how many there were and what they cost.
"""

from __future__ import annotations

from typing import Any


def proxy_trials(results: Any) -> int:
    """Trials of the proxy model (paired runs and its own share); 0 without a proxy."""
    proxy = results.sections.get("proxy")
    if not proxy:
        return 0
    arm = sum(int(s.get("trials", 0)) + int(s.get("errors", 0)) for s in (proxy.get("scenarios") or {}).values())
    return arm + sum(len(v) for v in (proxy.get("paired") or {}).values())


def adjust_savings(results: Any) -> tuple[float, dict[str, Any]]:
    """(USD the proxy's trials cost, the entries they add to the savings)."""
    proxy = results.sections.get("proxy") or {}
    return proxy.get("usd") or 0.0, {"proxy_trials": proxy_trials(results), "proxy_usd": proxy.get("usd")}
