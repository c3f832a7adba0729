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


def render_table(results: Results, *, reasons: int = 1) -> str:
    """One row per scenario (verdict, pass counts, trials used, tokens), then the decision."""
    rows = [
        (
            "scenario",
            "verdict",
            "baseline -> candidate" if results.kind != "run" else "passed",
            "used/run/fixed-n",
            "tokens",
            "USD",
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
                "-" if cost["usd"] is None else f"{cost['usd']:.4f}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for s in results.scenarios:
        if s.verdict.verdict.value != "pass":
            lines.append(f"  {s.name}: {_clip(s.verdict.explanation, 160)}")
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
    if total["usd"] is not None:
        lines.append(f"cost: ${total['usd']:.4f} at the configured prices")
    for note in results.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)
