"""Trials of the offline simulator are independent: consecutive indices, and the run/check streams.

Issue 21, item 6. Under the offline model a trial's pass/fail is meant to be an independent
Bernoulli draw given its scenario, so the sequential tests' error guarantees hold. A stream of
trial seeds that correlated neighbouring indices (or a shared RNG, a cache keyed too coarsely,
state carried between trials) would show up as clustered passes/failures. For every scenario of
the bundled customer-service example this generates the outcomes of ``N`` consecutive trial
indices under roles ``run`` and ``check`` and applies:

* the Wald-Wolfowitz runs test (runs of passes/failures against their exact mean and variance
  given the counts; two-sided p from the normal approximation),
* a lag-1 autocorrelation check (``r1`` is about ``N(-1/n, 1/n)`` under independence),
* a cross-stream check: index ``i`` under ``run`` against index ``i`` (and ``i +- 1``) under
  ``check``; failing together more often than chance (exact hypergeometric tail given the
  margins) would mean the check stream replays the baseline's.

Everything is seeded, so the p-values are fixed numbers, not flaky ones; nothing depends on timing.

How the outcomes are produced (cheap, and faithful): running the real SDK ``Runner`` for 40,000
trials takes minutes, so each trial walks a *replay tree* instead. A trial through the offline model
is a pure function of its seed: the SDK calls ``OfflineModel._decide`` with what the agent is shown,
``_decide`` draws from ``random.Random(hash(seed, agent, instructions, tools, handoffs,
conversation))``, and the SDK's next step (a real tool, a real handoff) depends only on the model's
output. The tree is built from real trials (``Engine._trial``, exactly what the runner calls for one
trial, on the adapter the suite loads, with the evaluator the suite builds): each model call is
recorded with its arguments, and each path ends in the evaluator's verdict. Walking it for a new seed
calls the very same ``OfflineModel._decide`` with the recorded arguments; whenever the model picks an
output the tree has not seen, the real trial is run and added. The only thing the replay reuses from
another seed is the response/call ids inside the recorded conversation, which ``_decide`` does not
read (``_read_conversation`` ignores them): this is asserted below (every node reached by a later real
trial must show the model the same thing, every leaf must get the same verdict), and a sample of
indices per scenario and role is re-run through the real engine and compared with the walk.
"""

from __future__ import annotations

import asyncio
import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agentassay._evaluators import build_evaluator
from agentassay._integrations.adapters import load_adapter
from agentassay._integrations.adapters._offline import OfflineModel, _read_conversation
from agentassay._runner import Engine, ScenarioState, trial_seed
from agentassay._spec import load_suite

SUITE = Path(__file__).resolve().parents[3] / "examples" / "customer_service" / "agentassay.yml"
N = 5000  # consecutive trial indices per scenario and role
SPOT_EVERY = 125  # every SPOT_EVERY-th index is also run through the real engine and compared
ALPHA = 0.001
SEED = 7  # config.seed of the example; pinned so an edit of the suite cannot move the p-values
ROLES = ("run", "check")


# -- the replay tree -------------------------------------------------------------------------------
def _output_key(items: Sequence[Any]) -> tuple[Any, ...]:
    """What of a model response the SDK acts on (ids left out: the model never reads them back)."""
    key: list[Any] = []
    for item in items:
        if getattr(item, "type", None) == "function_call":
            key.append(("call", item.name, item.arguments))
        else:
            key.append(("message", tuple(getattr(part, "text", "") for part in item.content)))
    return tuple(key)


def _shown(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Everything of one model call that ``_decide`` hashes, except the seed."""
    agent, instructions, input, _settings, tools, _schema, handoffs = args
    handoff_tools = {h.tool_name for h in handoffs}
    conv = _read_conversation(input, handoff_tools)
    return (
        agent,
        instructions,
        tuple(getattr(t, "name", "") for t in tools),
        tuple(sorted(handoff_tools)),
        conv,
    )


@dataclass
class _Node:
    args: tuple[Any, ...]  # the arguments of OfflineModel._decide (minus self)
    shown: tuple[Any, ...]
    children: dict[tuple[Any, ...], _Node | bool | None] = field(default_factory=dict)  # leaf: passed


class _RecordingModel(OfflineModel):
    def __init__(self, behaviour: Any, seed: int, log: list[tuple[tuple[Any, ...], Any]]) -> None:
        super().__init__(behaviour, seed)
        self.log = log

    def _decide(self, *args: Any) -> Any:  # type: ignore[override]
        output = super()._decide(*args)
        agent, instructions, input, *rest = args
        snapshot = (agent, instructions, copy.deepcopy(input), *rest)
        self.log.append((snapshot, output[0]))
        return output


class Trials:
    """Pass/fail of trial ``index`` of a scenario, as the runner would record it (see the module doc)."""

    def __init__(self) -> None:
        suite = load_suite(SUITE)
        search = [Path.cwd(), suite.root]
        self.suite = suite
        self.settings = suite.settings
        self.adapter = load_adapter(suite.agent.entry, model=suite.model, search=search, root=suite.root)
        self.behaviour = self.adapter._behaviour  # type: ignore[attr-defined]
        assert self.behaviour is not None, "the example must run on the offline model"
        self.scenarios = {s.name: s for s in suite.scenarios}
        self.evaluators = {
            s.name: build_evaluator(s, file=suite.path, search=search) for s in suite.scenarios
        }
        self.roots: dict[str, _Node] = {}
        self.real_trials = 0

    def real(self, scenario: str, role: str, index: int, seed: int) -> bool | None:
        """One trial through the runner's own code, recording the model calls into the tree."""
        state = ScenarioState(self.scenarios[scenario], self.evaluators[scenario], None, 1)  # type: ignore[arg-type]
        engine = Engine(
            suite_name=self.suite.name,
            adapter=self.adapter,
            settings=replace(self.settings, seed=seed),
            states={scenario: state},
            role=role,
            agent_version="test",
            run_id="independence",
        )
        log: list[tuple[tuple[Any, ...], Any]] = []
        original = self.adapter._model_for  # type: ignore[attr-defined]
        self.adapter._model_for = lambda s: _RecordingModel(self.behaviour, s, log)  # type: ignore[attr-defined]
        try:
            _, outcome, _ = asyncio.run(engine._trial(state, index))
        finally:
            self.adapter._model_for = original  # type: ignore[attr-defined]
        self.real_trials += 1
        assert outcome.seed == trial_seed(seed, role, scenario, index)
        assert outcome.error is None, outcome.error
        self._insert(scenario, log, outcome.passed)
        return outcome.passed

    def _insert(self, scenario: str, log: list[tuple[tuple[Any, ...], Any]], passed: bool | None) -> None:
        assert log, "an offline trial asks the model at least once"
        root = self.roots.get(scenario)
        if root is None:
            root = self.roots[scenario] = _Node(log[0][0], _shown(log[0][0]))
        node = root
        for j, (args, output) in enumerate(log):
            assert node.shown == _shown(args), "the same path showed the model different things"
            key = _output_key(output)
            if j == len(log) - 1:
                known = node.children.setdefault(key, passed)
                assert known is passed, "the same path got a different verdict"
            else:
                nxt = log[j + 1][0]
                child = node.children.setdefault(key, _Node(nxt, _shown(nxt)))
                assert isinstance(child, _Node), "a path ended in one trial and went on in another"
                node = child

    def walk(self, scenario: str, seed: int) -> tuple[bool, bool | None]:
        """(found, passed): replay the trial with this trial seed on the tree."""
        node = self.roots.get(scenario)
        if node is None:
            return False, None
        model = OfflineModel(self.behaviour, seed)
        while True:
            output, _usage = model._decide(*node.args)
            child = node.children.get(_output_key(output), _MISSING)
            if child is _MISSING:
                return False, None
            if not isinstance(child, _Node):
                return True, child  # type: ignore[return-value]
            node = child

    def outcome(self, scenario: str, role: str, index: int, seed: int) -> bool | None:
        found, passed = self.walk(scenario, trial_seed(seed, role, scenario, index))
        return passed if found else self.real(scenario, role, index, seed)

    def sequence(self, scenario: str, role: str, seed: int, n: int) -> list[bool]:
        out = [self.outcome(scenario, role, i, seed) for i in range(n)]
        assert all(o is not None for o in out), "no error trials are expected offline"
        return [bool(o) for o in out]


_MISSING = object()


# -- statistics ------------------------------------------------------------------------------------
def _two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2))


def runs_test(xs: Sequence[bool]) -> tuple[int, float, float, float]:
    """Wald-Wolfowitz: (runs, expected runs, z, two-sided p) given the numbers of passes and failures."""
    n1 = sum(xs)
    n2 = len(xs) - n1
    n = n1 + n2
    assert n1 > 0 and n2 > 0, "the runs test needs both outcomes"
    runs = 1 + sum(a != b for a, b in pairwise(xs))
    mean = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    z = (runs - mean) / math.sqrt(var)
    return runs, mean, z, _two_sided(z)


def lag1(xs: Sequence[bool]) -> tuple[float, float, float]:
    """(r1, z, two-sided p): lag-1 autocorrelation, about N(-1/n, 1/n) for an independent sequence."""
    n = len(xs)
    m = sum(xs) / n
    d = [x - m for x in xs]
    r1 = sum(a * b for a, b in pairwise(d)) / sum(v * v for v in d)
    z = (r1 + 1 / n) * math.sqrt(n)
    return r1, z, _two_sided(z)


def co_failures(a: Sequence[bool], b: Sequence[bool]) -> tuple[int, float, float]:
    """(both failed, expected, P(X >= observed)) with X hypergeometric given both streams' failures."""
    n = len(a)
    fa, fb = a.count(False), b.count(False)
    both = sum(not x and not y for x, y in zip(a, b, strict=True))
    total = math.comb(n, fb)
    tail = sum(math.comb(fa, j) * math.comb(n - fa, fb - j) for j in range(both, min(fa, fb) + 1))
    return both, fa * fb / n, tail / total


# -- the tests -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str], list[bool]]:
    trials = Trials()
    seed = SEED
    result = {(sc, role): trials.sequence(sc, role, seed, N) for sc in trials.scenarios for role in ROLES}
    # The walk is the runner: re-run a sample through the real engine and compare, index by index.
    for (sc, role), xs in result.items():
        for i in range(0, N, SPOT_EVERY):
            assert trials.real(sc, role, i, seed) is xs[i], f"{sc}/{role}[{i}]: replay and runner differ"
    return result


SCENARIOS = ("seat_change", "baggage", "wifi", "out_of_scope")


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_consecutive_trials_are_independent(
    outcomes: dict[tuple[str, str], list[bool]], scenario: str, role: str
) -> None:
    xs = outcomes[scenario, role]
    rate = sum(xs) / len(xs)
    assert 0.9 < rate < 1.0, f"{scenario}/{role}: pass rate {rate:.3f} is not what the behaviour table gives"
    runs, mean, z, p = runs_test(xs)
    assert p > ALPHA, f"{scenario}/{role}: {runs} runs, expected {mean:.1f} (z={z:.2f}, p={p:.2g})"
    r1, z1, p1 = lag1(xs)
    assert p1 > ALPHA, f"{scenario}/{role}: lag-1 autocorrelation {r1:.4f} (z={z1:.2f}, p={p1:.2g})"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_check_stream_is_fresh(outcomes: dict[tuple[str, str], list[bool]], scenario: str) -> None:
    run, check = outcomes[scenario, "run"], outcomes[scenario, "check"]
    assert run != check
    for lag in (-1, 0, 1):  # index i of `check` against index i + lag of `run`
        a = run[max(lag, 0) : len(run) + min(lag, 0)]
        b = check[max(-lag, 0) : len(check) + min(-lag, 0)]
        both, expected, p = co_failures(a, b)
        assert p > ALPHA, (
            f"{scenario} lag {lag}: {both} trials failed in both streams, {expected:.1f} expected (p={p:.2g})"
        )


def test_trial_seeds_are_reproducible_and_disjoint_between_roles() -> None:
    assert trial_seed(7, "run", "out_of_scope", 3) == trial_seed(7, "run", "out_of_scope", 3)
    seeds = {trial_seed(7, role, sc, i) for role in ROLES for sc in SCENARIOS for i in range(N)}
    assert len(seeds) == len(ROLES) * len(SCENARIOS) * N
