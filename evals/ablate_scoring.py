"""Scoring ablation on LoCoMo: recall config variants side by side, with the single-turn BM25
baseline of the same run.

    python -m evals.ablate_scoring [--conversations 0-4] [--variants defaults,no-decay,...]
                                   [--set name='{"decay_floor": 0.9}' ...]
                                   [--index name='{"chunk_vectors_from_units": true}']

Builds (or reuses, under evals/.cache/ablation/) each conversation's workspace exactly as the
retrieval-locomo suite does, asks every category 1-4 question under each variant with the clock
pinned to the day after the conversation's last session, and prints session recall_any@5 /
recall_all@5, the returned-text metric (evidence turns inside the first 1,000 tokens of the
snippets as returned), multi-hop recall_all@5 and MRR per variant, plus the median search time.
Tune on conversations 0-4 only; the suite reports 5-9 apart (held out). This is the measurement
behind the recall defaults described in docs/configuration.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from .locomo import load_locomo
from .suite_retrieval import BASELINE, aggregate, ask_all, index_conversation, pick_questions

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT.parent / "shared" / "benchmarks" / "locomo"


def _recall(d: dict) -> dict:
    return {"plugins": {"recall": d}}


BM25 = {"embedding": {"provider": "none"}}
VARIANTS = {
    "defaults": _recall({}),
    "no-decay": _recall({"half_life_days": 0}),
    "floor-0.5": _recall({"decay_floor": 0.5}),
    "no-context": _recall({"context_weight": 0.0}),
    "context-0.25": _recall({"context_weight": 0.25}),
    "text-0.5": _recall({"vector_weight": 0.5, "text_weight": 0.5}),
    "text-0.2": _recall({"vector_weight": 0.8, "text_weight": 0.2}),
    "no-unit-vectors": _recall({"unit_vectors": False}),
    "bm25": BM25,
}


def parse_range(text: str) -> set[int]:
    out: set[int] = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--conversations", default="0-4", help="Conversation indexes, e.g. 0-4 or 0,2 (default 0-4)."
    )
    ap.add_argument(
        "--variants", default="defaults,no-decay", help=f"Comma-separated: {', '.join(VARIANTS)}."
    )
    ap.add_argument(
        "--set", action="append", default=[], help="name=JSON recall overrides (an extra variant)."
    )
    ap.add_argument(
        "--index",
        default=None,
        help="name=JSON index-time recall options (e.g. chunk_vectors_from_units): each conversation "
        "gets its own index built with them, under evals/.cache/ablation/<conversation>-<name>; the "
        "variants then run on it.",
    )
    ap.add_argument(
        "--questions", type=Path, default=None, help="Write per-question rows (JSON lines) to this file."
    )
    ap.add_argument(
        "--paragraphs",
        action="store_true",
        help="Write each turn as a message in paragraphs ('**Caroline:** first sentence', then a "
        "paragraph per further sentence) instead of one tagged list line per turn.",
    )
    args = ap.parse_args(argv)
    wanted = parse_range(args.conversations)
    variants = {v: VARIANTS[v] for v in args.variants.split(",") if v}
    index_name, _, index_raw = (args.index or "").partition("=")
    index_options = json.loads(index_raw) if index_raw else None
    for item in args.set:
        name, _, raw = item.partition("=")
        variants[name] = _recall(json.loads(raw))
    convs, _ = load_locomo(BENCH / "locomo10.json", BENCH / "audit-errors.json")
    rows: dict[str, list] = {v: [] for v in [*variants, BASELINE]}
    detail = open(args.questions, "w", encoding="utf-8") if args.questions else None  # noqa: SIM115
    for conv in convs:
        if conv.index not in wanted:
            continue
        layout = "paragraphs" if args.paragraphs else "lines"
        suffix = ("-paragraphs" if args.paragraphs else "") + (f"-{index_name}" if index_name else "")
        root = ROOT / "evals" / ".cache" / "ablation" / f"{conv.sample_id}{suffix}"
        cached = ROOT / "evals" / ".cache" / "locomo" / conv.sample_id
        if not root.exists() and cached.exists():
            shutil.copytree(cached, root)  # reuse the suite's embedding cache
        files, info = index_conversation(conv, root, lambda m: print(m, flush=True), layout, index_options)
        if index_options:
            print(f"{conv.sample_id}: index {info}", flush=True)
        questions = pick_questions(conv, None)
        started = time.monotonic()
        answered, times = ask_all(conv, root, files, variants, questions, baseline=True)
        for r in answered:
            if detail is not None:
                detail.write(json.dumps(r, sort_keys=True) + "\n")
            for v in rows:
                rows[v].append({"category": r["category"], "metrics": r["variants"][v]["metrics"]})
        medians = {v: round(sorted(t)[len(t) // 2], 1) for v, t in times.items() if t}
        print(
            f"{conv.sample_id}: {len(questions)} questions in {time.monotonic() - started:.0f} s; "
            f"median search ms {medians}",
            flush=True,
        )
    if detail is not None:
        detail.close()
    print(f"{'variant':24s} any@5  all@5  ret@1000 mh-all@5 mrr")
    for v in rows:
        agg = aggregate(rows[v])
        a = agg["overall"]
        print(
            f"{v:24s} {a['recall_any@5']:.3f}  {a['recall_all@5']:.3f}  {a['returned@1000']:.3f}    "
            f"{agg['multi-hop']['recall_all@5']:.3f}    {a['mrr']:.3f}"
        )


if __name__ == "__main__":
    main()
