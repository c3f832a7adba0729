"""Change alerts: the baseline and the candidate ran in different conditions (docs/reports.md).

The hooks are in ``_plugin``, imported only when a run or a report uses this feature.
"""
