"""Who the gate runs for (pure): eligibility of a session, and adaptive recall (trivial turns).

The gate runs only for interactive chats of an allowed type, never for sub-agent runs,
cron/heartbeat turns, one-shot API calls or its own sub-agent; a session can switch it off; chat
ids can be allow- or deny-listed (deny wins; a non-empty allow list fails closed when the session
has no chat id). Greetings, acknowledgements and meta chatter skip retrieval entirely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lifelong import text
from lifelong.contracts import Session

CHAT_TYPES = ("direct", "group", "channel")
SESSION_KINDS = ("interactive", "subagent", "cron", "heartbeat", "oneshot", "gate")


@dataclass(frozen=True)
class Eligibility:
    eligible: bool
    reason: str = ""


def check_eligibility(session: Session, config: dict[str, Any]) -> Eligibility:
    """Decide whether the gate may run for ``session`` (see docs/gate.md for the session shape)."""
    if not session.get("gate_enabled", True):
        return Eligibility(False, "switched off for this session")
    kind = str(session.get("kind") or "interactive")
    if kind != "interactive":
        label = kind if kind in SESSION_KINDS else f"unknown kind {kind!r}"
        return Eligibility(False, f"not an interactive chat ({label})")
    chat_type = str(session.get("chat_type") or "direct")
    if chat_type not in config["allowed_chat_types"]:
        return Eligibility(False, f"chat type {chat_type!r} not in allowed_chat_types")
    chat_id = session.get("chat_id")
    chat_key = str(chat_id).casefold() if chat_id not in (None, "") else None
    denied = {str(c).casefold() for c in config["denied_chat_ids"]}
    if chat_key is not None and chat_key in denied:
        return Eligibility(False, f"chat id {chat_id!r} is in denied_chat_ids")
    allowed = {str(c).casefold() for c in config["allowed_chat_ids"]}
    if allowed and chat_key is None:
        return Eligibility(False, "allowed_chat_ids is set and the session has no chat id")
    if allowed and chat_key not in allowed:
        return Eligibility(False, f"chat id {chat_id!r} is not in allowed_chat_ids")
    return Eligibility(True)


def is_trivial(message: str, *, max_words: int = 8) -> bool:
    """True for messages that need no memory (see :func:`lifelong.text.is_small_talk`)."""
    return text.is_small_talk(message, max_words=max_words)
