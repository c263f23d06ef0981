"""Indexing throughput: how long a first ``lifelong index`` of a year of notes and of a long chat takes.

    PYTHONPATH=. python -m evals.bench_index [--year-tokens N] [--beam-files N] [--beam PATH]
                                             [--skip-year] [--skip-beam] [--json OUT.json]

Two corpora, each written into a fresh workspace (not timed) and indexed once from nothing by the
real ``RecallIndex.sync`` with the default config and embedder (``embedding.provider: local``,
passages on the float32 engine; nothing comes from an embedding cache):

- **year**: a generated year of daily notes (seeded): each day a ``# date`` title and sections in
  the shapes people write: one statement a line under ``## Work`` / ``## People``, a journal
  paragraph of several sentences, meeting notes with speakers (``**Maya:** ...``), now and then a
  table or a code block. ``--year-tokens`` sets its size (estimated tokens,
  ``lifelong.markdown.estimate_tokens``, ~4 characters a token; each day ends with the section that
  passes its share, so a small year comes out larger: 20,000 asked gives ~40,000); the default,
  100,000, is a tenth of
  the ~1M tokens of the issue's "year of notes": a full run takes half an hour or more on two
  busy cores, and the work grows linearly with the text (every file, chunk and unit costs the
  same whatever the corpus size), so the full year's time is projected from it, and printed as
  a projection;
- **beam**: the daily transcript files of BEAM's 100K chat 1 (``evals/beam.py`` lays them out; read
  from ``--beam``, ``$BEAM_DIR``, the fetched mirror or the extracted cache; never copied here),
  the first ``--beam-files`` of them (default 1 of 3, ~40k tokens): a real long chat's shape
  (long assistant messages of several sentences each). Skipped with a note when BEAM is absent.

Printed for each: estimated tokens, files, chunks, units; wall and process-CPU seconds and
tokens/s (on a shared machine the wall clock measures the neighbours too; CPU seconds over the
two cores bound what an idle machine would do); the time by stage: reading and parsing
(frontmatter), chunking, retrieval units and sentence splitting, search terms and FTS text, the
rest of the text side (SQL inserts: chunk, unit and FTS rows), and the embedding pass by kind
(chunks, units' own vectors, sentence vectors: time inside the model, as the sync reports it)
plus storing the vectors; passages embedded and the tokens the model read, by kind; when each
becomes searchable (FTS, then the chunk vectors, then unit and sentence vectors, as one sync
stores them in that order); and the
projected time for 1M tokens at the measured rate. The load average at start and end is printed:
run it on a quiet machine for the idle figure.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TARGET_TOKENS = 1_000_000  # the year of notes
PLUGINS = ("embeddings", "recall")
CONFIG = "timezone: UTC\nembedding: {provider: local}\nplugins: {recall: {record_events: false}}\n"

PEOPLE = ["Maya", "Jonas", "Priya", "Elena", "Tom", "Lina", "Omar", "Sofia", "Ben", "Ines", "Karl", "Nora"]
PROJECTS = ["Atlas", "Heron", "Juniper", "Lumen", "Quarry", "Tangent", "Vega", "Willow"]
PLACES = ["the Kreuzberg office", "Markthalle Neun", "Tempelhof", "Café Bonanza", "the harbour", "Lisbon"]
TOPICS = ["pricing", "onboarding", "the sync engine", "the Android client", "billing", "search", "hiring"]
THINGS = ["a new kettle", "the espresso machine", "a standing desk", "running shoes", "the bike", "a lamp"]
STATEMENTS = [
    "The {project} launch is set for {month} {day}; {person} owns the release notes.",
    "{person} leads the work on {topic} for {project} until {month}.",
    "Weekly review of {topic} with {person} every {weekday} at {hour}:00.",
    "Budget for {project} is EUR {amount} for the quarter.",
    "Decision: {project} drops the rewrite of {topic} and ships the old flow.",
    "{person} prefers written updates over calls when it comes to {topic}.",
    "Bug TW-{n} in {topic} is owned by {person}, fix expected by {weekday}.",
    "Call the landlord about the heating before {month} {day}.",
    "{person} moved to {place} and starts on {month} {day}.",
    "Renew the passport; the appointment is on {month} {day} at {hour}:30.",
]
SENTENCES = [
    "Woke up early and went for a run along {place}.",
    "The morning was mostly about {topic}, which took longer than planned.",
    "{person} called in the afternoon to talk about {project} and the numbers for {month}.",
    "I am still not sure whether we should move the deadline or cut the scope.",
    "Lunch with {person} at {place}; we talked about {topic} and about travelling in {month}.",
    "In the evening I finally fixed {thing}, which had been broken for weeks.",
    "It rained all day, so I stayed in and read about {topic}.",
    "{person} thinks {project} needs another month, and honestly I agree.",
    "Tomorrow I want to write down the plan for {topic} before the {weekday} meeting.",
    "Spent {n} minutes on email, which is too much for a {weekday}.",
    "The train was late again, so I missed the first half of the call with {person}.",
    "We agreed that {person} owns {topic} from now on and reports every {weekday}.",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "September", "October"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        person=rng.choice(PEOPLE),
        project=rng.choice(PROJECTS),
        place=rng.choice(PLACES),
        topic=rng.choice(TOPICS),
        thing=rng.choice(THINGS),
        month=rng.choice(MONTHS),
        weekday=rng.choice(WEEKDAYS),
        day=rng.randint(1, 28),
        hour=rng.randint(8, 17),
        amount=f"{rng.randint(2, 90) * 1000:,}",
        n=rng.randint(10, 999),
    )


def year_day(rng: random.Random, day: dt.date, tokens: int) -> str:
    """One daily note of about ``tokens`` estimated tokens (pure but for ``rng``)."""
    from lifelong.markdown import estimate_tokens

    out = [f"# {day.isoformat()}", ""]
    size = 0
    section = rng.randrange(5)  # days differ in which shapes they hold
    while size < tokens:
        kind = section % 5
        section += 1
        block: list[str] = []
        if kind in (0, 3):  # statements, a line each
            block.append(f"## {['Work', 'People', 'Errands', 'Ideas'][rng.randrange(4)]}")
            block += [f"- {_fill(rng, rng.choice(STATEMENTS))}" for _ in range(rng.randint(3, 7))]
        elif kind == 1:  # a journal paragraph or two
            block.append("## Journal")
            for _ in range(rng.randint(1, 2)):
                block.append(" ".join(_fill(rng, rng.choice(SENTENCES)) for _ in range(rng.randint(3, 7))))
                block.append("")
            block.pop()
        elif kind == 2:  # meeting notes with speakers
            block.append(f"## Meeting: {rng.choice(PROJECTS)} {rng.choice(TOPICS)}")
            for _ in range(rng.randint(3, 6)):
                said = " ".join(_fill(rng, rng.choice(SENTENCES)) for _ in range(rng.randint(1, 3)))
                block.append(f"**{rng.choice(PEOPLE)}:** {said}")
                block.append("")
            block.pop()
        elif rng.random() < 0.5:  # a table
            block += ["## Numbers", "", "| item | owner | amount |", "|---|---|---|"]
            block += [
                f"| {rng.choice(PROJECTS)} {rng.choice(TOPICS)} | {rng.choice(PEOPLE)} | {rng.randint(1, 99)}k |"
                for _ in range(rng.randint(3, 6))
            ]
        else:  # a snippet
            block += ["## Snippet", "", "```bash", f"rsync -av ~/notes/ backup:/notes/{day.year}/"]
            block += [f"grep -rn '{rng.choice(TOPICS)}' ~/notes | wc -l", "```"]
        text = "\n".join(block)
        out += [text, ""]
        size += estimate_tokens(text)
    return "\n".join(out)


def write_year(
    root: Path, tokens: int, seed: int = 1, recall: dict[str, Any] | None = None
) -> dict[str, str]:
    """A year of dailies (365 files) of about ``tokens`` estimated tokens in all."""
    rng = random.Random(seed)
    start = dt.date(2025, 1, 1)
    per_day = max(20, tokens // 365)
    files = {}
    for i in range(365):
        day = start + dt.timedelta(days=i)
        files[f"memory/{day.isoformat()}.md"] = year_day(rng, day, int(per_day * rng.uniform(0.5, 1.5)))
    return _lay_out(root, files, recall)


def write_beam(
    root: Path,
    data: str | None,
    n_files: int,
    log: Callable[[str], None],
    recall: dict[str, Any] | None = None,
) -> dict[str, str] | None:
    """The first ``n_files`` daily files of BEAM's 100K chat 1, or None when BEAM is absent."""
    from . import beam

    try:
        path, _ = beam.resolve_data(data, log)
        chats, _ = beam.load_chats(path, limit=1)
    except Exception as exc:  # noqa: BLE001 - absent or unreadable data: say so, skip the corpus
        log(f"beam: skipped ({type(exc).__name__}: {exc})")
        return None
    if not chats:
        log("beam: skipped (no chat found)")
        return None
    files = beam.chat_files(chats[0])
    chosen = dict(list(files.items())[:n_files])
    return _lay_out(root, {rel: f.text for rel, f in chosen.items()}, recall)


def _lay_out(root: Path, files: dict[str, str], recall: dict[str, Any] | None = None) -> dict[str, str]:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load(CONFIG)
    config["plugins"]["recall"].update(recall or {})
    (root / "lifelong.yaml").write_text(yaml.safe_dump(config), "utf-8")
    for rel, text in files.items():
        (root / rel).write_text(text, "utf-8")
    return files


class Stages:
    """Seconds spent in the index module's text-side steps, by wrapping the functions it calls
    (each wrapper only times the real function)."""

    NAMES = {
        "read_text_file": "read + parse",
        "split_frontmatter": "read + parse",
        "chunk_markdown": "chunk",
        "retrieval_units": "units",
        "chunk_units": "units",
        "split_lines": "units",
        "encode_terms": "terms + FTS text",
        "fts_text": "terms + FTS text",
        "strip_comments": "terms + FTS text",
    }

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kw: Any) -> Any:
            began = time.perf_counter()
            try:
                return fn(*args, **kw)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - began

        return run

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        from lifelong_plugins.recall import chunking, index, writer

        saved: list[tuple[Any, str, Any]] = []
        for attr, stage in self.NAMES.items():  # the names the file writer calls them by
            saved.append((writer, attr, getattr(writer, attr)))
            setattr(writer, attr, self._timed(stage, getattr(writer, attr)))
        # sentence texts are split when a unit is listed for embedding (``Unit.sentence_texts``)
        saved.append((chunking, "sentence_texts", chunking.sentence_texts))
        chunking.sentence_texts = self._timed("units", chunking.sentence_texts)
        text_side = index.RecallIndex._sync_text
        saved.append((index.RecallIndex, "_sync_text", text_side))
        index.RecallIndex._sync_text = self._timed("text side", text_side)
        try:
            yield
        finally:
            for owner, attr, value in reversed(saved):
                setattr(owner, attr, value)


def index_corpus(name: str, root: Path, files: dict[str, str], log: Callable[[str], None]) -> dict[str, Any]:
    from lifelong_plugins.recall import service

    from lifelong.host import Host
    from lifelong.markdown import estimate_tokens
    from lifelong.workspace import Workspace

    tokens = sum(estimate_tokens(t) for t in files.values())
    host = Host(Workspace(root), builtins=PLUGINS, entry_points=False)
    stages = Stages()
    try:
        idx = service.index_for(host.ctx)
        host.embedder.embed_passages(["load the model before the clock starts"])  # ~1 s, once
        with stages.installed():
            wall, cpu = time.perf_counter(), time.process_time()
            report = idx.sync()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        conn = host.store.conn
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        units = conn.execute("SELECT count(*) FROM units").fetchone()[0]
        multi = conn.execute("SELECT count(*) FROM unit_vectors WHERE length(sentences) > 0").fetchone()[0]
        model_tokens = _model_tokens(conn, idx.config)
    finally:
        host.close()
    s = stages.seconds
    text_side = s.pop("text side", 0.0)
    named = sum(s.values())
    model = dict(getattr(report, "embed_seconds", {}))  # absent before the passes had times
    embed_total = wall - text_side
    by_stage = {
        **{k: round(v, 2) for k, v in s.items()},
        "SQL inserts (rows, FTS)": round(text_side - named, 2),
    }
    by_stage.update({f"embed {k}": round(v, 2) for k, v in model.items()})
    by_stage["store vectors + cache lookups"] = round(embed_total - sum(model.values()), 2)
    ready = {"FTS": round(text_side, 1)}
    at = text_side
    for kind in ("chunks", "units", "sentences"):
        if kind in model:
            at += model[kind]
            ready[f"{kind} vectors"] = round(at, 1)
    ready["all vectors"] = round(wall, 1)
    result = {
        "corpus": name,
        "files": len(files),
        "tokens": tokens,
        "chunks": chunks,
        "units": units,
        "units_with_sentence_vectors": multi,
        "embedded": {
            "chunks": report.embedded,
            "units": report.units_embedded,
            "sentences": report.sentences_embedded,
        },
        "model_tokens": model_tokens,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "tokens_per_s": round(tokens / wall, 1),
        "tokens_per_cpu_s": round(tokens / cpu, 1),
        "stages_s": by_stage,
        "ready_after_s": ready,
        "projected_1m_s": round(TARGET_TOKENS / tokens * wall),
        "projected_1m_fts_s": round(TARGET_TOKENS / tokens * text_side),
        "projected_1m_chunk_vectors_s": round(TARGET_TOKENS / tokens * ready.get("chunks vectors", wall)),
        "projected_1m_idle_2_cores_s": round(TARGET_TOKENS / tokens * cpu / 2),
        "vectors": report.vectors,
    }
    log(report_text(result))
    return result


def _model_tokens(conn: Any, config: dict[str, Any]) -> dict[str, int]:
    """Tokens the model read, by kind (each distinct text once, prefix and markers included; a
    kind the recall ``config`` does not embed reads none)."""
    from lifelong_plugins.embeddings.providers import float_engine
    from lifelong_plugins.recall.chunking import sentence_texts

    engine = float_engine()
    if engine is None:
        return {}

    def joined(heading: str, text: str) -> str:
        return f"{heading}\n{text}" if heading else text

    chunks = {
        joined(h, t) for h, t in conn.execute("SELECT heading, text FROM chunks WHERE NOT lexical_only")
    }
    rows = conn.execute(
        "SELECT u.heading, u.text FROM units u JOIN chunks c ON c.id = u.chunk_id WHERE NOT c.lexical_only"
    ).fetchall()
    if config["chunk_vectors_from_units"] and config["unit_vectors"]:
        chunks = set()  # a chunk's vector is its units' mean: only the units are embedded
    units = {joined(h, t) for h, t in rows} - chunks if config["unit_vectors"] else set()
    sentences = (
        {x for h, t in rows for x in sentence_texts(h, t)} - units - chunks
        if config["unit_vectors"] and config["sentence_vectors"]
        else set()
    )
    return {
        kind: sum(engine.token_count(x) for x in texts)
        for kind, texts in (("chunks", chunks), ("units", units), ("sentences", sentences))
    }


def report_text(r: dict[str, Any]) -> str:
    e = r["embedded"]
    lines = [
        f"{r['corpus']}: {r['tokens']:,} tokens in {r['files']} files -> {r['chunks']:,} chunks, {r['units']:,} units "
        f"({r['units_with_sentence_vectors']:,} with sentence vectors)",
        f"  wall {r['wall_s']} s ({r['tokens_per_s']:,.0f} tokens/s), CPU {r['cpu_s']} s "
        f"({r['tokens_per_cpu_s']:,.0f} tokens per CPU-second)",
        f"  embedded: {e['chunks']:,} chunks, {e['units']:,} units, {e['sentences']:,} sentences; model tokens "
        + ", ".join(f"{k} {v:,}" for k, v in r["model_tokens"].items())
        + f" ({sum(r['model_tokens'].values()) / r['tokens']:.1f} per text token)",
        "  stages (s): " + ", ".join(f"{k} {v}" for k, v in r["stages_s"].items()),
        "  searchable after (s): " + ", ".join(f"{k} {v}" for k, v in r["ready_after_s"].items()),
        f"  projected for 1M tokens at this rate: {r['projected_1m_s'] / 60:.1f} min "
        f"(FTS ready after {r['projected_1m_fts_s'] / 60:.1f} min, chunk vectors after "
        f"{r['projected_1m_chunk_vectors_s'] / 60:.1f} min); from CPU time on 2 idle cores "
        f"{r['projected_1m_idle_2_cores_s'] / 60:.1f} min",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--year-tokens", type=int, default=100_000, help="Size of the generated year (default 100,000)."
    )
    ap.add_argument(
        "--beam-files", type=int, default=1, help="Daily files of BEAM chat 1 to index (default 1 of 3)."
    )
    ap.add_argument(
        "--beam", default=None, help="BEAM data (see evals/beam.py); default: $BEAM_DIR or the mirror."
    )
    ap.add_argument("--skip-year", action="store_true")
    ap.add_argument("--skip-beam", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="Write the figures to this file.")
    ap.add_argument(
        "--recall",
        default=None,
        help="Recall options over the defaults, as JSON (e.g. '{\"sentence_vectors\": false}').",
    )
    args = ap.parse_args(argv)
    recall = json.loads(args.recall) if args.recall else None

    def log(message: str) -> None:
        print(message, flush=True)

    load = [round(x, 2) for x in os.getloadavg()]
    log(f"load average at start: {load}; {os.cpu_count()} cores")
    results: dict[str, Any] = {"load_start": load, "cores": os.cpu_count(), "corpora": []}
    base = Path(tempfile.mkdtemp(prefix="lifelong-bench-index-"))
    try:
        if not args.skip_year:
            files = write_year(base / "year", args.year_tokens, recall=recall)
            results["corpora"].append(index_corpus("year", base / "year", files, log))
        if not args.skip_beam:
            files = write_beam(base / "beam", args.beam, args.beam_files, log, recall)
            if files:
                results["corpora"].append(index_corpus("beam chat 1", base / "beam", files, log))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    results["load_end"] = [round(x, 2) for x in os.getloadavg()]
    log(f"load average at end: {results['load_end']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), "utf-8")
    return results


if __name__ == "__main__":
    main()
