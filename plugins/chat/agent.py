"""The reference agent behind ``lifelong chat``: a terminal chat loop that wires every hook the way a
runtime should (``lifelong.runtime.Memory``):

- at the start, ``session_start`` loads MEMORY.md and the recent dailies into the system prompt;
- before each reply, the gate's hidden, untrusted prefix goes in front of the user's message;
- the model may call the memory tools (``memory_search``, ``memory_get`` and every other tool the
  plugins register); calls are run through the host and answered;
- when the conversation fills ``context_window`` (estimated tokens past the flush threshold), the
  oldest half is compacted: ``before_compaction`` (flush and capture), then a summary message with
  the flush's pointer replaces it, then ``after_compaction``; ``/compact`` folds the whole
  conversation so far the same way;
- ``/note TEXT`` writes to today's daily; at the end ``session_end`` appends a short summary
  (none when the user only greeted, thanked or chatted);
- ``/memory status|search Q|why ID|gate on|gate off|verbose on|verbose off``, ``/compact``,
  ``/quit``.

Without a model it runs in a clearly labelled offline mode: the "model" echoes what the memory gate
found, so the gate, the tools, compaction and the notes can all be tried without a key.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from lifelong import clock, llm, prompts
from lifelong.contracts import Message, Session
from lifelong.errors import LLMOffline
from lifelong.markdown import estimate_tokens
from lifelong.runtime import Memory

SYSTEM = "chat_system.md.j2"  # in prompts/ (a workspace may override it)
MAX_TOOL_ROUNDS = 4
HELP = (
    "commands: /note TEXT, /compact, /memory status|search QUERY|why ID|gate on|gate off|"
    "verbose on|verbose off, /help, /quit"
)


@dataclass
class ChatState:
    session: Session
    history: list[Message] = field(default_factory=list)  # what the model sees (compacted)
    transcript: list[Message] = field(default_factory=list)  # everything said (for the summary)
    gate_on: bool = True
    verbose: bool = False
    compactions: int = 0


class ChatAgent:
    def __init__(
        self,
        memory: Memory,
        *,
        model: str | None,
        session_id: str,
        context_window: int,
        echo: Callable[[str], None],
    ):
        self.memory = memory
        self.model = model
        self.window = context_window
        self.echo = echo
        self.state = ChatState(Session(id=session_id, chat_type="direct", kind="interactive"))
        self.system = prompts.render(
            SYSTEM,
            memory.workspace,
            bootstrap=memory.session_start(self.state.session) or "(memory is empty)",
        )

    # the loop ---------------------------------------------------------------------------------
    def start(self) -> None:
        mode = (
            f"model {self.model}"
            if self.model
            else "offline mode: no model configured, replies quote the memory gate"
        )
        self.echo(f"lifelong chat ({mode}); memory loaded: {len(self.system)} chars. {HELP}")

    def handle(self, line: str) -> bool:
        """Handle one input line; False when the chat should end."""
        line = line.strip()
        if not line:
            return True
        if line.startswith("/"):
            return self.command(line)
        self.reply(line)
        if self.tokens() >= self.threshold():
            self.compact("normal")
        return True

    def finish(self) -> None:
        session = Session(**{**self.state.session, "messages": self.state.transcript})
        added = self.memory.session_end(session, model=self.model)
        if added:
            self.echo(f"[memory] session summary written to today's daily:{added.rstrip()}")

    # replies ----------------------------------------------------------------------------------
    def reply(self, text: str) -> None:
        session = Session(**{**self.state.session, "messages": list(self.state.history)})
        prefix = ""
        if self.state.gate_on:
            result = self.memory.before_reply(session, text)
            prefix = result.prefix
            if self.state.verbose:
                self.echo(f"[{result.verbose_line()}]")
        content = f"{prefix}\n\n{text}" if prefix else text
        said = Message(role="user", content=text, ts=clock.now().isoformat())
        self.state.history.append(said)
        answer = self.model_reply(content) if self.model else self.offline_reply(prefix)
        replied = Message(role="assistant", content=answer, ts=clock.now().isoformat())
        self.state.history.append(replied)
        self.state.transcript += [said, replied]
        self.echo(answer)

    def offline_reply(self, prefix: str) -> str:
        if not prefix:
            return "(offline) Nothing in memory bears on that."
        note = prefix.split("<lifelong_memory>", 1)[-1].rsplit("</lifelong_memory>", 1)[0]
        return f"(offline) From memory: {note}"

    def model_reply(self, content: str) -> str:
        messages = [{"role": "system", "content": self.system}]
        messages += [{"role": m["role"], "content": m["content"]} for m in self.state.history[:-1]]
        messages.append({"role": "user", "content": content})
        tools = self.memory.tools()
        for _ in range(MAX_TOOL_ROUNDS):
            try:
                turn = llm.chat_turn(messages, model=self.model, tools=tools)
            except LLMOffline as exc:
                return f"(model unavailable: {exc})"
            if not turn.tool_calls:
                return turn.text
            messages.append(
                {
                    "role": "assistant",
                    "content": turn.text or None,
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                        }
                        for c in turn.tool_calls
                    ],
                }
            )
            for call in turn.tool_calls:
                result = self.memory.call_tool(call.name, call.arguments)
                if self.state.verbose:
                    self.echo(
                        f"[tool {call.name}({json.dumps(call.arguments)[:80]}) -> {len(json.dumps(result))} bytes]"
                    )
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "content": json.dumps(result, default=str)[:8000],
                    }
                )
        return "(stopped after too many tool calls)"

    # compaction -------------------------------------------------------------------------------
    def tokens(self) -> int:
        return estimate_tokens(self.system) + sum(
            estimate_tokens(str(m.get("content") or "")) for m in self.state.history
        )

    def threshold(self) -> int:
        return int(self.window * 0.8)

    def compact(self, path: str) -> None:
        history = self.state.history
        if len(history) < 2:
            self.echo("[memory] nothing to compact yet")
            return
        # automatic compaction keeps the recent half; /compact folds the whole conversation so far
        cut = len(history) if path == "forced" else max(1, len(history) // 2)
        evicted, kept = history[:cut], history[cut:]
        session = Session(
            **{
                **self.state.session,
                "compaction_count": self.state.compactions,
                "compaction_path": path,
                "total_tokens": self.tokens(),
                "context_window": self.window,
            }
        )
        result = self.memory.before_compaction(session, evicted)
        summary = f"[Earlier conversation compacted: {len(evicted)} messages. {result.pointer or ''}]".strip()
        self.state.history = [Message(role="assistant", content=summary, ts=clock.now().isoformat()), *kept]
        self.memory.after_compaction(session, summary)
        self.state.compactions += 1
        self.echo(
            f"[memory] compacted {len(evicted)} messages ({result.status}): {result.pointer or 'nothing kept'}"
        )

    # commands ---------------------------------------------------------------------------------
    def command(self, line: str) -> bool:
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        name, args = words[0], words[1:]
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            self.echo(HELP)
        elif name == "/note":
            added = self.memory.note(" ".join(args), source="chat_note") if args else None
            self.echo(
                "[memory] noted in today's daily"
                if added
                else "[memory] nothing noted (empty, or a write gate blocked it)"
            )
        elif name == "/compact":
            self.compact("forced")
        elif name == "/memory":
            self.memory_command(args)
        else:
            self.echo(f"unknown command {name}; {HELP}")
        return True

    def memory_command(self, args: list[str]) -> None:
        sub = args[0] if args else "status"
        rest = " ".join(args[1:])
        if sub == "status":
            tools = ", ".join(sorted(t.name for t in self.memory.host.agent_tools()))
            self.echo(
                f"[memory] gate {'on' if self.state.gate_on else 'off'}, verbose {'on' if self.state.verbose else 'off'}, "
                f"{len(self.state.history)} messages (~{self.tokens()} of {self.window} tokens), "
                f"{self.state.compactions} compaction(s); tools: {tools}"
            )
        elif sub == "search" and rest:
            found = self.memory.call_tool("memory_search", {"query": rest})
            for hit in found.get("results", [])[:5]:
                self.echo(f"  {hit['citation']}: {' '.join(hit['snippet'].split())[:120]}")
            if "error" in found:
                self.echo(f"[memory] {found['error']}")
            elif not found.get("results"):
                self.echo("[memory] no results")
        elif sub == "why" and rest:
            if "memory_why" in self.memory.host.tools:
                self.echo(
                    json.dumps(self.memory.call_tool("memory_why", {"id": rest}), indent=1, default=str)[
                        :2000
                    ]
                )
            else:
                self.echo("[memory] `why` needs the wiki plugin (tool memory_why), which is not installed")
        elif sub == "gate" and rest in ("on", "off"):
            self.state.gate_on = rest == "on"
            self.echo(f"[memory] gate {rest}")
        elif sub == "verbose" and rest in ("on", "off"):
            self.state.verbose = rest == "on"
            self.echo(f"[memory] verbose {rest}")
        else:
            self.echo(HELP)
