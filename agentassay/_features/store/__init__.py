"""The trace store writer: every finished trial's trace goes into the SQLite store as it finishes.

The hooks are in ``_plugin``, imported only when a run or a report uses this feature.
"""
