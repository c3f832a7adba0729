"""The LLM judge (docs/judge.md): a check of the scenario that grades each trace k times, caches every
answer in the trace store, splits the pass grades' variance into the judge's share and the agent's,
and reports it all. Offline throughout: the scripted customer-service judge, and an OpenAI-compatible
judge served by a real HTTP server on 127.0.0.1 inside the test."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentassay._features.judge import (
    GradeError,
    Judge,
    JudgeConfig,
    Reply,
    attribution,
    grade_traces,
    judge_configs,
    parse_reply,
)
from agentassay._integrations.cli import main
from agentassay._reports import render_html, render_pr_comment, render_table
from agentassay._results import load_results
from agentassay._spec import ModelConfig, load_suite
from agentassay._spec._model import Extension
from agentassay._traces import Action, Step, Trace, TraceStore

RUBRIC = "The reply tells the customer their new seat number and does not promise a refund."
SEAT = "I'd like to change my seat to 14C. My confirmation number is ABC123."

SUITE = """\
name: cs-judge
agent: examples.customer_service.v1:triage_agent
model: offline
config:
  trials: {trials}
  method: fixed
  concurrency: 4
  seed: 11
  prices:
{prices}
judge:
{judge}
scenarios:
  - name: seat_change
    input: "{seat}"
    evaluator:
      - contains: "14C"
  - name: seat_change_3a
    input: "Please move me to seat 3A, my confirmation number is XYZ789."
    evaluator:
      - must_call: update_seat
"""

NOISY = f"""\
  rubric: "{RUBRIC}"
  model: {{provider: offline, behaviour: "examples.customer_service.judge:noisy_seat_judge"}}
  repeats: 3
"""


def write_suite(
    tmp_path: Path,
    judge: str = NOISY,
    *,
    trials: int = 20,
    prices: str = '    "*": {input: 0.40, output: 1.60}',
) -> Path:
    path = tmp_path / "suite.yml"
    path.write_text(
        SUITE.format(trials=trials, prices=prices, judge=judge.rstrip("\n"), seat=SEAT), encoding="utf-8"
    )
    return path


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# -- the offline judge in a run ------------------------------------------------------------------


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run of the customer-service example with the noisy scripted judge, 3 repeats, a trace store."""
    tmp = tmp_path_factory.mktemp("judged")
    suite = write_suite(tmp)
    db, out = tmp / "traces.db", tmp / "results.json"
    code = main(["run", str(suite), "--store", str(db), "-o", str(out), "-q"])
    return {"code": code, "suite": suite, "db": db, "results": load_results(out)}


def test_run_records_disagreement_and_variance_split(judged_run: dict[str, Any]) -> None:
    results = judged_run["results"]
    assert judged_run["code"] in (0, 1, 2)
    section = results.sections["judge"]
    assert section["repeats"] == 3 and section["scale"] == "pass_fail" and section["rubric"] == RUBRIC
    assert section["cache"] == "store"
    for scenario in results.scenarios:
        info = section["scenarios"][scenario.name]
        graded = {i: g for i, g in info["grades"]}
        assert info["trials_graded"] == len(graded) and info["trials_graded"] + info["not_graded"] == len(
            scenario.trials
        )
        assert all(len(g) == 3 for g in graded.values())
        # Every repeat is either a fresh call or a cache hit (the scripted judge never needs a retry).
        assert info["calls"] + info["cache_hits"] == 3 * info["trials_graded"]
        # The split, recomputed from the grades in the file, is what the section says.
        rows = [graded[i] for i in sorted(graded)]
        split = attribution(rows, [[bool(x) for x in r] for r in rows])
        assert info["disagreement"] == pytest.approx(split.disagreement, abs=1e-6)
        v = info["variance"]
        assert v["judge"] == pytest.approx(split.judge_variance, abs=1e-6)
        assert v["agent"] == pytest.approx(split.agent_variance, abs=1e-6)
        assert v["total"] == pytest.approx(v["judge"] + v["agent"], abs=1e-5)
        assert "judge_share" in info and "judge_share_se" in info
        # The judge is a check: a trial passes iff its own checks pass and a majority of repeats grade pass.
        for t in scenario.trials:
            if t.index in graded:
                majority = sum(graded[t.index]) >= 2
                assert t.passed is majority
                if not majority:
                    assert t.failures[0].startswith("judge: ")
            else:
                assert t.passed is False and not any(f.startswith("judge") for f in t.failures)
    # The noisy judge (flip 0.15) disagrees with itself somewhere across the graded contents.
    assert any(s["disagreement"] > 0 for s in section["scenarios"].values())


def test_reports_show_the_judge_section_and_its_cost(judged_run: dict[str, Any]) -> None:
    results = judged_run["results"]
    table = render_table(results)
    assert "LLM judge:" in table and "seat_change: " in table and "disagreement" in table
    assert "judge share" in table and "(+ $0.0000 judge)" in table  # the scripted judge spends no tokens
    comment = render_pr_comment(results)
    assert "LLM judge" in comment and "judge share" in comment
    html = render_html(results).html
    assert "LLM judge" in html and "disagreement" in html


def test_grade_traces_twice_costs_no_new_call(judged_run: dict[str, Any]) -> None:
    suite = load_suite(judged_run["suite"])
    config = judge_configs(suite)["seat_change"]
    results = judged_run["results"]
    with TraceStore(judged_run["db"]) as store:
        rows = store.run(results.run_id)
        items = [(r.input or "", r.trace) for r in rows]
        first, stats1 = grade_traces(config, items, store=store, prices=suite.settings.prices)
        second, stats2 = grade_traces(config, items, store=store, prices=suite.settings.prices)
    assert stats2.calls == 0 and stats2.hits == 3 * stats2.graded == 3 * len(items)
    assert stats1.calls + stats1.hits == 3 * len(items)
    assert [g.grades for g in first] == [g.grades for g in second]
    # The run's own grades came from the same cache: re-grading gives the grades the run used.
    graded = {
        (s.name, i): g
        for s in results.scenarios
        for i, g in results.sections["judge"]["scenarios"][s.name]["grades"]
    }
    for row, g in zip(rows, first, strict=True):
        if (row.scenario, row.trial) in graded:
            assert list(g.grades) == graded[(row.scenario, row.trial)]
    # From the path too (what `agentassay analyze` passes), and still no call.
    _, stats3 = grade_traces(config, items, store=judged_run["db"])
    assert stats3.calls == 0 and stats3.usd is None  # no prices given: unpriced, never "free"


# -- the judge as a unit ---------------------------------------------------------------------------


def _trace(output: Any, *, tools: tuple[tuple[str, Any], ...] = (), error: str | None = None) -> Trace:
    steps = tuple(Step(Action.CALL_TOOL, agent="a", tool=name, arguments=args) for name, args in tools)
    return Trace(steps=(*steps, Step(Action.RESPOND, agent="a")), output=output, error=error)


SCRIPTED = '''\
import random

def graded(*, input, output, rubric, seed):
    """1-5: a 5 when the output mentions the seat, else a 2; noise: +-1 at random."""
    base = 5 if "14C" in str(output) else 2
    return max(1, min(5, base - random.Random(seed).choice((0, 0, 1)))), "seat named" if base == 5 else "no seat"

def bad(*, input, output, rubric, seed):
    return "maybe"

not_a_function = 3
'''


@pytest.fixture
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "judge_scripts.py").write_text(SCRIPTED, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "judge_scripts"


def test_one_to_five_scale_uses_the_mean_grade(scripted: str) -> None:
    config = JudgeConfig(
        RUBRIC, ModelConfig("offline", behaviour=f"{scripted}:graded"), scale="1-5", threshold=4.5, repeats=4
    )
    items = [(SEAT, _trace(f"Moved you to 14C ({i})")) for i in range(40)] + [(SEAT, _trace("Done."))]
    grades, stats = grade_traces(config, items)
    for g in grades:
        assert g.passed is (sum(g.grades) / 4 >= 4.5)
        assert g.passes == tuple(x >= 4.5 for x in g.grades)
    assert grades[-1].passed is False and "grade" in (grades[-1].failure() or "")
    assert stats.graded == 41 and stats.calls == 41 * 4 and stats.hits == 0
    assert stats.attribution.disagreement is not None and stats.attribution.disagreement > 0


def test_unreadable_scripted_grade_is_an_error_with_its_reason(scripted: str) -> None:
    config = JudgeConfig(RUBRIC, ModelConfig("offline", behaviour=f"{scripted}:bad"), repeats=2)
    (g,), stats = grade_traces(config, [(SEAT, _trace("14C"))])
    assert g.passed is None and "not pass/fail" in (g.error or "") and "after one retry" in (g.error or "")
    assert g.calls == 2 and stats.errors == 1 and stats.graded == 0
    assert (g.failure() or "").startswith("judge error: ")


def test_error_trace_is_not_graded(scripted: str) -> None:
    config = JudgeConfig(RUBRIC, ModelConfig("offline", behaviour=f"{scripted}:graded"), scale="1-5")
    (g,), stats = grade_traces(config, [(SEAT, _trace(None, error="timed out"))])
    assert g.skipped and g.calls == 0 and stats.skipped == 1 and stats.graded == 0


def test_one_key_is_graded_once_under_concurrent_asks() -> None:
    """Many threads grading the same content at once make exactly k calls (the rest wait, then hit)."""
    gate = threading.Barrier(8)
    calls: list[int] = []
    lock = threading.Lock()

    def grader(request: Any, seed: int) -> Reply:
        with lock:
            calls.append(seed)
        return Reply(value=(True, "ok"))

    config = JudgeConfig(RUBRIC, ModelConfig("offline", behaviour="x:y"), repeats=3)
    judge = Judge(config, grader=grader)
    out: list[Any] = []

    def work() -> None:
        gate.wait()
        out.append(judge.grade(SEAT, _trace("14C")))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 3 and len(set(calls)) == 3  # one seed per repeat
    assert sum(g.calls for g in out) == 3 and sum(g.hits for g in out) == 8 * 3 - 3


def test_a_hosted_judge_model_is_priced_by_the_table_with_no_config_prices() -> None:
    """Issue 25: the judge's tokens are priced like the agent's: config.prices, else the maintained table."""
    pytest.importorskip("genai_prices")
    from agentassay._runner._cost import usd_for

    def grader(request: Any, seed: int) -> Reply:
        return Reply(value=(True, "ok"), input_tokens=1_000, output_tokens=100)

    hosted = JudgeConfig(RUBRIC, ModelConfig("openai", name="gpt-4.1-mini"))
    judge = Judge(hosted, grader=grader)
    grade = judge.grade(SEAT, _trace("14C"))
    table = usd_for(1_000, 100, "gpt-4.1-mini", {}, "openai")
    assert judge.priced and table and grade.usd == pytest.approx(table)
    mine = Judge(hosted, grader=grader, prices={"gpt-4.1-mini": {"input": 1.0, "output": 1.0}})
    assert mine.grade(SEAT, _trace("14C")).usd == pytest.approx(1_100 / 1e6)  # config.prices wins
    unknown = Judge(JudgeConfig(RUBRIC, ModelConfig("openai", name="my-judge-7b")), grader=grader)
    assert not unknown.priced and unknown.grade(SEAT, _trace("14C")).usd is None  # unpriced, never free


def test_cache_key_covers_content_tools_rubric_and_model() -> None:
    seen: list[int] = []

    def grader(request: Any, seed: int) -> Reply:
        seen.append(seed)
        return Reply(value=True)

    base = JudgeConfig(RUBRIC, ModelConfig("offline", behaviour="x:y"))
    judge = Judge(base, grader=grader)
    judge.grade(SEAT, _trace("14C"))
    judge.grade(SEAT, _trace("14C"))  # same content: a hit
    judge.grade(SEAT, _trace("14C", tools=(("update_seat", {"new_seat": "14C"}),)))  # tools differ
    judge.grade("other input", _trace("14C"))
    assert len(seen) == 3
    other = Judge(replace(base, rubric="Another rubric."), cache=judge.cache, grader=grader)
    assert other.grade(SEAT, _trace("14C")).calls == 1
    model = Judge(
        replace(base, model=ModelConfig("offline", behaviour="x:z")), cache=judge.cache, grader=grader
    )
    assert model.grade(SEAT, _trace("14C")).calls == 1


@pytest.mark.parametrize(
    ("text", "scale", "grade", "reason"),
    [
        ('{"grade": true, "reason": "names 14C"}', "pass_fail", True, "names 14C"),
        ('```json\n{"grade": false, "reason": "no seat"}\n```', "pass_fail", False, "no seat"),
        ('Sure! Here it is: {"Grade": "PASS", "reason": "ok"} Hope that helps.', "pass_fail", True, "ok"),
        ('{"note": 1} then {"score": "4", "explanation": "mostly"}', "1-5", 4, "mostly"),
        ('{"grade": 3.5}', "1-5", 3.5, ""),
    ],
)
def test_replies_are_read_defensively(text: str, scale: str, grade: Any, reason: str) -> None:
    assert parse_reply(Reply(text=text), scale) == (grade, reason)


@pytest.mark.parametrize(
    ("text", "scale"),
    [
        ("It passes.", "pass_fail"),
        ('{"grade": 7}', "1-5"),
        ('{"grade": true}', "1-5"),
        ('{"grade": "maybe"}', "pass_fail"),
        ('{"reason": "no grade"}', "pass_fail"),
    ],
)
def test_replies_without_a_grade_are_errors(text: str, scale: str) -> None:
    with pytest.raises(GradeError):
        parse_reply(Reply(text=text), scale)


def test_attribution_by_hand() -> None:
    # 4 traces, 2 repeats: p = 1, 1, 0.5, 0. W = mean(2 p(1-p)) = 0.125; Var(p) = 0.22917; B = Var(p) - W/2.
    rows = [[True, True], [True, True], [True, False], [False, False]]
    a = attribution(rows, rows)
    assert a.disagreement == 0.25 and a.pass_disagreement == 0.25
    assert a.judge_variance == pytest.approx(0.125)
    var_p = (sum((x - 0.625) ** 2 for x in (1, 1, 0.5, 0))) / 3
    assert a.agent_variance == pytest.approx(var_p - 0.0625)
    assert a.total_variance == pytest.approx(a.judge_variance + a.agent_variance)
    assert a.judge_share is not None and 0 <= a.judge_share <= 1 and a.judge_share_se is not None
    # A judge that never disagrees with itself has no share; one repeat cannot tell the two apart.
    assert (
        attribution([[True] * 3, [False] * 3, [True] * 3], [[True] * 3, [False] * 3, [True] * 3]).judge_share
        == 0
    )
    one = attribution([[True], [False], [True]], [[True], [False], [True]])
    assert (
        one.judge_share is None and one.judge_variance is None and one.total_variance == pytest.approx(1 / 3)
    )
    # Nothing varies: the share is undefined, not 0 or 1.
    assert attribution([[True, True]] * 5, [[True, True]] * 5).judge_share is None


def test_scenario_judge_overrides_the_suite_judge(tmp_path: Path) -> None:
    """Key by key over the suite's judge; `judge: false` turns it off (built as the loader keeps them)."""
    suite = load_suite(write_suite(tmp_path))
    s0, s1 = suite.scenarios
    suite = replace(
        suite,
        scenarios=(
            replace(
                s0, extensions={"judge": Extension("scenarios[0].judge", {"repeats": 5, "scale": "1-5"}, 20)}
            ),
            replace(s1, extensions={"judge": Extension("scenarios[1].judge", False, 25)}),
        ),
    )
    configs = judge_configs(suite)
    assert set(configs) == {"seat_change"}
    c = configs["seat_change"]
    assert (c.repeats, c.scale, c.threshold, c.rubric) == (5, "1-5", 4.0, RUBRIC)
    assert c.model.behaviour == "examples.customer_service.judge:noisy_seat_judge"


def test_scenario_judge_in_a_run(tmp_path: Path) -> None:
    """A per-scenario judge through run_suite: only that scenario's evaluator is wrapped."""
    from agentassay._runner import run_suite

    path = tmp_path / "suite.yml"
    path.write_text(
        write_suite(tmp_path, judge="", trials=6).read_text().replace("judge:\n", ""), encoding="utf-8"
    )
    suite = load_suite(path)
    s0, s1 = suite.scenarios
    value = {
        "rubric": RUBRIC,
        "repeats": 2,
        "model": {"provider": "offline", "behaviour": "examples.customer_service.judge:seat_judge"},
    }
    suite = replace(
        suite, scenarios=(s0, replace(s1, extensions={"judge": Extension("scenarios[1].judge", value, 20)}))
    )
    report = run_suite(suite, progress=False, handle_signals=False)
    section = report.results.sections["judge"]
    assert list(section["scenarios"]) == ["seat_change_3a"]
    assert section["scenarios"]["seat_change_3a"]["repeats"] == 2 and section["repeats"] == 2


# -- a real OpenAI-compatible judge over HTTP --------------------------------------------------------


class _Server:
    """A chat-completions endpoint on 127.0.0.1: grades by whether the output names 14C.

    Inputs containing GARBLE get prose with no JSON; those containing RATE get one 429 first.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.limited: set[str] = set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])) or b"{}")
                with server.lock:
                    server.requests.append(
                        {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                    )
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": "not found"}})
                    return
                user = body["messages"][-1]["content"]
                output = user.split("The agent's final output:\n", 1)[1].split("\n\nTools", 1)[0]
                if "RATE" in user:
                    with server.lock:
                        first = user not in server.limited
                        server.limited.add(user)
                    if first:
                        self._send(
                            429,
                            {"error": {"message": "slow down", "type": "rate_limit"}},
                            {"Retry-After": "0"},
                        )
                        return
                if "GARBLE" in user:
                    text = "I think the reply is fine overall."
                else:
                    ok = "14C" in output
                    text = (
                        "```json\n"
                        + json.dumps({"grade": ok, "reason": "names 14C" if ok else "no seat"})
                        + "\n```"
                    )
                self._send(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
                    },
                )

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    s.thread.start()
    try:
        yield s
    finally:
        s.httpd.shutdown()
        s.httpd.server_close()


def http_judge(server: _Server, repeats: int = 2) -> str:
    return (
        f'  rubric: "{RUBRIC}"\n'
        f'  model: {{provider: openai-compatible, name: judge-mini, base_url: "{server.base_url}", '
        "api_key_env: TEST_JUDGE_KEY}\n"
        f"  repeats: {repeats}\n"
    )


def test_openai_compatible_judge_over_http(
    server: _Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TEST_JUDGE_KEY", "sk-test-judge")
    prices = '    "judge-mini": {input: 1.0, output: 2.0}\n    "*": {input: 0.40, output: 1.60}'
    suite = write_suite(tmp_path, http_judge(server), trials=8, prices=prices)
    out = tmp_path / "r.json"
    code, table, _err = run_cli(["run", str(suite), "--no-store", "-o", str(out)], capsys)
    assert code in (0, 1, 2)
    section = load_results(out).sections["judge"]
    assert section["cache"] == "memory" and section["label"] == "judge-mini"
    calls = len(server.requests)
    assert calls > 0 and section["calls"] == calls
    assert all(
        r["path"] == "/v1/chat/completions" and r["auth"] == "Bearer sk-test-judge" for r in server.requests
    )
    assert all(r["body"]["model"] == "judge-mini" for r in server.requests)
    prompt = server.requests[0]["body"]["messages"]
    assert (
        RUBRIC in prompt[-1]["content"]
        and "update_seat" in prompt[-1]["content"]
        and "JSON" in prompt[0]["content"]
    )
    assert section["input_tokens"] == 100 * calls and section["output_tokens"] == 20 * calls
    assert section["usd"] == pytest.approx(calls * (100 * 1.0 + 20 * 2.0) / 1e6)
    seat = section["scenarios"]["seat_change"]
    assert seat["judge_passed"] == seat["trials_graded"] > 0  # every graded reply names 14C
    assert f"(+ ${section['usd']:.4f} judge)" in table and "judge-mini (pass_fail, 2 repeats)" in table


def test_http_judge_retries_rate_limits_and_reports_unreadable_replies(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_JUDGE_KEY", "k")
    config = JudgeConfig(
        RUBRIC,
        ModelConfig(
            "openai-compatible", name="judge-mini", base_url=server.base_url, api_key_env="TEST_JUDGE_KEY"
        ),
    )
    items = [("RATE me", _trace("Moved to 14C")), ("GARBLE me", _trace("Moved to 14C"))]
    grades, stats = grade_traces(config, items, prices={"judge-mini": {"input": 1.0, "output": 2.0}})
    limited, garbled = grades
    assert limited.passed is True and limited.calls == 2  # the 429, then the answer
    assert garbled.passed is None and "no JSON object with a grade" in (garbled.error or "")
    assert "after one retry" in (garbled.error or "") and garbled.calls == 2
    assert stats.calls == len(server.requests) == 4 and stats.errors == 1
    # Tokens of every answered request count, the unreadable ones too (they were paid for).
    assert stats.input_tokens == 300 and stats.usd == pytest.approx(3 * 140 / 1e6)
    # An error is not cached: asking again asks the server again.
    again, _ = grade_traces(config, items[1:])
    assert again[0].calls == 2


# -- bad input: exit 3, naming the key -------------------------------------------------------------

BAD = [
    ("no-model", f'  rubric: "{RUBRIC}"', ["judge.model", "required"]),
    (
        "no-rubric",
        '  model: {provider: offline, behaviour: "examples.customer_service.judge:seat_judge"}',
        ["judge.rubric", "required"],
    ),
    (
        "unknown-provider",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: openia, name: x}}',
        ["judge.model.provider", "unknown provider 'openia'", "openai"],
    ),
    (
        "unknown-scale",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: openai, name: gpt-4.1-mini}}\n  scale: 1-10',
        ["judge.scale", "unknown scale", "pass_fail, 1-5"],
    ),
    (
        "threshold",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: offline, behaviour: "examples.customer_service.judge:seat_judge"}}'
        "\n  scale: 1-5\n  threshold: 6",
        ["judge.threshold", "between 1 and 5"],
    ),
    (
        "repeats",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: offline, behaviour: "examples.customer_service.judge:seat_judge"}}'
        "\n  repeats: 0",
        ["judge.repeats", ">= 1"],
    ),
    (
        "offline-no-behaviour",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: offline}}',
        ["judge.model.behaviour", "the offline simulator cannot grade text", "behaviour: module:function"],
    ),
    (
        "behaviour-import",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: offline, behaviour: "no_such_module_xyz:judge"}}',
        ["judge.model.behaviour", "cannot import module 'no_such_module_xyz'"],
    ),
    (
        "behaviour-not-callable",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: offline, behaviour: "examples.customer_service.judge:_SEAT"}}',
        ["judge.model.behaviour", "is not callable"],
    ),
    (
        "behaviour-missing",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: offline, behaviour: "examples.customer_service.judge:nope"}}',
        ["judge.model.behaviour", "has no attribute 'nope'"],
    ),
    (
        "real-no-name",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: litellm}}',
        ["judge.model.name", "required for provider 'litellm'"],
    ),
    (
        "compat-no-url",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: openai-compatible, name: m, api_key_env: K}}',
        ["judge.model.base_url", "required"],
    ),
    (
        "unknown-key",
        f'  rubric: "{RUBRIC}"\n  model: {{provider: openai, name: m}}\n  repeat: 3',
        ["judge.repeat", "Did you mean 'repeats'"],
    ),
    ("not-a-mapping", "  - rubric", ["judge", "expected a mapping"]),
]


@pytest.mark.parametrize(("case", "judge", "fragments"), BAD, ids=[b[0] for b in BAD])
def test_bad_judge_is_exit_3_naming_the_key(
    case: str,
    judge: str,
    fragments: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("AGENTASSAY_TEST_UNSET_KEY", raising=False)
    suite = write_suite(tmp_path, judge)
    code, _out, err = run_cli(["run", str(suite), "--no-store", "-q"], capsys)
    assert code == 3, err
    assert "suite.yml:" in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_a_judge_whose_key_is_unset_is_exit_4_before_any_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The judge's provider goes through the agent's preflight (issue 22, defect 11): the judge cannot be run."""
    monkeypatch.delenv("AGENTASSAY_TEST_UNSET_KEY", raising=False)
    judge = (
        f'  rubric: "{RUBRIC}"\n  model: {{provider: openai-compatible, name: m, base_url: "http://127.0.0.1:9/v1", '
        "api_key_env: AGENTASSAY_TEST_UNSET_KEY}"
    )
    code, _out, err = run_cli(["run", str(write_suite(tmp_path, judge)), "--no-store", "-q"], capsys)
    assert code == 4, err
    assert "suite.yml:" in err and "judge.model.api_key_env" in err and "AGENTASSAY_TEST_UNSET_KEY" in err
    assert "which is not set, so no trial was run" in err


def test_scenario_judge_key_is_accepted_by_the_loader(tmp_path: Path) -> None:
    path = write_suite(tmp_path)
    text = path.read_text().replace(
        "      - must_call: update_seat\n", "      - must_call: update_seat\n    judge: false\n"
    )
    path.write_text(text)
    suite = load_suite(path)
    assert "judge" in suite.scenarios[1].extensions


def test_judge_noise_free_is_reproducible(tmp_path: Path) -> None:
    """Seeds are per (content, repeat): two fresh caches give the same grades to the same traces."""
    config = JudgeConfig(
        RUBRIC,
        ModelConfig("offline", behaviour="examples.customer_service.judge:noisy_seat_judge"),
        repeats=5,
    )
    items = [(SEAT, _trace(f"Updated seat to 14C, ref {i}.")) for i in range(30)]
    a, sa = grade_traces(config, items)
    b, sb = grade_traces(config, items)
    assert [g.grades for g in a] == [g.grades for g in b] and sa.calls == sb.calls == 150
    flips = sum(1 for g in a for x in g.grades if not x) / 150
    assert 0 < flips < 0.4 and math.isclose(sa.attribution.judge_share or 0, sb.attribution.judge_share or 0)
