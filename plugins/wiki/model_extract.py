"""The model path of the compiler: with ``use_model`` and ``llm.model`` configured, a model names
the subject (entity) of each MEMORY.md item; the claim text and its evidence stay the source's
own lines, so a model can file a claim but never invent provenance. Answers are cached by the
item's line hash (``.lifelong/wiki/subjects.json``), so a recompile of unchanged sources is
byte-identical; any model failure falls back to the offline extractor."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lifelong import llm, prompts
from lifelong.errors import LLMOffline
from lifelong.workspace import atomic_write

from .sources import SourceLine

_JSON = re.compile(r"\{.*\}", re.S)


def parse_subjects(reply: str, allowed: set[str]) -> dict[str, str]:
    """``{"subjects": [{"source": "MEMORY.md#L12-L12", "subject": "Elena Brandt"}]}`` → source →
    subject, keeping only sources that were asked about and short, single-line names."""
    m = _JSON.search(reply or "")
    if not m:
        return {}
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return {}
    out = {}
    for row in data.get("subjects", []) if isinstance(data, dict) else []:
        if not isinstance(row, dict):
            continue
        source, subject = str(row.get("source", "")), str(row.get("subject", "")).strip()
        if source in allowed and subject and len(subject) <= 60 and "\n" not in subject:
            out[source] = subject
    return out


def model_subjects(
    items: list[SourceLine],
    *,
    model: str | None,
    timeout_s: float,
    cache_path: Path,
    workspace: Any = None,
    **kwargs: Any,
) -> dict[str, str]:
    """Citation → subject name for ``items`` (cached answers first; one model call for the rest)."""
    cache: dict[str, str] = {}
    if cache_path.exists():
        try:
            cache = json.loads(cache_path.read_text("utf-8"))
        except (OSError, ValueError):
            cache = {}
    todo = [i for i in items if i.sha256 not in cache]
    if todo and model:
        prompt = prompts.render(
            "wiki_subjects.md.j2", workspace, items=[{"source": i.citation, "text": i.text} for i in todo]
        )
        try:
            reply = llm.complete(
                [{"role": "user", "content": prompt}], model=model, deadline_s=timeout_s, **kwargs
            )
        except LLMOffline:
            reply = ""
        found = parse_subjects(reply, {i.citation for i in todo})
        for i in todo:
            if i.citation in found:
                cache[i.sha256] = found[i.citation]
        if found:
            atomic_write(cache_path, json.dumps(cache, indent=1, sort_keys=True, ensure_ascii=False))
    return {i.citation: cache[i.sha256] for i in items if i.sha256 in cache}
