"""Consolidation ("dreaming") figures: speed over a year of notes, and promotion quality.

``python -m evals.bench_dream [--seed 7] [--days 365] [--events 100000] [--persona-seeds 1,2,...,16] [--off-topic 2]
[--persona-embedding local|none] [--generator paraphrase|templated] [--skip-year] [--skip-grouping]
[--skip-backfill] [--skip-persona] [--verbose] [--json]``

1. **A year without a model.** 365 synthetic daily notes (``memory/YYYY-MM-DD.md``, 3 sections,
   10-14 lines each: recurring facts about projects, people and routines, restated now and then,
   plus one-off chatter) and 100,000 recall events in the recall plugin's ``recall_events`` table,
   as ~20,000 searches of 5 hits each spread over the year (each hit a whole-daily chunk, as the
   recall chunker makes of a short daily; queries are 2-4 words of a line of that daily, drawn from
   a few phrasings per line so queries repeat, like real look-ups). No model, no embeddings (the
   dream reads files and the events table only). Timed, each on a fresh copy of the workspace:

   - **full dream**: ``lifelong dream --backfill`` at 03:00 after the last day: every daily staged,
     all 100k events attributed, REM over the year, deep scoring of every candidate, MEMORY.md,
     diary and reports written (target <= 10 s);
   - **first nightly dream**: the same workspace, a plain ``lifelong dream`` (2-day lookback) —
     still attributes all 100k unprocessed events;
   - **next night**: one more daily and ~270 new events after the full dream (incremental).

2. **Fact grouping** on statement pairs of generated paraphrase months, lexical only and with the
   bundled embeddings: same-fact pairs joined, different facts about one subject joined, chit-chat
   pairs joined.

3. **``dream --backfill`` on a generated year** (12 paraphrase months, no recall events): precision
   and recall of what it proposes, next to the exact-recurrence baseline (a line whose exact text
   is written on 3 or more days).

4. **Promotion precision/recall on generated persona-months** (:mod:`persona`: planted durable
   facts recalled across days through real ``memory_search`` calls, one-off chit-chat, same-day
   bursts, later corrections), one month per seed through the real recall plugin (bundled local
   embeddings by default) and the real nightly job (targets: precision >= 0.95, recall >= 0.85 on
   every seed, no chit-chat leaked, no duplicate items). The default generator (``paraphrase``)
   states each fact in three wordings on three days and asks in other words; ``templated`` is the
   first generator. Paraphrase months also carry up to ``--off-topic`` searches a day that no
   note answers (what a pre-reply gate sends; ``--off-topic-source tool`` sends them as the agent's
   own searches). Seeds 1-3 are the tuning months; 4-16 are reported
   apart as held out (4-8 and, since this session, 9-16 were each looked at after a change was
   measured, to find why a fact was missed; 17-24 were first run to check the changes).

Timings are wall-clock on this machine (``os.cpu_count()`` and load average are printed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from lifelong_plugins.dreaming.run import run_dream  # noqa: E402
from lifelong_plugins.dreaming.snippets import STOPWORDS, words  # noqa: E402

from lifelong import clock  # noqa: E402
from lifelong.host import Host  # noqa: E402
from lifelong.workspace import Workspace  # noqa: E402

TZ = ZoneInfo("Europe/Berlin")
TUNING_SEEDS = (1, 2, 3)  # looked at while the fact grouping was developed; every other seed is held out
PLUGINS = ("embeddings", "recall", "dreaming")

PEOPLE = ["Maya", "Jonas", "Priya", "Elena", "Tom", "Lina", "Omar", "Sofia", "Ben", "Ines", "Karl", "Nora"]
PROJECTS = ["Atlas", "Heron", "Juniper", "Lumen", "Quarry", "Tangent", "Vega", "Willow"]
PLACES = ["Gut Boltenhagen", "Markthalle Neun", "Tempelhof", "the Kreuzberg office", "Café Bonanza"]
TOPICS = ["pricing", "onboarding", "sync engine", "Android client", "billing", "search", "design system"]
FACTS = [
    "The {project} launch is set for {month} {day}; {person} owns the release notes.",
    "{person} leads the {topic} work on {project} until {month}.",
    "Weekly {topic} review with {person} every {weekday} at {hour}:00.",
    "Budget for {project} is EUR {amount} for the quarter.",
    "{person}'s birthday is on {month} {day}.",
    "Team offsite at {place} from {month} {day}, {count} people.",
    "Customer {project} Corp renews in {month}; contract value EUR {amount}.",
    "Decision: {project} drops the {topic} rewrite and ships the old flow.",
    "{person} prefers written updates over calls for {topic}.",
    "Bug TW-{bug} in {topic} is owned by {person}.",
]
CHATTER = [
    "Weather was {adj}, took the long way home past {place}.",
    "Lunch with {person} at {place}, talked about {hobby}.",
    "Tried {thing} #{n}, {adj}.",
    "Train was {n} minutes late; read about {hobby} on the way.",
    "Random thought {n}: maybe try {hobby} with {person}.",
    "Bought {thing} number {n} for the flat.",
]
FILL = {
    "month": ["April", "May", "June", "July", "September", "October", "November"],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "adj": ["grim", "lovely", "windy", "odd", "great", "too salty", "loud"],
    "hobby": ["bouldering", "pottery", "sailing", "chess", "salsa", "baking"],
    "thing": ["a new kettle", "the espresso machine", "a standing desk", "running shoes", "a lamp"],
}


def _fill(rng: random.Random, template: str) -> str:
    values = {k: rng.choice(v) for k, v in FILL.items()}
    values.update(
        person=rng.choice(PEOPLE),
        project=rng.choice(PROJECTS),
        place=rng.choice(PLACES),
        topic=rng.choice(TOPICS),
        day=str(rng.randint(1, 28)),
        hour=str(rng.randint(8, 17)),
        amount=f"{rng.randint(2, 90) * 1000:,}",
        count=str(rng.randint(5, 30)),
        bug=str(rng.randint(100, 999)),
        n=str(rng.randint(1, 10_000)),
    )
    return template.format(**values)


def _queries(rng: random.Random, line: str, k: int = 3) -> list[str]:
    content = [w for w in words(line) if w not in STOPWORDS and len(w) > 2]
    if not content:
        return [line[:30]]
    out = []
    for _ in range(k):
        n = min(len(content), rng.randint(2, 4))
        out.append(" ".join(rng.sample(content, n)))
    return out


def build_year(root: Path, *, seed: int, days: int, events: int, last_day: dt.date) -> dict[str, Any]:
    """Write the dailies and insert the recall events (not timed)."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    (root / "memory").mkdir()
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n", "utf-8")
    (root / "MEMORY.md").write_text(
        "# MEMORY\n\n## About me\n- I run a small product team in Berlin.\n", "utf-8"
    )
    facts = [_fill(rng, rng.choice(FACTS)) for _ in range(160)]
    first_day = last_day - dt.timedelta(days=days - 1)
    dailies: list[tuple[dt.date, str, int, list[str]]] = []
    total_lines = 0
    for i in range(days):
        day = first_day + dt.timedelta(days=i)
        lines: list[str] = [f"# {day.isoformat()}", ""]
        content: list[str] = []
        for section in ("Work", "People", "Notes"):
            lines.append(f"## {section}")
            for _ in range(rng.randint(3, 5)):
                text = rng.choice(facts) if rng.random() < 0.45 else _fill(rng, rng.choice(CHATTER))
                lines.append(f"- {text}")
                content.append(text)
            lines.append("")
        rel = f"memory/{day.isoformat()}.md"
        (root / rel).write_text("\n".join(lines), "utf-8")
        dailies.append((day, rel, len(lines), content))
        total_lines += len(content)

    host = Host(Workspace(root), builtins=PLUGINS, entry_points=False)
    rows = []
    query_bank: dict[str, list[str]] = {}
    searches = 0
    while len(rows) < events:
        day, rel, n_lines, content = dailies[
            min(len(dailies) - 1, int(rng.triangular(0, len(dailies), len(dailies))))
        ]
        line = rng.choice(content)
        phrasings = query_bank.setdefault(line, _queries(rng, line))
        query = rng.choice(phrasings)
        qhash = hashlib.sha256(" ".join(query.lower().split()).encode()).hexdigest()[:32]
        when_day = day + dt.timedelta(days=rng.randint(0, min(20, (last_day - day).days)))
        when = dt.datetime(
            when_day.year, when_day.month, when_day.day, rng.randint(8, 22), rng.randint(0, 59), tzinfo=TZ
        )
        searches += 1
        hits = [(rel, n_lines)] + [
            (r, n) for _, r, n, _ in rng.sample(dailies, 4)
        ]  # the daily it came from plus 4 other chunks the search returned
        for path, n in hits:
            rows.append(
                (
                    when.timestamp(),
                    when_day.isoformat(),
                    qhash,
                    query,
                    f"{path}:1:{n}",
                    "x" * 32,
                    path,
                    1,
                    n,
                    "memory",
                    round(rng.uniform(0.4, 0.85), 4),
                    rng.choice(["tool", "tool", "gate", "cli"]),
                )
            )
    rows = rows[:events]
    store = host.store
    store.conn.executemany(
        "INSERT INTO recall_events(ts, day, query_hash, query, chunk_key, claim_hash, path, start_line, end_line,"
        " corpus, score, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    store.conn.commit()
    host.close()
    return {"dailies": days, "lines": total_lines, "events": len(rows), "searches": searches}


def timed_dream(root: Path, when: dt.datetime, **kw: Any) -> tuple[float, Any, float]:
    """(wall-clock seconds, run, process CPU seconds) of one dream: on a shared machine the wall
    clock measures the neighbours too."""
    host = Host(Workspace(root), builtins=PLUGINS, entry_points=False)
    host.store  # noqa: B018 - opening the index is not part of the dream
    try:
        with clock.pinned(when):
            started, cpu = time.perf_counter(), time.process_time()
            run = run_dream(host, **kw)
            elapsed = time.perf_counter() - started
            cpu_s = time.process_time() - cpu
    finally:
        host.close()
    return elapsed, run, cpu_s


def year_benchmark(args: argparse.Namespace, echo: Any) -> dict[str, Any]:
    last_day = dt.date(2026, 3, 23)
    base = Path(tempfile.mkdtemp(prefix="lifelong-bench-dream-"))
    try:
        started = time.perf_counter()
        built = build_year(
            base / "year", seed=args.seed, days=args.days, events=args.events, last_day=last_day
        )
        echo(
            f"year: {built['dailies']} dailies ({built['lines']:,} note lines), {built['events']:,} recall events "
            f"({built['searches']:,} searches), built in {time.perf_counter() - started:.1f} s (not timed)"
        )
        night = dt.datetime(2026, 3, 24, 3, 0, tzinfo=TZ)
        out: dict[str, Any] = {**built}
        shutil.copytree(base / "year", base / "nightly")
        full_s, full, full_cpu = timed_dream(base / "year", night, backfill=True)
        light = full.reports["light"]
        out["full_dream_s"] = round(full_s, 3)
        out["full_dream_cpu_s"] = round(full_cpu, 3)
        out["full_dream"] = {
            "candidates": light["new_candidates"],
            "events_attributed": light["events_attributed"],
            "signals": light["signals"],
            "scored": full.reports["deep"]["scored"],
            "promoted": len(full.promoted),
            "themes": len(full.reports["rem"]["themes"]),
        }
        echo(
            f"  full dream (--backfill: {built['dailies']} dailies + all events):  {full_s:6.2f} s (cpu {full_cpu:.2f} s)   "
            f"[target <= 10 s]  ({light['new_candidates']:,} candidates, {light['events_attributed']:,} events "
            f"attributed, {len(full.promoted)} promoted)"
        )
        first_s, first, first_cpu = timed_dream(base / "nightly", night)
        out["first_nightly_s"] = round(first_s, 3)
        out["first_nightly_cpu_s"] = round(first_cpu, 3)
        echo(
            f"  first nightly dream (2-day lookback + all events):   {first_s:6.2f} s (cpu {first_cpu:.2f} s)   "
            f"({first.reports['light']['events_attributed']:,} events attributed)"
        )
        # the next night: one more daily and ~270 events
        rng = random.Random(args.seed + 1)
        root = base / "year"
        day = last_day + dt.timedelta(days=1)
        text = f"# {day.isoformat()}\n\n## Work\n" + "".join(
            f"- {_fill(rng, rng.choice(FACTS))}\n" for _ in range(8)
        )
        (root / f"memory/{day.isoformat()}.md").write_text(text, "utf-8")
        host = Host(Workspace(root), builtins=PLUGINS, entry_points=False)
        lines = text.count("\n")
        rows = []
        for i in range(270):
            when = dt.datetime(day.year, day.month, day.day, 9 + i % 12, i % 60, tzinfo=TZ)
            q = f"query {i % 40} {rng.choice(PROJECTS)}"
            rows.append(
                (
                    when.timestamp(),
                    day.isoformat(),
                    hashlib.sha256(q.encode()).hexdigest()[:32],
                    q,
                    f"memory/{day.isoformat()}.md:1:{lines}",
                    "x" * 32,
                    f"memory/{day.isoformat()}.md",
                    1,
                    lines,
                    "memory",
                    0.7,
                    "tool",
                )
            )
        host.store.conn.executemany(
            "INSERT INTO recall_events(ts, day, query_hash, query, chunk_key, claim_hash, path, start_line,"
            " end_line, corpus, score, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        host.store.conn.commit()
        host.close()
        next_s, _, next_cpu = timed_dream(root, dt.datetime(2026, 3, 25, 3, 0, tzinfo=TZ))
        out["next_nightly_s"] = round(next_s, 3)
        out["next_nightly_cpu_s"] = round(next_cpu, 3)
        echo(
            f"  next night (1 new daily, {len(rows)} new events):       {next_s:6.2f} s (cpu {next_cpu:.2f} s)"
        )
        return out
    finally:
        shutil.rmtree(base, ignore_errors=True)


def persona_benchmark(args: argparse.Namespace, echo: Any) -> dict[str, Any]:
    from .persona import generate_paraphrase_month, generate_persona_month, run_persona_month

    results = []
    base = Path(tempfile.mkdtemp(prefix="lifelong-bench-persona-"))
    generate = generate_paraphrase_month if args.generator == "paraphrase" else generate_persona_month
    try:
        for seed in args.persona_seeds:
            month = (
                generate(seed, off_topic=args.off_topic) if args.generator == "paraphrase" else generate(seed)
            )
            r = run_persona_month(
                month,
                base / f"seed{seed}",
                embedding=args.persona_embedding,
                off_topic_source=args.off_topic_source,
            )
            r["held_out"] = seed not in TUNING_SEEDS
            results.append(r)
            fps = ", ".join(f"{k} {v}" for k, v in r["false_positives_by_kind"].items()) or "none"
            echo(
                f"  seed {seed}{' (held out)' if r['held_out'] else ' (tuning)'}: precision {r['precision']:.3f}  "
                f"recall {r['recall']:.3f}  ({r['promoted']} promoted, {r['facts_promoted']}/{r['facts']} facts; "
                f"chit-chat leaked {r['chatter_leaked']}, duplicate items {r['duplicate_items']}, human text "
                f"{'kept' if r['human_text_kept'] else 'LOST'}; false positives: {fps}; "
                f"MEMORY.md {r['nights'][-1]['memory_bytes']} bytes; {r['elapsed_s']:.0f} s)"
            )
            if args.verbose:
                missed = ", ".join(r["missed_facts"]) or "none"
                echo(f"    missed: {missed}; promoted twice: {', '.join(r['duplicated_facts']) or 'none'}")
                for p in r["promotions"]:
                    echo(
                        f"    night {p['night']:2d} {'ok ' if p['correct'] else 'BAD'} {p['text']}  {p['sources']}"
                    )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    summary: dict[str, Any] = {"generator": args.generator, "seeds": args.persona_seeds}
    for name, group in (
        ("all", results),
        ("held_out", [r for r in results if r["held_out"]]),
        ("tuning", [r for r in results if not r["held_out"]]),
    ):
        if not group:
            continue
        promoted = sum(r["promoted"] for r in group)
        correct = sum(r["correct"] for r in group)
        facts = sum(r["facts"] for r in group)
        found = sum(r["facts_promoted"] for r in group)
        figures = {
            "seeds": [r["seed"] for r in group],
            "precision_pooled": round(correct / promoted, 4) if promoted else 1.0,
            "recall_pooled": round(found / facts, 4) if facts else 1.0,
            "precision_min": min(r["precision"] for r in group),
            "recall_min": min(r["recall"] for r in group),
            "chatter_leaked": sum(r["chatter_leaked"] for r in group),
            "duplicate_items": sum(r["duplicate_items"] for r in group),
            "human_text_kept": all(r["human_text_kept"] for r in group),
        }
        summary[name] = figures
        echo(
            f"  {name} ({len(group)} months): precision {figures['precision_pooled']:.3f}, recall "
            f"{figures['recall_pooled']:.3f} (pooled; per seed min {figures['precision_min']:.3f} / "
            f"{figures['recall_min']:.3f}); chit-chat leaked {figures['chatter_leaked']}, duplicate items "
            f"{figures['duplicate_items']}, human text {'kept' if figures['human_text_kept'] else 'LOST'}   "
            "[targets: precision >= 0.95, recall >= 0.85 on every seed, 0 leaked, 0 duplicates]"
        )
    summary["per_seed"] = [{k: v for k, v in r.items() if k != "promotions"} for r in results]
    return summary


def grouping_benchmark(args: argparse.Namespace, echo: Any) -> dict[str, Any]:
    """Pairs of statements from generated months: does fact grouping join the three wordings of a
    fact (same), keep two facts about one subject apart (different facts) and leave chit-chat alone?
    Measured lexically (no embedder) and with the bundled embeddings, per seed group."""
    import itertools

    import numpy as np
    from lifelong_plugins.dreaming import facts
    from lifelong_plugins.dreaming.snippets import parse_snippets

    from .persona import generate_paraphrase_month

    root = Path(tempfile.mkdtemp(prefix="lifelong-bench-grouping-"))
    (root / "lifelong.yaml").write_text("embedding: {provider: local}\n", "utf-8")
    host = Host(Workspace(root), builtins=("embeddings",), entry_points=False)
    out: dict[str, Any] = {}
    try:
        for group, seeds in (
            ("tuning", TUNING_SEEDS),
            ("held_out", [s for s in args.persona_seeds if s not in TUNING_SEEDS]),
        ):
            rows = []
            for seed in seeds:
                month = generate_paraphrase_month(seed)
                for d, text in month.dailies.items():
                    for sn in parse_snippets(text, month.path(d)):
                        label = month.labels.get((sn.path, sn.start_line))
                        fid = label.fact_id if label and label.kind == "durable" else None
                        rows.append((seed, fid, sn.text, sn.path))
            if not rows:
                continue
            vecs = np.asarray(host.embedder.embed_passages([r[2] for r in rows]), dtype=np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            names = {seed: facts.names_seen(r[2] for r in rows if r[0] == seed) for seed in seeds}
            views = [facts.fact_view(str(i), r[2], {r[3]}, names[r[0]]) for i, r in enumerate(rows)]
            cfg = facts.GroupingConfig()
            for mode in ("lexical", "embeddings"):
                counts = {"same": [0, 0], "different_facts": [0, 0], "chatter": [0, 0]}
                for i, j in itertools.combinations(range(len(rows)), 2):
                    a, b = rows[i], rows[j]
                    if a[0] != b[0]:
                        continue
                    kind = (
                        "same"
                        if a[1] and a[1] == b[1]
                        else ("different_facts" if a[1] and b[1] else "chatter")
                    )
                    cos = float(vecs[i] @ vecs[j]) if mode == "embeddings" else None
                    joined = facts.pair_strength(views[i], views[j], cos, cfg) is not None
                    counts[kind][0] += joined
                    counts[kind][1] += 1
                out[f"{group}_{mode}"] = counts
                echo(
                    f"  {group} seeds {','.join(map(str, seeds))}, {mode}: same-fact pairs joined "
                    f"{counts['same'][0]}/{counts['same'][1]}, different facts joined {counts['different_facts'][0]}/"
                    f"{counts['different_facts'][1]}, chit-chat pairs joined {counts['chatter'][0]}/{counts['chatter'][1]}"
                )
    finally:
        host.close()
        shutil.rmtree(root, ignore_errors=True)
    return out


def backfill_benchmark(args: argparse.Namespace, echo: Any) -> dict[str, Any]:
    """``dream --backfill`` on a generated year of paraphrased dailies with no recall events."""
    from .persona import generate_paraphrase_year, run_backfill

    base = Path(tempfile.mkdtemp(prefix="lifelong-bench-backfill-"))
    try:
        year = generate_paraphrase_year(args.backfill_seed, months=args.backfill_months)
        r = run_backfill(year, base / "year", embedding=args.persona_embedding)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    b = r["baseline_exact_recurrence"]
    echo(
        f"  backfill over {r['dailies']} dailies (seed {args.backfill_seed}, no recall events): precision "
        f"{r['precision']:.3f}, recall {r['recall']:.3f} ({r['promoted']} proposed, {r['facts_promoted']}/{r['facts']} "
        f"facts; chit-chat leaked {r['chatter_leaked']}, duplicate items {r['duplicate_items']}, human text "
        f"{'kept' if r['human_text_kept'] else 'LOST'}; {r['elapsed_s']:.0f} s)   baseline (exact line on >= 3 days): "
        f"precision {b['precision']:.3f}, recall {b['recall']:.3f} ({b['promoted']} proposed)"
    )
    if args.verbose:
        for p in r["promotions"]:
            if not p["correct"]:
                echo(f"    BAD {p['text']}  {p['sources']}")
    return {k: v for k, v in r.items() if k != "promotions"}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument(
        "--persona-seeds", type=lambda s: [int(x) for x in s.split(",")], default=list(range(1, 17))
    )
    parser.add_argument("--persona-embedding", choices=["local", "none"], default="local")
    parser.add_argument(
        "--generator",
        choices=["paraphrase", "templated"],
        default="paraphrase",
        help="paraphrase: each fact said three ways, queries in other words (default); templated: the first generator",
    )
    parser.add_argument("--verbose", action="store_true", help="Print every promotion and missed fact.")
    parser.add_argument(
        "--off-topic",
        type=int,
        default=2,
        help="paraphrase months: up to this many searches a day that no note answers (default 2)",
    )
    parser.add_argument(
        "--off-topic-source",
        choices=["gate", "tool"],
        default="gate",
        help="who sends the searches no note answers: the pre-reply gate (default) or the agent's own tool calls",
    )
    parser.add_argument("--skip-backfill", action="store_true")
    parser.add_argument("--skip-grouping", action="store_true")
    parser.add_argument("--backfill-seed", type=int, default=5)
    parser.add_argument("--backfill-months", type=int, default=12)
    parser.add_argument("--skip-year", action="store_true")
    parser.add_argument("--skip-persona", action="store_true")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON at the end.")
    args = parser.parse_args(argv)

    def echo(line: str) -> None:
        print(line, flush=True)

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    echo(
        f"dream benchmark: {os.cpu_count()} cores, load {', '.join(f'{x:.1f}' for x in load) if load else '?'}"
    )
    out: dict[str, Any] = {"version": 1, "cpu_count": os.cpu_count()}
    if not args.skip_year:
        out["year"] = year_benchmark(args, echo)
    if not args.skip_grouping:
        echo("fact grouping on statement pairs (pairs of one month):")
        out["grouping"] = grouping_benchmark(args, echo)
    if not args.skip_backfill:
        echo(f"backfill on a generated year ({args.persona_embedding} embeddings):")
        out["backfill"] = backfill_benchmark(args, echo)
    if not args.skip_persona:
        echo(f"persona-months ({args.persona_embedding} embeddings, 30 nights each):")
        out["persona"] = persona_benchmark(args, echo)
    if args.json:
        print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
