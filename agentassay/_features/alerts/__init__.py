"""Change alerts: the baseline and the candidate ran in different conditions (docs/reports.md).

The hooks are in ``_plugin``, imported only when a run, a comparison or a report needs them.
"""

from ._alerts import Conditions, alerts_of, change_alerts

__all__ = ["Conditions", "alerts_of", "change_alerts"]
