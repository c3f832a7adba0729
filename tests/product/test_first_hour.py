"""Issue 25's acceptance: a new user's first hour, played in a fresh git repository.

``init`` → a CSV dataset of 20 rows and a hosted model (``gpt-4.1-mini``, no ``config.prices``) → ``run --full``
→ the agent's prompt is edited → ``plan`` → ``check`` (BLOCK, the pass-rate drop named first) → ``report --html
--junit --markdown``. Every command runs as a user runs it: ``python -m agentassay`` in the repository, a process
of its own (so the edited agent module is imported afresh).

The hosted model is the offline simulator's OpenAI-compatible server on 127.0.0.1 answering under the hosted
model's name, so trials are priced exactly as a real gpt-4.1-mini's would be (the maintained table,
genai-prices), with no network and no key. Its behaviour table stands for the model: like a real model, it
answers the edited prompt ("ask for a photo before refunding") differently — it refunds damaged orders about
half the time instead of 97 %. The SDK sends no ``traceparent``, so each request draws the next seed of a
counter; trials run concurrently, so which trial gets which seed varies between runs. The assertions are ones
that hold with overwhelming probability (a 97 % → 50 % drop is decided in 10–30 trials), never on a figure
that depends on scheduling.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("agents")
pytest.importorskip("genai_prices")

from agentassay._integrations.adapters._offline_server import OfflineServer
from agentassay._runner._cost import usd_for

ROOT = Path(__file__).resolve().parents[2]
MODEL = "gpt-4.1-mini"
KEY_ENV = "FIRST_HOUR_KEY"

AGENT = '''\
from agents import Agent, function_tool


@function_tool
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    return f"Refund issued for order {order_id}."


@function_tool
def lookup_order(order_id: str) -> str:
    """Where an order is."""
    return f"Order {order_id} is out for delivery."


support_agent = Agent(
    name="Support Agent",
    instructions="INSTRUCTIONS",
    tools=[issue_refund, lookup_order],
)
'''
PROMPT_V1 = "You are a support agent. Refund damaged orders with issue_refund; track orders with lookup_order."
PROMPT_V2 = "You are a support agent. Ask for a photo before refunding damaged orders; track them with lookup_order."

ORDER_ID = {"order_id": {"regex": r"\b([A-Z]\d{4})\b", "default": "A0000"}}


def policy(system: str, refund: float) -> dict:
    """The stand-in model's answers to a prompt matching ``system``: it refunds with probability ``refund``."""
    return {
        "match": {"system": system},
        "rules": [
            {"input": "(?i)damaged", "choose": {"tool:issue_refund": refund, "respond": 1 - refund},
             "respond": "Could you send a photo of the damage first?"},
            {"input": "(?i)where", "choose": {"tool:lookup_order": 0.97, "respond": 0.03}},
            {"after": "tool", "respond": "{tool_output}"},
        ],
        "arguments": {"issue_refund": ORDER_ID, "lookup_order": ORDER_ID},
        "respond": "How can I help?",
    }


# First match wins: the edited prompt (it mentions a photo) before the original.
HOSTED_MODEL = {"Photo-first Support Agent": policy("(?i)photo", 0.5), "Support Agent": policy("(?i)support", 0.97)}

DATASET = "\n".join(
    ["id,question,tool,expected"]
    + [f"refund_{i},My order R{1000 + i} arrived damaged. Can I get a refund?,issue_refund,refund" for i in range(10)]
    + [f"track_{i},Where is my order T{2000 + i}?,lookup_order,delivery" for i in range(10)]
) + "\n"

# What the user writes in place of init's first scenario: one scenario per row of cases.csv.
SCENARIOS = """\
scenarios:
  - dataset: cases.csv
    name: "{{ id }}"
    input: "{{ question }}"
    properties:
      - must_call: "{{ tool }}"
    evaluator:
      - contains: "{{ expected }}"
"""


class SeedCounter:
    """The stand-in model's randomness: each request draws the next integer (thread-safe)."""

    def __init__(self) -> None:
        self._next = itertools.count()
        self._lock = threading.Lock()

    def __call__(self, trace_id: str | None) -> int:
        with self._lock:
            return next(self._next)


def agentassay(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        KEY_ENV: "sk-first-hour",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "agentassay", *argv], cwd=folder, capture_output=True, text=True, env=env,
        timeout=1800, check=False,
    )


def use_hosted_model_and_dataset(suite: Path, base_url: str) -> None:
    """The user's edits to init's suite: the hosted model (its key in an environment variable), a trial cap of
    100 (a run --full of 150 per row) and the dataset in place of the first scenario. No prices anywhere."""
    text = suite.read_text()
    offline = "model:\n  provider: offline\n  behaviour: agentassay.offline.yml\n"
    assert offline in text
    text = text.replace(
        offline,
        f"model:\n  provider: openai-compatible\n  name: {MODEL}\n  base_url: {base_url}\n  api_key_env: {KEY_ENV}\n",
    )
    text = text.replace("  # trials: 200 ", "  trials: 100   ")
    suite.write_text(text[: text.index("\nscenarios:")] + "\n" + SCENARIOS)


def test_the_first_hour(tmp_path: Path) -> None:
    folder = tmp_path / "shop"
    (folder / "support").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "pyproject.toml").write_text("")
    (folder / "support" / "__init__.py").write_text("")
    agent_file = folder / "support" / "agent.py"
    agent_file.write_text(AGENT.replace("INSTRUCTIONS", PROMPT_V1))

    # 1. init: finds the SDK agent, writes the suite and both workflows, prints the next commands.
    done = agentassay(folder, "init")
    assert done.returncode == 0, done.stderr
    assert "support.agent:support_agent (an OpenAI Agents SDK Agent" in done.stdout
    assert "agentassay run agentassay.yml --full -o baseline.json" in done.stdout
    assert (folder / ".github" / "workflows" / "agentassay-check.yml").is_file()

    (folder / "cases.csv").write_text(DATASET)
    with OfflineServer(HOSTED_MODEL, seed_for=SeedCounter()) as server:
        use_hosted_model_and_dataset(folder / "agentassay.yml", server.base_url)
        assert "prices" not in re.sub(r"#.*", "", (folder / "agentassay.yml").read_text())

        # 2. Record the baseline as init said: every row to 1.5 x the cap.
        done = agentassay(folder, "run", "agentassay.yml", "--full", "-o", "baseline.json", "-q", "--no-store")
        assert done.returncode == 0, done.stdout + done.stderr
        baseline = json.loads((folder / "baseline.json").read_text())
        assert len(baseline["scenarios"]) == 20
        assert all(len(s["trials"]) == 150 for s in baseline["scenarios"])
        trial = baseline["scenarios"][0]["trials"][0]
        # Priced by the maintained table with no config.prices.
        assert trial["usd"] and trial["usd"] == pytest.approx(
            usd_for(trial["input_tokens"], trial["output_tokens"], MODEL, {}, None)
        )

        # 3. Edit the agent: a prompt change.
        agent_file.write_text(AGENT.replace("INSTRUCTIONS", PROMPT_V2))

        # 4. plan, before the check: trials and dollars, from the baseline's rates and the price table.
        done = agentassay(folder, "plan", "agentassay.yml", "--baseline", "baseline.json", "--json")
        assert done.returncode == 0, done.stderr
        plan = json.loads(done.stdout)
        assert plan["basis"] == "baseline" and set(plan["scenarios"]) == {s["name"] for s in baseline["scenarios"]}
        assert plan["total"]["usd_p95"] > 0
        done = agentassay(folder, "plan", "agentassay.yml", "--baseline", "baseline.json")
        assert "prices: genai-prices" in done.stdout and MODEL in done.stdout, done.stdout

        # 5. check, with the ready-to-copy workflow's budget: BLOCK, and each refund row's explanation names the
        # pass-rate drop first, then issue_refund.
        done = agentassay(folder, "check", "agentassay.yml", "--baseline", "baseline.json", "-o", "results.json",
                          "--no-store", "--budget-usd", "5")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "decision: BLOCK" in done.stdout
    # ... and it said what it was about to spend before its first trial, priced by the table.
    said = done.stderr.split("[agentassay] estimate (agentassay plan): ", 1)
    assert len(said) == 2 and "[agentassay " not in said[0], done.stderr[:2000]
    assert "at the 95th percentile (genai-prices" in said[1].splitlines()[0]
    results = json.loads((folder / "results.json").read_text())
    verdicts = {s["name"]: s["verdict"] for s in results["scenarios"]}
    refunds = [name for name in verdicts if name.startswith("refund_")]
    assert all(verdicts[name]["verdict"] == "fail" for name in refunds), {n: v["verdict"] for n, v in verdicts.items()}
    for name in refunds:
        said = re.search(rf"^  {name}: FAIL after .*?(?=^  \S|^decision|\Z)", done.stdout, re.S | re.M)
        assert said, (name, done.stdout)
        text = " ".join(said.group(0).split())  # the terminal wraps; it never cuts
        assert text.index("pass rate") < text.index("Behaviour shifted") < text.index("calls to issue_refund")
        shifts = text.split("Behaviour shifted", 1)[1]
        assert shifts.split(":", 1)[1].strip().startswith("calls to issue_refund per run"), text
    # The check's candidate trials are within plan's 95th percentile: per failing row and in total.
    used = {name: v["trials_used"] for name, v in verdicts.items()}
    for name in refunds:
        assert used[name] <= plan["scenarios"][name]["p95_trials"], (name, used[name], plan["scenarios"][name])
    assert sum(used.values()) <= plan["total"]["p95_trials"]
    assert results["plan"]["scenarios"] == plan["scenarios"]
    assert 0 < results["cost"]["usd"] < 5 and results["settings"]["budget_usd"] == 5

    # 6. The reports a reviewer reads: report exits with the decision, like check and compare.
    done = agentassay(folder, "report", "results.json", "--html", "report.html", "--junit", "junit.xml",
                      "--markdown", "comment.md")
    assert done.returncode == 1, done.stdout + done.stderr
    comment = (folder / "comment.md").read_text()
    headline = next(line for line in comment.splitlines() if line.startswith("###"))
    assert "❌" in headline and "BLOCK" in headline and "pass rate" in headline and "$" in headline
    assert "**Estimate vs actual:**" in comment
    html = (folder / "report.html").read_text()
    assert "BLOCK" in html and "refund_0" in html and "issue_refund" in html
    suites = ET.parse(folder / "junit.xml").getroot()
    cases = {case.get("name"): case for case in suites.iter("testcase")}
    assert set(cases) == set(verdicts)
    failure = cases["refund_0"].find("failure")
    assert failure is not None and failure.get("message", "").startswith("FAIL after")
    assert "pass rate" in failure.get("message", "").split("Behaviour")[0]
    for name, verdict in verdicts.items():  # INCONCLUSIVE is a skipped test with its reason, not a plain pass
        assert (cases[name].find("skipped") is not None) == (verdict["verdict"] == "inconclusive"), name
