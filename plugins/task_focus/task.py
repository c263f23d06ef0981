"""What the user is working on, and how much a candidate is about it (pure).

A *task descriptor* comes from, in order:

1. an explicit task: ``session["task"]`` (the Python API, or ``memory_search``'s ``task``
   argument), or a marker line in the session's messages, newest first:
   ``## Task: Debug safe-cron-merge.sh`` (any heading level, or a plain ``Task:`` line), with an
   optional ``Project: NAME`` line;
2. failing that, the TF-IDF keywords of the last ``recent_messages`` messages: term frequency in
   those messages times the term's inverse document frequency in the corpus (``doc_freq``), so a
   word the whole memory repeats says little about this task.

``task_type`` is the task's verb class (debug, build, write, plan, review, research, decide,
ops). :func:`task_relevance` is the IDF-weighted share of the task's keywords a candidate's text
(and heading) holds, in [0, 1]; the plugin adds ``weight · relevance`` to the candidate's score
(0.3 by default), never replacing it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from lifelong.contracts import Message, Session
from lifelong.text import content_words, stem, words

_MARKER = re.compile(r"^\s*(?:#{1,6}\s*)?task\s*:\s*(?P<task>.+?)\s*$", re.I | re.M)
_PROJECT = re.compile(r"^\s*(?:#{1,6}\s*)?project\s*:\s*(?P<project>.+?)\s*$", re.I | re.M)
TASK_TYPES: dict[str, frozenset[str]] = {
    "debug": frozenset("debug fix bug error crash fail failing broken investigate trace repair".split()),
    "build": frozenset("build implement add code refactor migrate ship deploy release integrate".split()),
    "write": frozenset("write draft edit rewrite blog post doc docs document article email letter".split()),
    "plan": frozenset("plan planning schedule organise organize prepare roadmap agenda book".split()),
    "review": frozenset("review check audit read compare evaluate test verify".split()),
    "research": frozenset("research find learn explore study look investigate compare".split()),
    "decide": frozenset("decide choose pick select decision".split()),
    "ops": frozenset("backup restore rotate renew upgrade install configure monitor cron server".split()),
}


@dataclass(frozen=True)
class TaskDescriptor:
    keywords: tuple[str, ...]  # folded words (identifiers whole), most telling first
    project: str | None = None
    task_type: str | None = None
    source: str = "marker"  # marker | session | tfidf

    def as_json(self) -> dict[str, object]:
        return {
            "keywords": list(self.keywords),
            "project": self.project,
            "task_type": self.task_type,
            "source": self.source,
        }


def task_type_of(text: str) -> str | None:
    found = set(words(text))
    for name, cues in TASK_TYPES.items():
        if found & cues:
            return name
    return None


def with_parts(found: list[str]) -> list[str]:
    """The words and, for an identifier, its parts ("safe-cron-merge" also gives safe, cron, merge)."""
    out = list(found)
    for word in found:
        out += [p for p in re.split(r"[-_.:/]", word) if len(p) > 2 and not p.isdigit() and p != word]
    return list(dict.fromkeys(out))


def descriptor_from_text(text: str, source: str, project: str | None = None) -> TaskDescriptor | None:
    keywords = with_parts([w for w in content_words(text) if len(w) > 2])
    if not keywords:
        return None
    return TaskDescriptor(tuple(keywords), project, task_type_of(text), source)


def explicit_task(session: Session | None) -> TaskDescriptor | None:
    if not session:
        return None
    if session.get("task"):
        return descriptor_from_text(str(session["task"]), "session")
    for message in reversed(session.get("messages") or []):
        content = str(message.get("content") or "")
        m = _MARKER.search(content)
        if m:
            p = _PROJECT.search(content)
            return descriptor_from_text(m.group("task"), "marker", p.group("project") if p else None)
    return None


def smooth_idf(doc_freq: int, total_docs: int) -> float:
    """ln(1 + N / (1 + df)), N at least 1: a word no document holds weighs most, never 0."""
    return math.log(1 + max(total_docs, 1) / (1 + doc_freq))


def tfidf_task(
    messages: list[Message],
    doc_freq: Callable[[list[str]], dict[str, int]],
    total_docs: int,
    *,
    limit: int = 8,
) -> TaskDescriptor | None:
    """The TF-IDF keywords of ``messages`` against the corpus."""
    counts = Counter(w for m in messages for w in content_words(str(m.get("content") or "")) if len(w) > 2)
    if not counts:
        return None
    df = doc_freq(sorted(counts))
    scored = sorted(
        ((tf * smooth_idf(df.get(w, 0), total_docs), w) for w, tf in counts.items()),
        key=lambda x: (-x[0], x[1]),
    )
    keywords = tuple(w for _, w in scored[:limit])
    return TaskDescriptor(
        keywords, None, task_type_of(" ".join(str(m.get("content") or "") for m in messages)), "tfidf"
    )


def task_relevance(task: TaskDescriptor, text: str, idf: Callable[[str], float]) -> float:
    """The IDF-weighted share of the task's keywords ``text`` holds (stems compared)."""
    present = {stem(w) for w in with_parts(words(text))}
    weights = {k: idf(k) for k in task.keywords}
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    held = sum(w for k, w in weights.items() if stem(k) in present or k in present)
    return held / total
