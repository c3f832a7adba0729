"""The budget cap (``config.budget_usd``): no trial starts once the finished ones cost the budget.

The hooks are in ``_plugin``, imported only when a run or a report uses this feature.
"""
