"""The hook the shards feature adds (registered by the plugin manager from its registry entry, ``hookspecs``):
``agentassay merge`` lets every plugin make its results sections again for the whole suite."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._plugins._hookspecs import hookspec

if TYPE_CHECKING:
    from ..._results import Results


@hookspec
def agentassay_merge_sections(
    shards: Sequence[Results], sources: Sequence[str], names: Sequence[str], notes: list[str]
) -> Mapping[str, Any] | None:
    """``agentassay merge``: sections this plugin makes for the whole suite from its shards' files
    (``shards`` in shard order, ``sources`` their file names, ``names`` the suite's scenarios in
    suite order). A key returned replaces the key-by-key union of the shards' values (``None``:
    leave it out). ``notes`` are the merged file's notes so far: append what could not be merged,
    and drop the shards' notes that this plugin makes again for the whole suite."""
