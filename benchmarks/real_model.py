"""The gate on a real local LLM: A/A false alarms, a prompt regression, prompt mutants (issue 17).

    python benchmarks/real_model.py            # full run -> benchmarks/results/real-model.json and the figures in docs/real-model.md
    python benchmarks/real_model.py --quick    # a small run, for smoke checks
    python benchmarks/real_model.py --render   # rewrite the figures in docs/real-model.md from the data

Everything else we measure runs on the offline simulator; here the agent is an Agents SDK agent
(`tests/_support/real_model_agents.py`) on Qwen2.5-Coder-0.5B-Instruct (Q4_K_M), served by llama.cpp's server
(the `xllamacpp` wheel) on 127.0.0.1 and reached through the `openai-compatible` provider, with its
real sampling noise (temperature 0.8, a fresh sampler seed per request). Install the pinned wheels
first: `python -m pip install --require-hashes -r tests/_support/real_model_requirements.txt`.

1. **A/A**: R repetitions (25 by default, about half an hour here); each records a baseline
   (`agentassay run --full`) and checks the *same* prompt against it (`agentassay check`), with the
   suite's default gate (sequential regression test, behavioural fingerprints, Holm across the two
   scenarios, alpha 0.05). Every FAIL is a false alarm; the FAIL rate is reported with its binomial
   standard error and must be <= alpha + 2 s.e.
2. **A prompt regression**: the DONE rule's line removed from the instructions
   (`assistant_regressed`), checked against the first baselines: verdicts, trials used, tokens and
   wall time of each check.
3. **Prompt mutants**: `agentassay mutate --operators prompt` on the same suite: each mutant's status.
4. **A/A at the shipped defaults** (issue 21; `--defaults-reps R`, merged into the existing JSON): the
   `capital` scenario alone (pass rate about 0.96 here), nothing in `config` but the concurrency and
   seed, so a baseline records `Settings().record_cap` trials and a check runs at most `trial_cap`:
   the DEPLOY rate over R repetitions with its exact (Clopper-Pearson) 95 % interval, trials used,
   time; then the DONE-rule prompt regression checked against the first of those baselines (BLOCK).

The CPU is shared (other processes may run): the load average is recorded at the start and the
end of each part, and wall times mean little without it.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentassay._integrations.cli import main as cli  # noqa: E402
from benchmarks._harness import Timer, load_result, parser, run_info, today, write_report  # noqa: E402
from tests._support import real_model  # noqa: E402

BEGIN, END = (
    "<!-- BEGIN GENERATED: benchmarks/real_model.py -->",
    "<!-- END GENERATED: benchmarks/real_model.py -->",
)
ALPHA = 0.05
SEED = 7  # the suite's seed: trial seeds (the server ignores them) and the mutants' choices
SCENARIOS = ("capital", "spider")
# `spider` asks for a fact the 0.5B model often gets wrong (four legs): a pass rate well inside (0, 1),
# where sampling noise is largest; its threshold is set near it so its `run` verdict is a real question.
THRESHOLDS = {"spider": 0.5}


def config(trials: int) -> dict[str, Any]:
    """The gate's defaults (sprt, fingerprints on, Holm), two trials in flight (the server's two slots)."""
    return {"trials": trials, "alpha": ALPHA, "beta": 0.1, "delta": 0.1, "concurrency": 2, "timeout": 300,
            "seed": SEED}


def scenarios() -> list[dict[str, Any]]:
    out = []
    for name in SCENARIOS:
        sc = real_model.scenario(name)
        if name in THRESHOLDS:
            sc["threshold"] = THRESHOLDS[name]
        out.append(sc)
    return out


def _results(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _summary(path: Path, rc: int, seconds: float) -> dict[str, Any]:
    """What one run or check produced: decision, per-scenario verdicts and passes, trials, tokens, time."""
    r = _results(path)
    scen = {}
    for s in r["scenarios"]:
        v = s["verdict"]
        fp = v.get("fingerprint") or {}
        scen[s["name"]] = {
            "verdict": v["verdict"], "passes": s["passes"], "trials": s["trials_run"], "trials_used": v.get("trials_used"),
            "rate_verdict": v.get("rate_verdict"), "fingerprint_p": fp.get("pvalue"),
        }
    cost = r["cost"]
    return {
        "exit_code": rc, "decision": r["decision"]["decision"], "verdict": r["decision"]["verdict"],
        "trials": cost["trials"], "input_tokens": cost["input_tokens"], "output_tokens": cost["output_tokens"],
        "seconds": round(seconds, 2), "scenarios": scen,
    }


def _cli(args: list[str]) -> tuple[int, float]:
    started = time.perf_counter()
    rc = cli([*args, "-q"])
    return rc, time.perf_counter() - started


def _aa_rep(suite: Path, base: Path, cand: Path, what: str) -> dict[str, Any]:
    """One A/A repetition: record a baseline (`run --full`), check the same agent against it."""
    rc_b, s_b = _cli(["run", str(suite), "--full", "--no-store", "-o", str(base)])
    rc_c, s_c = _cli(["check", str(suite), "--baseline", str(base), "--no-store", "-o", str(cand)])
    if rc_b not in (0, 1, 2) or rc_c not in (0, 1, 2):
        raise SystemExit(f"{what}: run exit {rc_b}, check exit {rc_c}")
    return {"baseline": _summary(base, rc_b, s_b), "check": _summary(cand, rc_c, s_c)}


def aa(served: real_model.Served, work: Path, reps: int, trials: int) -> dict[str, Any]:
    suite = real_model.write_suite(work / "suite", served, scenarios(), config=config(trials))
    load_start = real_model.load_average()
    runs = []
    for i in range(reps):
        rep = _aa_rep(suite, work / f"base-{i}.json", work / f"aa-{i}.json", f"A/A repetition {i}")
        runs.append(rep)
        c = rep["check"]
        print(f"A/A {i + 1}/{reps}: check {c['verdict'].upper()} ({c['trials']} trials, {c['seconds']:.0f} s); "
              f"baseline passes " + ", ".join(f"{k} {v['passes']}/{v['trials']}"
                                              for k, v in rep["baseline"]["scenarios"].items()), flush=True)
    fails = sum(1 for r in runs if r["check"]["verdict"] == "fail")
    rate = fails / reps
    se = math.sqrt(rate * (1 - rate) / reps)
    passes = {name: sum(r["baseline"]["scenarios"][name]["passes"] for r in runs) for name in SCENARIOS}
    counted = {name: sum(r["baseline"]["scenarios"][name]["trials"] for r in runs) for name in SCENARIOS}
    return {
        "reps": reps, "trials_cap": trials, "fails": fails, "fail_rate": rate, "se": se,
        "bound": ALPHA + 2 * se, "within_bound": rate <= ALPHA + 2 * se,
        "verdicts": {v: sum(1 for r in runs if r["check"]["verdict"] == v) for v in ("pass", "fail", "inconclusive")},
        "baseline_pass_rate": {n: passes[n] / counted[n] for n in SCENARIOS},
        "check_trials_mean": sum(r["check"]["trials"] for r in runs) / reps,
        "seconds": sum(r["baseline"]["seconds"] + r["check"]["seconds"] for r in runs),
        "tokens": sum(r[k]["input_tokens"] + r[k]["output_tokens"] for r in runs for k in ("baseline", "check")),
        "load_average": {"start": load_start, "end": real_model.load_average()},
        "runs": runs,
    }


def regression(served: real_model.Served, work: Path, checks: int) -> dict[str, Any]:
    suite = work / "suite" / "agentassay.yml"
    load_start = real_model.load_average()
    out = []
    for i in range(checks):
        cand = work / f"regressed-{i}.json"
        rc, s = _cli(["check", str(suite), "--baseline", str(work / f"base-{i}.json"), "--agent",
                      "tests._support.real_model_agents:assistant_regressed", "--no-store", "-o", str(cand)])
        out.append(_summary(cand, rc, s))
        print(f"regression {i + 1}/{checks}: {out[-1]['verdict'].upper()} after {out[-1]['trials']} trials, "
              f"{out[-1]['input_tokens'] + out[-1]['output_tokens']} tokens, {s:.0f} s", flush=True)
    return {
        "removed": real_model_agents_rule(), "checks": out,
        "detected": sum(1 for c in out if c["verdict"] == "fail"),
        "load_average": {"start": load_start, "end": real_model.load_average()},
    }


def real_model_agents_rule() -> str:
    from tests._support import real_model_agents

    return real_model_agents.RULE


def mutants(served: real_model.Served, work: Path, trials: int) -> dict[str, Any]:
    suite = real_model.write_suite(work / "mutate", served, scenarios(), config=config(trials))
    load_start = real_model.load_average()
    out = work / "mutation.json"
    rc, s = _cli(["mutate", str(suite), "--operators", "prompt", "-o", str(out)])
    if rc != 0:
        raise SystemExit(f"agentassay mutate exited {rc}")
    section = _results(out)["mutation"]
    rows = [{k: m.get(k) for k in ("id", "diff", "status", "reason", "trials")} for m in section["mutants"]]
    for m in rows:
        print(f"mutant {m['id']}: {m['status']} after {m['trials']} trials — {m['diff']}", flush=True)
    return {"trials_cap": trials, "mutants": rows, "score": section["scores"]["overall"], "trials": section["trials"],
            "seconds": round(s, 1), "load_average": {"start": load_start, "end": real_model.load_average()}}


def aa_defaults(served: real_model.Served, work: Path, reps: int) -> dict[str, Any]:
    """A/A on `capital` at the shipped defaults (cap, baseline size, levels), then the prompt regression."""
    from agentassay._spec import Settings

    cfg = {"concurrency": 2, "timeout": 300, "seed": SEED}
    suite = real_model.write_suite(work / "defaults", served, [real_model.scenario("capital")], config=cfg)
    load_start = real_model.load_average()
    runs = []
    for i in range(reps):
        rep = _aa_rep(suite, work / f"dbase-{i}.json", work / f"daa-{i}.json", f"A/A (defaults) repetition {i}")
        runs.append(rep)
        c, b = rep["check"], rep["baseline"]["scenarios"]["capital"]
        print(f"A/A defaults {i + 1}/{reps}: {c['decision'].upper()} after {c['trials']} trials ({c['seconds']:.0f} s); "
              f"baseline {b['passes']}/{b['trials']}", flush=True)
    deploys = sum(1 for r in runs if r["check"]["decision"] == "deploy")
    blocks = sum(1 for r in runs if r["check"]["decision"] == "block")
    rc, s = _cli(["check", str(suite), "--baseline", str(work / "dbase-0.json"), "--agent",
                  "tests._support.real_model_agents:assistant_regressed", "--no-store", "-o", str(work / "dregressed.json")])
    regressed = _summary(work / "dregressed.json", rc, s)
    print(f"prompt regression at the defaults: {regressed['decision'].upper()} after {regressed['trials']} trials", flush=True)
    lo, hi = _interval(deploys, reps)
    settings = Settings()
    return {
        "reps": reps, "cap": settings.trial_cap, "baseline_trials": settings.record_cap, "deploys": deploys,
        "blocks": blocks, "deploy_rate": deploys / reps, "deploy_interval": [lo, hi],
        "block_upper_limit": _upper_limit(blocks, reps),
        "baseline_pass_rate": sum(r["baseline"]["scenarios"]["capital"]["passes"] for r in runs)
        / max(1, sum(r["baseline"]["scenarios"]["capital"]["trials"] for r in runs)),
        "check_trials_mean": sum(r["check"]["trials"] for r in runs) / reps,
        "seconds": sum(r["baseline"]["seconds"] + r["check"]["seconds"] for r in runs),
        "regression": regressed,
        "load_average": {"start": load_start, "end": real_model.load_average()},
        "runs": runs,
    }


def _interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided interval of a binomial rate."""
    from scipy import stats

    a = 1 - confidence
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def measure_defaults(reps: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentassay-real-model-") as tmp:
        work = Path(tmp)
        missing = real_model.missing_packages()
        if missing:
            raise SystemExit(f"not installed: {', '.join(missing)}; run `{real_model.install_hint()}`")
        with real_model.serve(log=work / "server.log") as served:
            print(f"model served at {served.base_url} in {served.started_s:.1f} s", flush=True)
            return aa_defaults(served, work, reps)


def measure(quick: bool, reps: int, trials: int, regressions: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentassay-real-model-") as tmp:
        work = Path(tmp)
        install = {"missing": real_model.missing_packages()}
        if install["missing"]:
            raise SystemExit(f"not installed: {', '.join(install['missing'])}; run `{real_model.install_hint()}`")
        with real_model.serve(log=work / "server.log") as served:
            print(f"model served at {served.base_url} in {served.started_s:.1f} s", flush=True)
            result: dict[str, Any] = {"server_start_s": round(served.started_s, 1)}
            result["aa"] = aa(served, work, reps, trials)
            result["regression"] = regression(served, work, min(regressions, reps))
            result["mutation"] = mutants(served, work, trials)
            result["normaliser"] = served.counts()
    return result


def _fmt_load(la: dict[str, list[float]]) -> str:
    return f"{la['start'][0]:.1f} → {la['end'][0]:.1f}"


def _upper_limit(fails: int, reps: int, confidence: float = 0.95) -> float:
    """Exact (Clopper-Pearson) one-sided upper confidence limit of a binomial rate."""
    from scipy import stats

    return 1.0 if fails >= reps else float(stats.beta.ppf(confidence, fails + 1, reps - fails))


def markdown(r: dict[str, Any]) -> str:
    a, g, m = r["aa"], r["regression"], r["mutation"]
    rates = ", ".join(f"`{n}` {p:.2f}" for n, p in a["baseline_pass_rate"].items())
    lines = [
        BEGIN,
        "",
        f"Measured {r['date']} by `python benchmarks/real_model.py{' --quick' if r['quick'] else ''}` on this "
        f"two-core machine ({r['platform']}, Python {r['python']}), the model on one thread "
        f"(`AGENTASSAY_REAL_MODEL_THREADS`), {r['seconds'] / 60:.0f} minutes in all; the CPU was shared with "
        f"other work (load average {', '.join(str(x) for x in r['load_average_start'])} at the start, "
        f"{', '.join(str(x) for x in r['load_average_end'])} at the end). Server start-up "
        f"(model loaded, first answer to `/v1/models`): {r['server_start_s']} s.",
        "",
        "**A/A** (the same prompt as baseline and candidate; the suite's default gate, two scenarios, "
        f"alpha {ALPHA}, at most {a['trials_cap']} trials per scenario):",
        "",
        "| repetitions | FAIL | PASS | INCONCLUSIVE | FAIL rate ± s.e. | bound alpha + 2 s.e. | within "
        "| exact one-sided 95 % upper limit |",
        "|---|---|---|---|---|---|---|---|",
        f"| {a['reps']} | {a['verdicts']['fail']} | {a['verdicts']['pass']} | {a['verdicts']['inconclusive']} | "
        f"{a['fail_rate']:.3f} ± {a['se']:.3f} | {a['bound']:.3f} | {'yes' if a['within_bound'] else '**no**'} "
        f"| {_upper_limit(a['fails'], a['reps']):.3f} |",
        "",
        "The s.e. is the binomial one of the observed rate, so with no FAIL it is 0 and says little; the last "
        "column is the Clopper-Pearson limit the true FAIL rate lies below with 95 % confidence.",
        "",
        f"Baseline pass rates over all repetitions: {rates}. A check used {a['check_trials_mean']:.1f} trials on "
        f"average; the {2 * a['reps']} runs and checks took {a['seconds'] / 60:.1f} minutes and "
        f"{a['tokens']:,} tokens (load {_fmt_load(a['load_average'])}). With R = {a['reps']} the standard error is "
        "wide: these repetitions show the gate does not raise false alarms far above alpha on real sampling "
        "noise; they cannot pin the rate down to a percentage point.",
        "",
        f"**Prompt regression** (the line `{g['removed']}` removed; checked against the first "
        f"{len(g['checks'])} baselines): detected (FAIL) {g['detected']} of {len(g['checks'])} times "
        f"(load {_fmt_load(g['load_average'])}).",
        "",
        "| check | verdict | per scenario: verdict, passes, trials the verdict used | trials run | tokens | wall time |",
        "|---|---|---|---|---|---|",
    ]
    for i, c in enumerate(g["checks"], 1):
        per = "; ".join(f"`{n}` {v['verdict'].upper()} {v['passes']}/{v['trials']}, {v['trials_used']}"
                        for n, v in c["scenarios"].items())
        lines.append(f"| {i} | {c['verdict'].upper()} | {per} | {c['trials']} | "
                     f"{c['input_tokens'] + c['output_tokens']:,} | {c['seconds']:.0f} s |")
    lines += [
        "",
        f"**Prompt mutants** (`agentassay mutate --operators prompt`, at most {m['trials_cap']} trials per scenario, "
        f"{m['trials']} trials in {m['seconds'] / 60:.1f} minutes, load {_fmt_load(m['load_average'])}):",
        "",
        "| mutant | diff | status | trials |",
        "|---|---|---|---|",
    ]
    for mu in m["mutants"]:
        lines.append(f"| `{mu['id']}` | {mu['diff'].replace('|', '/')} | {mu['status'].replace('_', ' ')} | "
                     f"{mu['trials']} |")
    sc = m["score"]
    score = (f"{sc['killed']}/{sc['activated']} killed" + (f", score {sc['score']:.2f}" if "score" in sc else "")
             if sc["activated"] else "no activated mutant")
    lines += [
        "",
        f"Mutation score: {score} ({sc['mutants']} mutants). On the offline simulator every prompt mutant is "
        "reported *not activated* without running; here each ran and was classified from its trials.",
        "",
        f"The normaliser saw {r['normaliser']['requests']} chat completions and rewrote "
        f"{r['normaliser']['rewritten']} (the suite has no tools, so none was expected).",
        "",
    ]
    d = r.get("aa_defaults")
    if d:
        lo, hi = d["deploy_interval"]
        g2 = d["regression"]
        lines += [
            f"**A/A at the shipped defaults** (issue 21; measured {d.get('date', r['date'])} by "
            f"`python benchmarks/real_model.py --defaults-reps {d['reps']}`): the `capital` scenario alone, "
            f"nothing in `config` but the concurrency and seed, so each baseline recorded {d['baseline_trials']} "
            f"trials and each check ran at most {d['cap']} (sequential, a look every 10 trials, PASS at alpha, "
            f"fingerprints on); load {_fmt_load(d['load_average'])}.",
            "",
            "| repetitions | DEPLOY | BLOCK | MANUAL | DEPLOY rate | exact 95 % interval | BLOCK: exact one-sided 95 % upper limit | mean check trials |",
            "|---|---|---|---|---|---|---|---|",
            f"| {d['reps']} | {d['deploys']} | {d['blocks']} | {d['reps'] - d['deploys'] - d['blocks']} | "
            f"{d['deploy_rate']:.2f} | {lo:.2f}–{hi:.2f} | {d['block_upper_limit']:.3f} | {d['check_trials_mean']:.1f} |",
            "",
            f"Baseline pass rate {d['baseline_pass_rate']:.3f} over all repetitions; the runs and checks took "
            f"{d['seconds'] / 60:.1f} minutes. The prompt regression (the DONE rule removed) checked against the "
            f"first baseline: **{g2['decision'].upper()}** after {g2['trials']} trials "
            f"(`capital` {g2['scenarios']['capital']['verdict'].upper()} {g2['scenarios']['capital']['passes']}/"
            f"{g2['scenarios']['capital']['trials']}), {g2['seconds']:.0f} s.",
            "",
        ]
    lines += [END]
    return "\n".join(lines)


def splice(block: str, text: str | None) -> str:
    """``text`` with its generated section replaced by ``block`` (appended, or a new doc, if none)."""
    if text is None:
        return f"# A real local model\n\n{block}\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def page(result: dict[str, Any]) -> Callable[[str | None], str]:
    """The figures of docs/real-model.md, spliced into the page."""
    return lambda text: splice(markdown(result), text)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = parser(__doc__)
    ap.add_argument("--reps", type=int, default=None, help="A/A repetitions (default 25; --quick 2)")
    ap.add_argument("--trials", type=int, default=None, help="trials per scenario, the cap (default 30; --quick 10)")
    ap.add_argument("--regressions", type=int, default=3, help="regression checks (against the first baselines)")
    ap.add_argument("--defaults-reps", type=int, default=None,
                    help="only part 4, the A/A at the shipped defaults, R repetitions; merged into the JSON")
    args = ap.parse_args(argv)
    if args.defaults_reps:
        timer = Timer()
        part = measure_defaults(args.defaults_reps)
        part |= {"date": today(), "seconds_total": round(timer.seconds, 1)}
        result = load_result(args, "real-model")
        result["aa_defaults"] = part
        write_report(args, "real-model", result, page, seconds=timer.seconds)
        print(f"A/A at the defaults: DEPLOY {part['deploys']}/{part['reps']} (95 % {part['deploy_interval'][0]:.2f}–"
              f"{part['deploy_interval'][1]:.2f}); regression {part['regression']['decision'].upper()}")
        return result
    if args.render:
        result = load_result(args, "real-model")
        write_report(args, "real-model", result, page)
        return result
    reps = args.reps or (2 if args.quick else 25)
    trials = args.trials or (10 if args.quick else 30)
    timer = Timer()
    load_start = real_model.load_average()
    measured = measure(args.quick, reps, trials, args.regressions)
    result = run_info(
        args.quick, date=today(), model=real_model.MODEL_FILE, model_sha256=real_model.MODEL_SHA256,
        server=f"xllamacpp {real_model.SERVER_DIST[1]}", threads=real_model.default_threads(), alpha=ALPHA, seed=SEED,
        load_average_start=load_start, **measured, load_average_end=real_model.load_average(),
        seconds=round(timer.seconds, 1),
    )
    a = result["aa"]
    print(f"A/A: {a['fails']}/{a['reps']} FAIL, rate {a['fail_rate']:.3f} ± {a['se']:.3f} (bound {a['bound']:.3f}); "
          f"regression detected {result['regression']['detected']}/{len(result['regression']['checks'])}")
    write_report(args, "real-model", result, page, seconds=result["seconds"])
    return result


if __name__ == "__main__":
    main()
