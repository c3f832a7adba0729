"""Plugins: the run's lifecycle as hooks (pluggy, as in pytest), and the built-in features on them.

A plugin is a module (or object) with functions named after the hooks in
``agentassay._plugins._hookspecs`` marked ``@hookimpl``; it is installed through the ``agentassay``
entry-point group, ``-p MODULE`` on the command line, or ``AGENTASSAY_PLUGINS``. The built-in
features (agentassay/features) are plugins on the same hooks, each imported only when a run needs it.
docs/architecture.md lists the hooks, their order, and which plugin implements which; a plugin keeps
its own state for a run under a :class:`StashKey` in ``run.stash``.
"""

from ._hookspecs import hookimpl, hookspec
from ._manager import (
    ENTRY_POINT_GROUP,
    ENV_PLUGINS,
    Hooks,
    PluginError,
    PluginFailure,
    Plugins,
    builtin_names,
    default_plugins,
)
from ._stash import Stash, StashKey

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENV_PLUGINS",
    "Hooks",
    "PluginError",
    "PluginFailure",
    "Plugins",
    "Stash",
    "StashKey",
    "builtin_names",
    "default_plugins",
    "hookimpl",
    "hookspec",
]
