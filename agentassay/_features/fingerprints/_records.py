"""The fingerprints feature's data in the results file: each trial's ``fingerprint``, each scenario's
``fingerprint_trials`` (the sample fixed in advance) and its verdict's ``fingerprint`` (the shift test).

The kernel writes them flat where they always were (``TrialOutcome.data``, ``ScenarioResult.data``,
``ScenarioVerdict.data``) and reads them back through :data:`RECORDS`; the JSON Schema of these keys ships
beside this module (``results.schema.json``) and is merged into the kernel's on load.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..._spec._settings import FeatureRecords
from ._extract import fingerprint_of

if TYPE_CHECKING:
    from ..._results import ScenarioResult, TrialOutcome
    from ..._traces import Trace

TRIAL_KEY = "fingerprint"  # a trial's behavioural fingerprint ({feature: value})
SAMPLE_KEY = "fingerprint_trials"  # a scenario's fingerprint sample: its first n trials (fixed in advance)
VERDICT_KEY = "fingerprint"  # a verdict's shift test (_features/fingerprints/_gate.py)


def read_fingerprint(raw: object) -> dict[str, float] | None:
    """A trial's fingerprint from a file; a damaged one only costs the fingerprint test, never the file."""
    if not isinstance(raw, dict):
        return None
    try:
        return {str(k): float(v) for k, v in raw.items()}
    except (TypeError, ValueError):
        return None


def _count(raw: object) -> int | None:
    return None if raw is None else int(raw)  # type: ignore[call-overload]


def _mapping(raw: object) -> dict[str, Any] | None:
    return raw if isinstance(raw, dict) else None


def trial_data(trace: Trace) -> dict[str, Any] | None:
    """The fingerprint of a finished trial's trace, as the trial's data."""

    fp = fingerprint_of(trace)
    return None if fp is None else {TRIAL_KEY: fp}


def fingerprint(trial: TrialOutcome) -> dict[str, float] | None:
    return trial.data.get(TRIAL_KEY)


def shift_test(verdict: Any) -> dict[str, Any] | None:
    """A scenario verdict's fingerprint shift test (None: it did not run)."""
    return verdict.data.get(VERDICT_KEY)


def first_fingerprints(trials: Iterable[TrialOutcome], n: int | None) -> list[dict[str, float]]:
    """Fingerprints of trials ``0..n-1`` in index order (all when ``n`` is None)."""
    out = []
    for t in sorted(trials, key=lambda t: t.index):
        fp = t.data.get(TRIAL_KEY)
        if fp is not None and (n is None or t.index < n):
            out.append(fp)
    return out


def fingerprint_sample(scenario: ScenarioResult) -> list[dict[str, float]]:
    """The fingerprint sample a run fixed in advance (every fingerprinted trial in older files)."""
    return first_fingerprints(scenario.trials, scenario.data.get(SAMPLE_KEY))


def _schema() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("results.schema.json").read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(text).items() if k != "description"}


RECORDS = FeatureRecords(
    trial={TRIAL_KEY: read_fingerprint},
    scenario={SAMPLE_KEY: _count},
    verdict={VERDICT_KEY: _mapping},
    schema=_schema(),
)
