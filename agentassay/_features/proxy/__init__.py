"""The proxy model (``config.proxy``): a cheaper model's trials stand in for some target trials.

The hooks are in ``_plugin``, imported only when a run or a report uses this feature.
"""
