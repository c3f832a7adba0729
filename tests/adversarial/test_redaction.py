"""Issue 22, defects 2, 3 and 8 (stored text): the boundary every piece of untrusted text passes once.

Defect 2: secrets reach artifacts. An OpenAI Agents SDK agent (offline simulator, a real function tool)
writes fake GitHub, OpenAI project and AWS keys in its answer and in its tool's result, plus the value of
a secret-looking environment variable; the real CLI records the run (``run --html --junit``, the trace
store) and renders it again (``report --markdown/--html/--junit`` and the terminal). No raw copy of any
secret may be found in any file (the SQLite store read as raw bytes, its WAL too) or in stdout/stderr;
with the opt-out (``AGENTASSAY_REDACT=0``) they are all there, which proves the test looks in the right
places. Defect 3: a lone surrogate in one output, or as an escape in an OTLP file, costs nothing.
Defect 8 (stored text): a few MB of output is stored capped, the cut noted.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import string
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "traces"


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n - 1)) + secrets.choice(string.digits)


def _keys() -> dict[str, str]:
    """One set of fresh fake credentials in the real formats (random each run: no fixed string to miss)."""
    upper = string.ascii_uppercase + string.digits
    return {
        "github": "ghp_" + _rand(36),
        "openai": "sk-proj-" + _rand(48),
        "aws_id": "AKIA" + _rand(16, upper),
        "aws_secret": _rand(40, string.ascii_letters + string.digits + "/+"),
    }


VAULT = '''\
import os

from agents import Agent, function_tool

TOOL = {tool!r}
OUT = {out!r}


@function_tool
def lookup(query: str) -> str:
    """Look a credential up."""
    return f"vault: {{TOOL['github']}} {{TOOL['openai']}} id {{TOOL['aws_id']}} aws_secret_access_key={{TOOL['aws_secret']}}"


ANSWER = (f"{{OUT['github']}} done {{OUT['openai']}} id {{OUT['aws_id']}} "
          f"aws_secret_access_key={{OUT['aws_secret']}} env {{os.environ['OPENAI_API_KEY']}}")

agent = Agent(name="Vault Agent", instructions="Answer with the credential.", tools=[lookup])

OFFLINE_BEHAVIOUR = {{
    "Vault Agent": {{
        "rules": [
            {{"after": "user", "choose": "tool:lookup"}},
            {{"after": "tool:lookup", "choose": "respond", "respond": ANSWER}},
        ],
    }},
}}
'''

SUITE = """\
name: vault
agent: vault_agent:agent
model: {provider: offline}
config:
  trials: 3
  method: fixed
  concurrency: 3
  timeout: 60
scenarios:
  - name: leak
    input: "What is the deploy key?"
    properties:
      - must_call: lookup
    evaluator:
      - not_contains: done      # fails, so the failure message quotes the output into results.json
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTASSAY_", "GITHUB_ACTIONS"))}
    return {**env, **extra}


def _cli(tmp: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentassay", *args], cwd=tmp, capture_output=True, text=True, timeout=600,
        env={**env, "PYTHONPATH": f"{tmp}:{ROOT}"},
    )


@pytest.mark.parametrize("redact", [True, False], ids=["redacted", "opt-out AGENTASSAY_REDACT=0"])
def test_no_secret_reaches_any_artifact(tmp_path: Path, redact: bool) -> None:
    out, tool, env_value = _keys(), _keys(), "zq" + _rand(30)
    (tmp_path / "vault_agent.py").write_text(VAULT.format(tool=tool, out=out))
    (tmp_path / "s.yml").write_text(SUITE)
    env = _env(OPENAI_API_KEY=env_value, **({} if redact else {"AGENTASSAY_REDACT": "0"}))
    runs = [
        _cli(tmp_path, env, "run", "s.yml", "-o", "results.json", "--store", "traces.db",
             "--html", "run.html", "--junit", "run.xml"),
        _cli(tmp_path, env, "report", "results.json", "--store", "traces.db", "--markdown", "comment.md",
             "--html", "report.html", "--junit", "report.xml"),
        _cli(tmp_path, env, "report", "results.json"),  # the terminal table
    ]
    assert runs[0].returncode == 1, runs[0].stderr[-3000:]  # FAIL: not_contains done
    for done in runs:
        assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    assert runs[1].returncode == 1 and runs[2].returncode == 1  # `report` exits with the file's decision
    files = {p.name: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and p.name != "vault_agent.py"}
    for name in ("results.json", "traces.db", "run.html", "run.xml", "comment.md", "report.html", "report.xml"):
        assert name in files, sorted(files)
    files |= {f"stdout/stderr of command {i}": (d.stdout + d.stderr).encode() for i, d in enumerate(runs)}
    secret_list = {**{f"output {k}": v for k, v in out.items()}, **{f"tool {k}": v for k, v in tool.items()},
                   "env OPENAI_API_KEY": env_value}
    found = {(what, name) for what, value in secret_list.items() for name, data in files.items()
             if value.encode() in data}
    if redact:
        assert not found, sorted(found)
        db = files["traces.db"] + files.get("traces.db-wal", b"")
        for marker in (b"[redacted: github-token]", b"[redacted: openai-key]", b"[redacted: aws-access-key-id]",
                       b"[redacted: aws-secret-key]", b"[redacted: $OPENAI_API_KEY]"):
            assert marker in db, marker  # the store keeps the text, with the marker saying what was cut
        data = json.loads(files["results.json"])
        assert any("held secrets" in n for n in data["notes"]), data["notes"]
        assert "[redacted: github-token]" in json.dumps(data["scenarios"][0]["trials"])
    else:  # the opt-out proves the mechanism: every secret is there, raw, where the test looked
        where = {what for what, _ in found}
        assert where == set(secret_list), set(secret_list) - where
        assert any(name == "results.json" for _, name in found)


def test_the_opt_out_is_refused_under_github_actions(tmp_path: Path) -> None:
    code = ("from agentassay._boundary import redact; import sys; "
            "print(redact('t ghp_' + 'a1' * 18), file=sys.stdout)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env={**_env(AGENTASSAY_REDACT="0", GITHUB_ACTIONS="true"), "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "t [redacted: github-token]" and "ignored under GitHub Actions" in done.stderr


# -- the patterns, one row per format the issue names (and the near-misses that must stay) ------------------

_PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1x\nq2w3e4r5t6y7\n-----END RSA PRIVATE KEY-----"
PATTERN_CASES = [
    ("openai legacy", "key sk-" + "a1B2" * 12, "openai-key"),
    ("openai project", "sk-proj-" + "Ab3_" * 20, "openai-key"),
    ("anthropic", "sk-ant-api03-" + "x9Y-" * 20, "anthropic-key"),
    ("github classic", "ghp_" + "a1" * 18, "github-token"),
    ("github oauth/app/refresh", " ".join(p + "_" + "Z9" * 18 for p in ("gho", "ghu", "ghs", "ghr")),
     "github-token"),
    ("github fine-grained", "github_pat_11ABCDEFG0" + "x" * 60, "github-token"),
    ("aws access key id", "AKIAIOSFODNN7EXAMPLE and ASIAY34FZKBOKMUTVV7A", "aws-access-key-id"),
    ("aws secret assignment", 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
     "aws-secret-key"),
    ("google api key", "AIza" + "SyA-1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6", "google-api-key"),
    ("slack bot token", "xoxb-123456789012-123456789012-abcdefABCDEF", "slack-token"),
    ("slack app token", "xapp-1-A0123456789-1234567890123-abcdef0123456789", "slack-token"),
    ("stripe live", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
    ("stripe restricted", "rk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe-key"),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"),
    ("pem private key", f"before {_PEM} after", "private-key"),
    ("bearer header", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", "bearer-token"),
    ("password in a url", "postgres://app:hunter2secret@db.internal/app", "url-password"),
]


@pytest.mark.parametrize(("case", "text", "kind"), PATTERN_CASES, ids=[c[0] for c in PATTERN_CASES])
def test_each_token_format_is_redacted(case: str, text: str, kind: str) -> None:
    from agentassay._boundary import Redactor

    out = Redactor({})(text)
    assert f"[redacted: {kind}]" in out, (case, out)
    for word in text.split():
        if len(word) >= 16 and word.isalnum():
            assert word not in out, (case, out)
    if kind == "private-key":
        assert "MIIEowIBAAKCAQEA1x" not in out and out.startswith("before ") and out.endswith(" after")


@pytest.mark.parametrize("text", [
    "task-force sk-learn ok", "ghp_short", "AKIA1234", "see https://example.com/path?x=1",
    "The key is in the drawer", "eyJ only", "sha 3f786850e387550fdab836ed7e6dc881de23001b",
])
def test_ordinary_text_is_left_alone(text: str) -> None:
    from agentassay._boundary import Redactor

    assert Redactor({})(text) == text


def test_secret_env_rule() -> None:
    from agentassay._boundary import secret_env

    env = {"OPENAI_API_KEY": "abcdefgh12", "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1", "PWD": "/home/me/secretproject",
           "GH_TOKEN": "short", "DB_PASSWORD": "correct horse battery", "FEATURE_KEY": "true",
           "HOME": "/root", "INPUT_GITHUB-TOKEN": "ghs_xyz12345678", "PRIVATE_DSN": "https://k@sentry.example/1"}
    assert secret_env(env) == {"abcdefgh12": "OPENAI_API_KEY", "correct horse battery": "DB_PASSWORD",
                               "ghs_xyz12345678": "INPUT_GITHUB-TOKEN", "https://k@sentry.example/1": "PRIVATE_DSN"}


# -- defect 3: one bad character costs nothing -----------------------------------------------------------------

SURROGATE_AGENT = '''\
import threading

_lock = threading.Lock()
_calls = [0]


def agent(text, seed=0):
    with _lock:
        _calls[0] += 1
        first = _calls[0] == 1
    return "ok \\ud83d" if first else "ok"
'''

SURROGATE_SUITE = """\
name: surrogate
agent: sur_agent:agent
config:
  trials: 40
  method: fixed
  threshold: 0.8
  concurrency: 4
  timeout: 30
scenarios:
  - name: s
    input: "hello"
    evaluator:
      - contains: ok
"""


def test_a_lone_surrogate_in_one_output_keeps_deploy_and_every_stored_trial(tmp_path: Path) -> None:
    (tmp_path / "sur_agent.py").write_text(SURROGATE_AGENT)
    (tmp_path / "s.yml").write_text(SURROGATE_SUITE)
    done = _cli(tmp_path, _env(), "run", "s.yml", "-o", "out.json", "--store", "t.db", "-q")
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])  # DEPLOY, not MANUAL
    assert "Traceback" not in done.stdout + done.stderr
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["decision"]["decision"] == "deploy" and len(data["scenarios"][0]["trials"]) == 40
    assert not any("plugin" in n and "failed" in n for n in data["notes"]), data["notes"]
    assert any("lone surrogates" in n for n in data["notes"]), data["notes"]
    with sqlite3.connect(tmp_path / "t.db") as db:
        rows = [json.loads(r[0]) for r in db.execute("SELECT trace FROM trials")]
    assert len(rows) == 40
    repaired = [r for r in rows if r["metadata"].get("extra", {}).get("boundary", {}).get("repaired")]
    assert len(repaired) == 1 and repaired[0]["output"] == "ok \ufffd"  # the trace notes the repair


def test_an_otlp_file_with_a_lone_surrogate_escape_is_analysed(tmp_path: Path) -> None:
    src = (FIXTURES / "cs-genai-current.json").read_text()
    assert '"stringValue": "14C"' in src
    bad = src.replace('"stringValue": "14C"', '"stringValue": "14C \\ud83d"', 1)  # a raw attribute
    bad = bad.replace('ABC123.\\"}', 'ABC123. \\\\ud83d\\"}', 1)  # inside the JSON text of a message
    (tmp_path / "otlp.json").write_text(bad)
    args = ("analyze", "otlp.json", "--suite", str(ROOT / "examples" / "customer_service" / "agentassay.yml"),
            "-o", "out.json", "-q")
    done = _cli(tmp_path, _env(), *args)
    (tmp_path / "good.json").write_text(src)
    swap = {"otlp.json": "good.json", "out.json": "good-out.json"}
    clean = _cli(tmp_path, _env(), *[swap.get(a, a) for a in args])
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    assert done.returncode == clean.returncode and done.returncode in (0, 1, 2), done.stderr[-2000:]
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["analyze"]["matched"]["seat_change"] >= 1  # the repaired trace is still matched and analysed
    assert any("lone surrogates" in n for n in data["notes"]), data["notes"]


def test_the_store_skips_a_record_it_cannot_write_and_says_so() -> None:
    from agentassay._features.store import _plugin as plugin
    from agentassay._plugins import Stash

    class Broken:
        path = Path("t.db")

        def add(self, *a: object, **k: object) -> int:
            raise sqlite3.OperationalError("database or disk is full")

    notes: list[str] = []
    run = SimpleNamespace(options=SimpleNamespace(store=Broken()), stash=Stash(), run_id="r",
                          suite=SimpleNamespace(name="s"), note=notes.append)
    state = SimpleNamespace(scenario=SimpleNamespace(name="sc", input="i"))
    for i in range(3):  # never raises (so the plugin manager never disables the store), counts each skip
        plugin.agentassay_trial_finished(run, SimpleNamespace(agent_version="v"), state,
                                         SimpleNamespace(index=i, passed=True, data={}), None)
    plugin.agentassay_after_trials(run)
    assert len(notes) == 1 and "skipped 3 trial record(s)" in notes[0] and "disk is full" in notes[0]


# -- defect 8 (stored text): a big output is stored capped, the cut noted ------------------------------------

BIG_AGENT = "def agent(text, seed=0):\n    return 'ok ' + 'x' * 3_000_000\n"


def test_a_big_output_is_stored_capped_with_the_cut_noted(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text(BIG_AGENT)
    (tmp_path / "s.yml").write_text(
        SURROGATE_SUITE.replace("sur_agent:agent", "big:agent").replace("trials: 40", "trials: 6")
        .replace("threshold: 0.8", "threshold: 0.5").replace("- contains: ok", "- regex: 'x{2999999}$'")
    )
    done = _cli(tmp_path, _env(), "run", "s.yml", "-o", "out.json", "--store", "t.db", "-q")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]  # checks saw it all
    with sqlite3.connect(tmp_path / "t.db") as db:
        rows = [r[0] for r in db.execute("SELECT trace FROM trials")]
    assert len(rows) == 6
    for raw in rows:
        assert len(raw) < 2 * 64 * 1024 + 4096, len(raw)  # 64 KiB per field (output, the respond step)
        trace = json.loads(raw)
        assert trace["output"].endswith("… [cut: 2.9 MB more]"), trace["output"][-40:]
        assert trace["metadata"]["extra"]["boundary"]["cut"] >= 1
    assert sum(p.stat().st_size for p in tmp_path.glob("t.db*")) < 6 * 300 * 1024


def test_a_trace_of_many_fields_is_bounded_as_a_whole() -> None:
    from agentassay._boundary import TRACE_LIMIT, stored_json
    from agentassay._traces import Action, Step, Trace

    trace = Trace(steps=tuple(Step(Action.CALL_TOOL, tool="t", output="y" * 50_000) for _ in range(200)))
    text, _ = stored_json(trace)
    assert len(text) < TRACE_LIMIT + 200 * 200 and "[cut: " in text
