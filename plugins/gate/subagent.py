"""The gate's model sub-agent: its prompt, how its reply is read, and the per-model circuit breaker.

The sub-agent's two tools are run by the gate on its behalf before the one model call:
``memory_search`` (corpus all, source gate) and ``memory_get`` for the exact lines of each hit.
The model then sees the conversation and those results and answers ``NONE`` or one plain-text
note. One round-trip keeps the hard deadline predictable, and the same hits feed the offline
fallback, so a timed-out model still leaves a partial note.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from lifelong import prompts

from .extractive import is_stale_hit
from .query import clip

PROMPT_TEMPLATE = "gate.md.j2"  # in the top-level prompts/ folder (a workspace may override it)
STYLES = "gate_styles.yaml"  # the sentence each prompt_style adds to the rules
DEFAULT_STYLE = {"message": "strict", "recent": "balanced", "full": "contextual"}
NOTHING_REPLIES = frozenset(
    {
        "",
        "none",
        "no_reply",
        "no reply",
        "noreply",
        "[]",
        "{}",
        "n/a",
        "na",
        "null",
        "nil",
        "nothing",
        "-",
        "no",
        "no note",
        "nothing to add",
        "nothing relevant",
        "no relevant memory",
        "no relevant memories",
    }
)
_LABEL = re.compile(r"^(?:note|memory|summary|answer|output)\s*:\s*", re.I)
# Replies that are not a note: a greeting or offer of help, a refusal or apology, and error or
# timeout text from a model, a proxy or a runtime. Such text never becomes memory, unless it cites a
# workspace source (a real note about an error the user had, "(memory/2026-03-04.md#L4)").
_NOT_A_NOTE = re.compile(
    r"^\W*(?:hello|hi|hey|greetings|good (?:morning|afternoon|evening))(?:\s+there|\s+again)?\s*(?:[!,.:;—]|$)"
    r"|\bhow (?:can|may) i (?:help|assist)\b|\bwhat can i do for you\b"
    r"|^\W*(?:i'?m|i am) sorry\b|^\W*sorry\b|^\W*(?:unfortunately,?\s+)?i (?:can(?:no|')?t|am unable|'m unable|"
    r"do not have|don'?t have)\b|^\W*as an ai\b"
    r"|\btime[sd]?[ -]?out\b|\btimed out\b|^\W*error\b|\berror\s*:|\brequest failed\b|\brate limit"
    r"|\binternal server error\b|\bservice unavailable\b|\bexception\b|\btraceback\b",
    re.I,
)
_CITES_SOURCE = re.compile(r"\((?:memory|wiki)/[^)\s]+\.md(?:#L\d+(?:-L?\d+)?)?\)|\bMEMORY\.md\b")
_NONE_LEAD = re.compile(r"^(?:none|no_reply|n/a)\b(?:\s*[-—:.(]|\s*$)", re.I)


def style_for(config: dict[str, Any], mode: str) -> str:
    return config.get("prompt_style") or DEFAULT_STYLE.get(mode, "balanced")


def hit_view(hit: dict[str, Any], now: dt.datetime | None, limit: int = 600) -> dict[str, Any]:
    """What the prompt shows of one hit; memory text is escaped so it cannot close its tag."""
    text = hit.get("text") or hit.get("snippet") or ""
    start = int(hit.get("start_line") or 1)
    end = int(hit.get("end_line") or start)
    citation = f"{hit.get('path')}#L{start}-L{end}" if end > start else f"{hit.get('path')}#L{start}"
    return {
        "citation": escape(citation, {'"': "&quot;"}),
        "date": escape(str(hit.get("source_date") or ""), {'"': "&quot;"}),
        "corpus": escape(str(hit.get("corpus") or "memory"), {'"': "&quot;"}),
        "stale": is_stale_hit(hit, now),
        "text": escape(text[:limit]),
    }


def render_prompt(
    *,
    conversation: str,
    hits: list[dict[str, Any]],
    config: dict[str, Any],
    mode: str,
    now: dt.datetime,
    timezone: str,
    workspace: Any = None,
) -> list[dict[str, str]]:
    style = style_for(config, mode)
    text = prompts.render(
        PROMPT_TEMPLATE,
        workspace,
        today=now.date().isoformat(),
        timezone=timezone,
        max_chars=config["max_summary_chars"],
        style=style,
        style_instruction=prompts.texts(STYLES, workspace)[style],
        prompt_append=config.get("prompt_append") or "",
        conversation=escape(conversation),
        hits=[hit_view(h, now) for h in hits],
    )
    return [{"role": "user", "content": text}]


def read_reply(reply: str, max_chars: int) -> str | None:
    """The note in a model reply, on one line and within ``max_chars`` (cut at a word boundary);
    None when the reply means "nothing to add" (NONE, no_reply, [], n/a, …) or is not a note at
    all: a greeting, a refusal, or error/timeout text that cites no source."""
    text = (reply or "").strip()
    fence = re.fullmatch(r"```[\w-]*\s*(.*?)\s*```", text, flags=re.S)
    if fence:
        text = fence.group(1).strip()
    text = text.strip("`\"' \n")
    text = _LABEL.sub("", text).strip()
    first_line = text.split("\n", 1)[0].strip()
    key = first_line.strip(" .!*_`'\"").casefold()
    if key in NOTHING_REPLIES or _NONE_LEAD.match(first_line):
        return None
    text = " ".join(text.split())
    if not text or (_NOT_A_NOTE.search(text) and not _CITES_SOURCE.search(text)):
        return None
    return clip(text, max_chars)


@dataclass
class CircuitBreaker:
    """Per model: ``failures`` consecutive timeouts open it for ``cooldown_s`` seconds (the model
    is skipped and the offline note is used). After the cooldown one call is let through; another
    timeout opens it again at once, a success closes it. Time comes from ``clock.now()``."""

    failures: int = 3
    cooldown_s: float = 60.0
    consecutive: int = 0
    open_until: float | None = None

    def allows(self, now_ts: float) -> bool:
        return self.open_until is None or now_ts >= self.open_until

    def record_timeout(self, now_ts: float) -> None:
        self.consecutive += 1
        if self.consecutive >= self.failures:
            self.open_until = now_ts + self.cooldown_s

    def record_success(self) -> None:
        self.consecutive = 0
        self.open_until = None

    def state(self, now_ts: float) -> str:
        if self.open_until is None:
            return "closed"
        return "open" if now_ts < self.open_until else "half-open"
