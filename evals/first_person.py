"""First-person questions over a chat transcript: does the user's own statement come first?

    python -m evals.first_person [--conversations 0-9]

A personal agent's memory is often a chat log whose lines are marked ``User:`` / ``Assistant:``,
and the questions about the user are asked in the first person ("what did I paint last
month?"). LoCoMo has no such transcript, so this script makes one from each conversation: the
first speaker becomes ``User``, the second ``Assistant`` (``- [D1:3] User: ...``), and every
question that names the first speaker and not the second is rewritten in the first person
("What did Caroline research?" -> "What did I research?", "Caroline's kids" -> "my kids"). It
asks them through ``memory_search`` exactly as ``lifelong eval retrieval-locomo`` does (clock
pinned to the day after the last session, max_results 30, min_score 0), with the defaults (a
first-person question prefers the user's lines by ``speaker_boost``) and with ``speaker_boost`` 0,
beside BM25 over single turns in the same run, and prints session any@5 / all@5 / returned@1000 /
multi-hop all@5 over conversations 0-4 and 5-9 apart. The rewrite is mechanical (a pronoun later
in the question stays "she"); it measures the role rule, not a new benchmark.

``--paragraphs`` writes each turn as a chat export writes a message, ``**User:** first
sentence`` and a paragraph per further sentence: most of a message's units then carry no role
mark of their own (returned@1000 counts a turn by its last line).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil

from .ablate_scoring import BENCH, ROOT, parse_range
from .locomo import Conversation, load_locomo
from .suite_retrieval import BASELINE, aggregate, ask_all, index_conversation

USER, ASSISTANT = "User", "Assistant"


def first_person(question: str, name: str) -> str | None:
    """``question`` about ``name`` in the first person, or None when it does not name them."""
    if not re.search(rf"\b{re.escape(name)}\b", question):
        return None
    text = re.sub(rf"\b{re.escape(name)}['’]s\b", "my", question)
    text = re.sub(rf"\b{re.escape(name)}\b", "I", text)
    return text


def as_transcript(conv: Conversation, verbose: int = 1) -> Conversation:
    """The conversation with its speakers renamed to chat roles and only the questions about
    the first speaker (not naming the second), in the first person. ``verbose`` > 1: each
    assistant turn also carries the text of the assistant's next ``verbose - 1`` turns of its
    session, so assistant lines are several times longer than the user's (as a chat assistant's
    are) and repeat what it says around them."""
    roles = {conv.speaker_a: USER, conv.speaker_b: ASSISTANT}

    def turns_of(s):  # noqa: ANN001, ANN202 - a locomo Session, its renamed turns
        said = [t for t in s.turns if t.speaker == conv.speaker_b]
        out = []
        for t in s.turns:
            text = t.text
            if t.speaker == conv.speaker_b and verbose > 1:
                i = said.index(t)
                text = " ".join(x.text for x in said[i : i + verbose])
            out.append(dataclasses.replace(t, speaker=roles.get(t.speaker, t.speaker), text=text))
        return tuple(out)

    sessions = tuple(dataclasses.replace(s, turns=turns_of(s)) for s in conv.sessions)
    questions = []
    for q in conv.questions:
        if re.search(rf"\b{re.escape(conv.speaker_b)}\b", q.question):
            continue
        text = first_person(q.question, conv.speaker_a)
        if text is not None:
            questions.append(dataclasses.replace(q, question=text))
    return dataclasses.replace(
        conv, speaker_a=USER, speaker_b=ASSISTANT, sessions=sessions, questions=tuple(questions)
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conversations", default="0-9", help="Conversation indexes (default 0-9).")
    ap.add_argument(
        "--verbose-assistant",
        type=int,
        default=1,
        help="Each assistant turn also carries its next N-1 turns' text (default 1: as written).",
    )
    ap.add_argument(
        "--paragraphs",
        action="store_true",
        help="Write each turn as a chat export's message in paragraphs ('**User:** first sentence', "
        "then a paragraph per further sentence) instead of one tagged list line per turn.",
    )
    ap.add_argument(
        "--set", action="append", default=[], help="name=JSON recall overrides (an extra variant)."
    )
    args = ap.parse_args(argv)
    wanted = parse_range(args.conversations)
    convs, _ = load_locomo(BENCH / "locomo10.json", BENCH / "audit-errors.json")
    variants = {
        "defaults": {},
        "no-speaker-boost": {"plugins": {"recall": {"speaker_boost": 0}}},
    }
    for item in args.set:
        name, _, raw = item.partition("=")
        variants[name] = {"plugins": {"recall": json.loads(raw)}}
    rows: dict[str, list] = {v: [] for v in [*variants, BASELINE]}
    for conv in convs:
        if conv.index not in wanted:
            continue
        chat = as_transcript(conv, args.verbose_assistant)
        suffix = f"-v{args.verbose_assistant}" if args.verbose_assistant > 1 else ""
        suffix += "-paragraphs" if args.paragraphs else ""
        root = ROOT / "evals" / ".cache" / "first-person" / f"{conv.sample_id}{suffix}"
        cached = ROOT / "evals" / ".cache" / "locomo" / conv.sample_id
        if not root.exists() and cached.exists():
            shutil.copytree(cached, root)  # the embedding cache holds most turns' sentences
        layout = "paragraphs" if args.paragraphs else "lines"
        files, _info = index_conversation(chat, root, lambda m: print(m, flush=True), layout)
        answered, _times = ask_all(chat, root, files, variants, list(chat.questions), baseline=True)
        for r in answered:
            for v in rows:
                rows[v].append(
                    {
                        "category": r["category"],
                        "conversation": conv.index,
                        "metrics": r["variants"][v]["metrics"],
                    }
                )
        print(f"{conv.sample_id}: {len(chat.questions)} first-person questions", flush=True)
    print(f"{'variant':18s} {'split':8s} {'n':>5s}  any@5  all@5  ret@1000 mh-all@5")
    for v, vrows in rows.items():
        for split, pick in (("0-4", range(5)), ("5-9", range(5, 10))):
            part = [r for r in vrows if r["conversation"] in pick]
            if not part:
                continue
            agg = aggregate(part)
            a = agg["overall"]
            mh = agg.get("multi-hop", {}).get("recall_all@5", float("nan"))
            print(
                f"{v:18s} {split:8s} {len(part):5d}  {a['recall_any@5']:.3f}  {a['recall_all@5']:.3f}  "
                f"{a['returned@1000']:.3f}    {mh:.3f}"
            )


if __name__ == "__main__":
    main()
