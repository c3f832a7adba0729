"""Per-run plugin state with a type, the way pytest's ``_pytest/stash.py`` keeps it.

A plugin makes one :class:`StashKey` at module level and keeps its state under it in ``run.stash``.
The key object itself is the key, so two plugins can never collide on a name, and it carries the
value's type, so ``run.stash[KEY]`` is typed for a type checker without a cast.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast

__all__ = ["Stash", "StashKey"]

T = TypeVar("T")
D = TypeVar("D")


class StashKey(Generic[T]):
    """A key of a :class:`Stash`: make one per piece of state, at module level (``KEY = StashKey[int]()``)."""

    __slots__ = ()


class Stash:
    """A map from :class:`StashKey` to values of the key's type: a plugin's own state for one run."""

    __slots__ = ("_storage",)

    def __init__(self) -> None:
        self._storage: dict[StashKey[Any], object] = {}

    def __setitem__(self, key: StashKey[T], value: T) -> None:
        self._storage[key] = value

    def __getitem__(self, key: StashKey[T]) -> T:
        """The value under ``key``; ``KeyError`` if none was set."""
        return cast(T, self._storage[key])

    def get(self, key: StashKey[T], default: D) -> T | D:
        """The value under ``key``, or ``default``."""
        try:
            return self[key]
        except KeyError:
            return default

    def setdefault(self, key: StashKey[T], default: T) -> T:
        """The value under ``key``; ``default`` (now stored) if none was set."""
        try:
            return self[key]
        except KeyError:
            self[key] = default
            return default

    def __delitem__(self, key: StashKey[T]) -> None:
        del self._storage[key]

    def __contains__(self, key: StashKey[T]) -> bool:
        return key in self._storage

    def __len__(self) -> int:
        return len(self._storage)
