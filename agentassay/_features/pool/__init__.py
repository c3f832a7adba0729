"""Pooled baselines (``run --full --pool``): a recording joins the previous baseline's trials.

The hooks are in ``_plugin``, imported only when a run or a report uses this feature.
"""
