"""The one place language models are called (litellm), with a hard deadline.

When no model is configured :func:`complete` raises :class:`LLMOffline`; callers catch it and use
their deterministic offline fallback. Tests pass ``mock_response=`` through to litellm.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
import time
from typing import Any

from .errors import LLMOffline, LLMTimeout

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="lifelong-llm")
        return _pool


def _call(model: str, messages: list[dict[str, Any]], timeout_s: float, kwargs: dict[str, Any]) -> str:
    import litellm

    response = litellm.completion(model=model, messages=messages, timeout=timeout_s, num_retries=0, **kwargs)
    content = response.choices[0].message.content
    return content or ""


def complete(messages: list[dict[str, Any]], *, model: str | None, deadline_s: float, **kwargs: Any) -> str:
    """Call ``model`` with chat ``messages`` and return the reply text.

    The call runs on a worker thread and the caller waits at most ``deadline_s`` seconds: past
    that, :class:`LLMTimeout` is raised and the reply goes on without the model (the worker is
    abandoned, never joined). Any provider error becomes :class:`LLMOffline`.
    """
    if not model:
        raise LLMOffline("no model configured")
    if deadline_s <= 0:
        raise LLMTimeout("deadline already passed")
    started = time.monotonic()
    future = _executor().submit(_call, model, messages, deadline_s, kwargs)
    try:
        return future.result(timeout=deadline_s)
    except concurrent.futures.TimeoutError as exc:
        future.cancel()
        raise LLMTimeout(f"{model} gave no answer within {deadline_s * 1000:.0f} ms") from exc
    except Exception as exc:
        elapsed = time.monotonic() - started
        if "timeout" in type(exc).__name__.lower():
            raise LLMTimeout(f"{model} timed out after {elapsed * 1000:.0f} ms") from exc
        raise LLMOffline(f"{model} failed: {type(exc).__name__}: {str(exc)[:200]}") from exc
