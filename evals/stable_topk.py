"""Stable top-k, budget fill and result shape on a long chat (issue 42).

    python -m evals.stable_topk [--conversation 0] [--verbose-assistant 8] [--questions 40]

A LoCoMo conversation recast as a chat export (``evals.first_person``: the first speaker is
``User``, the second ``Assistant``, questions about the first speaker in the first person), each
turn a message in paragraphs (``**User:** first sentence``, a paragraph per further sentence),
and each assistant message carrying its next ``--verbose-assistant`` - 1 turns (so assistant
messages run to a few hundred tokens, as a chat assistant's do). It is indexed by the real recall
pipeline (local embeddings, cached under ``evals/.cache/stable-topk/``) and every question goes
through the ``memory_search`` tool with the recall defaults and ``min_score`` 0 (as the LoCoMo
suite asks; ``--min-score``), the clock pinned to the day after the last session. Printed:

- ``head@k``: the share of questions whose results for k (5, 20, 50) are exactly the first
  results for k = 100: same results (path and lines), same scores, as many as k allows;
- ``descending``: the share whose scores (k = 100) never rise down the list;
- ``fill@B``: the mean of returned tokens / B for ``max_tokens`` B (2,000 and 5,000; tokens of
  the snippets as returned, ``estimate_tokens``), and ``within@B`` the share of questions whose
  results fill B to within their largest single result;
- ``dup-turns@20``: per question, how many of the first 20 results hold only turns an earlier
  result already holds (fragments of one message returned apart), and ``tokens@20`` the median
  tokens those 20 results return.

Run it on two checkouts to compare (see evals/README.md, "Measuring another checkout").
"""

from __future__ import annotations

import argparse
import shutil
import statistics

from .ablate_scoring import BENCH, ROOT
from .first_person import as_transcript
from .locomo import load_locomo
from .suite_retrieval import PLUGINS, ask_time, index_conversation, variant_workspace

KS = (5, 20, 50)
K_MAX = 100
BUDGETS = (2000, 5000)


def _ident(r: dict) -> tuple:
    return (r["path"], r["start_line"], r["end_line"], r["score"])


def is_head(small: list[dict], large: list[dict], k: int) -> bool:
    """Whether ``small`` (results for k) is exactly the head of ``large`` (results for a larger k)."""
    return len(small) == min(k, len(large)) and [_ident(r) for r in small] == [
        _ident(r) for r in large[: len(small)]
    ]


def descending(rows: list[dict]) -> bool:
    return all(a["score"] >= b["score"] for a, b in zip(rows, rows[1:], strict=False))


def main(argv: list[str] | None = None) -> None:
    from lifelong_plugins.recall.chunking import estimate_tokens

    from lifelong import clock
    from lifelong.host import Host

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conversation", type=int, default=0, help="LoCoMo conversation index (default 0).")
    ap.add_argument("--verbose-assistant", type=int, default=8)
    ap.add_argument("--questions", type=int, default=40, help="At most this many questions, spread evenly.")
    ap.add_argument(
        "--min-score",
        type=float,
        default=0.0,
        help="min_score of every search (default 0, as the LoCoMo suite asks: enough matches to fill "
        "a budget; the recall default is 0.2).",
    )
    args = ap.parse_args(argv)
    convs, _ = load_locomo(BENCH / "locomo10.json", BENCH / "audit-errors.json")
    conv = next(c for c in convs if c.index == args.conversation)
    chat = as_transcript(conv, args.verbose_assistant)
    root = ROOT / "evals" / ".cache" / "stable-topk" / f"{conv.sample_id}-v{args.verbose_assistant}"
    cached = (
        ROOT / "evals" / ".cache" / "first-person" / f"{conv.sample_id}-v{args.verbose_assistant}-paragraphs"
    )
    if not root.exists() and cached.exists():
        shutil.copytree(cached, root)
    files, _info = index_conversation(chat, root, lambda m: print(m, flush=True), "paragraphs")
    questions = list(chat.questions)
    if len(questions) > args.questions:
        step = len(questions) / args.questions
        questions = [questions[int(i * step)] for i in range(args.questions)]
    heads = {k: 0 for k in KS}
    desc = 0
    fill: dict[int, list[float]] = {b: [] for b in BUDGETS}
    within: dict[int, int] = {b: 0 for b in BUDGETS}
    dups: list[int] = []
    tokens20: list[int] = []

    def cost(rows: list[dict]) -> list[int]:
        return [estimate_tokens(r["snippet"]) for r in rows]

    host = Host(variant_workspace(root, {}), builtins=PLUGINS, entry_points=False)
    try:
        with clock.pinned(ask_time(conv)):

            def ask(question: str, **kw: int) -> list[dict]:
                out = host.ctx.call_tool(
                    "memory_search", query=question, source="eval", min_score=args.min_score, **kw
                )
                if "error" in out:
                    raise RuntimeError(f"{question!r}: {out['error']}")
                return out["results"]

            for q in questions:
                large = ask(q.question, max_results=K_MAX)
                for k in KS:
                    heads[k] += is_head(ask(q.question, max_results=k), large, k)
                desc += descending(large)
                for b in BUDGETS:
                    got = cost(ask(q.question, max_tokens=b))
                    fill[b].append(sum(got) / b)
                    within[b] += bool(got) and sum(got) >= b - max(got)
                top = large[:20]
                tokens20.append(sum(cost(top)))
                seen: set[str] = set()
                n = 0
                for r in top:
                    turns = set(files[r["path"]].dia_ids(r["start_line"], r["end_line"]))
                    n += bool(turns) and turns <= seen
                    seen |= turns
                dups.append(n)
    finally:
        host.close()
    n = len(questions)
    print(f"{conv.sample_id} as a chat (assistant x{args.verbose_assistant}, paragraphs): {n} questions")
    for k in KS:
        print(f"head@{k:<3d} {heads[k] / n:.3f}   (results for k={k} are the first of k={K_MAX})")
    print(f"descending {desc / n:.3f}")
    for b in BUDGETS:
        print(f"fill@{b} {statistics.mean(fill[b]):.3f}   within@{b} {within[b] / n:.3f}")
    print(
        f"dup-turns@20 mean {statistics.mean(dups):.2f}   tokens@20 median {statistics.median(tokens20):.0f}"
    )


if __name__ == "__main__":
    main()
