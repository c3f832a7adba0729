"""Shards (``--shard i/n``): one process runs every n-th scenario; ``merge`` joins the files.

The hooks are in ``_plugin``, imported only when a run or a report uses this feature.
"""
