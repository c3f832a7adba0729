"""Issue 25: a budget with zero configuration — the offline simulator ($0, said plainly), a hosted model the
price table knows (gpt-4.1-mini; no config.prices), and a model nothing prices (named, with the fix; exit 3).

The hosted model is served by the offline simulator's OpenAI-compatible server on 127.0.0.1, under the hosted
model's name: the trials are priced exactly as a real gpt-4.1-mini's would be, with no network.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("agents")
pytest.importorskip("genai_prices")

from agentassay._integrations.adapters._offline_server import OfflineServer
from agentassay._integrations.cli import main
from agentassay._runner._cost import usd_for
from examples.customer_service.v1 import OFFLINE_BEHAVIOUR

SCENARIOS = """\
scenarios:
  - name: seat_change
    input: "I'd like to change my seat to 14C. My confirmation number is ABC123."
    evaluator:
      - contains: "14C"
  - name: baggage
    input: "How much baggage can I bring?"
    properties:
      - must_call: faq_lookup_tool
"""


def suite(tmp_path: Path, model: str, trials: int = 12) -> Path:
    path = tmp_path / "agentassay.yml"
    path.write_text(
        f"name: budget-zero-config\nagent: examples.customer_service.v1:triage_agent\n{model}\n"
        f"config:\n  trials: {trials}\n  method: fixed\n  concurrency: 1\n  seed: 3\n{SCENARIOS}"
    )
    return path


@pytest.fixture
def server() -> Iterator[OfflineServer]:
    with OfflineServer(OFFLINE_BEHAVIOUR, seed_for=lambda trace_id: 0) as running:
        yield running


def hosted(server: OfflineServer, name: str) -> str:
    return (
        f"model:\n  provider: openai-compatible\n  name: {name}\n  base_url: {server.base_url}\n"
        "  api_key_env: AGENTASSAY_TEST_KEY"
    )


def test_offline_model_budget_works_unchanged_and_says_it_costs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.json"
    code = main(["run", str(suite(tmp_path, "model: {provider: offline}")), "--budget-usd", "5", "-q", "--no-store",
                 "-o", str(out)])
    assert code in (0, 1, 2), capsys.readouterr().err
    results = json.loads(out.read_text())
    assert results["settings"]["budget_usd"] == 5
    assert any("offline simulator" in n and "$0" in n for n in results["notes"]), results["notes"]
    assert all(len(s["trials"]) == 12 for s in results["scenarios"])  # never stopped by the budget


def test_hosted_model_is_priced_by_the_table_with_no_config_prices(
    tmp_path: Path, server: OfflineServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTASSAY_TEST_KEY", "test")
    path = suite(tmp_path, hosted(server, "gpt-4.1-mini"))
    out = tmp_path / "results.json"
    code = main(["run", str(path), "--budget-usd", "5", "-q", "--no-store", "-o", str(out)])
    assert code in (0, 1, 2), capsys.readouterr().err
    results = json.loads(out.read_text())
    trials = [t for s in results["scenarios"] for t in s["trials"]]
    assert len(trials) == 24 and all(t["usd"] and t["usd"] > 0 for t in trials)
    t = trials[0]
    assert t["usd"] == pytest.approx(usd_for(t["input_tokens"], t["output_tokens"], "gpt-4.1-mini", {}, None))

    # The same suite with a budget smaller than a few trials: it stops there, and says so.
    one = trials[0]["usd"]
    out2 = tmp_path / "capped.json"
    code = main(["run", str(path), "--budget-usd", f"{3 * one:.10f}", "-q", "--no-store", "-o", str(out2)])
    capped = json.loads(out2.read_text())
    assert code in (0, 1, 2) and sum(len(s["trials"]) for s in capped["scenarios"]) < 24
    assert any("stopped at the budget" in n for n in capped["notes"])


def test_a_model_nothing_prices_is_named_before_the_first_trial(
    tmp_path: Path, server: OfflineServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTASSAY_TEST_KEY", "test")
    path = suite(tmp_path, hosted(server, "my-local-model-7b"))
    code = main(["check", str(path), "--baseline", str(tmp_path / "none.json"), "--budget-usd", "5", "-q"])
    assert code == 3  # the baseline is missing: an input error first
    code = main(["run", str(path), "--budget-usd", "5", "-q", "--no-store"])
    err = capsys.readouterr().err
    assert code == 3
    assert "config.budget_usd" in err and "'my-local-model-7b' has no price" in err and "genai-prices" in err
    assert "config: {prices:" in err and "Traceback" not in err
    # Without a budget the same model runs: its trials are reported as unpriced, not free.
    out = tmp_path / "results.json"
    assert main(["run", str(path), "-q", "--no-store", "-o", str(out)]) in (0, 1, 2)
    assert all(t["usd"] is None for s in json.loads(out.read_text())["scenarios"] for t in s["trials"])
