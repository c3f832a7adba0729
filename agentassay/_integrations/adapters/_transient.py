"""Which agent errors are transient (worth a retry): shared by the adapters and the runner."""

from __future__ import annotations

from ..._errors import AgentAssayError, ExitCode

_TRANSIENT_NAMES = {
    "RateLimitError",
    "APITimeoutError",
    "APIConnectionError",
    "InternalServerError",
    "ServiceUnavailableError",
    "ConnectTimeout",
    "ReadTimeout",
    "PoolTimeout",
    "RemoteProtocolError",
    "TransientError",
}
_TRANSIENT_STATUS = {408, 409, 425, 429}
# The provider refused the credentials (HTTP 401 / 403 of the OpenAI, Anthropic and LiteLLM clients): no later
# trial can succeed, so the run stops (exit 4) at the first. By class name only, never by a bare status code: a
# tool that gets a 403 from some web page is the agent's behaviour under test, not a rejected key.
_REJECTED_NAMES = {"AuthenticationError", "PermissionDeniedError"}


class TransientError(AgentAssayError):
    """Raise from an agent to ask for a retry (e.g. a rate limit your own client detected)."""

    exit_code = ExitCode.AGENT

    def __init__(self, message: str = "transient error", *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _status(exc: BaseException) -> int | None:
    for obj in (exc, getattr(exc, "response", None)):
        code = getattr(obj, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def is_transient(exc: BaseException) -> bool:
    """Rate limits, provider-side timeouts, connection failures and 5xx answers.

    Matched by class name and status code so that no provider SDK has to be imported. The
    per-trial timeout is *not* transient: an agent that is too slow fails the trial.
    """
    for cls in type(exc).__mro__:
        if cls.__name__ in _TRANSIENT_NAMES:
            return True
    status = _status(exc)
    return status is not None and (status in _TRANSIENT_STATUS or 500 <= status <= 599)


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``Retry-After``), when it said so."""
    explicit = getattr(exc, "retry_after", None)
    if isinstance(explicit, (int, float)):
        return float(explicit)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


def credentials_rejected(exc: BaseException | None) -> BaseException | None:
    """The provider error in ``exc`` (or what it was raised from) that rejected the API key: the
    ``AuthenticationError`` / ``PermissionDeniedError`` of the OpenAI, Anthropic or LiteLLM clients (HTTP 401 /
    403). None otherwise. Matched by class name, like :func:`is_transient`, so no SDK is imported."""
    seen = 0
    while exc is not None and seen < 8:  # an adapter wraps the client's error (``AgentRunError from exc``)
        if any(cls.__name__ in _REJECTED_NAMES for cls in type(exc).__mro__):
            return exc
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None
