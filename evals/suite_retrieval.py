"""Suite ``retrieval-locomo``: session and evidence-turn recall on LoCoMo-10, hybrid vs BM25.

Each conversation becomes a workspace (see :mod:`evals.locomo`), indexed once through the real
recall pipeline and cached under ``evals/.cache/locomo/<sample_id>/`` (index and embedding
cache; a change to the recall plugin's source forces a re-chunk, the embedding cache still
hits). Every question is asked through the ``memory_search`` tool, with the clock pinned to
the day after the conversation's last session (:data:`ASK_DELAY`: what the agent would live
through; temporal decay means what it would mean to it), with ``min_score`` 0 and
``max_results`` :data:`MAX_RESULTS`, under each *variant* of the recall config:

- ``hybrid``: the shipped defaults (0.7 cosine + 0.3 BM25, decay half-life 30 days, MMR);
- ``bm25``: the same pipeline with embedding provider ``none`` (FTS leg only);
- ``hybrid-no-decay`` / ``bm25-no-decay`` (full run only): ``half_life_days: 0``, to show how
  much of the ranking is decided by recency rather than content;

and beside them, in the same run, the strongest simple baseline, ``bm25-turns``: BM25 (bm25s,
English stop words, Snowball stems) over single turns, one document per turn line, returning
the turns in rank order (its "returned text" is those turn lines).

Metrics (per category 1-4 and overall; the question is the unit, means over questions):

- session ``recall_any@k`` / ``recall_all@k``, k = 1, 3, 5, 10: the sessions of the returned
  chunks ranked by first appearance; any / all of the question's evidence sessions in the top k;
- ``mrr``: mean reciprocal rank of the first evidence session;
- ``turn_recall@1000`` / ``@2000``: the fraction of evidence turns whose line lies inside a
  returned chunk, taking chunks in rank order while their total estimated tokens (the recall
  plugin's ``estimate_tokens``) stays within the budget: fair across chunk sizes (what the agent
  would get if it read every hit's whole line range);
- ``returned@1000`` (the *budget metric*): the fraction of evidence turns whose whole line is
  inside the first 1,000 tokens of the text the tool actually returns: the results' snippets as
  returned, in order, joined by newlines and cut at the budget (line by line, ``estimate_tokens``).
  A turn cut off by a snippet's end does not count.

Figures are reported overall, per category, and for conversations 0-4 (the ones recall was tuned
on) and 5-9 (held out) separately, so over-fitting shows.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .locomo import CATEGORIES, Conversation, SessionFile, write_workspace

KS = (1, 3, 5, 10)
BUDGETS = (1000, 2000)
RETURNED_BUDGET = 1000
MAX_RESULTS = 30
ASK_DELAY = dt.timedelta(days=1)  # questions are asked the day after the last session
BASELINE = "bm25-turns"
TUNING_CONVERSATIONS = range(0, 5)  # recall was tuned on these; 5-9 are held out
VARIANTS: dict[str, dict[str, Any]] = {
    "hybrid": {},
    "bm25": {"embedding": {"provider": "none"}},
}
DIAGNOSTIC_VARIANTS: dict[str, dict[str, Any]] = {
    "hybrid-no-decay": {"plugins": {"recall": {"half_life_days": 0}}},
    "bm25-no-decay": {"embedding": {"provider": "none"}, "plugins": {"recall": {"half_life_days": 0}}},
}
PLUGINS = ("embeddings", "recall")  # layer 1 alone: later layers bring their own suites
QUICK_QUESTIONS = 40  # --quick: this many questions of conversation 0, spread evenly


# ---------------------------------------------------------------------------------------------
# Metrics (pure)


@dataclass(frozen=True)
class Hit:
    path: str
    start_line: int
    end_line: int


def ranked_sessions(hits: Sequence[Hit], files: dict[str, SessionFile]) -> list[int]:
    """Sessions in order of first appearance among the hits (hits outside session files skipped)."""
    out: list[int] = []
    for h in hits:
        f = files.get(h.path)
        if f is not None and f.session not in out:
            out.append(f.session)
    return out


def recall_any(ranked: Sequence[int], gold: Iterable[int], k: int) -> float:
    return 1.0 if set(ranked[:k]) & set(gold) else 0.0


def recall_all(ranked: Sequence[int], gold: Iterable[int], k: int) -> float:
    gold = set(gold)
    return 1.0 if gold and gold <= set(ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[int], gold: Iterable[int]) -> float:
    gold = set(gold)
    for i, s in enumerate(ranked):
        if s in gold:
            return 1.0 / (i + 1)
    return 0.0


def turns_within_budget(
    hits: Sequence[Hit], files: dict[str, SessionFile], budget: int, count_tokens: Callable[[str], int]
) -> set[str]:
    """dia_ids on the lines of the leading hits whose summed token estimate fits ``budget``."""
    used = 0
    found: set[str] = set()
    for h in hits:
        f = files.get(h.path)
        if f is None:
            continue
        cost = count_tokens(f.span_text(h.start_line, h.end_line))
        if used + cost > budget:
            break
        used += cost
        found.update(f.dia_ids(h.start_line, h.end_line))
    return found


def returned_turns(
    snippets: Sequence[str],
    files: dict[str, SessionFile],
    evidence: Sequence[str],
    budget: int,
    count_tokens: Callable[[str], int],
) -> set[str]:
    """The evidence turns whose whole line is inside the first ``budget`` tokens of the returned
    text: ``snippets`` in order, joined by newlines, cut line by line at the budget."""
    used = 0
    kept: list[str] = []
    for snippet in snippets:
        for line in snippet.split("\n"):
            cost = count_tokens(line) + 1  # the newline
            if used + cost > budget:
                break
            used += cost
            kept.append(line)
        else:
            continue
        break
    present = set(kept)
    lines_of: dict[str, str] = {}
    for f in files.values():
        file_lines = f.lines()
        for n, dia in f.dia_by_line.items():
            lines_of[dia] = file_lines[n - 1]
    return {d for d in evidence if lines_of.get(d) in present}


def question_metrics(
    hits: Sequence[Hit],
    files: dict[str, SessionFile],
    evidence: Sequence[str],
    gold_sessions: Iterable[int],
    count_tokens: Callable[[str], int],
    snippets: Sequence[str] | None = None,
) -> dict[str, float]:
    ranked = ranked_sessions(hits, files)
    gold_sessions = set(gold_sessions)
    m: dict[str, float] = {}
    for k in KS:
        m[f"recall_any@{k}"] = recall_any(ranked, gold_sessions, k)
        m[f"recall_all@{k}"] = recall_all(ranked, gold_sessions, k)
    m["mrr"] = reciprocal_rank(ranked, gold_sessions)
    for b in BUDGETS:
        found = turns_within_budget(hits, files, b, count_tokens)
        m[f"turn_recall@{b}"] = len(found & set(evidence)) / len(evidence) if evidence else 0.0
    if snippets is not None:
        got = returned_turns(snippets, files, evidence, RETURNED_BUDGET, count_tokens)
        m[f"returned@{RETURNED_BUDGET}"] = len(got) / len(evidence) if evidence else 0.0
    return m


METRIC_NAMES = tuple(
    [f"recall_any@{k}" for k in KS]
    + [f"recall_all@{k}" for k in KS]
    + ["mrr"]
    + [f"turn_recall@{b}" for b in BUDGETS]
    + [f"returned@{RETURNED_BUDGET}"]
)
HEADLINE = ("recall_any@5", "recall_all@5", f"returned@{RETURNED_BUDGET}")
SPLITS = {"conversations 0-4 (tuning)": "tuning", "conversations 5-9 (held out)": "held-out"}


def aggregate(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means per category (by name), overall, and per split when rows carry ``conversation``
    (its index: 0-4 tuning, else held-out). ``rows``: {category, metrics: {...}[, conversation]}."""
    groups: dict[str, list[dict[str, float]]] = {"overall": []}
    for r in rows:
        groups.setdefault(CATEGORIES[r["category"]], []).append(r["metrics"])
        groups["overall"].append(r["metrics"])
        if "conversation" in r:
            split = "tuning" if r["conversation"] in TUNING_CONVERSATIONS else "held-out"
            groups.setdefault(split, []).append(r["metrics"])
            if r["category"] == 1:
                groups.setdefault(f"{split} multi-hop", []).append(r["metrics"])
    names = [*CATEGORIES.values(), "overall"]
    names += [g for g in ("tuning", "tuning multi-hop", "held-out", "held-out multi-hop") if g in groups]
    out: dict[str, Any] = {}
    for name in names:
        ms = groups.get(name, [])
        out[name] = {
            "n": len(ms),
            **{
                k: round(statistics.fmean(m[k] for m in ms), 4) if ms and k in ms[0] else None
                for k in METRIC_NAMES
            },
        }
    return out


# ---------------------------------------------------------------------------------------------
# Running


def recall_fingerprint() -> str:
    """Hash of the recall plugin's source and defaults and of the workspace layout code: when it changes,
    cached workspaces are re-chunked (their embedding cache still applies)."""
    import lifelong_plugins.recall as recall

    from . import locomo as locomo_module

    h = hashlib.sha256()
    folder = Path(recall.__file__).parent
    for path in sorted(folder.glob("*.py")) + [folder / "plugin.yaml", Path(locomo_module.__file__)]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def variant_workspace(root: Path, overrides: dict[str, Any]):  # noqa: ANN201 - a Workspace
    """The workspace at ``root`` with its lifelong.yaml overlaid by ``overrides`` (in memory:
    the cached workspace on disk keeps the default config)."""
    from lifelong.schema import apply_defaults, validate
    from lifelong.workspace import CORE_CONFIG_SCHEMA, Workspace, load_config

    class VariantWorkspace(Workspace):
        @property
        def config(self) -> dict[str, Any]:
            if self._config is None:
                merged = deep_merge(load_config(self.config_path), overrides)
                validate(merged, CORE_CONFIG_SCHEMA, where="")
                self._config = apply_defaults(merged, CORE_CONFIG_SCHEMA)
            return self._config

    return VariantWorkspace(root)


def index_conversation(
    conv: Conversation,
    root: Path,
    log: Callable[[str], None],
    layout: str = "lines",
    recall: dict[str, Any] | None = None,
) -> tuple[dict[str, SessionFile], dict[str, Any]]:
    """Write the workspace (``layout``: see :func:`evals.locomo.session_files`; ``recall``:
    index-time recall options) and bring its index up to date (forced re-chunk when the recall
    code or those options changed since the cached index was built)."""
    from lifelong_plugins.recall import service

    from lifelong import clock
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    files = write_workspace(conv, root, layout, recall)
    stamp = root / ".lifelong" / "eval-fingerprint"
    fingerprint = recall_fingerprint()
    if recall:
        fingerprint += "-" + hashlib.sha256(json.dumps(recall, sort_keys=True).encode()).hexdigest()[:8]
    force = stamp.exists() and stamp.read_text().strip() != fingerprint
    host = Host(Workspace(root), builtins=PLUGINS, entry_points=False)
    try:
        with clock.pinned(ask_time(conv)):
            started = time.monotonic()
            report = service.index_for(host.ctx).sync(force=force)
            elapsed = time.monotonic() - started
        chunks = host.store.execute("SELECT count(*) FROM chunks").fetchone()[0]
    finally:
        host.close()
    stamp.write_text(fingerprint)
    info = {
        "chunks": chunks,
        "embedded": report.embedded,
        "embedding_cache_hits": report.cache_hits,
        "forced": force,
        "index_s": round(elapsed, 2),
        "vectors": report.vectors,
    }
    if report.embedded:
        log(f"  {conv.sample_id}: indexed {chunks} chunks, embedded {report.embedded} in {elapsed:.1f} s")
    return files, info


def ask_time(conv: Conversation) -> dt.datetime:
    """When every question of ``conv`` is asked: the day after its last session (UTC)."""
    return conv.last_session_time.replace(tzinfo=dt.UTC) + ASK_DELAY


class TurnBM25:
    """The single-turn BM25 baseline: bm25s over one document per turn line (speaker, text and
    image caption; English stop words, Snowball stems: the strongest of the simple variants
    measured), answering with the turns' lines in rank order."""

    def __init__(self, files: dict[str, SessionFile]):
        import bm25s

        self._bm25s = bm25s
        self.turns: list[tuple[str, int, str]] = []  # path, line, the line's text
        for f in files.values():
            lines = f.lines()
            for n in sorted(f.dia_by_line):
                self.turns.append((f.relpath, n, lines[n - 1]))
        corpus = [self._document(t[2]) for t in self.turns]
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(corpus, **self._tokenizing()), show_progress=False)

    @staticmethod
    def _tokenizing() -> dict[str, Any]:
        import snowballstemmer

        return {
            "stopwords": "en",
            "stemmer": snowballstemmer.stemmer("english").stemWords,
            "show_progress": False,
        }

    @staticmethod
    def _document(line: str) -> str:
        """The turn without its list marker and ``[D1:3]`` tag."""
        return line.split("] ", 1)[1] if line.startswith("- [") and "] " in line else line

    def search(self, query: str, k: int) -> tuple[list[Hit], list[str]]:
        tokens = self._bm25s.tokenize([query], **self._tokenizing())
        if not tokens.vocab or not any(tokens.ids):
            return [], []
        k = min(k, len(self.turns))
        docs, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        picked = [self.turns[int(i)] for i, sc in zip(docs[0], scores[0], strict=True) if sc > 0]
        return [Hit(p, n, n) for p, n, _ in picked], [t for _, _, t in picked]


def pick_questions(conv: Conversation, limit: int | None) -> list[Any]:
    qs = list(conv.questions)
    if limit is None or limit >= len(qs):
        return qs
    step = len(qs) / limit
    return [qs[int(i * step)] for i in range(limit)]


def ask_all(
    conv: Conversation,
    root: Path,
    files: dict[str, SessionFile],
    variants: dict[str, dict[str, Any]],
    questions: Sequence[Any],
    baseline: bool = False,
) -> tuple[list[dict[str, Any]], dict[str, list[float]]]:
    """Ask every question under every variant (and, with ``baseline``, of the single-turn BM25
    baseline first); per-question rows and per-variant search times."""
    from lifelong_plugins.recall.chunking import estimate_tokens

    from lifelong import clock
    from lifelong.host import Host

    rows: list[dict[str, Any]] = []
    times: dict[str, list[float]] = {v: [] for v in variants}
    by_qid: dict[str, dict[str, Any]] = {}

    def row_of(q: Any) -> dict[str, Any]:
        return by_qid.setdefault(
            q.qid,
            {
                "qid": q.qid,
                "conversation": conv.index,
                "category": q.category,
                "evidence": list(q.evidence),
                "corrected": q.corrected,
                "variants": {},
            },
        )

    if baseline:
        turn_bm25 = TurnBM25(files)
        times[BASELINE] = []
        for q in questions:
            started = time.monotonic()
            hits, snippets = turn_bm25.search(q.question, MAX_RESULTS)
            times[BASELINE].append((time.monotonic() - started) * 1000)
            row_of(q)["variants"][BASELINE] = {
                "metrics": question_metrics(
                    hits, files, q.evidence, q.evidence_sessions, estimate_tokens, snippets
                ),
                "sessions": ranked_sessions(hits, files)[:10],
            }
    for name, overrides in variants.items():
        host = Host(variant_workspace(root, overrides), builtins=PLUGINS, entry_points=False)
        try:
            with clock.pinned(ask_time(conv)):
                for q in questions:
                    started = time.monotonic()
                    out = host.ctx.call_tool(
                        "memory_search",
                        query=q.question,
                        max_results=MAX_RESULTS,
                        min_score=0.0,
                        source="eval",
                    )
                    times[name].append((time.monotonic() - started) * 1000)
                    if "error" in out:
                        raise RuntimeError(f"{q.qid}: memory_search failed: {out['error']}")
                    hits = [Hit(r["path"], r["start_line"], r["end_line"]) for r in out["results"]]
                    snippets = [r["snippet"] for r in out["results"]]
                    row_of(q)["variants"][name] = {
                        "metrics": question_metrics(
                            hits, files, q.evidence, q.evidence_sessions, estimate_tokens, snippets
                        ),
                        "sessions": ranked_sessions(hits, files)[:10],
                    }
        finally:
            host.close()
    rows = list(by_qid.values())
    return rows, times


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    idx = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[idx]


def run(opts: Any) -> dict[str, Any]:
    from .harness import LOCOMO_HELP, SuiteSkipped
    from .locomo import load_locomo

    source, audit = opts.locomo_files()
    if not source.exists():
        raise SuiteSkipped(f"LoCoMo data not found at {source}. {LOCOMO_HELP}")
    conversations, load_report = load_locomo(source, audit if audit.exists() else None)
    if opts.quick:
        conversations = conversations[:1]
        variants = dict(VARIANTS)
        limit: int | None = QUICK_QUESTIONS
    else:
        variants = {**VARIANTS, **DIAGNOSTIC_VARIANTS}
        limit = None
    cache = opts.cache_dir / "locomo"
    all_rows: list[dict[str, Any]] = []
    times: dict[str, list[float]] = {v: [] for v in [BASELINE, *variants]}
    indexing: dict[str, Any] = {}
    for conv in conversations:
        root = cache / conv.sample_id
        files, info = index_conversation(conv, root, opts.log)
        indexing[conv.sample_id] = info
        questions = pick_questions(conv, limit)
        started = time.monotonic()
        rows, t = ask_all(conv, root, files, variants, questions, baseline=True)
        opts.log(
            f"  {conv.sample_id}: {len(questions)} questions x {len(variants)} variants + {BASELINE} "
            f"in {time.monotonic() - started:.0f} s"
        )
        all_rows.extend(rows)
        for v, ts in t.items():
            times[v].extend(ts)
    metrics = {
        v: aggregate(
            [
                {
                    "category": r["category"],
                    "conversation": r["conversation"],
                    "metrics": r["variants"][v]["metrics"],
                }
                for r in all_rows
            ]
        )
        for v in [*variants, BASELINE]
    }
    per_question = opts.out_dir / "retrieval-locomo-questions.jsonl"
    with open(per_question, "w", encoding="utf-8") as fh:
        for r in all_rows:
            fh.write(json.dumps(r, sort_keys=True) + "\n")
    return {
        "data": {
            "source": str(source),
            "conversations": [c.sample_id for c in conversations],
            "questions": len(all_rows),
            "quick_subset": limit,
            **load_report.as_json(),
        },
        "settings": {
            "plugins": list(PLUGINS),
            "max_results": MAX_RESULTS,
            "min_score": 0.0,
            "clock": "pinned to the day after each conversation's last session",
            "baseline": f"{BASELINE}: bm25s over single turns (English stop words, Snowball stems), turns in rank order",
            "returned_budget_tokens": RETURNED_BUDGET,
            "variants": variants,
            "ks": list(KS),
            "budgets": list(BUDGETS),
        },
        "indexing": indexing,
        "metrics": metrics,
        "search_ms": {
            v: {"p50": round(percentile(ts, 50), 1), "p95": round(percentile(ts, 95), 1), "n": len(ts)}
            for v, ts in times.items()
        },
        "per_question_file": per_question.name,
    }


# ---------------------------------------------------------------------------------------------
# Report and plots


def report(results: dict[str, Any]) -> str:
    m = results["metrics"]
    variants = list(m)
    cats = [*CATEGORIES.values(), "overall"]
    d = results["data"]
    lines = [
        f"Questions: {d['questions']} (categories 1-4, audit-corrected: {d['corrections_applied']} corrections; "
        f"{len(d['skipped_questions'])} skipped, {len(d['repaired_evidence'])} with repaired evidence ids, "
        f"{len(d['dropped_evidence_ids'])} with dropped ids) from {', '.join(d['conversations'])}"
        + (f"; quick subset of {d['quick_subset']} questions" if d.get("quick_subset") else "")
        + ".",
        f"Search: `memory_search` max_results {results['settings']['max_results']}, min_score 0, "
        "clock pinned to the day after the conversation's last session. "
        f"`{BASELINE}`: BM25 (bm25s) over single turns, computed in the same run.",
        "",
        f"Headline: session any@5 / all@5 / evidence turns inside the first {RETURNED_BUDGET} tokens of "
        "returned text / multi-hop all@5:",
        "",
        "| variant | group | n | any@5 | all@5 | returned@1000 | multi-hop all@5 |",
        "|---|---|---|---|---|---|---|",
    ]
    for v in variants:
        for group, mh in (
            ("overall", "multi-hop"),
            ("tuning", "tuning multi-hop"),
            ("held-out", "held-out multi-hop"),
        ):
            if group not in m[v]:
                continue
            g = m[v][group]
            cells = [_f(g[k]) for k in HEADLINE] + [_f(m[v].get(mh, {}).get("recall_all@5"))]
            label = {"overall": "all", "tuning": "conv 0-4", "held-out": "conv 5-9"}[group]
            lines.append(f"| {v} | {label} | {g['n']} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Per category: any@5 / all@5 / returned@1000:",
        "",
        "| category | n | " + " | ".join(variants) + " |",
        "|---|---|" + "---|" * len(variants),
    ]
    for c in cats:
        n = m[variants[0]][c]["n"]
        cells = [
            f"{_f(m[v][c]['recall_any@5'])} / {_f(m[v][c]['recall_all@5'])} / {_f(m[v][c]['returned@1000'])}"
            for v in variants
        ]
        lines.append(f"| {c} | {n} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Session recall@5 (any / all) per category:",
        "",
        "| category | n | " + " | ".join(variants) + " |",
        "|---|---|" + "---|" * len(variants),
    ]
    for c in cats:
        n = m[variants[0]][c]["n"]
        cells = [f"{_f(m[v][c]['recall_any@5'])} / {_f(m[v][c]['recall_all@5'])}" for v in variants]
        lines.append(f"| {c} | {n} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Overall, every metric:",
        "",
        "| metric | " + " | ".join(variants) + " |",
        "|---|" + "---|" * len(variants),
    ]
    for k in METRIC_NAMES:
        lines.append(f"| {k} | " + " | ".join(_f(m[v]["overall"][k]) for v in variants) + " |")
    lines += ["", "Search time per question (ms, includes query embedding and the auto-sync check):", ""]
    for v, t in results["search_ms"].items():
        lines.append(f"- {v}: p50 {t['p50']}, p95 {t['p95']} (n={t['n']})")
    if d["skipped_questions"]:
        lines += [
            "",
            "Skipped: " + ", ".join(f"{s['question_id']} ({s['reason']})" for s in d["skipped_questions"]),
        ]
    if d["repaired_evidence"]:
        lines += [
            "",
            "Repaired evidence: "
            + "; ".join(f"{r['question_id']}: {', '.join(r['changes'])}" for r in d["repaired_evidence"]),
        ]
    if d["dropped_evidence_ids"]:
        lines += [
            "",
            "Dropped evidence ids: "
            + "; ".join(f"{r['question_id']}: {', '.join(r['ids'])}" for r in d["dropped_evidence_ids"]),
        ]
    return "\n".join(lines)


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def plots(results: dict[str, Any], out_dir: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = results["metrics"]
    cats = [*CATEGORIES.values(), "overall"]
    names = []
    fig, axes = plt.subplots(1, len(cats), figsize=(3.2 * len(cats), 3.4), sharey=True)
    styles = {
        "hybrid": "-o",
        "bm25": "--s",
        "hybrid-no-decay": ":o",
        "bm25-no-decay": ":s",
        BASELINE: "-.^",
    }
    for ax, c in zip(axes, cats, strict=True):
        for v in m:
            ys = [m[v][c][f"recall_any@{k}"] for k in KS]
            if None in ys:
                continue
            ax.plot(KS, ys, styles.get(v, "-"), label=v)
        ax.set_title(f"{c} (n={m[next(iter(m))][c]['n']})", fontsize=9)
        ax.set_xticks(KS)
        ax.set_xlabel("k (sessions)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("session recall_any@k")
    axes[-1].legend(fontsize=7, loc="lower right")
    fig.suptitle("LoCoMo-10 session recall@k per category", fontsize=10)
    fig.tight_layout()
    path = out_dir / "retrieval-locomo-recall-at-k.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    names.append(path.name)
    return names
