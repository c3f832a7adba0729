"""Shards (``--shard i/n``): one process runs every n-th scenario; ``agentassay merge`` joins the files.

The run's hooks are in ``_plugin``, imported only when a run uses ``--shard``; ``merge_results`` is the merge.
"""

from ._merge import merge_results, shard_note, shard_slice

__all__ = ["merge_results", "shard_note", "shard_slice"]
