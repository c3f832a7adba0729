"""Terminal report: the verdict table and the decision, in plain text that also reads well in CI logs."""

from __future__ import annotations

from ..results import Results, ScenarioResult

_MARK = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}


def _clip(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _rates(s: ScenarioResult) -> str:
    cand = f"{s.passes}/{s.counted_trials}"
    if s.baseline is None:
        return cand
    return f"{s.baseline.passes}/{s.baseline.trials} -> {cand}"


def _usd(s: ScenarioResult) -> str:
    """Cost, and what a fixed-n design would have cost more (or less), at this run's cost per trial."""
    usd = s.cost()["usd"]
    if usd is None:
        return "-"
    run = len(s.trials)
    if s.fixed_n is None or not run:
        return f"{usd:.4f}"
    saved = usd / run * (s.fixed_n - run)
    return f"{usd:.4f} ({'saved' if saved >= 0 else 'extra'} {abs(saved):.4f})"


def behaviour(s: ScenarioResult) -> str | None:
    """The fingerprint comparison in words, or None when the scenario had none."""
    fp = s.verdict.fingerprint
    if not fp:
        return None
    if fp.get("verdict") is None:
        return str(fp.get("explanation", "fingerprints not tested"))
    n = f"{fp.get('n_baseline')} vs {fp.get('n_candidate')} runs"
    if fp["verdict"] == "fail":
        return f"SHIFTED ({n}, adjusted p = {fp['adjusted_p']:.3g}): " + "; ".join(fp.get("shift") or [])
    largest = f"; largest move: {fp['largest']}" if fp.get("largest") else ""
    return f"no shift detected ({n}, adjusted p = {fp['adjusted_p']:.3g}){largest}"


def render_table(results: Results, *, reasons: int = 1) -> str:
    """One row per scenario (verdict, pass counts, trials used, tokens), then the decision."""
    rows = [
        (
            "scenario",
            "verdict",
            "baseline -> candidate" if results.kind != "run" else "passed",
            "used/run/fixed-n",
            "tokens",
            "USD (vs fixed-n)",
        )
    ]
    for s in results.scenarios:
        cost = s.cost()
        rows.append(
            (
                _clip(s.name, 28),
                _MARK[s.verdict.verdict.value],
                _rates(s),
                f"{s.verdict.trials_used}/{len(s.trials)}/{s.fixed_n if s.fixed_n is not None else '?'}",
                f"{cost['input_tokens'] + cost['output_tokens']:,}",
                _usd(s),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for s in results.scenarios:
        words = behaviour(s)
        if s.verdict.verdict.value == "pass" and words is None:
            continue
        lines.append(f"  {s.name}: {_clip(s.verdict.explanation, 160)}")
        if words is not None:
            lines.append(f"    behaviour: {_clip(words, 150)}")
        if s.verdict.verdict.value != "pass":
            for reason, count in list(s.failure_reasons().items())[:reasons]:
                lines.append(f"    most common failure ({count}x): {_clip(reason, 140)}")
    d = results.decision
    counts = ", ".join(f"{n} {k}" for k, n in d.counts.items() if n)
    total = results.cost()
    lines.append("")
    lines.append(
        f"decision: {d.decision.value.upper()} (suite {d.verdict.value}; {counts}); "
        f"{total['trials']} trials, {total['input_tokens'] + total['output_tokens']:,} tokens"
    )
    saved = results.savings()
    if saved is not None and saved["fixed_n_trials"]:
        usd = "" if saved["usd_saved"] is None else f", about ${saved['usd_saved']:.4f}"
        verb = "saved" if saved["trials_saved"] >= 0 else "used"
        lines.append(
            f"against fixed-n designs with the same alpha and beta ({saved['fixed_n_trials']} trials): "
            f"{verb} {abs(saved['trials_saved'])} trials ({abs(saved['fraction_saved']) * 100:.0f}%{usd})"
        )
    proxy = results.proxy or {}
    if proxy.get("scenarios") or proxy.get("paired"):
        alloc = proxy.get("allocation") or {}
        usd = "" if proxy.get("usd") is None else f", ${proxy['usd']:.4f}"
        rho = "rho not estimated" if proxy.get("rho") is None else f"rho {proxy['rho']:.2f} from paired runs"
        plan = f"; {alloc['n_target']} target + {alloc['n_proxy']} proxy trials per scenario" if alloc.get("proxy_pays") else ""
        lines.append(f"proxy {proxy.get('label')}: {results.proxy_trials()} trials{usd}; {rho}{plan}")
    for note in proxy.get("notes") or ():
        lines.append(f"note: proxy: {note}")
    if total["usd"] is not None:
        extra = f" (+ ${proxy['usd']:.4f} proxy)" if proxy.get("usd") is not None else ""
        lines.append(f"cost: ${total['usd']:.4f}{extra} at the configured prices")
    for note in results.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)
