"""The one place language models are called (litellm), with a hard deadline.

When no model is configured :func:`complete` raises :class:`LLMOffline`; callers catch it and use
their deterministic offline fallback. Tests pass ``mock_response=`` through to litellm.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import LLMOffline, LLMTimeout

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_T = TypeVar("_T")
_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="lifelong-llm")
        return _pool


def _import_litellm() -> None:
    import litellm  # noqa: F401


_warm = threading.Event()
_warming: list[threading.Thread] = []


def warm_up() -> None:
    """Import litellm on a background thread, once per process (a host with a model configured
    calls it at start): importing it costs seconds, tens of seconds on a loaded machine, and that
    must not be charged to the first model call's deadline."""
    with _pool_lock:
        if _warm.is_set() or _warming:
            return
        thread = threading.Thread(target=_warm_import, name="lifelong-llm-import", daemon=True)
        _warming.append(thread)
    thread.start()


def _warm_import() -> None:
    try:
        _import_litellm()
    finally:
        _warm.set()


def _ready() -> None:
    """Block until litellm is imported (started here when no one warmed it up). The wait is not
    part of any call's deadline."""
    warm_up()
    _warm.wait()


def _call(model: str, messages: list[dict[str, Any]], timeout_s: float, kwargs: dict[str, Any]) -> str:
    import litellm

    response = litellm.completion(model=model, messages=messages, timeout=timeout_s, num_retries=0, **kwargs)
    content = response.choices[0].message.content
    return content or ""


def _within_deadline(model: str | None, deadline_s: float, fn: Callable[..., _T], *args: Any) -> _T:
    """Run ``fn(*args)`` on a worker thread; LLMTimeout past ``deadline_s`` (the worker is
    abandoned, never joined), LLMOffline for no model or any provider error."""
    if not model:
        raise LLMOffline("no model configured")
    if deadline_s <= 0:
        raise LLMTimeout("deadline already passed")
    _ready()  # importing litellm is a one-time cost of the process, not of this call
    started = time.monotonic()
    future = _executor().submit(fn, *args)
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


def complete(messages: list[dict[str, Any]], *, model: str | None, deadline_s: float, **kwargs: Any) -> str:
    """Call ``model`` with chat ``messages`` and return the reply text.

    The call runs on a worker thread and the caller waits at most ``deadline_s`` seconds (counted
    from when litellm is imported: see :func:`warm_up`): past that, :class:`LLMTimeout` is raised and the reply goes on without the model (the worker is
    abandoned, never joined). Any provider error becomes :class:`LLMOffline`.
    """
    return _within_deadline(model, deadline_s, _call, model, messages, deadline_s, kwargs)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ChatReply:
    """One assistant turn: its text and the tool calls it asks for."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()


def _chat_call(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    timeout_s: float,
    kwargs: dict[str, Any],
) -> ChatReply:
    import litellm

    response = litellm.completion(
        model=model, messages=messages, tools=tools or None, timeout=timeout_s, num_retries=0, **kwargs
    )
    message = response.choices[0].message
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except ValueError:
            arguments = {"_unparsed": call.function.arguments}
        calls.append(
            ToolCall(str(call.id), str(call.function.name), arguments if isinstance(arguments, dict) else {})
        )
    return ChatReply(message.content or "", tuple(calls))


def chat_turn(
    messages: list[dict[str, Any]],
    *,
    model: str | None,
    tools: list[dict[str, Any]] | None = None,
    deadline_s: float = 60.0,
    **kwargs: Any,
) -> ChatReply:
    """One chat completion that may call tools (OpenAI/litellm function schemas), with the same
    deadline and error mapping as :func:`complete`."""
    return _within_deadline(
        model, deadline_s, _chat_call, model, messages, list(tools or []), deadline_s, kwargs
    )
