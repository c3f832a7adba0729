"""Statistics core: three-valued verdicts for agents whose behaviour is random.

Every procedure returns a small frozen result carrying ``.verdict`` (a :class:`Verdict`),
its evidence and ``.explain()``, one plain sentence a PR comment can show. Error rates of
every procedure are computed exactly in ``benchmarks/calibration.py`` and reported in
``docs/calibration.md``; ``docs/statistics.md`` states the semantics and the deviations
from the AgentAssay paper.
"""

from ._bayes import BayesianResult, bayesian_regression, regression_probability
from ._effects import EffectSizes, cohens_h, effect_sizes
from ._fidelity import (
    FidelityResult,
    ProxyAllocation,
    combine_proxy,
    fidelity_correlation,
    proxy_allocation,
)
from ._more import MoreTrials, trials_to_decide
from ._multiple import (
    adjust_pvalues,
    bonferroni_alpha,
    correct_regressions,
    deployment_decision,
    suite_verdict,
)
from ._onesample import ThresholdResult, proportion_ci, threshold_verdict
from ._power import (
    pass_probability,
    power_one_sample,
    power_two_sample,
    sample_size_one_sample,
    sample_size_two_sample,
)
from ._regression import RegressionResult, regression_verdict
from ._sequential import (
    SequentialCharacteristic,
    SequentialDesign,
    SequentialRegression,
    SequentialResult,
    sequential_regression,
)
from ._sprt import SPRT, SPRTCharacteristic, SPRTDesign, SPRTResult, sprt
from ._verdict import Decision, Verdict
from ._warm import WarmStart, warm_start

__all__ = [
    "SPRT",
    "BayesianResult",
    "Decision",
    "EffectSizes",
    "FidelityResult",
    "MoreTrials",
    "ProxyAllocation",
    "RegressionResult",
    "SPRTCharacteristic",
    "SPRTDesign",
    "SPRTResult",
    "SequentialCharacteristic",
    "SequentialDesign",
    "SequentialRegression",
    "SequentialResult",
    "ThresholdResult",
    "Verdict",
    "WarmStart",
    "adjust_pvalues",
    "bayesian_regression",
    "bonferroni_alpha",
    "cohens_h",
    "combine_proxy",
    "correct_regressions",
    "deployment_decision",
    "effect_sizes",
    "fidelity_correlation",
    "pass_probability",
    "power_one_sample",
    "power_two_sample",
    "proportion_ci",
    "proxy_allocation",
    "regression_probability",
    "regression_verdict",
    "sample_size_one_sample",
    "sample_size_two_sample",
    "sequential_regression",
    "sprt",
    "suite_verdict",
    "threshold_verdict",
    "trials_to_decide",
    "warm_start",
]
