"""Render the coverage diagrams with the real Mermaid (mermaid-cli in Chromium, via .ci/mermaid.sh).

Writes the Mermaid of the test fixtures (tests/reports/test_coverage_report.py) to .mmd files:
  - customer_service: witnessed, unwitnessed and unreachable nodes, an elicited restricted call,
    handoff / as_tool / call delegations, a coordinator, a hosted tool;
  - hostile: ids and names with quotes, brackets, <script>, backticks, '#', ';', '-->', Mermaid
    directives, newlines, bidirectional overrides and other unicode;
  - big: 300 nodes and Mermaid's edge limit reached (the cut-down path).
First it checks that the renderer does fail: a deliberately broken diagram must make mermaid.sh
exit non-zero. Then every fixture must render, and the SVGs must show the hostile labels as text
(no <script> element, no injected link, the label text decoded back to the name).

    python3 .ci/mermaid_check.py [OUT_DIR]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from agentassay._features.coverage._report import mermaid_flowchart  # noqa: E402
from tests.reports.test_coverage_report import big_graph, customer_service, hostile  # noqa: E402

MERMAID_SH = ROOT / ".ci" / "mermaid.sh"
BROKEN = 'flowchart LR\n  n0(["a"] --> n1[["b"\n'


def render(*files: Path) -> tuple[int, float]:
    start = time.perf_counter()
    code = subprocess.run(["bash", str(MERMAID_SH), *map(str, files)], check=False).returncode
    return code, time.perf_counter() - start


def svg_text(svg: Path) -> tuple[str, list[str]]:
    """All text of the picture, and the tags of every element in it."""
    tree = ElementTree.parse(svg)
    tags = [el.tag.rsplit("}", 1)[-1].lower() for el in tree.iter()]
    text = " ".join(el.text for el in tree.iter() if el.text and el.tag.rsplit("}", 1)[-1] != "style")
    return text, tags


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="mermaid-check-"))
    out.mkdir(parents=True, exist_ok=True)

    broken = out / "broken.mmd"
    broken.write_text(BROKEN, encoding="utf-8")
    code, took = render(broken)
    if code == 0:
        print("mermaid_check: FAILED: a broken diagram rendered without an error; the check would prove nothing")
        return 1
    print(f"mermaid_check: the broken diagram was refused, as it must be ({took:.1f} s)")

    files = []
    for name, structural in (("customer_service", customer_service()), ("hostile", hostile()), ("big", big_graph())):
        path = out / f"{name}.mmd"
        path.write_text(mermaid_flowchart(structural), encoding="utf-8")
        files.append(path)
    code, took = render(*files)
    if code != 0:
        print("mermaid_check: FAILED: mermaid-cli could not render a coverage diagram (see above)")
        return 1

    text, tags = svg_text(out / "hostile.svg")
    problems = [f"a <{t}> element" for t in ("script", "a", "iframe", "img") if t in tags]
    for shown in ('Evil "Agent"] --> x[pwn agent0', "<script>alert(1)</script> <img src=x on…",
                  "ünïcødé ✓ 名前 evil zerowidth agent6", "a#quot;b #lt;c#gt; #35; 100%; $$x^2$$ *…"):
        if shown not in text:
            problems.append(f"label {shown!r} not shown as written")
    if re.search(r"#(?!35;)(\d+|amp);", text):  # the names have "#quot;", "#lt;", "#gt;", "#35;" of their own
        problems.append("an entity code of ours shown undecoded")
    cs_text, _ = svg_text(out / "customer_service.svg")
    problems += [f"label {x!r} missing" for x in ("Triage Agent", "web_search (hosted)", "as tool", "restricted call") if x not in cs_text]
    if problems:
        print("mermaid_check: FAILED: " + "; ".join(problems))
        return 1
    print(f"mermaid_check: {len(files)} coverage diagrams rendered ({took:.1f} s), hostile labels inert; SVGs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
