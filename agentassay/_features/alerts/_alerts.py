"""Change alerts: what differs between the conditions a baseline and a candidate ran in.

A verdict compares pass rates; it cannot tell whether the agent changed or the world around it did.
When the two sides ran on another model, provider, Agents SDK or agentassay version, from another
suite file, far apart in time, or at a very different cost or latency per trial, the reader should
know before trusting (or blaming) a verdict — as coverage tools warn of a different environment.
Alerts are evidence for the reader only: nothing here feeds the gate.

:func:`change_alerts` is a pure function of the two sides as the results files record them, so
``check`` (the built-in plugin ``alerts``), ``compare`` and ``merge --baseline`` give the same alerts
for the same files. The candidate's age is measured from its own ``started_at``, never the clock, so
the alerts of a pair of files never change. docs/reports.md, "Change alerts", is the reference.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..._spec._settings import part_by_name

if TYPE_CHECKING:
    from ..._results._model import Results, TrialOutcome

SECTION = "alerts"  # the results file's key
OFFLINE = "offline"  # the seeded simulator's provider: no latency alert (see change_alerts)
KINDS = ("suite", "model", "provider", "agent_model", "sdk", "agentassay", "age", "cost", "latency")
_MAX_NAMED = 3  # scenarios named in one cost or latency alert before "and N more"


@dataclass(frozen=True)
class Conditions:
    """What a comparison knows of one side: the fields of its results file that describe its conditions."""

    suite: Mapping[str, Any]
    agent: Mapping[str, Any]
    versions: Mapping[str, Any]
    started_at: str
    trials: Mapping[str, Sequence[TrialOutcome]]

    @classmethod
    def of(cls, results: Results) -> Conditions:
        return cls(
            results.suite,
            results.agent,
            results.versions,
            results.started_at,
            {s.name: s.trials for s in results.scenarios},
        )


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _config(side: Conditions) -> Mapping[str, Any]:
    return _mapping(_mapping(side.agent).get("config"))


def _model(side: Conditions, key: str) -> str | None:
    return _text(_mapping(_config(side).get("model")).get(key))


def _agent_models(side: Conditions) -> dict[str, str]:
    """Each described agent's own model (``agent.config.agents[].model``; ``default`` when it sets none)."""
    agents = _config(side).get("agents")
    out: dict[str, str] = {}
    for a in agents if isinstance(agents, list) else ():
        if isinstance(a, Mapping) and _text(a.get("name")) is not None:
            out.setdefault(str(a["name"]), _text(a.get("model")) or "default")
    return out


def _sdk(side: Conditions) -> str | None:
    return _text(_mapping(side.versions).get("openai-agents")) or _text(_config(side).get("sdk_version"))


def _when(text: str) -> datetime | None:
    try:
        t = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return t if t.tzinfo is not None else None  # a naive time cannot be compared with an aware one


def _alert(kind: str, message: str, baseline: Any, candidate: Any, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "message": message, "baseline": baseline, "candidate": candidate, **extra}


def _changed(what: str, base: str, cand: str, thing: str | None = None) -> str:
    return f"baseline ran on {what} {base}, candidate on {cand} — a verdict may reflect the {thing or what} change"


def _figures(
    trials: Mapping[str, Sequence[TrialOutcome]],
    value: Callable[[TrialOutcome], float | None],
    summary: Callable[[list[float]], float],
) -> dict[str, float]:
    out = {}
    for name, ts in trials.items():
        xs = [x for t in ts if (x := value(t)) is not None]
        if xs:
            out[name] = summary(xs)
    return out


def _usd(t: TrialOutcome) -> float | None:
    x = _number(t.usd, math.nan)  # a damaged (hand-edited) figure is no data
    return x if math.isfinite(x) else None


def _latency(t: TrialOutcome) -> float | None:
    x = round(float(t.latency_s), 6)  # as the results file writes it, so check and compare agree
    return x if x > 0 else None


def _jump(
    kind: str,
    noun: str,
    base: Conditions,
    cand: Conditions,
    value: Callable[[TrialOutcome], float | None],
    summary: Callable[[list[float]], float],
    ratio: float,
    floor: float,
    show: Callable[[float], str],
    how: str,
) -> dict[str, Any] | None:
    """A cost or latency alert: per scenario both ran (each side's figure > 0), and overall (the mean of the
    scenarios' figures), changed by ``ratio`` or more either way and by at least ``floor``."""
    b = _figures(base.trials, value, summary)
    c = _figures(cand.trials, value, summary)
    shared = [n for n in c if n in b and b[n] > 0 and c[n] > 0]
    if not shared:
        return None

    def beyond(x: float, y: float) -> bool:
        r = y / x
        return (r >= ratio or r <= 1 / ratio) and abs(y - x) >= floor

    over = sorted((n for n in shared if beyond(b[n], c[n])), key=lambda n: -abs(math.log(c[n] / b[n])))
    mb = statistics.fmean(b[n] for n in shared)
    mc = statistics.fmean(c[n] for n in shared)
    if not over and not beyond(mb, mc):
        return None
    r = mc / mb
    verb = "rose" if r > 1 else "fell"
    scope = f"the {len(shared)} scenarios both ran" if len(shared) > 1 else "the one scenario both ran"
    message = f"{noun} {verb} ×{r:.2f} (baseline {show(mb)}, candidate {show(mc)}; {how}, averaged over {scope})"
    if over and (len(shared) > 1 or not beyond(mb, mc)):
        named = ", ".join(f"{n} ×{c[n] / b[n]:.2f}" for n in over[:_MAX_NAMED])
        more = f" and {len(over) - _MAX_NAMED} more" if len(over) > _MAX_NAMED else ""
        message += f"; beyond ×{ratio:g} in {named}{more}"
    message += " — check the model, the prompts and the tool calls before reading the verdicts"
    return _alert(
        kind,
        message,
        round(mb, 9),
        round(mc, 9),
        ratio=round(r, 4),
        scenarios={n: round(c[n] / b[n], 4) for n in over},
    )


def _number(value: Any, default: float) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    return x if math.isfinite(x) else default


def change_alerts(base: Conditions, cand: Conditions, config: Any = None) -> list[dict[str, Any]]:
    """The alerts for ``cand`` against ``base``, in a fixed order (:data:`KINDS`); empty when nothing differs.

    Each is ``{kind, message, baseline, candidate}`` (cost and latency add ``ratio`` and ``scenarios``,
    a per-agent model ``agent``). A field one side did not record raises no alert, nor does the latency of
    a side that ran the offline simulator.
    """
    cfg = config if config is not None else part_by_name()["alerts"]()  # config.regression.alerts
    default = type(cfg)
    if not cfg.enabled:
        return []
    out: list[dict[str, Any]] = []
    sb, sc = _text(_mapping(base.suite).get("sha256")), _text(_mapping(cand.suite).get("sha256"))
    if sb and sc and sb != sc:
        out.append(
            _alert(
                "suite",
                f"the suite file changed since the baseline (sha256 {sb[:12]}… → {sc[:12]}…) — scenarios, checks "
                "or settings may differ, and a verdict may reflect that",
                sb,
                sc,
            )
        )
    for key, kind in (("name", "model"), ("provider", "provider")):
        b, c = _model(base, key), _model(cand, key)
        if b is not None and c is not None and b != c:
            out.append(_alert(kind, _changed(kind, b, c), b, c))
    mb, mc = _agent_models(base), _agent_models(cand)
    for name in (n for n in mc if n in mb and mb[n] != mc[n]):
        message = f"agent '{name}': " + _changed("model", mb[name], mc[name])
        out.append(_alert("agent_model", message, mb[name], mc[name], agent=name))
    for kind, b, c, what, thing in (
        ("sdk", _sdk(base), _sdk(cand), "Agents SDK (openai-agents)", "SDK version"),
        (
            "agentassay",
            _text(_mapping(base.versions).get("agentassay")),
            _text(_mapping(cand.versions).get("agentassay")),
            "agentassay",
            "agentassay version",
        ),
    ):
        if b is not None and c is not None and b != c:
            out.append(_alert(kind, _changed(what, b, c, thing), b, c))
    tb, tc = _when(base.started_at), _when(cand.started_at)
    limit = _number(cfg.max_age_days, default.max_age_days)
    if tb is not None and tc is not None:
        days = (tc - tb).total_seconds() / 86400
        if days > limit:
            out.append(
                _alert(
                    "age",
                    f"the baseline is {days:.1f} days older than the candidate (limit {limit:g} days) — the "
                    "model behind the same name, the tools and the data may have changed since",
                    base.started_at,
                    cand.started_at,
                    days=round(days, 3),
                )
            )
    cost = _jump(
        "cost",
        "cost per trial",
        base,
        cand,
        _usd,
        statistics.fmean,
        max(_number(cfg.cost_ratio, default.cost_ratio), 1.0 + 1e-9),
        0.0,
        lambda x: f"${x:.3g}",
        "mean USD per trial in each scenario",
    )
    # The offline simulator answers at once: its trials' latency is this machine's load, not a model's.
    simulated = OFFLINE in (_model(base, "provider"), _model(cand, "provider"))
    latency = None if simulated else _jump(
        "latency",
        "latency per trial",
        base,
        cand,
        _latency,
        statistics.median,
        max(_number(cfg.latency_ratio, default.latency_ratio), 1.0 + 1e-9),
        max(_number(cfg.latency_floor_s, default.latency_floor_s), 0.0),
        lambda x: f"{x:.3g} s",
        "median seconds per trial in each scenario",
    )
    out += [a for a in (cost, latency) if a is not None]
    return out


def alerts_of(results: Results) -> list[dict[str, Any]]:
    """The alerts a results file carries (its ``alerts`` section), malformed entries left out."""
    raw = results.sections.get(SECTION)
    items: Iterable[Any] = raw if isinstance(raw, list) else ()
    return [a for a in items if isinstance(a, Mapping) and _text(a.get("message")) is not None]
