"""The silent flush turn (with a model configured): show the model the messages about to be evicted
and take back the durable facts it writes down, one bullet each, or nothing (``NO_REPLY``). Its
reply is data: every line is screened (secrets redacted, lines that read as instructions to an agent
dropped) before anything is appended to the daily note."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from xml.sax.saxutils import escape

from lifelong import prompts
from lifelong.contracts import Message
from lifelong.safety import screen, strip_invisible

NO_REPLY = re.compile(r"^\W*(?:no_reply|no reply|none|nothing(?: to (?:save|keep|add))?)\W*$", re.I)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
MESSAGE_CHARS = 2000  # each message is shown to the model cut to this many characters


def render_prompt(
    messages: list[Message], *, today: dt.date, timezone: str, max_facts: int, workspace: Any = None
) -> list[dict[str, str]]:
    shown = [
        {
            "ts": escape(str(m.get("ts") or "")),
            "role": escape(str(m.get("role") or "user")),
            "content": escape(" ".join(str(m.get("content") or "").split())[:MESSAGE_CHARS]),
        }
        for m in messages
        if str(m.get("content") or "").strip()
    ]
    text = prompts.render(
        "flush.md.j2",
        workspace,
        today=today.isoformat(),
        timezone=timezone,
        max_facts=max_facts,
        messages=shown,
    )
    return [{"role": "user", "content": text}]


def read_facts(reply: str, max_facts: int) -> tuple[list[str], int, list[str]]:
    """(facts, secrets redacted, lines dropped as instructions) from the model's reply."""
    text = strip_invisible(reply or "").strip()
    if not text or NO_REPLY.match(text):
        return [], 0, []
    facts: list[str] = []
    redacted = 0
    dropped: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line or line.startswith("#") or NO_REPLY.match(line):
            continue
        screened = screen(" ".join(line.split()))
        if not screened.trusted:
            dropped.append(line[:120])
            continue
        redacted += screened.secrets
        facts.append(screened.text)
        if len(facts) >= max_facts:
            break
    return facts, redacted, dropped
