"""Issue 22, defects 6 and 9: untrusted files never crash the engine, never read as BLOCK, never mean the
wrong thing.

Every case runs the real CLI in a fresh interpreter on the repro input and asserts exit 3, that the message
names the file, the JSON path / field and the fix, and that no traceback is printed. Results files are
tampered copies of one the CLI recorded (``base.json``); the ``-o`` cases assert that the run's results are
never lost: refused before the first trial, or kept elsewhere and the place said.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

AGENTS = """\
import os, shutil

def ok(text, seed=0):
    open("called.marker", "a").close()  # an empty file: allowed even under a file-size limit
    return "ok " + "x" * (seed % 7)

def half(text, seed=0):
    return "ok" if seed % 2 else "no"

def swap_out_dir(text, seed=0):
    # The observable event: the -o folder is replaced by a file while the run goes on (as root, chmod
    # would not stop a write; this does).
    if os.path.isdir("outdir"):
        shutil.rmtree("outdir")
        open("outdir", "w").close()
    return "ok"
"""

SUITE = """\
name: files
agent: agents_files:{agent}
config:
  trials: {trials}
  method: fixed
  concurrency: {concurrency}
  timeout: 30
scenarios:
  - name: s
    input: "hello"
    evaluator:
      - contains: ok
  - name: t
    input: "again"
    evaluator:
      - contains: ok
"""

FIX = "agentassay run SUITE -o FILE"


def _cli(
    tmp: Path, *args: str, env: dict[str, str] | None = None, preexec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("AGENTASSAY_")}
    return subprocess.run(
        [sys.executable, "-m", "agentassay", *args], cwd=tmp, capture_output=True, text=True, timeout=300,
        env={**base, "PYTHONPATH": f"{tmp}:{ROOT}", **(env or {})}, preexec_fn=preexec,
    )


def _suite(tmp: Path, agent: str = "ok", trials: int = 6, concurrency: int = 2) -> Path:
    (tmp / "agents_files.py").write_text(AGENTS)
    path = tmp / "s.yml"
    path.write_text(SUITE.format(agent=agent, trials=trials, concurrency=concurrency))
    return path


def _no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A results file recorded by the real CLI (a pass/fail mix, fingerprints on)."""
    tmp = tmp_path_factory.mktemp("base")
    _suite(tmp, agent="half")
    done = _cli(tmp, "run", "s.yml", "--no-store", "-q", "-o", "base.json")
    assert done.returncode in (0, 1, 2), done.stderr
    data = json.loads((tmp / "base.json").read_text())
    assert any(t.get("fingerprint") for t in data["scenarios"][0]["trials"]), "fingerprints are recorded"
    return data


def _edit(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], bytes]:
    def write(base: dict[str, Any]) -> bytes:
        data = json.loads(json.dumps(base))
        change(data)
        return json.dumps(data).encode()

    return write


def _raw(text: bytes) -> Callable[[dict[str, Any]], bytes]:
    return lambda base: text


def _first_trial(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        d["scenarios"][0]["trials"][2][key] = value

    return change


def _fingerprint(d: dict[str, Any]) -> None:
    d["scenarios"][0]["trials"][0]["fingerprint"]["steps"] = 1e308


def _without(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda d: d.pop(key)


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        for part in path[:-1]:
            d = d[part]
        d[path[-1]] = value

    return change


# (case, the tampered file, words the message must hold: file name is always checked)
RESULTS = [
    ("non-UTF-8", _raw(b'{"schema": "agentassay.results/1", "x": "\xff\xfe"}'), ["not UTF-8", "byte"]),
    ("nested 100,000 deep", _raw(b"[" * 100_000 + b"]" * 100_000), ["nested too deep", "64 levels"]),
    ("nested 100 deep (parses)", _edit(_set(("agent", "x"), json.loads("[" * 100 + "]" * 100))),
     ["agent.x[0][0]", "nested more than 64"]),
    ("an integer over 4,300 digits", _raw(b'{"schema": "agentassay.results/1", "n": ' + b"9" * 5000 + b"}"),
     ["4,300 digits"]),
    ("scenarios as a mapping", _edit(_set(("scenarios",), {"s": {}})), ["scenarios: expected an array"]),
    ("settings.alpha: 5", _edit(_set(("settings", "alpha"), 5)), ["settings.alpha: expected a number < 1, got 5"]),
    ('"passed": "yes"', _edit(_first_trial("passed", "yes")),
     ['scenarios[0].trials[2].passed: expected true/false or null, got "yes"']),
    ("an unknown kind", _edit(_set(("kind",), "deploy-anyway")), ['kind: expected one of "run"', "deploy-anyway"]),
    ("scenarios missing", _edit(_without("scenarios")), ["scenarios: missing"]),
    ("a fingerprint of 1e308", _edit(_fingerprint), ["scenarios[0].trials[0].fingerprint.steps", "<= 1e+12"]),
    ("a NaN latency", lambda b: _edit(_first_trial("latency_s", 0.5))(b).replace(b'"latency_s": 0.5', b'"latency_s": NaN'),
     ["scenarios[0].trials[2].latency_s: expected a finite number, got nan"]),
    ("passes more than the trials passed", _edit(_set(("scenarios", 0, "passes"), 6)),
     ["scenarios[0].passes: says 6 but the scenario's 6 trial records give"]),
    ("decision counts forged", _edit(_set(("decision", "counts", "pass"), 2)), ["decision.counts.pass: says 2"]),
    ("a negative token count", _edit(_first_trial("input_tokens", -5)), ["trials[2].input_tokens", ">= 0"]),
]


@pytest.mark.parametrize(("case", "make", "words"), RESULTS, ids=[c[0] for c in RESULTS])
def test_a_tampered_results_file_is_exit_3_naming_the_json_path(
    tmp_path: Path, base: dict[str, Any], case: str, make: Callable[[dict[str, Any]], bytes], words: list[str]
) -> None:
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "bad.json").write_bytes(make(base))
    done = _cli(tmp_path, "compare", "bad.json", "base.json", "-q")  # as the baseline
    assert done.returncode == 3, (case, done.returncode, done.stderr[-2000:])
    _no_traceback(done)
    assert "bad.json" in done.stderr and FIX in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, (case, word, done.stderr)


# Every other reader of a results file: check's baseline, report, merge, the pool and warm-start files.
READERS = [
    ("check --baseline", ("check", "s.yml", "--baseline", "bad.json", "--no-store", "-q")),
    ("report", ("report", "bad.json")),
    ("merge", ("merge", "bad.json", "-o", "m.json", "-q")),
    ("run --full --pool", ("run", "s.yml", "--full", "--pool", "bad.json", "--no-store", "-q")),
    ("run --warm-start", ("run", "s.yml", "--warm-start", "bad.json", "--no-store", "-q")),
    ("coverage", ("coverage", "bad.json")),
]


@pytest.mark.parametrize(("reader", "args"), READERS, ids=[r[0] for r in READERS])
def test_every_reader_validates(tmp_path: Path, base: dict[str, Any], reader: str, args: tuple[str, ...]) -> None:
    _suite(tmp_path, agent="half")
    (tmp_path / "bad.json").write_bytes(_edit(_fingerprint)(base))
    done = _cli(tmp_path, *args)
    assert done.returncode == 3, (reader, done.returncode, done.stderr[-2000:])
    _no_traceback(done)
    assert "bad.json: scenarios[0].trials[0].fingerprint.steps" in done.stderr, done.stderr
    assert not (tmp_path / "called.marker").exists()  # refused before the first trial


def test_the_size_bound_is_checked_before_reading(tmp_path: Path, base: dict[str, Any]) -> None:
    (tmp_path / "base.json").write_text(json.dumps(base))
    with (tmp_path / "big.json").open("wb") as f:  # sparse: 101 MB on paper, no disk or memory used
        f.truncate(101 * 1024 * 1024)
    done = _cli(tmp_path, "compare", "base.json", "big.json", "-q")
    assert done.returncode == 3 and "big.json: 101.0 MB, over the 100.0 MB bound" in done.stderr, done.stderr
    assert "AGENTASSAY_MAX_RESULTS_MB" in done.stderr
    _no_traceback(done)
    lowered = _cli(tmp_path, "compare", "base.json", "base.json", "-q", env={"AGENTASSAY_MAX_RESULTS_MB": "0.001"})
    assert lowered.returncode == 3 and "base.json: 12,", lowered.stderr
    assert "bytes, over the 1,048 bytes bound" in lowered.stderr, lowered.stderr


def test_a_results_file_the_cli_writes_still_loads(tmp_path: Path, base: dict[str, Any]) -> None:
    (tmp_path / "base.json").write_text(json.dumps(base))
    done = _cli(tmp_path, "compare", "base.json", "base.json", "-q", "-o", "cmp.json")
    assert done.returncode in (0, 1, 2), done.stderr
    again = _cli(tmp_path, "report", "cmp.json")
    assert again.returncode == done.returncode, again.stderr  # the file's decision, as `compare` exited


# -- suite YAML and OTLP ----------------------------------------------------------------------------------

DEEP_SUITE = [
    ("a value nested 5,000 deep", "name: x\nagent: agents_files:ok\nscenarios:\n  - name: s\n    input: "
     + "[" * 5000 + "]" * 5000 + "\n", ["s.yml:5", "scenarios[0].input", "nested more than 64 levels"]),
    ("a json_schema nested 5,000 deep", "name: x\nagent: agents_files:ok\nscenarios:\n  - name: s\n    input: hi\n"
     "    evaluator:\n      - json_schema: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
     ["s.yml:7", "scenarios[0].evaluator", "nested more than 64 levels"]),
]


@pytest.mark.parametrize(("case", "text", "words"), DEEP_SUITE, ids=[c[0] for c in DEEP_SUITE])
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_suite_nested_too_deep_is_exit_3(tmp_path: Path, case: str, text: str, words: list[str], command: str) -> None:
    (tmp_path / "agents_files.py").write_text(AGENTS)
    (tmp_path / "s.yml").write_text(text)
    done = _cli(tmp_path, command, "s.yml", "--no-store", "-q", *(["--baseline", "none.json"] if command == "check" else []))
    assert done.returncode == 3, (case, done.returncode, done.stderr[-2000:])
    _no_traceback(done)
    for word in [*words, "Flatten"]:
        assert word in done.stderr, (word, done.stderr)


def _otlp(attribute_value: Any) -> dict[str, Any]:
    span = {
        "traceId": "5e47c4a1d2b3c4d5e6f708192a3b4c5d", "spanId": "5e47c4a1d2b30002", "name": "chat x",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                       {"key": "deep", "value": attribute_value}],
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def _kvlist(depth: int) -> str:
    """A ``kvlistValue`` nested ``depth`` deep, written without recursion."""
    head = '{"kvlistValue": {"values": [{"key": "k", "value": '
    return head * depth + '{"stringValue": "x"}' + "}]}}" * depth


OTLP = [
    ("a span nested 50,000 deep", json.dumps(_otlp({"arrayValue": None})).replace(
        '{"arrayValue": null}', "[" * 50_000 + "]" * 50_000), ["line 1, offset", "JSON nested too deep"]),
    ("a document nested 50,000 deep", '{"resourceSpans": ' + "[" * 50_000 + "]" * 50_000 + "}",
     ["line 1", "JSON nested too deep"]),
    ("a 2,000-deep kvlistValue", json.dumps(_otlp(None)).replace("null", _kvlist(2000)), ["JSON nested too deep"]),
    ("a 100-deep kvlistValue (parses)", json.dumps(_otlp(None)).replace("null", _kvlist(100)),
     ["span '5e47c4a1d2b30002'", "attribute 'deep'", "nested more than 32 levels"]),
]


@pytest.mark.parametrize(("case", "text", "words"), OTLP, ids=[c[0] for c in OTLP])
def test_an_otlp_file_nested_too_deep_is_exit_3(tmp_path: Path, case: str, text: str, words: list[str]) -> None:
    (tmp_path / "agents_files.py").write_text(AGENTS)
    (tmp_path / "traces.json").write_text(text)
    suite = ROOT / "examples" / "customer_service" / "agentassay.yml"
    done = _cli(tmp_path, "analyze", "traces.json", "--suite", str(suite), "-q", "--store", "t.db")
    assert done.returncode == 3, (case, done.returncode, done.stderr[-2000:])
    _no_traceback(done)
    assert "traces.json" in done.stderr and "export the traces again" in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, (word, done.stderr)


# -- -o on a folder that cannot take the results ----------------------------------------------------------


def _file_size_limit(limit: int) -> Callable[[], None]:
    """A full filesystem, as root too: writes past ``limit`` bytes fail with EFBIG (SIGXFSZ ignored)."""

    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize(
    ("case", "output", "limit", "words"),
    [
        ("under a file, not a folder", "blocker/out.json", None, ["blocker/out.json", "blocker is a file, not a folder"]),
        ("a full filesystem", "out/out.json", 16 * 1024, ["out/out.json", "File too large"]),
    ],
)
def test_an_unwritable_output_is_refused_before_the_first_trial(
    tmp_path: Path, case: str, output: str, limit: int | None, words: list[str]
) -> None:
    _suite(tmp_path)
    (tmp_path / "blocker").write_text("a file")
    preexec = _file_size_limit(limit) if limit else None
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-q", "-o", output, preexec=preexec)
    assert done.returncode == 3, (case, done.returncode, done.stderr[-2000:])
    _no_traceback(done)
    assert "no trial was run" in done.stderr and "Pass `-o FILE` in a writable folder" in done.stderr, done.stderr
    for word in words:
        assert word in done.stderr, (word, done.stderr)
    assert not (tmp_path / "called.marker").exists()  # not one trial started
    leftovers = [p.name for p in tmp_path.rglob(".*") if p.is_file()]
    assert not leftovers, leftovers


def test_an_output_folder_lost_mid_run_keeps_the_results_in_a_temp_file(tmp_path: Path) -> None:
    _suite(tmp_path, agent="swap_out_dir", concurrency=1)
    keep = tmp_path / "tmp"
    keep.mkdir()
    done = _cli(tmp_path, "run", "s.yml", "--no-store", "-o", "outdir/out.json", env={"TMPDIR": str(keep)})
    assert done.returncode == 3, (done.returncode, done.stderr[-2000:])
    _no_traceback(done)
    kept = list(keep.glob("agentassay-out-*.json"))
    assert len(kept) == 1, list(keep.iterdir())
    assert "cannot write the results file outdir/out.json" in done.stderr and str(kept[0]) in done.stderr
    assert "outdir is a file, not a folder" in done.stderr, done.stderr
    data = json.loads(kept[0].read_text())  # nothing measured is lost
    assert [len(s["trials"]) for s in data["scenarios"]] == [6, 6]
    decision = data["decision"]["decision"].upper()
    assert f"The run's decision was {decision} (exit code {data['decision']['exit_code']})" in done.stderr
    assert decision in done.stdout  # the table is still printed
    assert (tmp_path / "outdir").is_file()  # the agent's swap happened; no temp file was left anywhere
    assert not [p for p in tmp_path.rglob(".out.json.*")]


def test_a_disk_that_fills_during_the_run_prints_the_results_to_stdout(tmp_path: Path) -> None:
    """The probe (64 kB) fits, the results file (> 128 kB) does not, nor does a temp file: stdout is left."""
    _suite(tmp_path, trials=150, concurrency=8)
    keep = tmp_path / "tmp"
    keep.mkdir()
    done = _cli(
        tmp_path, "run", "s.yml", "--no-store", "-q", "-o", "out/out.json", env={"TMPDIR": str(keep)},
        preexec=_file_size_limit(128 * 1024),
    )
    assert done.returncode == 3, (done.returncode, done.stderr[-2000:])
    _no_traceback(done)
    assert "cannot write the results file out/out.json (File too large)" in done.stderr, done.stderr
    assert "printed to stdout" in done.stderr and "The run's decision was" in done.stderr
    data = json.loads(done.stdout)  # the whole results file, every trial
    assert [len(s["trials"]) for s in data["scenarios"]] == [150, 150]
    assert not list((tmp_path / "out").iterdir()), "no 0-byte temp file is left beside the target"
    assert not list(keep.iterdir())


def test_the_shipped_schema_is_json_schema_and_jsonschema_agrees(base: dict[str, Any]) -> None:
    """The compiled checks (_results/_validate.py) and jsonschema itself give the same answer on every case whose
    problem is the schema's (jsonschema has no notion of a finite number, so the NaN case is the compiler's)."""
    import jsonschema

    from agentassay._results._validate import _check, schema

    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    reference = cls(schema())
    assert reference.is_valid(base) and _check()(base) is None
    for case, make, _ in RESULTS:
        try:
            data = json.loads(make(base))
        except (ValueError, RecursionError):
            continue  # refused before the schema: not UTF-8, too deep, too many digits
        if case in ("a NaN latency", "nested 100 deep (parses)") or case.startswith(("passes more", "decision counts")):
            continue  # the depth bound, finiteness and consistency are checked outside the schema
        assert not reference.is_valid(data) and _check()(data) is not None, case
