"""`agentassay report` and `run`/`check --html/--junit`: the files, and exit 3 for a file that is not results."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentassay._integrations.cli import main
from agentassay._reports import MARKER

SUITE = """\
name: report-suite
agent: tests._support.fixture_agents:{agent}
config:
  trials: 20
  method: fixed
  concurrency: 4
  seed: 1
scenarios:
  - name: greet
    input: "hello"
    evaluator:
      - contains: ok
  - name: refund
    input: "I want a refund"
    evaluator:
      - contains: ok
"""


@pytest.fixture
def run_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[3]))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agentassay.yml").write_text(SUITE.format(agent="coin"))
    return tmp_path


def test_run_writes_html_and_junit_beside_the_results(run_files: Path) -> None:
    code = main(["run", "agentassay.yml", "-o", "r.json", "--store", "t.db", "-q", "--html", "r.html", "--junit", "j.xml"])
    assert code in (0, 1, 2)
    html = (run_files / "r.html").read_text()
    assert "report-suite" in html and html.count("<tr") >= 3 and "Content-Security-Policy" in html
    cases = [tc.attrib["name"] for tc in ET.parse(run_files / "j.xml").getroot().iter("testcase")]
    assert cases == ["greet", "refund"]


def test_report_renders_html_junit_and_the_pr_comment(run_files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ran = main(["run", "agentassay.yml", "-o", "r.json", "--store", "t.db", "-q"])
    assert ran in (0, 1, 2)
    capsys.readouterr()
    code = main(["report", "r.json", "--html", "out/r.html", "--junit", "out/j.xml", "--markdown", "out/c.md", "--store", "t.db"])
    assert code == ran  # the file's decision, as `compare` exits
    out = capsys.readouterr().out
    assert all(f"wrote out/{name}" in out for name in ("r.html", "j.xml", "c.md"))
    comment = (run_files / "out" / "c.md").read_text()
    assert comment.splitlines()[0] == MARKER and "report-suite" in comment
    assert "trial" in (run_files / "out" / "r.html").read_text().lower()  # the trace viewer, from the store
    assert main(["report", "r.json"]) == ran and "decision:" in capsys.readouterr().out  # no option: the table


@pytest.mark.parametrize(
    ("content", "words"),
    [("not json at all", "not valid JSON"), (json.dumps({"hello": 1}), "field 'schema'"), (None, "no such results file")],
)
def test_a_file_that_is_not_results_is_exit_3_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, words: str
) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    assert main(["report", str(path), "--html", str(tmp_path / "x.html")]) == 3
    err = capsys.readouterr().err
    assert str(path) in err and words in err
    assert not (tmp_path / "x.html").exists()
