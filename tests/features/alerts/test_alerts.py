"""Change alerts: a comparison warns when the baseline and the candidate ran in different conditions (model,
provider, SDK or agentassay version, suite file, age, cost or latency per trial), in the results file, the
terminal, the PR comment and the HTML report, the same in `check`, `compare` and `merge`; never in a verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentassay._features.alerts import Conditions, change_alerts
from agentassay._features.alerts._settings import AlertsConfig
from agentassay._results import Results, TrialOutcome, load_results
from agentassay._spec import SpecError, parse_suite

ROOT = Path(__file__).resolve().parents[3]
SUITE = str(ROOT / "examples" / "customer_service" / "agentassay.yml")
QUICK = ["--trials", "6", "--method", "fixed", "--no-store", "-q"]
HOSTILE = "gpt-4.1-mini <img src=x onerror=alert(1)> | `x` *y*"


def trials(usd: float | None = 0.001, latency: float = 1.0, n: int = 5) -> tuple[TrialOutcome, ...]:
    return tuple(TrialOutcome(index=i, passed=True, seed=i, usd=usd, latency_s=latency) for i in range(n))


def side(**over: Any) -> Conditions:
    """One side of a comparison as a results file records it; ``over`` replaces fields."""
    agent = {
        "config": {
            "framework": "openai-agents",
            "sdk_version": "0.24.0",
            "model": {"provider": "openai", "name": "gpt-4.1"},
            "agents": [{"name": "Triage Agent", "model": None}, {"name": "FAQ Agent", "model": "gpt-4.1-nano"}],
        }
    }
    base: dict[str, Any] = {
        "suite": {"name": "s", "sha256": "a" * 64},
        "agent": agent,
        "versions": {"agentassay": "0.1.0", "openai-agents": "0.24.0"},
        "started_at": "2020-01-01T00:00:00.000+00:00",
        "trials": {"one": trials(), "two": trials()},
    }
    base.update(over)
    return Conditions(**base)


def kinds(alerts: list[dict[str, Any]]) -> list[str]:
    return [a["kind"] for a in alerts]


# -- the comparison itself -------------------------------------------------------------------------


def test_no_alert_when_nothing_differs() -> None:
    assert change_alerts(side(), side()) == []


def test_model_name_change_is_one_line_naming_both() -> None:
    cand = side()
    cand.agent["config"]["model"]["name"] = "gpt-4.1-mini"
    base = side()
    assert change_alerts(base, cand) == [
        {
            "kind": "model",
            "message": "baseline ran on model gpt-4.1, candidate on gpt-4.1-mini — a verdict may reflect the model change",
            "baseline": "gpt-4.1",
            "candidate": "gpt-4.1-mini",
        }
    ]


def test_each_condition_has_its_own_alert_in_a_fixed_order() -> None:
    cand = side(
        suite={"name": "s", "sha256": "b" * 64},
        versions={"agentassay": "0.2.0", "openai-agents": "0.25.1"},
        started_at="2020-03-01T00:00:00.000+00:00",
    )
    cfg = cand.agent["config"]
    cfg["model"] = {"provider": "litellm", "name": "anthropic/claude"}
    cfg["agents"][1]["model"] = "gpt-4o"
    got = change_alerts(side(), cand)
    assert kinds(got) == ["suite", "model", "provider", "agent_model", "sdk", "agentassay", "age"]
    by = {a["kind"]: a for a in got}
    assert by["agent_model"]["agent"] == "FAQ Agent"
    assert "agent 'FAQ Agent': baseline ran on model gpt-4.1-nano, candidate on gpt-4o" in by["agent_model"]["message"]
    assert (by["sdk"]["baseline"], by["sdk"]["candidate"]) == ("0.24.0", "0.25.1")
    assert "aaaaaaaaaaaa… → bbbbbbbbbbbb…" in by["suite"]["message"]
    assert by["age"]["days"] == 60.0 and "60.0 days older" in by["age"]["message"]


def test_a_field_only_one_side_recorded_raises_nothing() -> None:
    cand = side(versions={}, suite={"name": "s", "sha256": None}, agent={"config": {"error": "boom"}}, started_at="")
    assert change_alerts(side(), cand) == []
    # and malformed files (hand-edited JSON) never raise
    odd = side(agent={"config": ["not", "a", "mapping"]}, versions=None, suite=None, started_at="yesterday")
    assert change_alerts(odd, side()) == []


def test_age_is_measured_from_the_candidates_start_not_the_clock() -> None:
    # Both sides years in the past: only their distance matters, so the alerts of two files never change.
    assert change_alerts(side(), side(started_at="2020-01-31T00:00:00.000+00:00")) == []
    got = change_alerts(side(), side(started_at="2020-02-01T00:00:00.000+00:00"))
    assert kinds(got) == ["age"] and got[0]["days"] == 31.0
    assert change_alerts(side(), side(started_at="2020-01-11T00:00:00+00:00"), AlertsConfig(max_age_days=7))
    # a baseline newer than the candidate is not "old"
    assert change_alerts(side(started_at="2021-01-01T00:00:00+00:00"), side()) == []


def test_cost_jump_names_the_scenarios_beyond_the_ratio() -> None:
    cand = side(trials={"one": trials(usd=0.003), "two": trials(usd=0.001)})
    [alert] = change_alerts(side(), cand)
    assert alert["kind"] == "cost" and alert["ratio"] == 2.0 and alert["scenarios"] == {"one": 3.0}
    assert alert["message"].startswith("cost per trial rose ×2.00 (baseline $0.001, candidate $0.002;")
    assert "beyond ×1.5 in one ×3.00" in alert["message"]
    # below the ratio, or a ratio raised in the suite: no alert
    assert change_alerts(side(), side(trials={"one": trials(usd=0.0014), "two": trials(usd=0.001)})) == []
    assert change_alerts(side(), cand, AlertsConfig(cost_ratio=4)) == []


def test_a_cost_drop_alerts_too_and_unpriced_trials_are_no_data() -> None:
    [alert] = change_alerts(side(), side(trials={"one": trials(usd=0.0004), "two": trials(usd=0.0004)}))
    assert alert["ratio"] == 0.4 and "cost per trial fell ×0.40" in alert["message"]
    unpriced = side(trials={"one": trials(usd=None), "two": trials(usd=None)})
    assert change_alerts(side(), unpriced) == [] and change_alerts(unpriced, side()) == []


def test_latency_needs_the_ratio_and_the_floor() -> None:
    fast = side(trials={"one": trials(latency=0.01), "two": trials(latency=0.01)})
    slower = side(trials={"one": trials(latency=0.05), "two": trials(latency=0.05)})
    assert change_alerts(fast, slower) == []  # x5, but 40 ms: timer noise of a fast agent
    assert kinds(change_alerts(fast, slower, AlertsConfig(latency_floor_s=0))) == ["latency"]
    slow = side(trials={"one": trials(latency=2.5), "two": trials(latency=2.5)})
    [alert] = change_alerts(side(), slow)
    assert alert["kind"] == "latency" and alert["ratio"] == 2.5
    assert "median seconds per trial in each scenario" in alert["message"]
    # the offline simulator's latency is the machine's load, not a model's: never compared
    slow.agent["config"]["model"]["provider"] = "offline"
    assert kinds(change_alerts(side(), slow)) == ["provider"]


def test_alerts_off() -> None:
    cand = side(suite={"name": "s", "sha256": "b" * 64})
    assert change_alerts(side(), cand, AlertsConfig(enabled=False)) == []


# -- the suite key -------------------------------------------------------------------------------

SUITE_WITH = "agent: tickets:route\nconfig:\n  regression:\n    alerts:\n{body}scenarios:\n  - input: hi\n    evaluator: {{contains: a}}\n"


def test_config_key_is_read() -> None:
    body = "      max_age_days: 7\n      cost_ratio: 2\n      latency_ratio: 3\n      latency_floor_s: 0\n"
    got = parse_suite(SUITE_WITH.format(body=body)).settings.of(AlertsConfig)
    assert got == AlertsConfig(max_age_days=7, cost_ratio=2, latency_ratio=3, latency_floor_s=0)
    off = parse_suite(SUITE_WITH.format(body="").replace("alerts:\n", "alerts: false\n"))
    assert off.settings.of(AlertsConfig) == AlertsConfig(enabled=False)


@pytest.mark.parametrize(
    ("body", "key", "words"),
    [
        ("      cost_ratio: -1.5\n", "config.regression.alerts.cost_ratio", "expected a ratio > 1"),
        ("      latency_ratio: fast\n", "config.regression.alerts.latency_ratio", "got 'fast' (string)"),
        ("      max_age_days: 0\n", "config.regression.alerts.max_age_days", "a number of days > 0"),
        ("      latency_floor_s: -1\n", "config.regression.alerts.latency_floor_s", "seconds >= 0"),
        ("      cost_ration: 2\n", "config.regression.alerts.cost_ration", "Did you mean 'cost_ratio'?"),
    ],
)
def test_bad_config_names_file_line_and_key(body: str, key: str, words: str, tmp_path: Path) -> None:
    path = tmp_path / "agentassay.yml"
    with pytest.raises(SpecError) as info:
        parse_suite(SUITE_WITH.format(body=body), path=path)
    assert (info.value.line, info.value.key) == (5, key)
    assert str(info.value).startswith(f"{path}:5: {key}: ") and words in str(info.value)


def test_bad_config_exits_3_in_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentassay._integrations.cli import main

    path = tmp_path / "agentassay.yml"
    path.write_text(SUITE_WITH.format(body="      cost_ratio: -2\n"), encoding="utf-8")
    assert main(["check", str(path), "--baseline", str(tmp_path / "none.json"), "-q", "--no-store"]) == 3
    err = capsys.readouterr().err
    assert f"{path}:5: config.regression.alerts.cost_ratio: expected a ratio > 1" in err


def test_settings_carry_alerts_only_when_set() -> None:
    from dataclasses import replace

    from agentassay._gate import SuiteDecision
    from agentassay._spec import Settings
    from agentassay._stats import Decision, Verdict

    r = Results("run", {"name": "s"}, {}, Settings(), (), SuiteDecision(Verdict.PASS, Decision.DEPLOY, {}, "holm"), "id", "", "")
    assert "alerts" not in r.to_dict()["settings"]  # files of suites without the key are as before
    custom = replace(r, settings=Settings().with_parts(AlertsConfig(cost_ratio=3)))
    d = custom.to_dict()
    assert d["settings"]["alerts"]["cost_ratio"] == 3
    assert Results.from_dict(d).settings.of(AlertsConfig) == AlertsConfig(cost_ratio=3)
    d["settings"]["alerts"] = "damaged"  # a hand-edited file still loads, with the defaults
    assert Results.from_dict(d).settings.of(AlertsConfig) == AlertsConfig()


# -- end to end on the offline example -------------------------------------------------------------


@pytest.fixture()
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A baseline of the customer-service example, and a copy whose recorded model is another one."""
    pytest.importorskip("agents")
    from agentassay._integrations.cli import main

    monkeypatch.chdir(ROOT)
    base = tmp_path / "base.json"
    assert main(["run", SUITE, "-o", str(base), *QUICK]) in (0, 2)
    data = json.loads(base.read_text(encoding="utf-8"))
    data["agent"]["config"]["model"]["name"] = HOSTILE  # recorded with another (hostile) model name
    other = tmp_path / "other-model.json"
    other.write_text(json.dumps(data), encoding="utf-8")
    return base, other


def test_check_against_another_model_shows_the_alert_everywhere(
    recorded: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentassay._integrations.cli import main
    from agentassay._reports import render_html, render_pr_comment

    base, other = recorded
    same, cand = tmp_path / "same.json", tmp_path / "cand.json"
    code_same = main(["check", SUITE, "--baseline", str(base), "-o", str(same), *QUICK])
    capsys.readouterr()
    code = main(["check", SUITE, "--baseline", str(other), "-o", str(cand), "--no-store", "--trials", "6",
                 "--method", "fixed"])
    out = capsys.readouterr().out
    line = f"baseline ran on model {HOSTILE}, candidate on offline-simulator — a verdict may reflect the model change"

    # the results file carries it; nothing else differs, so nothing else is said
    results = load_results(cand)
    assert results.sections["alerts"] == [
        {"kind": "model", "message": line, "baseline": HOSTILE, "candidate": "offline-simulator"}
    ]
    assert "alerts" not in json.loads(same.read_text(encoding="utf-8"))  # no alert when nothing differs
    # alerts never change a verdict
    assert code == code_same
    assert [s.verdict.verdict for s in results.scenarios] == [s.verdict.verdict for s in load_results(same).scenarios]

    # terminal: before the table
    assert out.startswith(f"warning: {line}\n\nscenario ")

    # PR comment rendered from the results: the line, escaped, in the warnings before the table
    comment = render_pr_comment(results)
    escaped = (
        "> - ⚠ baseline ran on model gpt-4.1-mini &lt;img src=x onerror=alert(1)&gt; \\| \\`x\\` \\*y\\*, "
        "candidate on offline-simulator — a verdict may reflect the model change"
    )
    assert escaped in comment.splitlines()
    assert comment.index(escaped) < comment.index("| scenario |")
    assert "<img" not in comment
    assert "> - ⚠" not in render_pr_comment(load_results(same))  # no alert line (⚠️ is also MANUAL's icon)

    # HTML: in the warnings, escaped
    page = render_html(results).html
    assert "⚠ baseline ran on model gpt-4.1-mini &lt;img src=x onerror=alert(1)&gt; | `x` *y*, candidate on" in page
    assert "<img src=x" not in page

    # compare of the two files gives the same alerts
    cmp_out = tmp_path / "compare.json"
    assert main(["compare", str(other), str(cand), "-o", str(cmp_out), "-q"]) == code
    assert load_results(cmp_out).sections["alerts"] == results.sections["alerts"]
    plain = tmp_path / "compare-same.json"
    assert main(["compare", str(base), str(same), "-o", str(plain), "-q"]) == code_same
    assert "alerts" not in json.loads(plain.read_text(encoding="utf-8"))


def test_merge_of_shards_gives_the_alerts_of_one_check(recorded: tuple[Path, Path], tmp_path: Path) -> None:
    from agentassay._integrations.cli import main

    _, other = recorded
    data = json.loads(other.read_text(encoding="utf-8"))
    for s in data["scenarios"]:  # the baseline's trials cost a third: the candidate's cost tripled
        for t in s["trials"]:
            t["usd"] = t["usd"] / 3
    other.write_text(json.dumps(data), encoding="utf-8")
    shards = [tmp_path / f"shard{i}.json" for i in (1, 2)]
    for i, path in enumerate(shards, 1):
        main(["check", SUITE, "--baseline", str(other), "--shard", f"{i}/2", "-o", str(path), *QUICK])
    merged = tmp_path / "merged.json"
    main(["merge", *map(str, shards), "--baseline", str(other), "-o", str(merged), "-q"])
    whole = tmp_path / "whole.json"
    main(["check", SUITE, "--baseline", str(other), "-o", str(whole), *QUICK])
    got, want = load_results(merged), load_results(whole)
    assert kinds(got.sections["alerts"]) == ["model", "cost"]
    assert got.sections["alerts"] == want.sections["alerts"]
    assert got.sections["alerts"][1]["ratio"] == pytest.approx(3, rel=0.05)  # other seeds, nearly the same tokens
    assert not any("could not be merged" in n for n in got.notes)
