"""The provider preflight: a real model's key and server are checked once, before the first paid trial.

Without it a missing key was found by the trials themselves: every trial errored, the sequential tests
read the errors as failures, the table said FAIL and BLOCK, and only then did the health check say the
agent could not be run (issue 22, defect 11). The preflight costs no tokens: the key is looked up in the
environment, and a configured ``base_url`` gets one ``GET {base_url}/models`` with a short timeout, where
any HTTP answer (even 401 or 404: some servers list no models, or only to some keys), or a connection that
is accepted but answered slowly, counts as reachable: only a failure to connect fails. ``model: offline`` is never checked: it needs neither.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from typing import Any

from ._resolve import AgentLoadError

# Seconds to connect and get an answer from ``base_url``: long enough for a loaded local server, short
# enough that a wrong port or a server that is down is reported at once rather than trial by trial.
CONNECT_TIMEOUT = 5.0

_FIX = "or use `model: offline` to rehearse the suite on the simulator (no key, no network)"


def key_variable(model: Any) -> str | None:
    """The environment variable holding ``model``'s API key, or None when the provider needs none we can name."""
    if model.api_key_env:
        return str(model.api_key_env)
    return "OPENAI_API_KEY" if model.provider == "openai" else None


def _sdk_default_key() -> bool:
    """A key or client the agent's own code gave the Agents SDK (``set_default_openai_key/client``)."""
    shared = sys.modules.get("agents.models._openai_shared")
    if shared is None:
        return False
    try:
        return bool(shared.get_default_openai_key() or shared.get_default_openai_client())
    except Exception:  # another SDK version: the environment is then what counts
        return False


def _where(file: str | None, key: str) -> str:
    return f"{file}: {key}" if file else key


def check_key(model: Any, *, file: str | None = None, key: str = "model", sdk: bool = False) -> None:
    """Raise ``AgentLoadError`` (exit 4) when ``model``'s provider needs a key that is not in the environment.

    ``sdk``: the model drives an Agents SDK agent, whose code may have set a default key or client itself.
    ``openai-compatible`` accepts an empty value (local servers often need none) but not a missing one.
    """
    if model.provider == "offline":
        return
    env = key_variable(model)
    if env is None:
        return
    value = os.environ.get(env)
    missing = value is None if model.provider == "openai-compatible" else not value
    if not missing or (sdk and not model.api_key_env and _sdk_default_key()):
        return
    named = f"{key}.api_key_env" if model.api_key_env else f"the default when {key}.api_key_env is not given"
    state = "is not set" if value is None else "is empty"
    raise AgentLoadError(
        f"{_where(file, key)}: provider '{model.provider}' needs an API key in the environment variable {env} "
        f"({named}), which {state}, so no trial was run. Set it (`export {env}=...`; in CI, pass a secret as {env}), name "
        f"another variable with `api_key_env:`, {_FIX}."
    )


def check_reachable(
    model: Any, *, file: str | None = None, key: str = "model", timeout: float = CONNECT_TIMEOUT
) -> None:
    """Raise ``AgentLoadError`` (exit 4) when ``model.base_url`` cannot be connected to; no tokens are spent."""
    url = model.base_url
    if model.provider == "offline" or not url:
        return
    probe = url.rstrip("/") + "/models"
    request = urllib.request.Request(probe, method="GET", headers={"User-Agent": "agentassay-preflight"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return
    except urllib.error.HTTPError:
        return  # the server answered: it is there (whether it lists models to this key is not our question)
    except urllib.error.URLError as exc:  # urllib's wrapper of a failure to connect or to send the request
        why = "timed out" if isinstance(exc.reason, TimeoutError) else str(exc.reason)
    except ValueError as exc:
        why = str(exc)
    except OSError:
        return  # connected, then slow or cut off while answering (a busy local server): trials may still work
    raise AgentLoadError(
        f"{_where(file, key)}.base_url: cannot connect to {url} (GET {probe}: {why}), so no trial was run. "
        f"Check that the server is running and that the URL (host, port, /v1) is right, {_FIX}."
    )


def preflight(model: Any, *, file: str | None = None, key: str = "model", sdk: bool = False) -> None:
    """Everything a real provider needs before the first trial: its key, then its server (``base_url``).

    ``file`` and ``key`` name where the model was configured (``suite.yml``, ``model`` / ``judge.model``).
    """
    check_key(model, file=file, key=key, sdk=sdk)
    check_reachable(model, file=file, key=key)


def preflight_adapter(adapter: Any, model: Any, *, file: str | None = None, key: str = "model") -> None:
    """:func:`preflight` for an adapter that ``model`` drives: an Agents SDK agent's. A plain callable ignores
    ``model:`` (it brings its own client), so it is not checked; nor is the offline simulator."""
    if model is not None and model.provider != "offline" and getattr(adapter, "model_config", None) is not None:
        preflight(model, file=file, key=key, sdk=True)
