"""Suite ``gate``: the pre-reply gate (plugin ``gate``) on LoCoMo, through
``host.before_reply(session, message)``.

- **Offline hit rate**: each question is sent as a casual user message to a direct interactive
  session (a new session id per question, so the gate's cache never answers), the clock pinned to
  the conversation's last session, no model configured (the extractive fallback). A question is
  a *hit* when the note contains the gold answer (case- and punctuation-insensitive substring) or
  a gold-evidence identifier: the evidence turn's ``dia_id`` in the note text, or a citation
  (``path#Lx[-Ly]``) whose lines hold an evidence turn. Also reported: answer hits, identifier
  hits, session hits (a citation inside an evidence session), the status mix, note length and
  latency. Full run: up to :data:`FULL_PER_CONVERSATION` questions per conversation, spread
  evenly; ``--quick``: :data:`QUICK_QUESTIONS` of conversation 0 (and 40 latency queries, not 2 x 100).
- **Latency** on the 10k-chunk synthetic workspace of :mod:`evals.bench_search` (issue 4's target:
  p95 <= 150 ms including query embedding).
- **Lazy-default gap** (only with ``--model M`` and that model's key): answer accuracy when the
  agent is told to use memory vs asked casually (the memory tools available, no instruction) vs
  casually with the gate's note prepended; the agent loop calls ``memory_search``/``memory_get``
  through the host; the same model judges CORRECT/WRONG against the gold answer.

When the gate plugin is not installed or fails to load, the suite is skipped with the reason.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lifelong.text import clip

from .locomo import CATEGORIES, Conversation, Question, SessionFile

PLUGINS = ("embeddings", "recall", "gate")
QUICK_QUESTIONS = 20
FULL_PER_CONVERSATION = 50
LATENCY_QUERIES = 100
QUICK_LATENCY_QUERIES = 40
GAP_QUESTIONS = 40
GAP_QUICK_QUESTIONS = 8
CITATION_RE = re.compile(r"((?:memory|wiki)/[^\s#()\[\]]+?\.md)#L(\d+)(?:-L?(\d+))?")
DIA_IN_TEXT_RE = re.compile(r"\bD\d+:\d+\b")


# ---------------------------------------------------------------------------------------------
# Scoring a note (pure)


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def answer_in(note: str, answer: str) -> bool:
    gold = normalise(answer)
    return bool(gold) and f" {gold} " in f" {normalise(note)} "


def cited_turns(
    citations: Sequence[str], note: str, files: dict[str, SessionFile]
) -> tuple[set[str], set[int]]:
    """(dia_ids on the cited lines, sessions of the cited files) from the result's citations and
    any ``path#L..`` inside the note text."""
    turns: set[str] = set()
    sessions: set[int] = set()
    for text in [*citations, note]:
        for path, start, end in CITATION_RE.findall(text):
            f = files.get(path)
            if f is None:
                continue
            sessions.add(f.session)
            turns.update(f.dia_ids(int(start), int(end or start)))
    return turns, sessions


def score_note(
    note: str, citations: Sequence[str], question: Question, files: dict[str, SessionFile]
) -> dict[str, bool]:
    turns, sessions = cited_turns(citations, note, files)
    evidence = set(question.evidence)
    id_hit = bool(evidence & set(DIA_IN_TEXT_RE.findall(note))) or bool(evidence & turns)
    answer_hit = answer_in(note, question.answer)
    return {
        "hit": answer_hit or id_hit,
        "answer_hit": answer_hit,
        "evidence_id_hit": id_hit,
        "session_hit": bool(sessions & set(question.evidence_sessions)),
    }


def session_for(qid: str) -> dict[str, Any]:
    return {"id": f"eval-{qid}", "kind": "interactive", "chat_type": "direct", "messages": []}


# ---------------------------------------------------------------------------------------------
# Running


def gate_unavailable() -> str | None:
    """Why the gate cannot run here, or None."""
    from lifelong.host import Host

    try:
        host = Host(None, builtins=PLUGINS, entry_points=False)
    except Exception as exc:
        return f"the gate plugin failed to load: {type(exc).__name__}: {exc}"
    record = host.plugins.get("gate")
    if record is None or record.status != "loaded":
        return f"the gate plugin is not available ({record.status if record else 'unknown'}: {record.note if record else ''})"
    return None


def _host(root: Path, overrides: dict[str, Any] | None = None):  # noqa: ANN202 - a Host
    from lifelong.host import Host

    from .suite_retrieval import variant_workspace

    return Host(variant_workspace(root, overrides or {}), builtins=PLUGINS, entry_points=False)


def offline_hit_rate(
    conversations: Sequence[Conversation], opts: Any, per_conversation: int | None, total: int | None
) -> tuple[list[dict[str, Any]], list[float]]:
    from lifelong import clock

    from .suite_retrieval import index_conversation, pick_questions

    rows: list[dict[str, Any]] = []
    wall: list[float] = []
    for conv in conversations:
        root = opts.cache_dir / "locomo" / conv.sample_id
        files, _ = index_conversation(conv, root, opts.log)
        questions = pick_questions(conv, total if total is not None else per_conversation)
        host = _host(root)
        try:
            with clock.pinned(conv.last_session_time.replace(tzinfo=dt.UTC)):
                for q in questions:
                    t0 = time.perf_counter()
                    result = host.before_reply(session_for(q.qid), q.question)
                    wall.append((time.perf_counter() - t0) * 1000)
                    first, first_cites = first_result_note(host, q.question)
                    base = score_note(first, first_cites, q, files)
                    rows.append(
                        {
                            "qid": q.qid,
                            "category": q.category,
                            "status": result.status,
                            "note_chars": len(result.note),
                            "elapsed_ms": round(result.elapsed_ms, 1),
                            "note": result.note,
                            "citations": list(result.citations),
                            **score_note(result.note, result.citations, q, files),
                            "baseline_hit": base["hit"],
                            "baseline_session_hit": base["session_hit"],
                        }
                    )
        finally:
            host.close()
        opts.log(f"  gate {conv.sample_id}: {len(questions)} questions")
    return rows, wall


def first_result_note(host: Any, question: str, max_chars: int = 220) -> tuple[str, list[str]]:
    """The baseline a user would try first: ``memory_search`` on the question (as the gate
    searches: every corpus, six results, superseded facts included) and its first result's text,
    clipped to the gate's 220 characters with its citation."""
    found = host.call_tool(
        "memory_search",
        {"query": question, "corpus": "all", "max_results": 6, "mode": "all", "source": "eval"},
    )
    results = (found.get("results") or []) if isinstance(found, dict) else []
    if not results:
        return "", []
    top = results[0]
    cite = f"{top['path']}#L{top['start_line']}" + (
        f"-L{top['end_line']}" if top.get("end_line") not in (None, top["start_line"]) else ""
    )
    return (f"{clip(str(top.get('snippet') or ''), max_chars - len(cite) - 3)} ({cite})", [cite])


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from .bench_search import percentiles

    def rate(rs: Sequence[dict[str, Any]], key: str) -> float | None:
        return round(sum(1 for r in rs if r[key]) / len(rs), 4) if rs else None

    out: dict[str, Any] = {}
    groups: dict[str, list[dict[str, Any]]] = {name: [] for name in CATEGORIES.values()}
    for r in rows:
        groups[CATEGORIES[r["category"]]].append(r)
    groups["overall"] = list(rows)
    for name, rs in groups.items():
        out[name] = {
            "n": len(rs),
            **{
                k: rate(rs, k)
                for k in (
                    "hit",
                    "answer_hit",
                    "evidence_id_hit",
                    "session_hit",
                    "baseline_hit",
                    "baseline_session_hit",
                )
            },
        }
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    with_note = [r["note_chars"] for r in rows if r["note_chars"]]
    return {
        "by_category": out,
        "statuses": dict(sorted(statuses.items())),
        "note_chars": percentiles(with_note) if with_note else None,
        "max_note_chars": max(with_note) if with_note else 0,
        "elapsed_ms": percentiles([r["elapsed_ms"] for r in rows]),
    }


def synthetic_latency(opts: Any) -> dict[str, Any]:
    """before_reply on the 10k-chunk synthetic workspace, query embedding included."""
    from lifelong import clock

    from . import bench_search

    n = 10_000
    queries = QUICK_LATENCY_QUERIES if opts.quick else LATENCY_QUERIES
    corpus = bench_search.build_corpus(
        opts.cache_dir / "bench" / f"n{n}-s{opts.seed}", n, opts.seed, queries, opts.log
    )
    host = _host(corpus.root)
    wall, reported, statuses = [], [], {}
    try:
        with clock.pinned(bench_search.NOW):
            host.before_reply(session_for("warm"), "warm up the embedding model please")
            reps = 1 if opts.quick else 2
            for rep in range(reps):
                for i, (text, _vec, _src) in enumerate(corpus.queries):
                    t0 = time.perf_counter()
                    result = host.before_reply(session_for(f"lat-{rep}-{i}"), text)
                    wall.append((time.perf_counter() - t0) * 1000)
                    reported.append(result.elapsed_ms)
                    statuses[result.status] = statuses.get(result.status, 0) + 1
    finally:
        host.close()
    return {
        "chunks": n,
        "wall_ms": bench_search.percentiles(wall),
        "gate_elapsed_ms": bench_search.percentiles(reported),
        "statuses": statuses,
        "target_p95_ms": 150.0,
    }


# ---------------------------------------------------------------------------------------------
# The lazy-default gap (needs a model and its key)

TOLD_SYSTEM = (
    "You are the personal assistant of {a} and {b}, who talk to each other in sessions you have "
    "stored in long-term memory. Before answering any question about them, ALWAYS search your memory "
    "with the memory_search tool (and read more with memory_get when useful), then answer briefly."
)
CASUAL_SYSTEM = "You are a helpful personal assistant. Answer briefly."
JUDGE_PROMPT = (
    "Question: {question}\nGold answer: {answer}\nResponse: {response}\n\n"
    "Does the response give the gold answer (the same facts; wording may differ)? "
    "Reply with exactly one word: CORRECT or WRONG."
)


def agent_answer(
    complete: Callable[..., Any], model: str, system: str, user: str, host: Any, max_rounds: int = 3
) -> tuple[str, int]:
    """A minimal tool-calling agent: (final answer, tool calls made)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
    tools = [host.tools[name].schema() for name in ("memory_search", "memory_get") if name in host.tools]
    calls = 0
    for _ in range(max_rounds):
        message = complete(model=model, messages=messages, tools=tools).choices[0].message
        tool_calls = list(getattr(message, "tool_calls", None) or [])
        if not tool_calls:
            return message.content or "", calls
        messages.append(
            {
                "role": "assistant",
                "content": message.content or "",
                "tool_calls": [
                    {
                        "id": tc.id,
                        "type": "function",
                        "function": {"name": tc.function.name, "arguments": tc.function.arguments},
                    }
                    for tc in tool_calls
                ],
            }
        )
        for tc in tool_calls:
            try:
                args = json.loads(tc.function.arguments or "{}")
            except ValueError:
                args = {}
            out = host.call_tool(tc.function.name, args if isinstance(args, dict) else {})
            calls += 1
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": json.dumps(out)[:8000]})
    message = complete(model=model, messages=messages).choices[0].message
    return message.content or "", calls


def judge(complete: Callable[..., Any], model: str, question: Question, response: str) -> bool:
    prompt = JUDGE_PROMPT.format(question=question.question, answer=question.answer, response=response)
    reply = (
        complete(model=model, messages=[{"role": "user", "content": prompt}]).choices[0].message.content or ""
    )
    return reply.strip().upper().startswith("CORRECT")


def lazy_default_gap(
    conversations: Sequence[Conversation],
    opts: Any,
    complete: Callable[..., Any] | None = None,
    n_questions: int = GAP_QUESTIONS,
    gate_options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Accuracy told / casual / casual+gate. ``complete`` is litellm.completion (tests pass one
    with litellm's mock arguments); ``gate_options`` are the gate's ``model_options``."""
    from lifelong import clock

    from .suite_retrieval import index_conversation, pick_questions

    if not opts.model:
        return {"status": "skipped", "reason": "no --model given"}
    if complete is None:
        import litellm

        def complete(**kw: Any) -> Any:
            return litellm.completion(timeout=60, num_retries=1, **kw)

    try:
        complete(model=opts.model, messages=[{"role": "user", "content": "Reply OK."}], max_tokens=5)
    except Exception as exc:
        return {
            "status": "skipped",
            "reason": f"{opts.model} unavailable: {type(exc).__name__}: {str(exc)[:200]}",
        }
    per = max(1, n_questions // max(1, len(conversations)))
    conditions = ("told", "casual", "casual+gate")
    rows = []
    for conv in conversations:
        root = opts.cache_dir / "locomo" / conv.sample_id
        index_conversation(conv, root, opts.log)
        gate_cfg = {"model": opts.model, **({"model_options": gate_options} if gate_options else {})}
        host = _host(root, {"plugins": {"gate": gate_cfg}})
        try:
            with clock.pinned(conv.last_session_time.replace(tzinfo=dt.UTC)):
                for q in pick_questions(conv, per):
                    row: dict[str, Any] = {"qid": q.qid, "category": q.category}
                    for cond in conditions:
                        system = (
                            TOLD_SYSTEM.format(a=conv.speaker_a, b=conv.speaker_b)
                            if cond == "told"
                            else CASUAL_SYSTEM
                        )
                        user = q.question
                        if cond == "casual+gate":
                            gate = host.before_reply(session_for(f"gap-{q.qid}"), q.question)
                            user = f"{gate.prefix}\n\n{q.question}" if gate.prefix else q.question
                        answer, calls = agent_answer(complete, opts.model, system, user, host)
                        row[cond] = {"correct": judge(complete, opts.model, q, answer), "tool_calls": calls}
                    rows.append(row)
        finally:
            host.close()
    summary = {
        c: {
            "accuracy": round(sum(r[c]["correct"] for r in rows) / len(rows), 4) if rows else None,
            "used_memory_tool": round(sum(1 for r in rows if r[c]["tool_calls"]) / len(rows), 4)
            if rows
            else None,
        }
        for c in conditions
    }
    return {"status": "ok", "model": opts.model, "questions": len(rows), "conditions": summary, "rows": rows}


def run(opts: Any) -> dict[str, Any]:
    from .harness import SuiteSkipped
    from .locomo import load_locomo

    reason = gate_unavailable()
    if reason:
        raise SuiteSkipped(reason)
    source, audit = opts.locomo_files()
    results: dict[str, Any] = {"plugins": list(PLUGINS)}
    if source.exists():
        conversations, _ = load_locomo(source, audit if audit.exists() else None)
        if opts.quick:
            conversations = conversations[:1]
        rows, wall = offline_hit_rate(
            conversations,
            opts,
            None if opts.quick else FULL_PER_CONVERSATION,
            QUICK_QUESTIONS if opts.quick else None,
        )
        from .bench_search import percentiles

        results["locomo"] = {
            "conversations": [c.sample_id for c in conversations],
            "questions": len(rows),
            **summarise(rows),
            "wall_ms": percentiles(wall),
        }
        per_question = opts.out_dir / "gate-locomo-questions.jsonl"
        with open(per_question, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, sort_keys=True) + "\n")
        results["locomo"]["per_question_file"] = per_question.name
        results["lazy_default_gap"] = lazy_default_gap(
            conversations, opts, n_questions=GAP_QUICK_QUESTIONS if opts.quick else GAP_QUESTIONS
        )
    else:
        results["locomo"] = None
        results["locomo_skipped"] = f"LoCoMo data not found at {source}"
        results["lazy_default_gap"] = {"status": "skipped", "reason": "no LoCoMo data"}
    results["latency_10k"] = synthetic_latency(opts)
    return results


def report(results: dict[str, Any]) -> str:
    lines: list[str] = []
    loc = results.get("locomo")
    if loc:
        lines += [
            f"Offline gate (no model: extractive note) on {loc['questions']} LoCoMo questions "
            f"({', '.join(loc['conversations'])}), clock pinned to each conversation's last session.",
            "",
            "| category | n | hit | answer in note | evidence id | evidence session cited | baseline: first search result, clipped: hit / session |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, r in loc["by_category"].items():
            lines.append(
                f"| {name} | {r['n']} | {_f(r['hit'])} | {_f(r['answer_hit'])} | {_f(r['evidence_id_hit'])} | {_f(r['session_hit'])} "
                f"| {_f(r.get('baseline_hit'))} / {_f(r.get('baseline_session_hit'))} |"
            )
        lines += [
            "",
            "Statuses: "
            + ", ".join(f"{k} {v}" for k, v in loc["statuses"].items())
            + f"; note length p50 {loc['note_chars']['p50'] if loc['note_chars'] else 0} chars, max {loc['max_note_chars']}; "
            f"gate elapsed p50 {loc['elapsed_ms']['p50']} ms / p95 {loc['elapsed_ms']['p95']} ms.",
        ]
    else:
        lines.append(results.get("locomo_skipped", "LoCoMo part skipped."))
    lat = results["latency_10k"]
    lines += [
        "",
        f"Latency on the {lat['chunks']:,}-chunk synthetic workspace (query embedding included): "
        f"p50 {lat['wall_ms']['p50']} ms, p95 {lat['wall_ms']['p95']} ms (target p95 <= {lat['target_p95_ms']:.0f} ms: "
        f"{'met' if lat['wall_ms']['p95'] <= lat['target_p95_ms'] else '**missed**'}); statuses {lat['statuses']}.",
    ]
    gap = results.get("lazy_default_gap") or {}
    lines.append("")
    if gap.get("status") == "ok":
        lines += [
            f"Lazy-default gap with {gap['model']} on {gap['questions']} questions (judged by the same model):",
            "",
            "| condition | accuracy | used a memory tool |",
            "|---|---|---|",
        ]
        for c, v in gap["conditions"].items():
            lines.append(f"| {c} | {_f(v['accuracy'])} | {_f(v['used_memory_tool'])} |")
    else:
        lines.append(f"Lazy-default gap: skipped ({gap.get('reason', 'not run')}).")
    return "\n".join(lines)


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def plots(results: dict[str, Any], out_dir: Path) -> list[str]:
    loc = results.get("locomo")
    if not loc:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(loc["by_category"])
    keys = ("hit", "answer_hit", "evidence_id_hit", "session_hit")
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.2
    for i, k in enumerate(keys):
        ax.bar(
            [x + i * width for x in range(len(names))],
            [loc["by_category"][n][k] or 0 for n in names],
            width,
            label=k,
        )
    ax.set_xticks([x + 1.5 * width for x in range(len(names))])
    ax.set_xticklabels([f"{n}\n(n={loc['by_category'][n]['n']})" for n in names], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_title("Offline gate on LoCoMo: what the note carries")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out_dir / "gate-locomo-hit-rate.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path.name]
