"""Acceptance flow on the offline customer-service example: run v1, check v2 and v1, compare; traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("agents")

from agentassay._integrations.cli import main
from agentassay._traces import Action, TraceStore

ROOT = Path(__file__).resolve().parents[2]
SUITE = str(ROOT / "examples" / "customer_service" / "agentassay.yml")


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def decision(path: Path) -> dict:
    return json.loads(path.read_text())


def test_run_check_compare_on_the_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, v2, v1 = tmp_path / "base.json", tmp_path / "v2.json", tmp_path / "v1.json"
    store = str(tmp_path / "t.db")
    assert main(["run", SUITE, "-o", str(base), "--store", store, "-q"]) == 0
    code = main(["check", SUITE, "--agent", "examples.customer_service.v2:triage_agent", "--baseline", str(base),
                 "-o", str(v2), "--store", store, "-q"])
    assert code == 1
    verdicts = {s["name"]: s["verdict"]["verdict"] for s in decision(v2)["scenarios"]}
    assert verdicts.pop("seat_change") == "fail"
    assert set(verdicts.values()) <= {"pass", "inconclusive"}
    code_v1 = main(["check", SUITE, "--baseline", str(base), "-o", str(v1), "--store", store, "-q"])
    assert code_v1 in (0, 2)
    capsys.readouterr()
    assert main(["compare", str(base), str(v2), "--json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert {s["name"]: s["verdict"]["verdict"] for s in replayed["scenarios"]} == {
        s["name"]: s["verdict"]["verdict"] for s in decision(v2)["scenarios"]
    }
    assert main(["compare", str(base), str(v1), "-q"]) == code_v1

    # Acceptance 4: every stored trace shows tokens; routed scenarios show handoffs and tool calls with arguments.
    with TraceStore(store) as s:
        rows = [r for v in s.versions() for r in s.query(v)]
    assert len(rows) == sum(len(json.loads(p.read_text())["scenarios"][i]["trials"]) for p in (base, v2, v1) for i in range(4))
    assert all(r.trace.cost.input_tokens > 0 and r.trace.cost.output_tokens > 0 for r in rows)
    seat = [r.trace for r in rows if r.scenario == "seat_change" and r.passed]
    assert seat and all(
        any(st.action is Action.HANDOFF and st.target == "Seat Booking Agent" for st in t.steps)
        and any(st.tool == "update_seat" and st.arguments.get("new_seat") == "14C" for st in t.steps if st.action is Action.CALL_TOOL)
        for t in seat
    )
    faq = [r.trace for r in rows if r.scenario == "baggage" and r.passed]
    assert faq and all(any(st.tool == "faq_lookup_tool" and st.arguments for st in t.steps) for t in faq)


def test_demo_catches_the_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "-q", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "seat_change   FAIL" in out and "decision: BLOCK" in out
    assert (tmp_path / "baseline.json").is_file() and (tmp_path / "traces.db").is_file()
    # ... and the candidate's reports beside them: the HTML page (traces inline, under 1 MB) and JUnit XML
    html = (tmp_path / "report.html").read_text()
    assert "BLOCK" in html and "seat_change" in html and len(html.encode()) < 1_000_000
    assert "seat_change" in (tmp_path / "junit.xml").read_text()
