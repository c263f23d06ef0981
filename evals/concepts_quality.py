"""Does the concept index cost recall? LoCoMo-10 asked with and without the ``concepts`` plugin
(issue 18: "it must not lower recall"), in the same run.

``python -m evals.concepts_quality [--conversations 0-9] [--locomo PATH] [--json]``

Each conversation's cached workspace from ``lifelong eval retrieval-locomo`` (``evals/.cache/
locomo/<sample_id>``, built here when missing) is searched by every question of categories 1-4, as
of the day after its last session, through ``memory_search`` with the default config, by two hosts:
``embeddings + recall`` (the hybrid search alone) and ``embeddings + concepts + recall`` (the
concept index rebuilt first, answering when confident). Printed: session any@5 / all@5 and the
evidence turns within 1,000 returned tokens for both, overall and for conversations 0-4 and 5-9,
and the share of questions the concept index answered.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from .harness import DEFAULT_CACHE, DEFAULT_LOCOMO
from .locomo import load_locomo
from .suite_retrieval import (
    MAX_RESULTS,
    TUNING_CONVERSATIONS,
    Hit,
    aggregate,
    ask_time,
    index_conversation,
    pick_questions,
    question_metrics,
)

SETUPS = {
    "hybrid alone": ("embeddings", "recall"),
    "with concept index": ("embeddings", "concepts", "recall"),
}
# --dump: also the index forced to answer whenever it recognises a concept (threshold 0, no
# document-frequency cap), so an answer rule can be studied question by question
FORCED = "index forced"
FORCED_CONFIG = {
    "plugins": {
        "concepts": {
            "confidence_threshold": 0.0,
            "max_doc_freq": 100_000_000,
            "min_idf": 0.0,
            "min_coverage": 0.0,
            "min_answer_coverage": 0.0,
        }
    }
}


def ask(
    conv: Any,
    root: Path,
    files: dict[str, Any],
    plugins: tuple[str, ...],
    questions: list[Any],
    overrides: dict[str, Any] | None = None,
) -> tuple[list, int]:
    from lifelong_plugins.recall.chunking import estimate_tokens

    from lifelong import clock
    from lifelong.contracts import SearchRequest
    from lifelong.host import Host

    from .suite_retrieval import variant_workspace

    host = Host(variant_workspace(root, overrides or {}), builtins=plugins, entry_points=False)
    rows, answered = [], 0
    index = None
    try:
        with clock.pinned(ask_time(conv)):
            if "concepts" in plugins:
                from lifelong_plugins.concepts.index import ConceptIndex

                index = ConceptIndex(host.ctx, host.ctx.config("concepts"))
                index.rebuild()
            for q in questions:
                out = host.ctx.call_tool(
                    "memory_search", query=q.question, max_results=MAX_RESULTS, min_score=0.0, source="eval"
                )
                if "error" in out:
                    raise RuntimeError(f"{q.qid}: {out['error']}")
                results = out["results"]
                answered += bool(results) and all(
                    (r.get("extra") or {}).get("answered_by") == "concepts" for r in results
                )
                hits = [Hit(r["path"], r["start_line"], r["end_line"]) for r in results]
                metrics = question_metrics(
                    hits,
                    files,
                    q.evidence,
                    q.evidence_sessions,
                    estimate_tokens,
                    [r["snippet"] for r in results],
                )
                row = {"category": q.category, "conversation": conv.index, "metrics": metrics}
                if index is not None:
                    lookup = index.lookup(SearchRequest(q.question, max_results=MAX_RESULTS, min_score=0.0))
                    row.update(
                        qid=q.qid,
                        question=q.question,
                        answered=bool(results)
                        and all((r.get("extra") or {}).get("answered_by") == "concepts" for r in results),
                        confidence=round(lookup.confidence, 4),
                        reason=lookup.reason,
                        detail=lookup.detail,
                    )
                else:
                    row.update(qid=q.qid, question=q.question)
                rows.append(row)
    finally:
        host.close()
    return rows, answered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.concepts_quality", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--conversations", default="0-9")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--dump",
        type=Path,
        default=None,
        help="write every question's metrics per setup (JSON lines), with the index also forced to answer",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    lo, _, hi = args.conversations.partition("-")
    wanted = set(range(int(lo), int(hi or lo) + 1))
    source = args.locomo / "locomo10.json" if args.locomo.is_dir() else args.locomo
    audit = source.parent / "audit-errors.json"
    conversations, _ = load_locomo(source, audit if audit.exists() else None)
    rows: dict[str, list] = {name: [] for name in SETUPS}
    answered, asked = 0, 0
    started = time.monotonic()
    for conv in conversations:
        if conv.index not in wanted:
            continue
        root = args.cache / "locomo" / conv.sample_id
        files, _ = index_conversation(conv, root, print)
        questions = pick_questions(conv, None)
        for name, plugins in SETUPS.items():
            got, n = ask(conv, root, files, plugins, questions)
            rows[name].extend(got)
            if "concepts" in plugins:
                answered += n
                asked += len(questions)
        if args.dump:
            got, _ = ask(conv, root, files, SETUPS["with concept index"], questions, FORCED_CONFIG)
            rows.setdefault(FORCED, []).extend(got)
        print(
            f"  {conv.sample_id}: {len(questions)} questions ({time.monotonic() - started:.0f} s)", flush=True
        )
    if args.dump:
        with args.dump.open("w") as out:
            for name, got in rows.items():
                for row in got:
                    out.write(json.dumps({"setup": name, **row}) + "\n")
        rows.pop(FORCED, None)
    report = {name: aggregate(r) for name, r in rows.items()}
    report["concept_answered_share"] = round(answered / max(1, asked), 4)
    for split in ("tuning", "held-out"):
        part = [
            r
            for r in rows["with concept index"]
            if (r["conversation"] in TUNING_CONVERSATIONS) == (split == "tuning")
        ]
        if part:
            report[f"concept_answered_share_{split}"] = round(sum(r["answered"] for r in part) / len(part), 4)
    print(f"{'':20}{'any@5':>8}{'all@5':>8}{'ret@1000':>10}   (overall | conv 0-4 | conv 5-9)")
    for name in SETUPS:
        parts = []
        for group in ("overall", "tuning", "held-out"):
            g = report[name].get(group)
            if g and g["n"]:
                parts.append(f"{g['recall_any@5']:.3f}/{g['recall_all@5']:.3f}/{g['returned@1000']:.3f}")
        print(f"{name:20}  " + "  |  ".join(parts))
    shares = " | ".join(
        f"{report[k]:.1%}"
        for k in ("concept_answered_share_tuning", "concept_answered_share_held-out")
        if k in report
    )
    print(
        f"the concept index answered {report['concept_answered_share']:.1%} of the questions itself"
        + (f" (conv 0-4 | 5-9: {shares})" if shares else "")
    )
    if args.json:
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
