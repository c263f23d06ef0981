"""What a search returns, given its ranked candidates (pure): the snippet of each result, its
size in tokens and the token budget, and the JSON the tools and the CLI hand back."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from lifelong.contracts import Candidate
from lifelong.markdown import estimate_tokens, strip_comments
from lifelong.text import fold, stem

from .scoring import (
    query_terms,
)


def normalise_claim(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def claim_hash(text: str) -> str:
    return hashlib.sha256(normalise_claim(text).encode("utf-8")).hexdigest()[:32]


def snippet_of(text: str, limit: int, terms: Sequence[str] = ()) -> str:
    """``text`` within ``limit`` characters: whole when it fits, else a window cut at spaces,
    starting at the text's beginning or, when ``terms`` (stems) are given and the first of them
    found lies past the first window, centred on it (``…`` marks each cut end). HTML comments
    are left out (a MEMORY.md item's key and sources are the suite's bookkeeping)."""
    text = strip_comments(text).strip()
    if len(text) <= limit:
        return text
    start = 0
    if terms:
        hit = _first_match(text, terms)
        if hit is not None and hit > limit * 0.6:
            start = max(0, min(hit - limit // 3, len(text) - limit + 2))
            space = text.rfind(" ", 0, start + 1)
            start = space + 1 if space > start - 40 else start
    lead = "…" if start else ""
    cut = text[start : start + limit - 1 - len(lead)]
    if start + len(cut) >= len(text):
        return lead + cut.rstrip()
    space = cut.rfind(" ")
    if space > len(cut) * 0.6:
        cut = cut[:space]
    return lead + cut.rstrip() + "…"


def _first_match(text: str, terms: Sequence[str]) -> int | None:
    """Character offset of the first word of ``text`` whose stem is one of ``terms``."""
    wanted = set(terms)
    for m in re.finditer(r"\w+", text):
        if stem(fold(m.group(0))) in wanted:
            return m.start()
    return None


def snippet_limit(c: Candidate, snippet_chars: int) -> int:
    """How much of a result's text is returned: all of a message it was widened to (a token
    budget paid for it), up to ``snippet_chars`` per fragment it merges, else ``snippet_chars``."""
    if c.extra.get("context") == "message":
        return max(snippet_chars, len(c.text))
    return snippet_chars * max(1, len(c.parts))


def result_tokens(c: Candidate, snippet_chars: int, terms: Sequence[str] = ()) -> int:
    """The tokens of a result's snippet as returned (what a token budget counts)."""
    return estimate_tokens(snippet_of(c.text, snippet_limit(c, snippet_chars), terms))


def within_budget(
    ranked: Sequence[Candidate], max_tokens: int, snippet_chars: int, terms: Sequence[str] = ()
) -> list[Candidate]:
    """The leading results whose snippets (as returned) fit ``max_tokens`` together; when not even
    the first fits, the first with its text cut to the budget."""
    out: list[Candidate] = []
    used = 0
    for c in ranked:
        cost = result_tokens(c, snippet_chars, terms)
        if used + cost > max_tokens:
            break
        used += cost
        out.append(c)
    if not out and ranked:
        first = ranked[0]
        out.append(
            replace(first, text=snippet_of(first.text, max(8, min(snippet_chars, max_tokens * 4 - 4))))
        )
        while len(out[0].text) > 8 and estimate_tokens(out[0].text) > max_tokens:
            out[0] = replace(out[0], text=out[0].text[: len(out[0].text) * 3 // 4].rstrip() + "…")
    return out


def relevance_of(c: Candidate) -> float:
    """A candidate's score before MMR."""
    return c.score if c.relevance is None else c.relevance


def result_json(
    c: Candidate, snippet_chars: int, explain: bool = False, tz: dt.tzinfo = dt.UTC, query: str | None = None
) -> dict[str, Any]:
    """A result as the tools and the CLI return it. The snippet is the result's lines (a unit:
    the lines that matched; fragments of one message merged; a whole message), cut to
    :func:`snippet_limit` around the first word of ``query`` when longer. ``score`` is what
    ordered the results (never rising down the list), ``relevance`` the score before MMR."""
    out: dict[str, Any] = {
        "path": c.path,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "score": round(c.score, 4),
        "relevance": round(relevance_of(c), 4),
        "snippet": snippet_of(c.text, snippet_limit(c, snippet_chars), query_terms(query) if query else ()),
        "corpus": c.corpus,
        "heading": c.heading,
        "citation": f"Source: {c.citation}",
        "source_date": (
            dt.datetime.fromtimestamp(c.source_date, tz).date().isoformat()
            if c.source_date is not None and not c.evergreen
            else None
        ),
    }
    if c.upcoming:  # dated after today: a plan (found on the real clock only)
        out["upcoming"] = True
    if c.also_dates:  # the same line on other days, folded into this result
        out["also_dates"] = [dt.datetime.fromtimestamp(d, tz).date().isoformat() for d in c.also_dates]
    if c.extra:  # what a plugin attached: a wiki hit's claim id and evidence, a concept match
        out["extra"] = c.extra
    if c.superseded_by or c.validity_end is not None:
        out["superseded_by"] = c.superseded_by
        out["validity_end"] = (
            dt.datetime.fromtimestamp(c.validity_end, dt.UTC).isoformat()
            if c.validity_end is not None
            else None
        )
    if explain:
        keep = (
            "cosine",
            "similarity",
            "bm25",
            "fts_rank",
            "hybrid",
            "decay",
            "mmr_penalty",
            "rescued",
            "evergreen",
        )
        out["explain"] = {
            k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(c).items() if k in keep
        }
    return out
