"""Issue 22, defect 10: small leaks into output.

* ``#12``, ``GH-12``, ``owner/repo#12`` and ``@user`` in a scenario name (or a note naming it) reached the
  PR comment, where GitHub links them: a cross-reference on issue 12's timeline, a notification to the user.
  They must read the same but link nothing (a zero-width space after ``#``, ``-`` of ``GH-`` and ``@``).
* Raw ESC sequences (and other control characters, bidirectional overrides) in a scenario name reached the
  terminal, where they can recolour, retitle or rewrite what the reader sees: the table and the progress
  lines show them escaped (``\\x1b``), never raw.
* The comment said "Baseline: baseline: artifact …".

The first two run the real CLI in a fresh interpreter; the third drives the Action against the fake
GitHub server (tests/_support/github.py's harness).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from tests._support.fakegithub import FakeGitHub  # noqa: E402
from tests._support.github import PR, REPO, REPO_ID, Workspace  # noqa: E402

ZWSP = "\u200b"

AGENT = """\
def agent(text, seed=0):
    return "no" if "refund" in text else "ok"
"""

# (scenario name as YAML double-quoted text, what it must not show raw in the comment)
NAMES = [
    ("refund #12", "#12"),
    ("refund GH-12", "GH-12"),
    ("refund gh-12 lower case", "gh-12"),
    ("refund octo/app#12", "octo/app#12"),
    ("refund @octocat", "@octocat"),
    ("refund @octo-org/team", "@octo-org/team"),
]
ESCAPES = [  # (YAML escape in the name, the raw character, how the terminal must show it)
    ("\\e[31mRED\\e[0m", "\x1b", "\\x1b[31mRED\\x1b[0m"),
    ("\\e]0;pwned\\a", "\x07", "\\x1b]0;pwned\\x07"),
    ("\\u202Eevil", "\u202e", "\\u202eevil"),
    ("\\x9b31m", "\x9b", "\\x9b31m"),
    ("two\\nlines", "\n", "two\\nlines"),
]


def _suite(names: list[str]) -> str:
    lines = ["name: leaks", "agent: leaky:agent", "config:", "  trials: 10", "  method: fixed", "scenarios:"]
    for name in names:
        lines += [f'  - name: "{name}"', '    input: "I want a refund"', "    evaluator: {contains: ok}"]
    return "\n".join(lines) + "\n"


def _cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentassay", *args], cwd=tmp, capture_output=True, text=True, timeout=300,
        encoding="utf-8", errors="surrogateescape",
    )


@pytest.fixture(scope="module")
def leaky_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("leaks")
    (tmp / "leaky.py").write_text(AGENT)
    (tmp / "s.yml").write_text(_suite([n for n, _ in NAMES] + [f"esc {e}" for e, _, _ in ESCAPES]))
    done = _cli(tmp, "run", "s.yml", "--no-store", "-o", "results.json")
    return tmp, done


@pytest.mark.parametrize(("name", "raw"), NAMES, ids=[n for n, _ in NAMES])
def test_references_and_mentions_in_names_link_nothing_in_the_comment(
    leaky_run: tuple[Path, subprocess.CompletedProcess[str]], name: str, raw: str
) -> None:
    tmp, done = leaky_run
    assert done.returncode == 1, done.stderr  # every scenario fails: the names reach the table and the details
    assert "Traceback" not in done.stdout + done.stderr
    assert len(json.loads((tmp / "results.json").read_text())["scenarios"]) == len(NAMES) + len(ESCAPES)
    md_file = tmp / "pr.md"
    if not md_file.exists():
        report = _cli(tmp, "report", "results.json", "--markdown", "pr.md")
        assert report.returncode == 1, report.stderr  # the file's decision (BLOCK), as `compare` exits
    md = md_file.read_text(encoding="utf-8")
    assert re.search(re.escape(raw) + r"(?![\w-])", md, re.IGNORECASE) is None, f"{raw!r} is linkable in the comment"
    shown = md.replace(ZWSP, "").replace("\\", "")
    assert name in shown  # it still reads as written


@pytest.mark.parametrize(("escape", "char", "shown"), ESCAPES, ids=[e for e, _, _ in ESCAPES])
def test_control_characters_in_names_are_shown_escaped_on_the_terminal(
    leaky_run: tuple[Path, subprocess.CompletedProcess[str]], escape: str, char: str, shown: str
) -> None:
    _tmp, done = leaky_run
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    text = out.replace("\n", "") if char == "\n" else out
    assert char not in text, f"raw {char!r} reached the terminal"
    assert shown in done.stdout  # the table names the scenario, visibly escaped
    assert shown in done.stderr  # and so do the progress lines


# -- "Baseline: baseline: …" --------------------------------------------------------------------------------


def test_the_comment_names_the_baseline_once(tmp_path: Path, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    ws = Workspace(root, gh)
    code, _ = ws.run("push")
    assert code == 0
    gh.add_artifact(REPO, "agentassay-baseline", ws.baseline_zip(), head_branch="main", head_repository_id=REPO_ID,
                    head_sha="basesha", created_at="2026-11-20T10:00:00Z")
    code, _ = ws.run()
    assert code == 0
    [comment] = gh.comments(REPO, PR)
    assert "Baseline: artifact" in comment["body"]
    assert re.search(r"baseline:\s*baseline", comment["body"], re.IGNORECASE) is None
    assert re.search(r"baseline:\s*baseline", ws.summary, re.IGNORECASE) is None
    (root / "base.json").write_bytes((root / "agentassay-results" / "results.json").read_bytes())
    code, _ = ws.run(baseline_file="base.json", results_path="again")
    assert code == 0
    [comment] = gh.comments(REPO, PR)
    assert "Baseline: file" in comment["body"] and "base.json" in comment["body"]
    assert re.search(r"baseline:\s*baseline", comment["body"], re.IGNORECASE) is None
