"""Which plugins a run uses, and calling their hooks so that one failing plugin costs no measurement.

Built-in plugins are the features' ``_plugin`` modules (agentassay/features, listed by name in its
``BUILTINS``), each imported only when a run (or a report) needs it: ``agentassay run`` of a plain callable
imports only the two that every run uses. Other
plugins come, as in pytest, from the ``agentassay`` entry-point group of installed distributions,
from ``-p MODULE`` on the command line and from ``AGENTASSAY_PLUGINS`` (comma-separated modules);
``-p no:NAME`` blocks one, built-ins included.

Hooks are called by pluggy's own loop (ordering, ``tryfirst`` / ``trylast``, ``wrapper=True`` hook
wrappers, ``firstresult``), and each implementation is isolated by a guard around it (:class:`Hooks`):
one that raises is recorded as a :class:`PluginFailure`, disabled for the rest of the run, and named
in the results' notes; the run goes on with every trial it measured. Input errors raised before the first trial
(``propagate``) still stop the run with exit code 3, as a bad suite does.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pluggy

from .._errors import AgentAssayError
from .._spec._settings import BuiltinPlugin as Builtin
from .._spec._settings import builtins
from . import _hookspecs
from ._hookspecs import PROJECT

ENTRY_POINT_GROUP = "agentassay"
ENV_PLUGINS = "AGENTASSAY_PLUGINS"
WHERE = ("suite", "config", "scenario")


class PluginError(AgentAssayError):
    """A plugin cannot be loaded or is malformed (exit code 3): the message names it and the fix."""


def _builtins() -> tuple[Builtin, ...]:
    return builtins()


_imported: dict[str, Any] = {}  # entry points and -p modules, imported once per process


@dataclass(frozen=True)
class PluginFailure:
    """A hook implementation that raised: which plugin, in which hook, and what."""

    plugin: str
    hook: str
    error: str

    def note(self) -> str:
        return (
            f"plugin '{self.plugin}' raised in {self.hook}: {self.error}; it was disabled for the rest of the run "
            "and every trial measured is kept"
        )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Context(threading.local):
    """What the current call in this thread lets through (``propagate``) and the value being chained."""

    propagate: tuple[type[BaseException], ...] = ()
    chain: list[Any] | None = None  # [value]: agentassay_decide / agentassay_decide_files


# Hooks whose implementations are chained: each gets, as this argument, the value the previous one returned.
CHAINED = {"agentassay_decide": "decision", "agentassay_decide_files": "decision"}


class Hooks:
    """The plugins of one run or report: a pluggy manager whose implementations are each guarded.

    pluggy's own call loop calls them (order, ``tryfirst`` / ``trylast``, ``wrapper=True`` hook wrappers,
    ``firstresult``); the guard around each implementation is the isolation: one that raises is recorded
    as a :class:`PluginFailure`, its plugin is disabled for the rest of the run, and it returns None.
    """

    def __init__(self, manager: pluggy.PluginManager) -> None:
        self.manager = manager
        self.failures: list[PluginFailure] = []
        self._disabled: set[str] = set()
        self._context = _Context()
        for caller in manager.hook.__dict__.values():
            for impl in getattr(caller, "get_hookimpls", list)():
                self._guard(caller.name, impl)

    @property
    def names(self) -> list[str]:
        """Registered plugin names, in call order."""
        return [name for name, _ in reversed(self.manager.list_name_plugin())]

    def _impls(self, hook: str) -> list[Any]:
        caller = getattr(self.manager.hook, hook)
        return [i for i in reversed(caller.get_hookimpls()) if i.plugin_name not in self._disabled]

    def call(self, hook: str, *, propagate: tuple[type[BaseException], ...] = (), **kwargs: Any) -> list[Any]:
        """Every implementation through pluggy, in its order; the non-None results. One that raises (other
        than a ``propagate`` type) is recorded, disabled, and returns None."""
        ctx = self._context
        saved = ctx.propagate
        if not propagate and not saved:  # the per-trial hooks: nothing to set or restore
            return getattr(self.manager.hook, hook)(**kwargs)  # type: ignore[no-any-return]
        ctx.propagate = propagate
        try:
            return getattr(self.manager.hook, hook)(**kwargs)  # type: ignore[no-any-return]
        finally:
            ctx.propagate = saved

    def chain(self, hook: str, key: str, value: Any, **kwargs: Any) -> Any:
        """Each implementation gets the value the previous one returned (None: unchanged) as ``key``."""
        assert CHAINED.get(hook) == key, f"{hook} is not chained on {key!r}"
        ctx = self._context
        saved, ctx.chain = ctx.chain, [value]
        held = ctx.chain
        try:
            self.call(hook, **{key: value}, **kwargs)
        finally:
            ctx.chain = saved
        return held[0]

    def fail(self, plugin: str, hook: str, exc: BaseException) -> None:
        self._disabled.add(plugin)
        self.failures.append(PluginFailure(plugin, hook, _describe(exc)))

    def _guard(self, hook: str, impl: Any) -> None:
        """Replace ``impl.function`` with its isolated form (pluggy reads the arguments from the original)."""
        fn, plugin, ctx, disabled = impl.function, impl.plugin_name, self._context, self._disabled
        chained = impl.argnames.index(CHAINED[hook]) if CHAINED.get(hook) in impl.argnames else None

        if impl.wrapper:
            guarded = self._guard_wrapper(hook, fn, plugin)
        elif chained is None:

            def guarded(*args: Any, **kw: Any) -> Any:
                if plugin in disabled:
                    return None
                try:
                    return fn(*args, **kw)
                except ctx.propagate:
                    raise
                except Exception as exc:
                    self.fail(plugin, hook, exc)
                    return None

        else:

            def guarded(*args: Any, **kw: Any) -> Any:
                if plugin in disabled:
                    return None
                held = ctx.chain
                if held is not None:
                    args = (*args[:chained], held[0], *args[chained + 1 :])
                try:
                    result = fn(*args, **kw)
                except ctx.propagate:
                    raise
                except Exception as exc:
                    self.fail(plugin, hook, exc)
                    return None
                if held is not None and result is not None:
                    held[0] = result
                return result

        guarded.__wrapped__ = fn  # type: ignore[attr-defined]
        impl.function = guarded

    def _guard_wrapper(self, hook: str, fn: Any, plugin: str) -> Any:
        """A ``wrapper=True`` implementation, isolated: if it raises (before or after its ``yield``), it is
        recorded and disabled, and the hook's own result or exception goes on as if it were not there."""
        ctx, disabled = self._context, self._disabled

        def guarded(*args: Any, **kw: Any) -> Any:
            if plugin in disabled:
                return (yield)
            try:
                gen = fn(*args, **kw)
                next(gen)
            except ctx.propagate:
                raise
            except Exception as exc:
                self.fail(plugin, hook, exc if not isinstance(exc, StopIteration) else RuntimeError("did not yield"))
                return (yield)
            try:
                result = yield
            except BaseException as exc:  # an inner implementation's error (a ``propagate`` one): the wrapper's to see
                try:
                    gen.throw(exc)
                except StopIteration as stop:
                    return stop.value
                except BaseException as err:
                    if err is exc or isinstance(err, ctx.propagate) or not isinstance(err, Exception):
                        raise
                    self.fail(plugin, hook, err)
                    raise exc from None
                gen.close()
                self.fail(plugin, hook, RuntimeError("has a second yield"))
                raise
            try:
                gen.send(result)
            except StopIteration as stop:
                return stop.value
            except ctx.propagate:
                raise
            except Exception as exc:
                self.fail(plugin, hook, exc)
                return result
            gen.close()
            self.fail(plugin, hook, RuntimeError("has a second yield"))
            return result

        return guarded


def _builtin(module: str) -> Any:
    # __import__ rather than importlib.import_module: the import statement's path, which
    # `python -X importtime` reports (benchmarks/startup.py shows which built-ins a run loaded).
    return __import__(module, fromlist=["_"])


def _import(module: str, origin: str) -> Any:
    if module in _imported:
        return _imported[module]
    try:
        obj = __import__(module, fromlist=["_"])
    except Exception as exc:
        raise PluginError(
            f"plugin {module!r} ({origin}) could not be imported: {_describe(exc)}. Install it, fix it, or block it "
            f"with `-p no:{module}`"
        ) from exc
    _imported[module] = obj
    return obj


class Plugins:
    """Which plugins to use: ``specs`` are module names (``-p MODULE``), ``no:NAME`` to block one, or
    plugin objects; entry points of the ``agentassay`` group and ``AGENTASSAY_PLUGINS`` are added
    unless ``entry_points`` is False. Cheap to make: nothing is imported until a run asks."""

    def __init__(self, specs: Sequence[str | object] = (), *, entry_points: bool = True) -> None:
        self.blocked = {s[3:] for s in specs if isinstance(s, str) and s.startswith("no:")}
        self.modules = [s for s in specs if isinstance(s, str) and not s.startswith("no:")]
        self.objects = [s for s in specs if not isinstance(s, str)]
        self.entry_points = entry_points
        if entry_points:
            env = os.environ.get(ENV_PLUGINS, "")
            self.modules += [m.strip() for m in env.split(",") if m.strip() and m.strip() not in self.modules]
        self._external: list[tuple[str, Any]] | None = None

    def without(self, *names: str) -> Plugins:
        """The same plugins with ``names`` blocked (``-p no:NAME``), e.g. the store writer in a replay."""
        out = self.with_objects()
        out.blocked |= set(names)
        return out

    def with_objects(self, *objects: Any) -> Plugins:
        """The same plugins plus ``objects`` (plugin objects for one run, e.g. a feature's own)."""
        out = Plugins(entry_points=False)
        out.blocked, out.modules, out.objects = (
            set(self.blocked),
            list(self.modules),
            [*self.objects, *objects],
        )
        out.entry_points = self.entry_points
        out._external = None
        return out

    def external(self) -> list[tuple[str, Any]]:
        """(name, plugin) of every plugin that is not built in, imported on first use."""
        if self._external is not None:
            return self._external
        found: list[tuple[str, Any]] = []
        if self.entry_points:
            from importlib.metadata import entry_points

            for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
                if ep.name in self.blocked or any(n == ep.name for n, _ in found):
                    continue
                found.append((ep.name, _load_ep(ep)))
        for module in self.modules:
            if module not in self.blocked and all(n != module for n, _ in found):
                found.append((module, _import(module, "-p / AGENTASSAY_PLUGINS")))
        for obj in self.objects:
            found.append((getattr(obj, "__name__", None) or type(obj).__name__, obj))
        self._external = found
        return found

    def suite_keys(self) -> dict[str, dict[str, str]]:
        """Keys of agentassay.yml that plugins own: ``{where: {key: plugin}}`` (hook agentassay_suite_keys)."""
        hooks = self.hooks(())
        out: dict[str, dict[str, str]] = {w: {} for w in WHERE}
        for impl in hooks._impls("agentassay_suite_keys"):
            for where, key in impl.function.__wrapped__() or ():
                if where not in WHERE:
                    raise PluginError(
                        f"plugin {impl.plugin_name!r}: agentassay_suite_keys gave {(where, key)!r}; "
                        f"'where' must be one of {', '.join(WHERE)}"
                    )
                out[where][str(key)] = impl.plugin_name
        return out

    def hooks(self, builtins: Iterable[str], extra: Iterable[tuple[str, Any]] = ()) -> Hooks:
        """A fresh manager: the external plugins, then ``extra`` and the named built-ins (called first)."""
        pm = pluggy.PluginManager(PROJECT)
        pm.add_hookspecs(_hookspecs)
        for b in _builtins():  # hooks a feature adds (pytest's pytest_addhooks): cheap modules of specs only
            if b.hookspecs:
                pm.add_hookspecs(__import__(b.hookspecs, fromlist=["_"]))
        for name, plugin in [*self.external(), *extra]:
            _register(pm, plugin, name)
        wanted = set(builtins) - self.blocked
        for b in reversed(_builtins()):
            if b.name in wanted:
                _register(pm, _builtin(b.module), b.name)
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            name = pm.get_name(exc.plugin) or repr(exc.plugin)
            raise PluginError(
                f"plugin {name!r}: {exc}; the hooks are listed in docs/architecture.md"
            ) from exc
        return Hooks(pm)

    def for_run(self, run: Any, extra: Iterable[tuple[str, Any]] = ()) -> Hooks:
        return self.hooks([b.name for b in _builtins() if b.for_run(run)], extra)

    def for_results(self, results: Any) -> Hooks:
        return self.hooks([b.name for b in _builtins() if b.for_results(results)])

    def for_plan(self, plan: Any) -> Hooks:
        return self.hooks([b.name for b in _builtins() if b.for_plan(plan)])

    def for_files(self, files: Sequence[Any]) -> Hooks:
        """The plugins that combining these results files needs (any file's sections)."""
        return self.hooks([b.name for b in _builtins() if any(b.for_results(r) for r in files)])


def _load_ep(ep: Any) -> Any:
    if ep.value in _imported:
        return _imported[ep.value]
    try:
        obj = ep.load()
    except Exception as exc:
        raise PluginError(
            f"plugin {ep.name!r} (entry point {ep.value} in group '{ENTRY_POINT_GROUP}') could not be loaded: "
            f"{_describe(exc)}. Fix or uninstall its distribution, or block it with `-p no:{ep.name}`"
        ) from exc
    _imported[ep.value] = obj
    return obj


def _register(pm: pluggy.PluginManager, plugin: Any, name: str) -> None:
    try:
        pm.register(plugin, name=name)
    except ValueError as exc:  # the same name twice
        raise PluginError(
            f"plugin {name!r} is registered twice ({exc}); load it once (entry point or -p)"
        ) from exc
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {name!r}: {exc}") from exc
    for impls in pm.hook.__dict__.values():
        for impl in getattr(impls, "get_hookimpls", list)():
            if impl.plugin_name == name and impl.hookwrapper:
                raise PluginError(
                    f"plugin {name!r}: {impl.function.__name__} is an old-style hook wrapper (hookwrapper=True); "
                    "use a new-style one, @hookimpl(wrapper=True), whose failures agentassay can isolate"
                )


def default_plugins() -> Plugins:
    """Entry points and ``AGENTASSAY_PLUGINS``: what a run uses when the caller names nothing."""
    return Plugins()


def builtin_names() -> tuple[str, ...]:
    """The built-in plugins' names (``-p no:NAME`` blocks one)."""
    return tuple(b.name for b in _builtins())


__all__ = [
    "ENTRY_POINT_GROUP",
    "ENV_PLUGINS",
    "Builtin",
    "Hooks",
    "PluginError",
    "PluginFailure",
    "Plugins",
    "builtin_names",
    "default_plugins",
]
