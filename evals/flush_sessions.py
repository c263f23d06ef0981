"""Compaction loses nothing: generated long chat sessions with planted "by the way" details go
through the real flush plugin (offline: capture and the cache tier, no model), then each detail is
looked up with a question that shares few words with it.

``python -m evals.flush_sessions [--sessions 12] [--seed 7] [--embedding local|none] [--json FILE]``
``python -m evals.flush_sessions --heldout [FILE]`` (hand-written sessions, one shared workspace;
beside it, in the same run, the baseline a user would try first: no flush, each session's whole
transcript kept as one note and searched the same way)

Each session is 40-110 messages of task talk (debugging, planning, writing), acknowledgements and
emoji, with 2-4 planted details stated once, in passing, in varied words ("btw", "oh and", "before I
forget", or mid-sentence), some of them short ("locker code is now 4417"). Sessions 1-4 of each seed
are long, the rest shorter. Printed:

- findable: the share of planted details whose message is in the top 5 of ``memory_search`` for its
  question a month after the compaction (each session in a workspace of its own) (``--embedding`` selects hybrid or FTS-only search), overall and for
  short details; the baseline is the same search with no capture at all (0 by construction: the
  messages exist nowhere else);
- restorable: the share of cached messages ``lifelong capture restore`` gives back byte for byte;
- volume: captured note bytes and cached bytes against the transcript's bytes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import tempfile
import time
from pathlib import Path

from lifelong_plugins.flush import tier

from lifelong import clock
from lifelong.host import Host
from lifelong.workspace import Workspace, init_workspace

TZ = "Europe/Berlin"
TASKS = [
    (
        "the nightly backup job",
        [
            "it failed again at 02:10",
            "the log says disk quota exceeded",
            "I moved old archives to cold storage",
        ],
    ),
    (
        "the onboarding doc",
        ["section 3 needs the VPN steps", "Lina reviewed the first half", "can you tighten the intro"],
    ),
    (
        "the Q3 budget sheet",
        ["travel is over by 12%", "marketing asked for two more events", "let's cap software spend"],
    ),
    (
        "the flaky login test",
        ["it only fails on CI", "timeouts around the OAuth redirect", "I added a retry with backoff"],
    ),
    (
        "the blog post on sync",
        ["the draft is 1800 words", "we need a diagram of the merge step", "publish Thursday"],
    ),
    (
        "the kitchen renovation",
        ["the tiles arrive next week", "the plumber wants the old sink gone", "budget is tight"],
    ),
]
FILLER_USER = [
    "ok",
    "thanks!",
    "got it",
    "sounds good",
    "👍",
    "perfect, thank you",
    "hmm",
    "makes sense",
    "yes please",
    "nice",
]
FILLER_ASSISTANT = [
    "Here is a cleaner version of that paragraph with the steps in order.",
    "That error usually comes from a stale lock; check whether the previous run exited cleanly.",
    "I would split this into two tasks so each can be reviewed on its own.",
    "Good idea. I will keep the wording short and concrete.",
    "Let me summarise what we have so far before we continue.",
]
# (planted statement forms, question) per detail; {x} filled per session
DETAILS = [
    (
        [
            "by the way, the SSL certificate for {d} expires on {date}",
            "oh and the TLS cert on {d} runs out {date}, don't let it lapse",
        ],
        "when do we need to renew the certificate for {d}",
    ),
    (
        ["btw my locker code at the gym is now {n}", "locker code changed to {n}"],
        "what is the combination of my gym locker",
    ),
    (["before I forget: {p} is allergic to {f}", "note that {p} cannot eat {f}"], "what should {p} not eat"),
    (
        ["the wifi in the {room} office is called {w}", "fyi {room} office wifi name: {w}"],
        "network name at the {room} office",
    ),
    (
        ["my passport expires in {month}, need to renew before the trip", "passport runs out {month}"],
        "when does my passport run out",
    ),
    (
        ["{p} starts as our new designer on {date}", "{p} joins the design team {date}"],
        "when is the new designer's first day",
    ),
    (
        ["the spare key is with {p} at number {n}", "{p} at no. {n} has our spare key"],
        "who has the spare house key",
    ),
    (
        ["the dentist moved my appointment to {date} at {t}", "dentist appointment now {date}, {t}"],
        "when is my dentist appointment",
    ),
]
DOMAINS = ["api.tidewater.io", "shop.fernwood.de", "mail.heron.app", "status.atlas.dev"]
PEOPLE = ["Mara", "Jonas", "Priya", "Tom", "Ines", "Karl", "Nora", "Omar"]
FOODS = ["peanuts", "shellfish", "kiwi", "gluten", "sesame"]
ROOMS = ["Lisbon", "Hamburg", "Utrecht", "Kraków"]
MONTHS = ["March", "April", "August", "October", "December"]


def fill(rng: random.Random, template: str, values: dict[str, str]) -> str:
    return template.format(**values)


def session_messages(rng: random.Random, n: int, start: dt.datetime) -> tuple[list[dict], list[dict]]:
    """(messages, planted details with their question and message id)."""
    task, beats = rng.choice(TASKS)
    planted = rng.sample(DETAILS, rng.randint(2, 4))
    slots = sorted(rng.sample(range(3, n - 1), len(planted)))
    messages: list[dict] = []
    details: list[dict] = []
    when = start
    for i in range(n):
        when += dt.timedelta(seconds=rng.randint(20, 200))
        mid = f"m{i:03d}"
        if i in slots:
            forms, question = planted[slots.index(i)]
            values = {
                "d": rng.choice(DOMAINS),
                "date": f"{rng.choice(MONTHS)} {rng.randint(2, 28)}",
                "n": str(rng.randint(1000, 9999)),
                "p": rng.choice(PEOPLE),
                "f": rng.choice(FOODS),
                "room": rng.choice(ROOMS),
                "w": f"{rng.choice(['tide', 'fern', 'heron'])}-{rng.randint(10, 99)}",
                "month": rng.choice(MONTHS),
                "t": f"{rng.randint(8, 17)}:{rng.choice(['00', '15', '30', '45'])}",
            }
            statement = fill(rng, rng.choice(forms), values)
            if rng.random() < 0.5:  # embedded mid-message in task talk
                statement = f"{rng.choice(beats).capitalize()}, and {statement}."
            else:
                statement = statement[0].upper() + statement[1:] + "."
            messages.append({"role": "user", "content": statement, "id": mid, "ts": when.isoformat()})
            details.append({"id": mid, "text": statement, "question": fill(rng, question, values)})
            continue
        r = rng.random()
        if r < 0.3:
            content, role = rng.choice(FILLER_USER), "user"
        elif r < 0.6:
            content, role = f"About {task}: {rng.choice(beats)}.", "user"
        else:
            content, role = rng.choice(FILLER_ASSISTANT), "assistant"
        messages.append({"role": role, "content": content, "id": mid, "ts": when.isoformat()})
    return messages, details


def run(sessions: int, seed: int, embedding: str) -> dict:
    """Each session in a workspace of its own (its agent's memory), compacted once, then each of its
    planted details asked about a month later."""
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="lifelong-flush-eval-"))
    all_details: list[dict] = []
    cached_total = restored_exact = 0
    transcript_bytes = cached_bytes = captured_bytes = 0
    started = time.monotonic()
    for s in range(sessions):
        root = base / f"ws{s:02d}"
        init_workspace(root, timezone=TZ)
        (root / "lifelong.yaml").write_text(
            f"timezone: {TZ}\nembedding: {{provider: {embedding}}}\n", encoding="utf-8"
        )
        host = Host(Workspace(root))
        tz = host.workspace.timezone
        n = rng.randint(80, 110) if s < 4 else rng.randint(40, 70)
        start = dt.datetime(2026, 5, 4 + s, 9, 0, tzinfo=tz)
        messages, details = session_messages(rng, n, start)
        transcript_bytes += sum(len(m["content"].encode()) for m in messages)
        sid = f"session-{s:02d}"
        with clock.pinned(start + dt.timedelta(hours=5)):
            result = host.before_compaction(
                {"id": sid, "compaction_count": 0, "compaction_path": "forced"}, messages
            )
            host.after_compaction({"id": sid}, result.pointer)
        if result.status != "ok":
            raise RuntimeError(f"{sid}: flush {result.status}: {result.detail}")
        restored = {m.id: m.content for m in tier.restore(host.workspace, sid)} if result.cached_count else {}
        cached_total += len(restored)
        restored_exact += sum(
            1 for m in messages if m["id"] in restored and restored[m["id"]] == m["content"]
        )
        cached_bytes += sum(len(c.encode()) for c in restored.values())
        captured_bytes += sum(p.stat().st_size for p in (root / "memory" / "captured").rglob("*.md"))
        with clock.pinned(start + dt.timedelta(days=30)):
            for d in details:
                found = host.call_tool(
                    "memory_search", {"query": d["question"], "max_results": 5, "min_score": 0}
                )
                d.update(
                    session=sid,
                    short=len(d["text"].split()) < 10,
                    captured=any(p.endswith(f"-{d['id']}.md") for p in result.captured_paths),
                    found=any(r["path"].endswith(f"-{d['id']}.md") for r in found.get("results", [])),
                )
        all_details += details
        host.close()
    short = [d for d in all_details if d["short"]]
    return {
        "sessions": sessions,
        "seed": seed,
        "embedding": embedding,
        "details": len(all_details),
        "findable": sum(d["found"] for d in all_details) / len(all_details),
        "captured": sum(d["captured"] for d in all_details) / len(all_details),
        "short_details": len(short),
        "short_findable": (sum(d["found"] for d in short) / len(short)) if short else None,
        "cached_messages": cached_total,
        "restorable": (restored_exact / cached_total) if cached_total else 1.0,
        "transcript_bytes": transcript_bytes,
        "captured_bytes": captured_bytes,
        "cached_bytes": cached_bytes,
        "missed": [{"text": d["text"], "question": d["question"]} for d in all_details if not d["found"]],
        "elapsed_s": round(time.monotonic() - started, 1),
    }


HELDOUT = Path(__file__).resolve().parent / "heldout" / "flush_sessions.yaml"


def holds(pattern: re.Pattern[str], snippet: str) -> bool:
    """Whether a result's text holds a detail's value: the ``match`` pattern (``^``/``$`` at line
    ends) on the text, or on its lines without the question a captured reply carries ("(re: And
    the tortoise?) Gus": a writer's ``^Gus$`` means that message)."""
    return bool(pattern.search(snippet) or pattern.search(_REPLY_CONTEXT.sub("", snippet)))


_REPLY_CONTEXT = re.compile(r"^\(re: .*?\) ", re.M)


def found_a_month_later(host: Host, detail: dict) -> bool:
    """Whether ``memory_search``'s top 5 for a hand-written detail's question, asked 30 days after
    its session's ``day``, holds the detail's value (its ``match``)."""
    with clock.pinned(detail["day"] + dt.timedelta(days=30)):
        results = host.call_tool(
            "memory_search", {"query": detail["question"], "max_results": 5, "min_score": 0}
        ).get("results", [])
    pattern = re.compile(detail["match"], re.I | re.M)
    return any(holds(pattern, r["snippet"]) for r in results)


def transcript_baseline(data: dict, details: list[dict], root: Path, embedding: str) -> int:
    """What a user would try first: no flush at all, each session's whole transcript (both roles,
    a line per message) kept as one note and searched the same way, a month later. How many of
    ``details`` (each with its ``day``) a top-5 result holds."""
    init_workspace(root, timezone=TZ)
    (root / "lifelong.yaml").write_text(f"timezone: {TZ}\nembedding: {{provider: {embedding}}}\n", "utf-8")
    folder = root / "memory" / "transcripts"
    folder.mkdir(parents=True)
    for n, session in enumerate(data["sessions"]):
        day = dt.date(2026, 5, 4) + dt.timedelta(days=n)
        lines = [f"# Session {session['id']}, {day.isoformat()}", ""]
        lines += [f"- {m['role']}: {' '.join(m['text'].split())}" for m in session["messages"]]
        (folder / f"{day.isoformat()}-{session['id']}.md").write_text("\n".join(lines) + "\n", "utf-8")
    host = Host(Workspace(root))
    found = sum(found_a_month_later(host, d) for d in details)
    host.close()
    return found


def run_heldout(path: Path, embedding: str) -> dict:
    """The sessions of a hand-written file (``evals/heldout/flush_sessions.yaml``), all compacted in
    one workspace, as one agent's sessions are: each detail asked a month later (found when a top-5
    result's text holds the detail's value, the ``match`` pattern), and every evicted message that
    did not become a note restored from its own session's cache, byte for byte."""
    import yaml

    data = yaml.safe_load(path.read_text("utf-8"))
    base = Path(tempfile.mkdtemp(prefix="lifelong-flush-heldout-"))
    root = base / "ws"
    init_workspace(root, timezone=TZ)
    (root / "lifelong.yaml").write_text(f"timezone: {TZ}\nembedding: {{provider: {embedding}}}\n", "utf-8")
    host = Host(Workspace(root))
    tz = host.workspace.timezone
    started = time.monotonic()
    details: list[dict] = []
    expected = restored_exact = 0
    for n, session in enumerate(data["sessions"]):
        sid = str(session["id"])
        start = dt.datetime(2026, 5, 4, 9, 0, tzinfo=tz) + dt.timedelta(days=n)
        messages = [
            {
                "role": m["role"],
                "content": m["text"],
                "id": f"{sid}-m{i:03d}",
                "ts": (start + dt.timedelta(minutes=i)).isoformat(),
            }
            for i, m in enumerate(session["messages"])
        ]
        with clock.pinned(start + dt.timedelta(hours=3)):
            result = host.before_compaction(
                {"id": sid, "compaction_count": 0, "compaction_path": "forced"}, messages
            )
            host.after_compaction({"id": sid}, result.pointer)
        noted = {p.rsplit("-", 1)[-1].removesuffix(".md") for p in result.captured_paths}
        restored = {m.id: m.content for m in tier.restore(host.workspace, sid)} if result.cached_count else {}
        for m in messages:
            if m["id"].rsplit("-", 1)[-1] in noted:
                continue
            expected += 1
            restored_exact += restored.get(m["id"]) == m["content"]
        for d in session["details"]:
            details.append({**d, "session": sid, "day": start})
    for d in details:
        d["found"] = found_a_month_later(host, d)
    host.close()
    transcript_found = transcript_baseline(data, details, base / "transcripts", embedding)
    return {
        "file": path.name,
        "embedding": embedding,
        "sessions": len(data["sessions"]),
        "details": len(details),
        "findable": sum(d["found"] for d in details) / len(details),
        "transcript_findable": transcript_found / len(details),
        "evicted_not_noted": expected,
        "restorable": restored_exact / expected if expected else 1.0,
        "missed": [{"question": d["question"], "session": d["session"]} for d in details if not d["found"]],
        "elapsed_s": round(time.monotonic() - started, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m evals.flush_sessions", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--sessions", type=int, default=12)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embedding", choices=["local", "none"], default="local")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--heldout",
        type=Path,
        nargs="?",
        const=HELDOUT,
        default=None,
        help="Run the hand-written sessions of this file (default evals/heldout/flush_sessions.yaml) "
        "in one shared workspace instead of generated ones.",
    )
    args = parser.parse_args(argv)
    if args.heldout:
        h = run_heldout(args.heldout, args.embedding)
        print(
            f"{h['file']}: {h['sessions']} sessions in one workspace, {h['details']} details (search: {h['embedding']}):\n"
            f"  findable by memory_search (top 5 holds the value): {h['findable']:.3f}   [target >= 0.95]\n"
            f"  baseline, no flush, each whole transcript kept as one note: {h['transcript_findable']:.3f}\n"
            f"  evicted messages not noted, restored byte for byte from their session: "
            f"{h['restorable']:.3f} of {h['evicted_not_noted']}   [target 1.0]\n"
            f"  {h['elapsed_s']} s"
        )
        for m in h["missed"]:
            print(f"  missed: {m['session']}: {m['question']!r}")
        if args.json:
            args.json.write_text(json.dumps(h, indent=1), encoding="utf-8")
        return
    r = run(args.sessions, args.seed, args.embedding)
    print(
        f"{r['sessions']} sessions, {r['details']} planted details (search: {r['embedding']}):\n"
        f"  findable by memory_search (top 5): {r['findable']:.3f}   [target >= 0.95; without capture: 0]\n"
        f"  of which short details: {r['short_findable'] if r['short_findable'] is None else round(r['short_findable'], 3)} "
        f"({r['short_details']})\n"
        f"  captured as notes: {r['captured']:.3f}\n"
        f"  cached messages restorable byte for byte: {r['restorable']:.3f} of {r['cached_messages']}   [target 1.0]\n"
        f"  volume: transcript {r['transcript_bytes']} B, captured notes {r['captured_bytes']} B "
        f"({r['captured_bytes'] / max(1, r['transcript_bytes']):.2f}x, frontmatter included), "
        f"cached {r['cached_bytes']} B\n"
        f"  {r['elapsed_s']} s"
    )
    for m in r["missed"][:10]:
        print(f"  missed: {m['question']!r} -> {m['text']!r}")
    if args.json:
        args.json.write_text(json.dumps(r, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
