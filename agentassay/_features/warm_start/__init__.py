"""Warm starts (``run --warm-start``): recorded trials warm each threshold SPRT's PASS rule.

The hooks are in ``_plugin``, imported only when a run or a report uses this feature.
"""
