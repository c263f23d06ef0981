"""Scoring ablation on LoCoMo: hybrid vs BM25 under the original and the current defaults.

    python -m evals.ablate_scoring conv-26[,conv-30,...]

Builds (or reuses, under evals/.cache/ablation/) each named conversation's workspace exactly as
the retrieval-locomo suite does, asks every category 1-4 question under each variant below with
the clock pinned to the conversation's last session, and prints session recall_any@5 /
recall_all@5 / recall_any@1 / MRR / evidence-turn recall within 1,000 tokens per variant, plus
the median search time. This is the measurement behind the recall defaults (decay_floor 0.5,
cosine centring, min_score 0.2) described in docs/configuration.md.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from .locomo import load_locomo
from .suite_retrieval import aggregate, ask_all, index_conversation, pick_questions

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "benchmarks" / "locomo"


def _recall(d: dict) -> dict:
    return {"plugins": {"recall": d}}


BM25 = {"embedding": {"provider": "none"}}
VARIANTS = {
    "original (raw cos, plain decay)": _recall({"cosine_centering": False, "decay_floor": 0}),
    "centred, plain decay": _recall({"decay_floor": 0}),
    "defaults (centred, floor 0.5)": _recall({}),
    "centred, no decay": _recall({"half_life_days": 0}),
    "bm25, plain decay": {**BM25, **_recall({"decay_floor": 0})},
    "bm25, floor 0.5 (default)": BM25,
    "bm25, no decay": {**BM25, **_recall({"half_life_days": 0})},
}


def main(argv: list[str]) -> None:
    wanted = (argv[0] if argv else "conv-26").split(",")
    convs, _ = load_locomo(BENCH / "locomo10.json", BENCH / "audit-errors.json")
    rows: dict[str, list] = {v: [] for v in VARIANTS}
    for conv in convs:
        if conv.sample_id not in wanted:
            continue
        root = ROOT / "evals" / ".cache" / "ablation" / conv.sample_id
        cached = ROOT / "evals" / ".cache" / "locomo" / conv.sample_id
        if not root.exists() and cached.exists():
            shutil.copytree(cached, root)  # reuse the suite's embedding cache
        files, _info = index_conversation(conv, root, lambda m: None)
        questions = pick_questions(conv, None)
        started = time.monotonic()
        answered, times = ask_all(conv, root, files, VARIANTS, questions)
        for r in answered:
            for v in VARIANTS:
                rows[v].append({"category": r["category"], "metrics": r["variants"][v]["metrics"]})
        medians = {v: round(sorted(t)[len(t) // 2], 1) for v, t in times.items()}
        print(
            f"{conv.sample_id}: {len(questions)} questions in {time.monotonic() - started:.0f} s; "
            f"median search ms {medians}",
            flush=True,
        )
    print(f"{'variant':34s} any@5  all@5  any@1  mrr    turn@1000")
    for v in VARIANTS:
        a = aggregate(rows[v])["overall"]
        print(
            f"{v:34s} {a['recall_any@5']:.3f}  {a['recall_all@5']:.3f}  {a['recall_any@1']:.3f}  "
            f"{a['mrr']:.3f}  {a['turn_recall@1000']:.3f}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
