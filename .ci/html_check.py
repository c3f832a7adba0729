"""Open the HTML report in a real browser (Debian's Chromium, headless, through Python Playwright).

Renders, from files as a user would get them:
  - the demo's check of v2 (`agentassay demo --workdir DIR`: candidate.json with the traces in
    traces.db), and the report the demo wrote itself;
  - a results file and trace store full of hostile text (<script>, <img onerror>, javascript: links,
    quotes, bidirectional overrides) in scenario names, inputs, failure reasons, notes, tool
    arguments, outputs and errors, once inline and once with the trace viewer in its sidecar page;
then opens each page from a file:// URL and asserts on the live DOM: the decision, one table row per
scenario, the SVG charts, <details> opening on a click, the page's own style applied (the CSP hash is
right), no script element, no event-handler attribute, no javascript: link, no image, no dialog, no
Content-Security-Policy violation and no request other than file://. The sidecar link is followed.
Screenshots go to docs/img/report-decision.png and docs/img/report-traces.png.

    python3 .ci/html_check.py [OUT_DIR]

Needs Python Playwright (pip install playwright; its own browser download is never used) and
/usr/bin/chromium, which this script installs with apt-get when it is missing, as .ci/mermaid.sh does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
SHOTS = ROOT / "docs" / "img"
SHOT_LIMIT = 500_000
HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(1)><a href="javascript:alert(1)">x</a>'
HOSTILE_NAME = 'evil "name" \u202egnp.exe <img src=x onerror=alert(2)>'
SECRET = "sk-html-check-0123456789abcdef"


class CheckFailed(Exception):
    pass


def log(message: str) -> None:
    print(f"html_check: {message}", flush=True)


def ensure_chromium() -> None:
    """Debian's Chromium, installed the way .ci/mermaid.sh installs it when it is missing."""
    if os.access(CHROMIUM, os.X_OK):
        return
    log("apt-get install chromium")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]):
        if subprocess.run(cmd, env=env, check=False, stdout=subprocess.DEVNULL).returncode != 0:
            raise CheckFailed(f"could not install Chromium ({' '.join(cmd)} failed); install it and run again")
    if not os.access(CHROMIUM, os.X_OK):
        raise CheckFailed(f"{CHROMIUM} is still missing after apt-get install chromium")


# -- the pages ------------------------------------------------------------------------------------------


def demo_pages(out: Path) -> list[dict[str, Any]]:
    """The demo's results, rendered here from its files, and the report the demo wrote itself."""
    from agentassay._reports import load_traces, render_html
    from agentassay._results import load_results

    work = out / "demo"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "agentassay", "demo", "--workdir", str(work), "-q"], cwd=ROOT,
                          check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    missing = [n for n in ("baseline.json", "candidate.json", "traces.db", "report.html", "junit.xml")
               if not (work / n).is_file()]
    if proc.returncode != 0 or missing:
        raise CheckFailed(
            f"`agentassay demo` exited {proc.returncode}" + (f" without writing {', '.join(missing)}" if missing else "")
            + f":\n{proc.stderr[-2000:]}"
        )
    log(f"demo recorded in {time.perf_counter() - start:.1f} s")
    cand = load_results(work / "candidate.json")
    traces = load_traces(work / "traces.db", cand)
    report = render_html(cand, traces=traces)
    if report.sidecar is not None:
        raise CheckFailed("the demo's traces went to a sidecar page; they should fit in the page")
    size = len(report.html.encode("utf-8"))
    if size >= 1_000_000:
        raise CheckFailed(f"the demo's report is {size:,} bytes, over the 1 MB it must stay under")
    page = out / "demo-check.html"
    page.write_text(report.html, encoding="utf-8")
    log(f"demo report: {size:,} bytes, {sum(len(t) for t in traces.values())} trials inline")
    pages = [{"path": page, "decision": cand.decision.decision.value.upper(), "rows": len(cand.scenarios),
              "trials": sum(len(t) for t in traces.values()), "shot": True}]
    written = work / "report.html"  # the demo's own report, beside its results
    pages.append({"path": written, "decision": cand.decision.decision.value.upper(), "rows": len(cand.scenarios),
                  "trials": None})
    return pages


def hostile_pages(out: Path) -> list[dict[str, Any]]:
    """A results file and a trace store full of hostile text, read back from disk and rendered twice:
    with the traces inline, and with the trace viewer in its sidecar page."""
    from agentassay._gate import BaselineCounts, ScenarioVerdict, SuiteDecision
    from agentassay._reports import load_traces, render_html
    from agentassay._results import Results, ScenarioResult, TrialOutcome, load_results
    from agentassay._spec import Settings
    from agentassay._stats import Decision, Verdict
    from agentassay._traces import Action, Cost, Step, Trace, TraceMetadata, TraceStore

    def scenario(name: str, passes: int, n: int, verdict: Verdict) -> ScenarioResult:
        trials = tuple(TrialOutcome(i, i < passes, i, failures=() if i < passes else (f"{HOSTILE} {SECRET}",),
                                    input_tokens=90, output_tokens=30, latency_s=0.2, usd=1e-4) for i in range(n))
        fp = {"verdict": "fail", "alpha": 0.05, "adjusted_p": 0.002, "n_baseline": 30, "n_candidate": n,
              "shift": [HOSTILE], "largest": HOSTILE, "explanation": HOSTILE,
              "features": [{"name": HOSTILE, "baseline": 0.2, "candidate": 0.8, "adjusted_p": 0.002}]}
        v = ScenarioVerdict(verdict, "sequential-regression", HOSTILE, {}, n, notes=(HOSTILE,),
                            data={"fingerprint": fp} if verdict is Verdict.FAIL else {})
        return ScenarioResult(name, f"{HOSTILE} {SECRET}", trials, v, BaselineCounts(29, 30), fixed_n=80)

    scenarios = (scenario(HOSTILE_NAME, 3, 8, Verdict.FAIL), scenario("calm", 8, 8, Verdict.PASS))
    results = Results(
        "check", {"name": HOSTILE}, {"entry": HOSTILE, "version": "evil@1"}, Settings(), scenarios,
        SuiteDecision(Verdict.FAIL, Decision.BLOCK, {"pass": 1, "fail": 1, "inconclusive": 0}, "holm"),
        "hostile-run", "t0", "t1", notes=(HOSTILE,),
    )
    results.save(out / "hostile.json")
    for stale in ("hostile.db", "hostile.db-wal", "hostile.db-shm"):  # from an earlier check into the same folder
        (out / stale).unlink(missing_ok=True)
    with TraceStore(out / "hostile.db") as store:
        for s in scenarios:
            for t in s.trials:
                steps = (
                    Step(Action.HANDOFF, agent=HOSTILE, target=HOSTILE_NAME),
                    Step(Action.CALL_TOOL, agent=HOSTILE_NAME, tool=HOSTILE, arguments={"q": HOSTILE, HOSTILE: SECRET},
                         output=HOSTILE, error=HOSTILE),
                    Step(Action.RESPOND, agent=HOSTILE_NAME, output=f"{HOSTILE} {SECRET}"),
                )
                trace = Trace(steps, f"{HOSTILE} {SECRET}", Cost(90, 30, 0.2, 1e-4),
                              TraceMetadata(s.name, t.index, t.seed, "evil@1", HOSTILE), error=None if t.passed else HOSTILE)
                store.add(trace, run_id="hostile-run", suite=HOSTILE, scenario=s.name, agent_version="evil@1",
                          trial=t.index, passed=t.passed)
    loaded = load_results(out / "hostile.json")
    traces = load_traces(out / "hostile.db", loaded)
    inline = render_html(loaded, traces=traces, secrets=[SECRET])
    split = render_html(loaded, traces=traces, secrets=[SECRET], sidecar_href="hostile-traces.html", inline_limit=0)
    if inline.sidecar is not None or split.sidecar is None:
        raise CheckFailed("the hostile report's sidecar came out wrong (expected: inline once, a sidecar once)")
    for text in (inline.html, split.html, split.sidecar):
        if SECRET in text:
            raise CheckFailed("a secret was not redacted from the hostile report")
    (out / "hostile.html").write_text(inline.html, encoding="utf-8")
    (out / "hostile-split.html").write_text(split.html, encoding="utf-8")
    (out / "hostile-traces.html").write_text(split.sidecar, encoding="utf-8")
    common = {"decision": "BLOCK", "rows": 2, "hostile": True}
    return [{"path": out / "hostile.html", "trials": 16, **common},
            {"path": out / "hostile-split.html", "trials": None, "sidecar": "hostile-traces.html", **common}]


# -- the browser ----------------------------------------------------------------------------------------

WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + (e.blockedURI || '')));
"""

DOM_FACTS = """
() => {
  const all = [...document.querySelectorAll('*')];
  const handlers = all.flatMap(el => [...el.attributes].filter(a => a.name.toLowerCase().startsWith('on'))
                                                       .map(a => el.tagName + ' ' + a.name));
  const urls = all.flatMap(el => [...el.attributes].filter(a => /^\\s*javascript:/i.test(a.value))
                                                   .map(a => el.tagName + ' ' + a.name));
  const header = document.querySelector('header.decision');
  return {
    scripts: document.scripts.length,
    handlers, urls,
    jsLinks: document.querySelectorAll('a[href^="javascript:" i]').length,
    links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
    images: document.querySelectorAll('img, image, iframe, object, embed').length,
    styleAttrs: document.querySelectorAll('[style]').length,
    word: header ? header.querySelector('.word').textContent : null,
    headerRadius: header ? getComputedStyle(header).borderTopLeftRadius : null,
    rows: document.querySelectorAll('#scenarios tbody tr').length,
    svgs: document.querySelectorAll('svg').length,
    trials: document.querySelectorAll('details.group details.trial').length,  // the viewer's, not the side-by-side's
    text: document.body.innerText,
    violations: window.__violations || [],
  };
}
"""


def check_page(browser: Any, spec: dict[str, Any], problems: list[str]) -> None:
    path: Path = spec["path"]
    name = path.name
    context = browser.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1,
                                  java_script_enabled=True)  # our own probes need it; the page has no script
    context.add_init_script(WATCH)
    page = context.new_page()
    requests: list[str] = []
    consoles: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: consoles.append(f"{m.type}: {m.text}"))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri(), wait_until="load")
    facts = page.evaluate(DOM_FACTS)

    def need(ok: bool, what: str) -> None:
        if not ok:
            problems.append(f"{name}: {what}")

    need(facts["word"] == spec["decision"], f"decision {facts['word']!r}, expected {spec['decision']!r}")
    need(facts["rows"] == spec["rows"], f"{facts['rows']} table rows, expected one per scenario ({spec['rows']})")
    need(facts["svgs"] > 0, "no <svg> chart")
    need(facts["scripts"] == 0, f"document.scripts.length is {facts['scripts']}")
    need(not facts["handlers"], f"event-handler attributes: {facts['handlers'][:5]}")
    need(not facts["urls"] and facts["jsLinks"] == 0, f"javascript: URLs: {facts['urls'][:5]}")
    need(facts["images"] == 0, "an image, frame or embedded object")
    need(facts["styleAttrs"] == 0, "a style attribute (the CSP admits the hashed <style> block only)")
    need(facts["headerRadius"] == "10px", f"the page's style is not applied (CSP hash?): border radius {facts['headerRadius']!r}")
    need(all(h == spec.get("sidecar") for h in facts["links"]), f"unexpected links {facts['links']}")
    if spec.get("trials") is not None:
        need(facts["trials"] == spec["trials"], f"{facts['trials']} trials in the viewer, expected {spec['trials']}")
    if spec.get("hostile"):
        need(HOSTILE in facts["text"], "the hostile text is not shown as text")
        need(SECRET not in facts["text"], "a secret is shown")

    if facts["trials"]:  # a click on a closed trial opens it (its group is opened first when closed)
        trial = page.locator("details.group details.trial").first
        group = page.locator("details.group").first
        if not group.evaluate("d => d.open"):
            group.locator("summary").first.click()
        trial.locator("summary").first.click()
        need(trial.evaluate("d => d.open") is True, "clicking a trial's <summary> did not open its <details>")
        if spec.get("shot"):
            shoot_traces(page, problems)
    if spec.get("shot"):
        page.evaluate("window.scrollTo(0, 0)")
        shoot(page, SHOTS / "report-decision.png", problems)
    if spec.get("sidecar"):
        with page.expect_navigation():
            page.locator("a.sidecar").click()
        need(page.url.endswith("/" + spec["sidecar"]), f"the sidecar link led to {page.url}")
        side = page.evaluate(DOM_FACTS)
        need(side["scripts"] == 0 and not side["handlers"] and not side["urls"], "the sidecar has script or handlers")
        need(side["trials"] > 0, "the sidecar has no trial")
        need(side["headerRadius"] == "10px", "the sidecar's style is not applied (CSP hash?)")
        if spec.get("hostile"):
            need(HOSTILE in side["text"] and SECRET not in side["text"], "the sidecar's hostile text is wrong")
        trial = page.locator("details.group details.trial").first
        if not page.locator("details.group").first.evaluate("d => d.open"):
            page.locator("details.group > summary").first.click()
        trial.locator("summary").first.click()
        need(trial.evaluate("d => d.open") is True, "clicking a sidecar trial's <summary> did not open it")
        facts["violations"] += page.evaluate("window.__violations || []")

    offsite = [u for u in requests if not u.startswith("file://")]
    need(not offsite, f"requests that left the page: {offsite[:5]}")
    need(not facts["violations"], f"Content-Security-Policy violations: {facts['violations'][:5]}")
    refused = [c for c in consoles if "Content Security Policy" in c or "Refused to" in c]
    need(not refused, f"console: {refused[:3]}")
    need(not dialogs, f"a dialog opened: {dialogs}")
    log(f"{name}: {facts['rows']} rows, {facts['svgs']} SVG charts, {facts['trials']} trials, "
        f"{len(requests)} request(s), all file://" + (", sidecar followed" if spec.get("sidecar") else ""))
    context.close()


def shoot(page: Any, path: Path, problems: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    size = path.stat().st_size
    if size >= SHOT_LIMIT:
        problems.append(f"{path.name} is {size:,} bytes, over {SHOT_LIMIT:,}")
    log(f"screenshot {path.relative_to(ROOT)} ({size:,} bytes)")


def shoot_traces(page: Any, problems: list[str]) -> None:
    """The trace viewer with the first failing trial open, the "Traces" heading at the top."""
    page.locator("#traces").evaluate("d => d.scrollIntoView()")
    shoot(page, SHOTS / "report-traces.png", problems)


# Injected into a copy of a report: each must be caught, or the check proves nothing.
CONTROL = ('<script>alert(1)</script><img src="http://127.0.0.1:9/pixel.png" onerror="alert(1)">'
           '<a href="javascript:alert(1)">x</a><p style="color:red">styled</p>')


def control(browser: Any, spec: dict[str, Any], out: Path) -> None:
    """A copy of a good page with a script, an image that calls out, an event handler, a javascript:
    link and a style attribute put in unescaped: the check must find each of them."""
    bad = out / "control.html"
    bad.write_text(spec["path"].read_text(encoding="utf-8").replace("<main>", "<main>" + CONTROL, 1), encoding="utf-8")
    found: list[str] = []
    check_page(browser, {**spec, "path": bad, "shot": False}, found)
    expected = ("document.scripts.length", "event-handler attributes", "javascript: URLs", "an image",
                "a style attribute", "Content-Security-Policy violations")
    missed = [e for e in expected if not any(e in f for f in found)]
    if missed:
        raise CheckFailed(f"the control page with injected markup was not caught for: {', '.join(missed)}; "
                          "the check would prove nothing")
    log(f"the control page with an injected script, image, handler, link and style was refused ({len(found)} findings)")


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="html-check-"))
    out.mkdir(parents=True, exist_ok=True)
    try:
        ensure_chromium()
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            raise CheckFailed("Python Playwright is not installed: pip install playwright (no `playwright install`: "
                              f"the check uses {CHROMIUM})") from None
        pages = demo_pages(out) + hostile_pages(out)
        problems: list[str] = []
        start = time.perf_counter()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True, timeout=60_000)
            log(f"Chromium {browser.version} (headless, {CHROMIUM})")
            control(browser, pages[0], out)
            for spec in pages:
                check_page(browser, spec, problems)
            browser.close()
    except CheckFailed as exc:
        log(f"FAILED: {exc}")
        return 1
    if problems:
        log("FAILED:\n  " + "\n  ".join(problems))
        return 1
    log(f"{len(pages)} pages checked in Chromium ({time.perf_counter() - start:.1f} s): no script, no handler, no "
        f"request off the page, decisions and rows as expected; pages in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
