"""Issue 22, defect 11: credentials are checked before the first trial; an aborted run claims no verdict.

A real provider without its key, or with a ``base_url`` nothing answers at, is exit 4 before any trial
(nothing paid for, nothing stored, no results file), naming the variable or URL the suite configured and
the fix — through every entry: ``run``, ``check``, the judge's model, the pytest plugin's suite items. A
provider that rejects the key mid-run (a real HTTP server on 127.0.0.1 answering 401) stops the run after
that trial (exit 4), and the results file says the run was aborted: no suite decision, the exit code the
process had, every finished trial kept. Such a file renders as aborted and is refused as a baseline.
``model: offline`` is never preflighted. Each case runs the real CLI in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("agents")

SDK_AGENT = 'from agents import Agent\nbot = Agent(name="Bot", instructions="Answer ok.")\n'
CALLABLE = "def ok(text, seed=0):\n    return 'ok'\n"

SUITE = """\
name: preflight
agent: {agent}
model: {model}
config:
  trials: {trials}
  method: fixed
  concurrency: 1
  timeout: 20
  retries: 0
scenarios:
  - name: greet
    input: "hello"
    evaluator:
      - contains: ok
  - name: again
    input: "hello again"
    evaluator:
      - contains: ok
{extra}"""

KEYS = ("OPENAI_API_KEY", "MY_OPENAI_KEY", "MY_JUDGE_KEY", "PF_KEY")


def _env(**set_: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTASSAY_PLUGINS") and k not in KEYS}
    env["OPENAI_AGENTS_DISABLE_TRACING"] = "0"
    return {**env, **set_}


def _cli(tmp: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentassay", *args], cwd=tmp, capture_output=True, text=True, timeout=300,
        env={**env, "PYTHONPATH": f"{tmp}:{ROOT}"},
    )


def _stored_trials(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM trials").fetchone()[0])


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that is bound (so nothing else takes it) but not listening: connections are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


class _Rejecting:
    """An OpenAI-compatible server on 127.0.0.1: lists no models (GET), and answers every request with 401."""

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": []})

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.posts.append({"path": self.path, "auth": self.headers.get("Authorization")})
                self._send(401, {"error": {"message": "Incorrect API key provided: sk-wrong.", "type":
                                           "invalid_request_error", "code": "invalid_api_key"}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def rejecting() -> Iterator[_Rejecting]:
    server = _Rejecting()
    try:
        yield server
    finally:
        server.close()


JUDGE = """judge:
  rubric: "The reply says ok."
  model: {provider: openai, name: gpt-4.1-mini, api_key_env: MY_JUDGE_KEY}
"""

# (case, agent, model, extra suite text, environment set, fragments the message must hold, fragments it must not)
PREFLIGHT = [
    (
        "provider openai, no OPENAI_API_KEY", "sdkagent:bot", "{provider: openai, name: gpt-4.1-mini}", "", {},
        ["s.yml: model: provider 'openai'", "environment variable OPENAI_API_KEY", "is not set", "no trial was run",
         "export OPENAI_API_KEY=", "model: offline"],
        [],
    ),
    (
        "api_key_env: MY_OPENAI_KEY unset (OPENAI_API_KEY set)", "sdkagent:bot",
        "{provider: openai, name: gpt-4.1-mini, api_key_env: MY_OPENAI_KEY}", "", {"OPENAI_API_KEY": "sk-unused"},
        ["s.yml: model: provider 'openai'", "environment variable MY_OPENAI_KEY (model.api_key_env)",
         "export MY_OPENAI_KEY=", "model: offline"],
        ["OPENAI_API_KEY"],
    ),
    (
        "openai-compatible, nothing listening at base_url", "sdkagent:bot",
        "{provider: openai-compatible, name: m, base_url: 'http://127.0.0.1:PORT/v1', api_key_env: PF_KEY}", "",
        {"PF_KEY": "local"},
        ["s.yml: model.base_url: cannot connect to http://127.0.0.1:PORT/v1", "no trial was run",
         "Check that the server is running", "model: offline"],
        [],
    ),
    (
        "openai with a base_url nothing listens at", "sdkagent:bot",
        "{provider: openai, name: gpt-4.1-mini, base_url: 'http://127.0.0.1:PORT/v1'}", "", {"OPENAI_API_KEY": "sk-x"},
        ["model.base_url: cannot connect to http://127.0.0.1:PORT/v1"],
        [],
    ),
    (
        "the judge's real model without its key", "agents_ok:ok", "offline", JUDGE, {"OPENAI_API_KEY": "sk-unused"},
        ["judge.model: provider 'openai'", "environment variable MY_JUDGE_KEY (judge.model.api_key_env)",
         "no trial was run"],
        ["OPENAI_API_KEY"],
    ),
]


def _write(tmp: Path, agent: str, model: str, extra: str = "", trials: int = 4) -> None:
    (tmp / "sdkagent.py").write_text(SDK_AGENT)
    (tmp / "agents_ok.py").write_text(CALLABLE)
    (tmp / "s.yml").write_text(SUITE.format(agent=agent, model=model, extra=extra, trials=trials))


@pytest.mark.parametrize(
    ("case", "agent", "model", "extra", "env", "named", "not_named"), PREFLIGHT, ids=[c[0] for c in PREFLIGHT]
)
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_provider_that_cannot_be_used_is_exit_4_before_any_trial(
    tmp_path: Path, closed_port: int, command: str, case: str, agent: str, model: str, extra: str,
    env: dict[str, str], named: list[str], not_named: list[str],
) -> None:
    model = model.replace("PORT", str(closed_port))
    args = ["-o", "out.json", "--store", "t.db", "-q"]
    if command == "check":  # a baseline of the same suite, recorded offline by a plain callable
        _write(tmp_path, "agents_ok:ok", "offline")
        base = _cli(tmp_path, "run", "s.yml", "--full", "--trials", "4", "--no-store", "-q", "-o", "base.json",
                    env=_env())
        assert base.returncode in (0, 2), base.stderr
        args += ["--baseline", "base.json"]
    _write(tmp_path, agent, model, extra)
    done = _cli(tmp_path, command, "s.yml", *args, env=_env(**env))
    text = done.stdout + done.stderr
    assert done.returncode == 4, (case, done.returncode, text[-3000:])
    assert "Traceback" not in text, case
    for fragment in named:
        assert fragment.replace("PORT", str(closed_port)) in done.stderr, (case, fragment, done.stderr)
    for fragment in not_named:
        assert fragment not in done.stderr, (case, fragment, done.stderr)
    assert not (tmp_path / "out.json").exists(), case  # nothing ran, so no verdict to write
    assert _stored_trials(tmp_path / "t.db") == 0, case


def test_the_pytest_plugin_preflights_the_suite(tmp_path: Path) -> None:
    _write(tmp_path, "sdkagent:bot", "{provider: openai, name: gpt-4.1-mini, api_key_env: MY_OPENAI_KEY}")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--agentassay-suite", "s.yml", "s.yml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**_env(OPENAI_API_KEY="sk-unused"), "PYTHONPATH": f"{tmp_path}:{ROOT}"},
    )
    text = done.stdout + done.stderr
    assert done.returncode == 1, text[-3000:]  # every scenario item fails, with the one clear line
    assert "2 failed" in text and "MY_OPENAI_KEY" in text and "no trial was run" in text, text[-3000:]
    assert "OPENAI_API_KEY" not in text.replace("MY_OPENAI_KEY", "")


def _aborted_shape(data: dict[str, Any], code: int, cause: str) -> None:
    """The results file of a run that ended early: no suite decision, the process's exit code, the reason."""
    assert data["aborted"]["exit_code"] == code and data["aborted"]["cause"] == cause, data.get("aborted")
    assert data["aborted"]["reason"]
    assert data["decision"]["decision"] == "aborted" and data["decision"]["verdict"] is None
    assert data["decision"]["exit_code"] == code


@pytest.mark.parametrize(
    ("case", "model"),
    [
        ("openai-compatible", "{provider: openai-compatible, name: m, base_url: 'URL', api_key_env: PF_KEY}"),
        ("openai with api_key_env and base_url", "{provider: openai, name: gpt-4.1-mini, base_url: 'URL', "
         "api_key_env: PF_KEY}"),
    ],
)
def test_a_key_rejected_mid_run_stops_after_the_first_trial(
    tmp_path: Path, rejecting: _Rejecting, case: str, model: str
) -> None:
    _write(tmp_path, "sdkagent:bot", model.replace("URL", rejecting.url), trials=20)
    done = _cli(tmp_path, "run", "s.yml", "-o", "out.json", "--store", "t.db", "-q",
                env=_env(PF_KEY="sk-wrong", OPENAI_API_KEY="sk-never-sent"))
    text = done.stdout + done.stderr
    assert done.returncode == 4, (case, done.returncode, text[-3000:])
    assert "Traceback" not in text
    assert "rejected the credentials in trial 0" in done.stderr and "PF_KEY" in done.stderr, done.stderr
    assert len(rejecting.posts) == 1, rejecting.posts  # one trial, not a FAIL of every trial
    assert rejecting.posts[0]["auth"] == "Bearer sk-wrong"  # the suite's variable, never OPENAI_API_KEY
    data = json.loads((tmp_path / "out.json").read_text())
    _aborted_shape(data, 4, "agent")
    assert sum(len(s["trials"]) for s in data["scenarios"]) == 1  # the trial that ran is kept
    assert _stored_trials(tmp_path / "t.db") == 1

    # the aborted file: rendered as aborted, refused as a baseline or candidate (exit 3 naming why)
    shown = _cli(tmp_path, "report", "out.json", env=_env())
    assert shown.returncode == 4 and "decision: ABORTED" in shown.stdout and "exit 4" in shown.stdout, shown
    for fmt in ("--markdown", "--html", "--junit"):
        written = _cli(tmp_path, "report", "out.json", fmt, f"r{fmt[2:]}", env=_env())
        assert written.returncode == 4, (fmt, written.stderr)  # the code the aborted run recorded
        body = (tmp_path / f"r{fmt[2:]}").read_text()
        assert "ABORTED" in body or 'value="aborted"' in body, fmt
        assert "DEPLOY" not in body and "BLOCK" not in body, fmt
    _write(tmp_path, "agents_ok:ok", "offline")
    for args in (["compare", "out.json", "out.json"], ["check", "s.yml", "--baseline", "out.json", "--no-store"]):
        refused = _cli(tmp_path, *args, "-q", env=_env())
        assert refused.returncode == 3, (args, refused.returncode, refused.stderr)
        assert "out.json: this run was aborted (exit 4" in refused.stderr and "Traceback" not in refused.stderr


def test_model_offline_is_never_preflighted(tmp_path: Path) -> None:
    (tmp_path / "s.yml").write_text(
        SUITE.format(agent="examples.customer_service.v1:triage_agent", model="offline", extra="", trials=3)
    )
    done = _cli(tmp_path, "run", "s.yml", "-o", "out.json", "--no-store", "-q", env=_env())
    assert done.returncode in (0, 1, 2), done.stderr
    data = json.loads((tmp_path / "out.json").read_text())
    assert "aborted" not in data and data["decision"]["decision"] != "aborted"
    assert [len(s["trials"]) for s in data["scenarios"]] == [3, 3]
