"""Metamorphic relations (paper Sec. 6.1, docs/metamorphic.md): a property over pairs of executions.

A relation transforms a scenario's input x into a follow-up x' = φ(x) (:class:`Transform`) and
checks each pair of a source trial and its follow-up, run with the same seed
(:class:`RelationCheck`); its violation rate is then tested against the baseline's as a regression
(Prop. 6.1, :func:`scenario_test`). The built-in plugin ``metamorphic`` runs the follow-ups and
hands the evidence to the gate; this package is the part that needs no run.
"""

from ._checks import CHECKS, RelationCheck, Side, normalise
from ._spec import DEFAULT_TRIALS, FAMILIES, Relation, config_trials, suite_relations
from ._stats import (
    CI_METHOD,
    KIND,
    SHARE,
    assess,
    bonferroni,
    by_name,
    interval,
    level_of,
    regression,
    scenario_test,
    untested_reason,
    words,
)
from ._transforms import NOISE, PARAPHRASES, TRANSFORMS, Transform, TransformError, rng_for

__all__ = [
    "CHECKS",
    "CI_METHOD",
    "DEFAULT_TRIALS",
    "FAMILIES",
    "KIND",
    "NOISE",
    "PARAPHRASES",
    "SHARE",
    "TRANSFORMS",
    "Relation",
    "RelationCheck",
    "Side",
    "Transform",
    "TransformError",
    "assess",
    "bonferroni",
    "by_name",
    "config_trials",
    "interval",
    "level_of",
    "normalise",
    "regression",
    "rng_for",
    "scenario_test",
    "suite_relations",
    "untested_reason",
    "words",
]
