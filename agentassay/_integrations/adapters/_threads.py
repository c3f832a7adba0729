"""Run blocking agent code off the event loop in daemon threads.

Why not ``asyncio.to_thread``: its default pool has ``min(32, cpu + 4)`` workers (6 on a
2-core runner), which would cap concurrency below the suite's setting, and its threads are
joined at interpreter exit, so one agent call hanging past its timeout would hang the whole
process. A daemon thread per call costs ~0.1 ms and is abandoned on timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ._base import user_exception

T = TypeVar("T")


async def call_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():  # cancelled by a timeout: nobody is waiting any more
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            value = fn(*args, **kwargs)
        except BaseException as exc:  # SystemExit & co. from user code become an ordinary error (never ours)

            ok, value = False, user_exception(exc)
        else:
            ok = True
        with contextlib.suppress(RuntimeError):  # the loop closed while this call was abandoned
            loop.call_soon_threadsafe(settle, ok, value)

    threading.Thread(target=work, name="agentassay-trial", daemon=True).start()
    return await future
