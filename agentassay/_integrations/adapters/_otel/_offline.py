"""``model: {provider: offline}`` for any framework: the simulator behind the framework's own OpenAI client.

The framework is not touched: the process's :class:`OfflineEndpoint` starts the simulator's OpenAI-compatible
server on 127.0.0.1 and points the standard base-URL settings at it (``OPENAI_BASE_URL``; ``OPENAI_API_BASE``,
which LlamaIndex reads instead; a placeholder ``OPENAI_API_KEY`` when none is set) *before* the
agent's module is imported, since frameworks build their clients at import. One server serves every agent
of the process (a module imported once keeps the clients it built): each trial registers its trace id with
its seed and its agent's behaviour table, and HTTP clients are instrumented to send W3C ``traceparent``, so
the server answers each request as that trial's. Without the instrumentation a framework's trials run one at
a time and a request belongs to the one trial in flight.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._offline_server import OfflineServer, TrialSeeds
from .._simulator import Behaviour, load_behaviour

ENV_KEYS = ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY")


class TrialRegistry(TrialSeeds):
    """Trace id -> (seed, behaviour table) for the trials in flight (the server asks for both)."""

    def __init__(self) -> None:
        super().__init__()
        self._behaviours: dict[str, Behaviour] = {}

    def register(self, trace_id_hex: str, seed: int, behaviour: Behaviour | None = None) -> None:
        super().register(trace_id_hex, seed)
        if behaviour is not None:
            with self._lock:
                self._behaviours[trace_id_hex.lower()] = behaviour

    def unregister(self, trace_id_hex: str) -> None:
        super().unregister(trace_id_hex)
        with self._lock:
            self._behaviours.pop(trace_id_hex.lower(), None)

    def behaviour(self, trace_id: str | None) -> Behaviour | None:
        with self._lock:
            if trace_id is not None:
                return self._behaviours.get(trace_id.lower())
            return next(iter(self._behaviours.values())) if len(self._behaviours) == 1 else None


class OfflineEndpoint:
    """The process's offline server and the environment pointing clients at it."""

    def __init__(self) -> None:
        self.registry = TrialRegistry()
        self.server = OfflineServer(None, seed_for=self.registry)
        self._lock = threading.Lock()
        self._saved: dict[str, str | None] | None = None
        self.kept = False
        self.traceparent = False

    @contextlib.contextmanager
    def importing(self) -> Iterator[OfflineEndpoint]:
        """Around the import of an agent module: the server runs and the environment points at it. Unless a
        framework's agent was found (:meth:`keep`), both are undone afterwards."""
        with self._lock:
            self.server.start()
            # Before the import: clients built at import must send traceparent too.
            self.traceparent = instrument_http_clients()
            if self._saved is None:
                self._saved = {k: os.environ.get(k) for k in ENV_KEYS}
            url = self.server.base_url
            os.environ.update({"OPENAI_BASE_URL": url, "OPENAI_API_BASE": url})
            # A key the user set stays (module code may read it at import, and redaction must keep seeing it);
            # it only ever travels to 127.0.0.1 now. Clients that insist on one get a placeholder.
            if not os.environ.get("OPENAI_API_KEY"):
                os.environ["OPENAI_API_KEY"] = "offline"
        try:
            yield self
        finally:
            with self._lock:
                if not self.kept:
                    self._restore()

    def _restore(self) -> None:
        for key, value in (self._saved or {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved = None
        self.server.close()

    def keep(self) -> None:
        """A framework's agent will call the server: keep it and the environment for the process."""
        with self._lock:
            self.kept = True


OPENAI_URL = "https://api.openai.com/v1"


def user_openai_settings() -> dict[str, str | None]:
    """What the user's own environment says for OpenAI's client, while the offline endpoint has pointed the
    environment at the simulator (empty otherwise): a real-provider judge must not reach the simulator."""
    found = _ENDPOINT
    saved = found._saved if found is not None else None
    if saved is None:
        return {}
    return {"base_url": saved.get("OPENAI_BASE_URL") or OPENAI_URL, "api_key": saved.get("OPENAI_API_KEY")}


_ENDPOINT: OfflineEndpoint | None = None
_ENDPOINT_LOCK = threading.Lock()


def reset() -> None:
    """Close the process's endpoint and restore the environment (tests that need a fresh process's state)."""
    global _ENDPOINT
    with _ENDPOINT_LOCK:
        if _ENDPOINT is not None:
            with _ENDPOINT._lock:
                _ENDPOINT._restore()
        _ENDPOINT = None


def endpoint() -> OfflineEndpoint:
    global _ENDPOINT
    with _ENDPOINT_LOCK:
        if _ENDPOINT is None:
            _ENDPOINT = OfflineEndpoint()
        return _ENDPOINT


_HTTPX_LOCK = threading.Lock()
_HTTPX: list[bool] = []  # [True] once httpx is instrumented, [False] when it cannot be


def instrument_http_clients() -> bool:
    """Make httpx (and httpx2, which openai 3 uses) requests carry ``traceparent``, once per process; False
    when the instrumentation is not installed."""
    with _HTTPX_LOCK:
        if not _HTTPX:
            try:
                # optional: the frameworks' extras bring opentelemetry-instrumentation-httpx
                from opentelemetry.instrumentation import httpx as instrumentation
            except ImportError:
                _HTTPX.append(False)
            else:
                done = False
                for library, name in (("httpx", "HTTPXClientInstrumentor"), ("httpx2", "HTTPX2ClientInstrumentor")):
                    cls = getattr(instrumentation, name, None)
                    if cls is None or importlib.util.find_spec(library) is None:  # (it warns when missing)
                        continue
                    try:
                        cls().instrument()
                        done = True
                    except ModuleNotFoundError:  # that client library is not installed
                        continue
                _HTTPX.append(done)
        return _HTTPX[0]


def behaviour_for(spec: str | None, root: Path | None, module: Any) -> Behaviour:
    """``model.behaviour`` (``module:attr`` or a YAML/JSON path), else the agent module's ``OFFLINE_BEHAVIOUR``."""
    if spec:
        return load_behaviour(spec, root=root)
    table = getattr(module, "OFFLINE_BEHAVIOUR", None)
    name = str(getattr(module, "__name__", "the agent's module"))
    if table is None:
        raise ValueError(
            f"the agent runs on the offline simulator (model.provider 'offline') but no behaviour table is "
            f"configured: add OFFLINE_BEHAVIOUR = {{...}} to {name} or set model.behaviour: module:attr "
            "(docs/adapters.md, \"Offline behaviour\")"
        )
    return table if isinstance(table, Behaviour) else Behaviour(table, source=f"{name}:OFFLINE_BEHAVIOUR")
