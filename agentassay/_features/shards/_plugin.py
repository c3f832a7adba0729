"""Shards (``--shard i/n``): this process runs scenario ``k`` (0-based, suite order) when ``k mod n == i - 1``.

Every level stays the whole suite's (``alpha / m`` with ``m`` all its scenarios) and trial seeds
depend on the scenario only, so each scenario gets the trials and the test an unsharded run gives it;
``agentassay merge`` then re-derives what spans scenarios (Holm, the decision). docs/runner.md, "Sharding".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookimpl
from ..._spec import SpecError
from ._merge import shard_note, shard_slice

if TYPE_CHECKING:
    from ..._runner import Run
    from ..._spec import Scenario


@hookimpl
def agentassay_configure(run: Run) -> tuple[Scenario, ...] | None:
    """This shard's scenarios (the runner narrows ``run.scenarios`` to them)."""

    shard = run.options.extra.get("shard")
    if shard is None:
        return None
    index, count = shard
    suite = run.suite
    file = str(suite.path) if suite.path else None
    m = len(suite.scenarios)
    if count > m:  # refused in every shard, not only the empty ones: the matrix itself is wrong
        raise SpecError(
            f"--shard {index}/{count}: the suite has {m} scenario{'s' * (m != 1)}, fewer than the {count} shards, "
            f"so {count - m} shard{'s' * (count - m != 1)} would have none; use at most {m} shards (--shard i/{m})",
            file=file,
        )
    if run.baseline is None and suite.settings.part("proxy").model is not None:
        # `check` may shard with a proxy: its plan comes from the baseline, its evidence is per scenario.
        raise SpecError(
            "a baseline with config.proxy cannot be recorded in shards: the proxy's rho and allocation are "
            "measured from paired runs pooled over the whole suite, so every shard would plan its own. "
            "Record the baseline without --shard (`check --shard` works with a proxy).",
            file=file,
            key="config.proxy",
        )
    return tuple(shard_slice(suite.scenarios, index, count))


@hookimpl
def agentassay_results_sections(run: Run) -> dict[str, Any] | None:

    if run.options.extra.get("shard") is None:
        return None
    index, count = run.options.extra.get("shard")
    run.note(shard_note(index, count, len(run.scenarios), run.m))
    return {"shard": {"index": index, "count": count, "scenarios_total": run.m, "suite_sha256": run.suite_info["sha256"]}}
