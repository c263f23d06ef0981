"""The runtime adapter: one object a chat runtime wires into its own hooks (see docs/integration.md).

    memory = Memory("~/agent")
    context = memory.session_start(session)          # MEMORY.md + today's and yesterday's notes
    note = memory.before_reply(session, message)     # the gate's hidden, untrusted prefix
    tools = memory.tools()                           # OpenAI/litellm tool schemas
    result = memory.call_tool(name, arguments)       # run a tool the model called
    memory.before_compaction(session, evicted)       # flush and capture before summarising
    memory.after_compaction(session, summary)
    memory.session_end(session)                      # a short summary appended to today's daily

Everything goes through the plugin host, so each call does what the installed plugins do; with no
model configured every part still works offline.
"""

from __future__ import annotations

import datetime as dt
import os
import secrets

from . import clock, llm, prompts
from .contracts import FlushResult, GateResult, JSONObject, Message, Session, WriteCandidate
from .errors import LLMOffline
from .host import Host
from .journal import Journal
from .privacy import gate_scope, is_private_text
from .safety import redact_secrets, strip_invisible
from .text import is_small_talk
from .workspace import Workspace, append_text

BOOTSTRAP_CHARS = 12_000  # what session_start returns at most (MEMORY.md first, then the dailies)
SUMMARY_PROMPT = "session_summary.md.j2"  # in prompts/ (a workspace may override it)


def _tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text``, cut at a line start."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    return cut[cut.find("\n") + 1 :] if "\n" in cut else cut


class Memory:
    """The memory of one agent workspace, for a runtime. ``host`` may be given (tests, embedding
    applications); otherwise every installed plugin is loaded.

    Making one brings the index in line with the files (the ``memory_index`` tool: what changed is
    chunked, and embedded for at most ``recall.auto_sync_embed_budget_s``; the rest is searched by
    its words until ``lifelong index`` embeds it), so the first reply's gate searches instead of
    indexing inside its deadline; ``index_report`` says what that sync did."""

    def __init__(self, workspace: str | os.PathLike[str] | Workspace, *, host: Host | None = None):
        ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
        self.host = host if host is not None else Host(ws)
        self.workspace = ws
        self.index_report: JSONObject | None = None
        if "memory_index" in self.host.tools:  # registering the tools pays their imports now too
            self.index_report = self.host.call_tool("memory_index", {})

    # the session ------------------------------------------------------------------------------
    def session_start(self, session: Session, *, budget_chars: int = BOOTSTRAP_CHARS) -> str:
        """The context to load at the start of a session: MEMORY.md (direct chats only: it is
        personal; group and channel chats get the dailies alone), then yesterday's and today's
        daily notes, within ``budget_chars`` (MEMORY.md first; the newest part of each daily). A
        private daily (``lifelong.privacy``) only when the session's scope may read it."""
        ws = self.workspace
        today = clock.now(ws.timezone).date()
        parts: list[tuple[str, str]] = []
        if str(session.get("chat_type") or "direct") == "direct" and ws.memory_file.exists():
            parts.append((ws.relpath(ws.memory_file), ws.read_text(ws.memory_file.name)))
        for day in (today - dt.timedelta(days=1), today):
            rel = f"memory/{day.isoformat()}.md"
            if (ws.root / rel).is_file():
                text = ws.read_text(rel)
                if gate_scope(session) != "private" and is_private_text(rel, text):
                    continue  # a private daily only for the user's own direct chat that asks
                parts.append((f"{rel} ({'today' if day == today else 'yesterday'})", text))
        out: list[str] = []
        left = budget_chars
        for title, text in parts:
            header = f"## {title}\n"
            room = left - len(header) - 1
            if room <= 80:
                break
            body = text.strip() if len(text.strip()) <= room else "…\n" + _tail(text.strip(), room - 2)
            out.append(f"{header}{body}\n")
            left -= len(out[-1]) + 1
        return "\n".join(out)

    def before_reply(self, session: Session, message: str) -> GateResult:
        return self.host.before_reply(session, message)

    def tools(self) -> list[JSONObject]:
        """The agent tools as OpenAI/litellm function schemas (internal parameters left out)."""
        return [tool.schema() for tool in self.host.agent_tools()]

    def call_tool(self, name: str, arguments: JSONObject) -> JSONObject:
        """Run a tool the model called (a suite-internal service is refused as unknown)."""
        tool = self.host.tools.get(name)
        if tool is not None and not tool.agent:
            return self.host.unknown_tool(name)
        return self.host.call_tool(name, dict(arguments))

    def before_compaction(self, session: Session, messages: list[Message]) -> FlushResult:
        return self.host.before_compaction(session, messages)

    def after_compaction(self, session: Session, summary: str) -> None:
        self.host.after_compaction(session, summary)

    def session_end(self, session: Session, *, model: str | None = None) -> str | None:
        """Append a short summary of the session to today's daily (append-only, through
        ``before_message_write``, journaled). With a model (``model`` or ``llm.model``) it writes
        the summary; offline, a line naming the session, its size and what the user said. Returns
        the text appended, or None when there was nothing worth keeping (no message, or the user
        said nothing but greetings, thanks and chatter: nothing is written, no model is asked) or a
        write gate blocked it."""
        messages = [m for m in session.get("messages") or [] if str(m.get("content") or "").strip()]
        if not any(m.get("role") == "user" and not is_small_talk(str(m["content"])) for m in messages):
            return None
        sid = str(session.get("id") or "session")
        lines = self._model_summary(messages, model) or [self._offline_summary(messages)]
        return self.append_to_daily(lines, f"Session {sid}", source="session_end")

    def note(self, text: str, *, source: str = "note") -> str | None:
        """Write ``text`` to today's daily as a note of its own (append-only, through
        ``before_message_write``, journaled); None when a write gate blocked it."""
        return self.append_to_daily([" ".join(text.split())], "Note", source=source)

    def append_to_daily(self, lines: list[str], heading: str, *, source: str) -> str | None:
        """Append ``lines`` as bullets under ``## heading (HH:MM)`` to today's daily (in the
        workspace's time zone; never a second dated file): secrets redacted, invisible characters
        stripped, through ``before_message_write`` (a block writes nothing), under the write lock,
        journaled and audited. Returns the text appended."""
        ws = self.workspace
        now = clock.now(ws.timezone)
        lines = [redact_secrets(strip_invisible(line))[0] for line in lines if line.strip()]
        if not lines:
            return None
        rel = f"memory/{now.date().isoformat()}.md"
        decision = self.host.decide_write(
            WriteCandidate(text="\n".join(lines), target=rel, source=source, written_on=now.date()), []
        )
        if decision.action == "block":
            return None
        addition = f"\n## {heading} ({now.strftime('%H:%M')})\n" + "".join(f"- {line}\n" for line in lines)
        run_id = f"{source.replace('_', '-')}-{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        path = ws.root / rel
        with ws.lock("write"):
            current = path.read_bytes().decode("utf-8") if path.exists() else f"# {now.date().isoformat()}\n"
            Journal(ws, run_id, plugin=source).write(path, append_text(current, addition), action=source)
        return addition

    def _offline_summary(self, messages: list[Message]) -> str:
        """Without a model: what the user said, briefly (their first messages that are not chatter,
        clipped), and how long the session was."""
        users = [
            " ".join(str(m.get("content") or "").split())
            for m in messages
            if m.get("role") == "user" and not is_small_talk(str(m.get("content") or ""))
        ]
        said = "; ".join(u if len(u) <= 80 else u[:79].rsplit(" ", 1)[0] + "…" for u in users[:3])
        more = f" (+{len(users) - 3} more)" if len(users) > 3 else ""
        return (
            f"{len(messages)} messages; the user said: {said}{more}" if users else f"{len(messages)} messages"
        )

    def _model_summary(self, messages: list[Message], model: str | None) -> list[str]:
        model = model or (self.workspace.config.get("llm") or {}).get("model")
        if not model:
            return []
        text = "\n".join(
            f"{m.get('role')}: {' '.join(str(m.get('content') or '').split())[:1000]}" for m in messages
        )
        try:
            reply = llm.complete(
                [{"role": "user", "content": prompts.render(SUMMARY_PROMPT, self.workspace, text=text)}],
                model=model,
                deadline_s=float((self.workspace.config.get("llm") or {}).get("timeout_s", 60)),
            )
        except LLMOffline:
            return []
        lines = [ln.strip().lstrip("-*• ").strip() for ln in reply.splitlines() if ln.strip()]
        return [] if not lines or lines[0].upper().startswith("NO_REPLY") else lines[:3]

    def close(self) -> None:
        self.host.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
