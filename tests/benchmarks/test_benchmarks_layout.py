"""Benchmark data lives in benchmarks/results/, the published pages in docs/ are rendered from it (issue 23).

Every script writes ``benchmarks/results/<name>.json`` through ``benchmarks._harness.write_report``, and
its page (or its part of a shared page) from that JSON as read back; ``--render`` rewrites the page from
the committed data alone. Rendering each committed JSON must give the committed page byte for byte: that
proves the docs come from the data, and that no page was edited by hand where a script owns it.
"""

from __future__ import annotations

import importlib
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "benchmarks"
RESULTS = BENCH / "results"
DOCS = ROOT / "docs"

# script -> (its data, benchmarks/results/<name>.json; the docs page it renders, docs/<page>.md).
RENDERED = {
    "budget": ("budget", "budget"),
    "calibration": ("calibration", "calibration"),
    "contracts": ("contracts", "contracts"),
    "coverage": ("coverage-behavioural", "coverage-behavioural"),
    "decisiveness": ("decisiveness", "decisiveness"),
    "fingerprints": ("fingerprints", "fingerprints"),
    "frameworks": ("frameworks", "frameworks"),
    "gate": ("gate", "gate"),
    "importers": ("importers", "trace-first"),
    "judge": ("judge", "judge"),
    "metamorphic": ("metamorphic", "metamorphic"),
    "multifidelity": ("multifidelity", "multifidelity"),
    "mutation": ("mutation", "mutation"),
    "pytest_overhead": ("pytest-overhead", "pytest-overhead"),
    "real_model": ("real-model", "real-model"),
    "runner": ("performance", "performance"),
    "speed": ("speed", "performance"),
    "startup": ("startup", "startup"),
    "token_efficiency": ("token-efficiency", "token-efficiency"),
    "tracefirst": ("tracefirst", "trace-first"),
}
# Scripts whose data no page is generated from (docs/coverage.md quotes structure-speed.json by hand, docs/cli.md
# plan-calibration.json).
DATA_ONLY = {"plan_calibration": "plan-calibration", "structure": "structure-speed"}

SCRIPTS = sorted(p.stem for p in BENCH.glob("*.py") if not p.name.startswith("_"))


def test_no_benchmark_data_under_docs() -> None:
    assert sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.json")) == []


def test_every_script_writes_its_data_under_benchmarks_results() -> None:
    assert set(SCRIPTS) == set(RENDERED) | set(DATA_ONLY), "a new benchmark belongs in RENDERED or DATA_ONLY"
    names = {name for name, _ in RENDERED.values()} | set(DATA_ONLY.values())
    assert {p.stem for p in RESULTS.glob("*.json")} == names
    for script in SCRIPTS:
        text = (BENCH / f"{script}.py").read_text(encoding="utf-8")
        name = RENDERED[script][0] if script in RENDERED else DATA_ONLY[script]
        # The harness decides where files go: the data under --out, the page under --docs.
        assert f'write_report(args, "{name}"' in text, script
        assert "args.out /" not in text and "args.docs /" not in text, script


@pytest.fixture(scope="module")
def benchmarks_importable() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        yield
    finally:
        sys.path.remove(str(ROOT))


# ids with dashes: a test whose keywords include "real_model" would be skipped as needing the real LLM.
@pytest.mark.parametrize("script", sorted(RENDERED), ids=lambda s: s.replace("_", "-"))
def test_render_reproduces_the_committed_page(
    script: str, tmp_path: Path, benchmarks_importable: None, capsys: pytest.CaptureFixture[str]
) -> None:
    name, page = RENDERED[script]
    data, docs = tmp_path / "results", tmp_path / "docs"
    shutil.copytree(RESULTS, data)
    docs.mkdir()
    committed = (DOCS / f"{page}.md").read_bytes()
    (docs / f"{page}.md").write_bytes(committed)  # pages a script splices into keep their prose
    module = importlib.import_module(f"benchmarks.{script}")
    module.main(["--render", "--out", str(data), "--docs", str(docs)])
    assert (docs / f"{page}.md").read_bytes() == committed, f"docs/{page}.md is not rendered from {name}.json"
    assert (data / f"{name}.json").read_bytes() == (RESULTS / f"{name}.json").read_bytes()  # read, not written
    assert re.search(rf"wrote \S+{re.escape(page)}\.md from \S+{re.escape(name)}\.json", capsys.readouterr().out)
