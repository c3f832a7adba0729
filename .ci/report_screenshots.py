"""Screenshots of the PR comment (as GitHub renders its Markdown) and the HTML report's baseline beside candidate.

    python .ci/report_screenshots.py [WORK_DIR]

Runs the offline demo (``agentassay demo``: a baseline of v1, a check of the regressed v2, one trace store),
renders its PR comment to HTML with cmarkgfm (GitHub's own cmark fork, in the test extra) inside
GitHub-like CSS, and takes both pictures with headless Chromium (Debian's /usr/bin/chromium, the one
.ci/html_check.py uses; its command-line ``--screenshot``, so nothing else is needed; the status icons need an
emoji font, e.g. Debian's fonts-noto-color-emoji). Writes
docs/img/pr-comment.png and docs/img/report-side-by-side.png. No network: every page is a file:// URL
and the report allows nothing to load.
"""

from __future__ import annotations

import html
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SHOTS = ROOT / "docs" / "img"
# A stand-in for the Action's links: the comment links the workflow run and its artifacts (report.html).
RUN_URL = "https://github.com/octo/support-bot/actions/runs/1234567890"

# Enough of GitHub's Markdown styling (github-markdown-css, light) that the picture reads as the comment.
GITHUB_CSS = """
body{margin:0;background:#fff;font:14px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;color:#1f2328}
.comment{max-width:920px;margin:16px auto;border:1px solid #d0d7de;border-radius:6px}
.comment .head{background:#f6f8fa;border-bottom:1px solid #d0d7de;padding:8px 16px;color:#59636e;border-radius:6px 6px 0 0}
.comment .head b{color:#1f2328}
.markdown-body{padding:16px}
.markdown-body h3{font-size:1.25em;font-weight:600;margin:0 0 16px}
.markdown-body p,.markdown-body ul,.markdown-body table,.markdown-body details,.markdown-body blockquote{margin:0 0 16px}
.markdown-body table{border-collapse:collapse;display:block;overflow:auto;width:max-content;max-width:100%}
.markdown-body th,.markdown-body td{border:1px solid #d0d7de;padding:6px 13px}
.markdown-body th{font-weight:600}
.markdown-body tr:nth-child(2n){background:#f6f8fa}
.markdown-body code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:85%;background:rgba(175,184,193,.2);border-radius:6px;padding:.2em .4em}
.markdown-body pre{background:#f6f8fa;border-radius:6px;padding:16px;overflow:auto;font-size:85%}
.markdown-body a{color:#0969da;text-decoration:none}
.markdown-body blockquote{color:#59636e;border-left:.25em solid #d0d7de;padding:0 1em}
.markdown-body summary{cursor:pointer}
"""


def run_demo(work: Path) -> None:
    """The demo's files: baseline.json, candidate.json, traces.db and its report.html (baseline beside candidate)."""
    done = subprocess.run(
        [sys.executable, "-m", "agentassay", "demo", "--workdir", str(work), "-q"],
        cwd=ROOT, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    if not (work / "report.html").is_file():
        raise SystemExit(f"the demo wrote no report (exit {done.returncode}): {done.stderr[-2000:]}")


def comment_page(work: Path) -> Path:
    """The comment the Action would post for the demo's check, rendered as GitHub renders Markdown."""
    # here, not at the top: the script's own imports come after sys.path has the checkout
    import cmarkgfm
    from cmarkgfm.cmark import Options

    from agentassay._reports import render_pr_comment
    from agentassay._results import load_results

    markdown = render_pr_comment(
        load_results(work / "candidate.json"), run_url=RUN_URL, report_url=f"{RUN_URL}#artifacts",
        baseline_info="artifact `agentassay-baseline` of `main` at 3f2a9c1d0b7e, recorded 2026-11-26T22:14:03Z",
    )
    (work / "comment.md").write_text(markdown, encoding="utf-8")
    # UNSAFE keeps our own <details>/<summary> (GitHub allows them); every untrusted text in the comment is
    # escaped by the renderer, so nothing else can be HTML.
    body = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    page = work / "comment.html"
    page.write_text(
        "<!doctype html><meta charset=utf-8><title>PR comment</title>"
        f"<style>{GITHUB_CSS}</style><div class=comment><div class=head><b>github-actions</b> "
        f"<span>bot</span> commented</div><div class=markdown-body>{body}</div></div>",
        encoding="utf-8",
    )
    return page


def side_page(work: Path) -> Path:
    """The demo's report cut to its first scenario's details (the failing one: they come first), whose
    baseline-beside-candidate block is the picture; the page's head (style and policy) is kept as it is."""
    text = (work / "report.html").read_text(encoding="utf-8")
    if '<div class="compare">' not in text:
        raise SystemExit("the demo's report has no baseline-beside-candidate block")
    head, rest = text.split("<main>", 1)
    first = rest.index('<section id="details">')
    second = rest.index('<details class="scenario"', rest.index('<details class="scenario"', first) + 1)
    page = work / "report-shot.html"
    page.write_text(f"{head}<main>{rest[first:second]}</section></main></body></html>", encoding="utf-8")
    return page


def shoot(url: str, out: Path, size: tuple[int, int]) -> None:
    if not os.access(CHROMIUM, os.X_OK):
        raise SystemExit(f"{CHROMIUM} not found: install Chromium (apt-get install chromium) or set CHROMIUM")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}", f"--screenshot={out}", url],
            check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
        )
    if done.returncode != 0 or not out.is_file():
        raise SystemExit(f"Chromium made no screenshot of {html.escape(url)}: {done.stderr[-2000:]}")
    print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size:,} bytes)")


def main() -> int:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="report-shots-"))
    work.mkdir(parents=True, exist_ok=True)
    run_demo(work)
    shoot(comment_page(work).as_uri(), SHOTS / "pr-comment.png", (960, 820))
    shoot(side_page(work).as_uri(), SHOTS / "report-side-by-side.png", (1240, 1000))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
