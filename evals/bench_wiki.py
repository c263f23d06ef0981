"""Belief-wiki compile and lint time on a 1,000-page vault (issue 16: "lint and compile on a
1,000-page vault finish in seconds"). ``python -m evals.bench_wiki [--pages 1000] [--reps 5]
[--seed 7] [--json]`` prints the figures.

The workspace is generated (seeded): ``pages`` people and companies with made-up two-word names,
each named in three bullets on three different days (a number, a date or an amount in each, so
the contradiction check has values to compare), spread over a year of daily notes, plus a
MEMORY.md with one promoted item (key and citations) per ten subjects. Compiling it gives
``pages`` entity pages (plus a few concept pages from recurring headings).

Measured with the clock pinned, each ``reps`` times:

- ``plan_cold``: planning that first compile and linting, nothing written (the compute part);
- ``compile_cold``: the first compile into an empty wiki/ (every page written through a journal:
  each write is atomic and fsynced, and the journal records it first, so this is mostly durable
  I/O, about four fsyncs a page);
- ``compile_unchanged``: a recompile of unchanged sources (every page planned, none written:
  the byte-identical path a nightly run takes);
- ``lint``: lint of the whole vault (evidence files re-read and hashed, contradictions, links,
  freshness) and the reports written;
- ``search_first`` / ``search (warm)``: the wiki's ``corpus_supplement`` for a query naming one
  subject: the first call builds the claim index (seconds), later ones reuse it (milliseconds).

p50 and p95 in seconds are printed per measure; the target is seconds, not minutes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from .bench_search import percentiles

SYLLABLES = "ka lo mi ra ven tor sel bri dan eth fal gor hin jas kel mur nor pel qua rin sov tel ul var wen yor zan".split()
HEADINGS = ["Work", "Clients", "Team", "Travel", "Finance"]
TEMPLATES = [
    "{name} signed the contract for {n} seats.",
    "Call with {name} moved to {month} {day}.",
    "{name} quoted EUR {amount},000 for the rollout.",
    "Met {name} to review the {n} open tickets.",
    "{name} expects the pilot to finish by {month} {day}.",
]
MONTHS = ["March", "April", "May", "June", "July", "September", "October"]


def made_up_name(rng: random.Random, taken: set[str]) -> str:
    while True:
        first = "".join(rng.choice(SYLLABLES) for _ in range(2)).capitalize()
        last = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3)))).capitalize()
        name = f"{first} {last}"
        if name not in taken:
            taken.add(name)
            return name


def build_workspace(root: Path, pages: int, seed: int, today: dt.date) -> dict[str, int]:
    """Write the synthetic workspace; returns its size."""
    rng = random.Random(seed)
    (root / "memory").mkdir(parents=True)
    (root / "lifelong.yaml").write_text("timezone: Europe/Berlin\nembedding: {provider: none}\n")
    taken: set[str] = set()
    names = [made_up_name(rng, taken) for _ in range(pages)]
    days = [today - dt.timedelta(days=d) for d in range(365)]
    bullets: dict[dt.date, list[tuple[str, str]]] = {}
    for name in names:
        for day in rng.sample(days, 3):
            text = rng.choice(TEMPLATES).format(
                name=name,
                n=rng.randint(2, 90),
                month=rng.choice(MONTHS),
                day=rng.randint(1, 28),
                amount=rng.randint(5, 90),
            )
            bullets.setdefault(day, []).append((rng.choice(HEADINGS), text))
    lines_written = 0
    located: list[tuple[str, int, str]] = []
    for day, items in sorted(bullets.items()):
        rel = f"memory/{day.isoformat()}.md"
        out = [f"# {day.isoformat()}", ""]
        for heading in HEADINGS:
            group = [t for h, t in items if h == heading]
            if group:
                out += [f"## {heading}"]
                for text in group:
                    out.append(f"- {text}")
                    located.append((rel, len(out), text))
                out.append("")
        (root / rel).write_text("\n".join(out) + "\n")
        lines_written += len(out)
    memory = ["# MEMORY", "", "<!-- lifelong:topic-projects:start -->", "## Projects and work"]
    for rel, line, text in rng.sample(located, max(1, pages // 10)):
        key = f"{rng.getrandbits(48):012x}"
        memory.append(f"- {text} <!-- key:{key} src:{rel}#L{line}-L{line} on:{today.isoformat()} -->")
    memory.append("<!-- lifelong:topic-projects:end -->")
    (root / "MEMORY.md").write_text("\n".join(memory) + "\n")
    return {"dailies": len(bullets), "bullets": len(located), "lines": lines_written, "names": pages}


def run(pages: int, reps: int, seed: int) -> dict[str, Any]:
    from lifelong_plugins.wiki.service import compile_and_lint
    from lifelong_plugins.wiki.tools import supplement

    from lifelong import clock
    from lifelong.contracts import SearchRequest
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    today = dt.date(2026, 3, 24)
    now = dt.datetime(2026, 3, 24, 9, tzinfo=dt.UTC)
    times: dict[str, list[float]] = {"plan_cold": [], "compile_cold": [], "compile_unchanged": [], "lint": []}
    figures: dict[str, Any] = {}
    search: list[float] = []  # ms, warm
    first_search: list[float] = []  # s: the first search builds the claim index
    base = Path(tempfile.mkdtemp(prefix="bench-wiki-"))
    try:
        source = base / "source"
        figures["workspace"] = build_workspace(source, pages, seed, today)
        clock.set_now(now)
        for rep in range(reps):
            root = base / f"rep{rep}"
            shutil.copytree(source, root)
            host = Host(Workspace(root), builtins=["wiki"])
            try:
                t0 = time.perf_counter()
                compile_and_lint(host.ctx, now=now, write=False)
                times["plan_cold"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                cold = compile_and_lint(host.ctx, now=now)
                times["compile_cold"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                again = compile_and_lint(host.ctx, now=now)
                times["compile_unchanged"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                linted = compile_and_lint(host.ctx, now=now, compile_pages=False)
                times["lint"].append(time.perf_counter() - t0)
                assert cold.plan is not None and again.plan is not None
                queries = [
                    f"what about {p.title} and the contract" for p in cold.plan.pages[:: max(1, pages // 40)]
                ]
                t0 = time.perf_counter()
                supplement(host.ctx, SearchRequest(queries[0], corpus="all"))
                first_search.append(time.perf_counter() - t0)
                for q in queries:
                    t0 = time.perf_counter()
                    hits = supplement(host.ctx, SearchRequest(q, corpus="all"))
                    search.append((time.perf_counter() - t0) * 1000)
                    assert hits, q
                assert not [w for w in again.written if not w.startswith("wiki/reports/")], (
                    "recompile wrote pages"
                )
                figures.update(
                    pages=len(cold.plan.pages),
                    entity_pages=sum(1 for p in cold.plan.pages if p.page_type == "entity"),
                    claims=cold.plan.claims,
                    files_written_cold=len(cold.written),
                    lint_findings=len(linted.lint.findings),
                    contradictions=len(linted.lint.contradictions),
                )
            finally:
                host.close()
                shutil.rmtree(root, ignore_errors=True)
    finally:
        clock.set_now(None)
        shutil.rmtree(base, ignore_errors=True)
    figures["seconds"] = {name: percentiles(v) for name, v in times.items()}
    figures["seconds"]["search_first"] = percentiles(first_search)
    figures["search_ms"] = percentiles(search)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000, help="Subjects (entity pages) to generate.")
    parser.add_argument("--reps", type=int, default=5, help="Repetitions of each measure.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = parser.parse_args(argv)
    figures = run(args.pages, args.reps, args.seed)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    ws = figures["workspace"]
    print(
        f"vault: {figures['pages']} pages ({figures['entity_pages']} entities), {figures['claims']} claims "
        f"from {ws['bullets']} bullets in {ws['dailies']} dailies; lint: {figures['lint_findings']} findings, "
        f"{figures['contradictions']} contradictions"
    )
    for name, s in figures["seconds"].items():
        print(f"{name:18s} p50 {s['p50']:.3f} s   p95 {s['p95']:.3f} s   (n={s['n']})")
    s = figures["search_ms"]
    print(
        f"{'search (warm)':18s} p50 {s['p50']:.2f} ms  p95 {s['p95']:.2f} ms  (n={s['n']}; corpus_supplement)"
    )


if __name__ == "__main__":
    main()
