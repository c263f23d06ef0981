"""Task-conditioned scoring: after hybrid ranking, candidates about what the user is working on
now get ``weight · task_relevance`` added to their score (see docs/concepts.md). The scoring
module is imported when a search asks for it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lifelong.hookspecs import hookimpl

if TYPE_CHECKING:
    from lifelong.contracts import Candidate, SearchRequest
    from lifelong.host import Context

    from .task import TaskDescriptor

PLUGIN = "task_focus"


def corpus_doc_freq(ctx: Context):  # noqa: ANN201 - returns (doc_freq, total_docs, idf)
    """Document frequencies from recall's full-text index (``ctx.recall``, read only), or none
    when there is no recall index."""
    recall = ctx.recall
    try:
        total = recall.chunk_count() if recall is not None else None
    except Exception:  # an index that cannot be read: every word counts the same
        total = None
    if recall is None or total is None:
        return (lambda terms: {}), 1, (lambda term: 1.0)

    def doc_freq(terms: list[str]) -> dict[str, int]:
        return recall.doc_freqs(terms)

    from .task import smooth_idf

    def idf(term: str) -> float:
        return smooth_idf(doc_freq([term]).get(term, 0), total)

    return doc_freq, total, idf


def task_of(ctx: Context, request: SearchRequest, doc_freq, total: int) -> TaskDescriptor | None:  # noqa: ANN001
    from .task import explicit_task, tfidf_task

    task = explicit_task(request.session)
    if task is None and request.session and request.session.get("messages"):
        n = int(ctx.config(PLUGIN)["recent_messages"])
        task = tfidf_task(list(request.session["messages"])[-n:], doc_freq, total)
    return task


@hookimpl
def retrieval_post(
    ctx: Context, request: SearchRequest, candidates: list[Candidate]
) -> list[Candidate] | None:
    """Add ``weight · relevance`` to each candidate's score (never replace it); a superseded fact's
    share is damped in valid-at/all modes so task bias alone cannot lift it over the current one."""
    if not candidates or request.session is None:
        return None
    if any(c.extra.get("answered_by") == "concepts" for c in candidates):
        return None  # the concept index answered: no hybrid ranking ran to condition on a task
    from .task import task_relevance

    cfg = ctx.config(PLUGIN)
    doc_freq, total, idf = corpus_doc_freq(ctx)
    task = task_of(ctx, request, doc_freq, total)
    if task is None:
        return None
    weight, damp = float(cfg["weight"]), float(cfg["historical_damp"])
    out = []
    relevance = [task_relevance(task, f"{c.heading}\n{c.text}", idf) for c in candidates]
    best = max(relevance)
    for c, raw in zip(candidates, relevance, strict=True):
        # relative to the most task-relevant candidate: a long inferred keyword list (8 TF-IDF
        # words of the recent messages) is never fully present in one note, and the candidate
        # that holds most of it is the one the task points at
        rel = raw / best if best > 0 else 0.0
        bonus = weight * rel
        if request.mode in ("valid-at", "all") and (c.superseded_by or c.validity_end is not None):
            bonus *= damp
        out.append(
            replace(
                c,
                score=c.score + bonus,
                extra={**c.extra, "task_relevance": round(raw, 3), "task_bonus": round(bonus, 3)},
            )
        )
    if out:
        out[0].extra["task"] = task.as_json()
    return out
