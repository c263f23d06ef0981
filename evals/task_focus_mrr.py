"""Task-conditioned scoring measured (issue 18): MRR of ambiguous queries with and without the
``task_focus`` plugin, in the same run.

``python -m evals.task_focus_mrr [--seeds 1,2,3] [--held-out 4,5,6] [--embedding local|none] [--json]``

Each seed generates a workspace of six projects (a shell script, a service, an app release, an
email campaign, a data pipeline, an offsite) over 30 days. For every project the notes hold one
statement per *ambiguous situation* — something changed, a blocker, a review, a decision, a
breakage — each worded differently (a per-situation pool of paraphrases, drawn per project), on
its own day, beside chatter. So "what did we change last week?" matches six notes about as well
as each other; only the task says which one is meant.

Queries: the situation's question in one of several wordings (sharing few words with the note),
asked while working on one project, with the task given either

- **explicit**: ``memory_search``'s ``task`` argument, the marker form (``Debug safe-cron-merge.sh``);
- **inferred**: a session of three recent messages about the project and no marker (TF-IDF
  keywords over the messages, the plugin's fallback).

Gold: the note of that project for that situation. Scored: reciprocal rank of the first returned
result whose line range covers the gold line (0 when absent from the top 10), through the real
recall pipeline, as of the day after the last note. Tuning seeds and held-out seeds are reported
separately.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import yaml

PROJECTS = {
    "safe-cron-merge.sh": {
        "task": "Debug safe-cron-merge.sh",
        "messages": [
            "the nightly cron merge script failed again on the staging box",
            "can you look at the lock file handling in safe-cron-merge.sh",
            "crontab entry runs it at 02:15, the merge step times out",
        ],
        "thing": ["the cron lock timeout", "the merge retry loop", "the crontab schedule"],
    },
    "billing-service": {
        "task": "Fix invoices in billing-service",
        "messages": [
            "customers got duplicate invoices from the billing service",
            "stripe webhooks in billing-service are retried twice",
            "check the invoice idempotency key handling",
        ],
        "thing": ["the invoice webhook handler", "the Stripe idempotency keys", "the VAT rounding"],
    },
    "android-release": {
        "task": "Ship the Android release",
        "messages": [
            "the Android build for the Play Store is stuck in review",
            "Gradle signing config changed for the release build",
            "we need the APK for the beta testers by Friday",
        ],
        "thing": ["the Gradle signing config", "the Play Store listing", "the APK size budget"],
    },
    "onboarding-emails": {
        "task": "Rewrite the onboarding emails",
        "messages": [
            "open rates for the welcome email dropped",
            "the onboarding drip sequence sends day 3 too early",
            "Mailchimp template for onboarding needs new copy",
        ],
        "thing": ["the welcome email subject line", "the drip sequence timing", "the Mailchimp template"],
    },
    "warehouse-etl": {
        "task": "Repair the warehouse ETL",
        "messages": [
            "the dbt models in the warehouse ETL are failing on nulls",
            "Airflow DAG for the warehouse load missed two runs",
            "Snowflake credits spiked after the ETL change",
        ],
        "thing": ["the dbt incremental model", "the Airflow DAG schedule", "the Snowflake warehouse size"],
    },
    "offsite-planning": {
        "task": "Plan the team offsite",
        "messages": [
            "the offsite venue needs a final headcount",
            "train tickets to the offsite are not booked yet",
            "agenda for the offsite has too many sessions",
        ],
        "thing": ["the venue booking", "the train reservations", "the offsite agenda"],
    },
}
SITUATIONS = {
    "change": {
        "notes": ["{P}: changed {t} last week.", "Adjusted {t} for {P}.", "{P} - {t} was modified."],
        "queries": [
            "what did we change last week?",
            "what got adjusted recently?",
            "which thing was modified?",
        ],
    },
    "blocker": {
        "notes": ["{P} is blocked by {t}.", "Stuck on {t} ({P}).", "{P}: waiting on {t} before moving on."],
        "queries": ["what is the blocker?", "what are we stuck on?", "what are we waiting for?"],
    },
    "review": {
        "notes": [
            "Lena reviewed {t} in {P}.",
            "{P}: review of {t} done by Lena.",
            "Lena signed off {t} for {P}.",
        ],
        "queries": ["who reviewed it?", "did someone sign off?", "was the review done?"],
    },
    "decision": {
        "notes": [
            "Decided to keep {t} as is for {P}.",
            "{P}: we settled on {t}.",
            "Final call on {P}: {t} stays.",
        ],
        "queries": ["what did we decide?", "what was the final call?", "what did we settle on?"],
    },
    "breakage": {
        "notes": [
            "{t} broke in {P} on Tuesday.",
            "{P}: {t} failed overnight.",
            "Outage: {t} went down ({P}).",
        ],
        "queries": ["what broke?", "what failed overnight?", "was there an outage?"],
    },
}
CHATTER = ["Coffee with the neighbours.", "Rain all day.", "Long lunch.", "Gym after work.", "Read a novel."]
NOW = dt.datetime(2026, 4, 1, 9, 0, tzinfo=dt.UTC)


def build(root: Path, seed: int, embedding: str) -> list[dict[str, Any]]:
    """The workspace of one seed and its labelled queries."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    (root / "lifelong.yaml").write_text(
        yaml.safe_dump({"timezone": "UTC", "embedding": {"provider": embedding}})
    )
    (root / "MEMORY.md").write_text("# MEMORY\n")
    (root / "memory").mkdir()
    notes = [(p, s) for p in PROJECTS for s in SITUATIONS]
    rng.shuffle(notes)
    gold: dict[tuple[str, str], tuple[str, int]] = {}
    start = NOW.date() - dt.timedelta(days=len(notes))
    for i, (project, situation) in enumerate(notes):
        day = start + dt.timedelta(days=i)
        line = rng.choice(SITUATIONS[situation]["notes"]).format(
            P=project, t=rng.choice(PROJECTS[project]["thing"])
        )
        rel = f"memory/{day.isoformat()}.md"
        lines = [
            f"# {day.isoformat()}",
            "",
            f"- {rng.choice(CHATTER)}",
            f"- {line}",
            f"- {rng.choice(CHATTER)}",
        ]
        (root / rel).write_text("\n".join(lines) + "\n")
        gold[(project, situation)] = (rel, 4)
    queries = []
    for (project, situation), (rel, line_no) in sorted(gold.items()):
        queries.append(
            {
                "project": project,
                "situation": situation,
                "query": rng.choice(SITUATIONS[situation]["queries"]),
                "path": rel,
                "line": line_no,
            }
        )
    return queries


def reciprocal_rank(results: list[dict[str, Any]], path: str, line: int) -> float:
    for rank, r in enumerate(results, 1):
        if r["path"] == path and r["start_line"] <= line <= r["end_line"]:
            return 1.0 / rank
    return 0.0


def measure_seed(seed: int, embedding: str, work: Path) -> dict[str, Any]:
    from lifelong_plugins.recall.service import run_search

    from lifelong import clock
    from lifelong.contracts import SearchRequest
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    root = work / f"seed-{seed}"
    queries = build(root, seed, embedding)
    out: dict[str, Any] = {}
    for label, enabled in (("with_task_focus", True), ("without_task_focus", False)):
        cfg = yaml.safe_load((root / "lifelong.yaml").read_text())
        cfg["plugins"] = {"task_focus": {"enabled": enabled}}
        (root / "lifelong.yaml").write_text(yaml.safe_dump(cfg))
        host = Host(Workspace(root))
        try:
            rr = {"explicit": [], "inferred": [], "no_task": []}
            with clock.pinned(NOW):
                for q in queries:
                    spec = PROJECTS[q["project"]]
                    found = host.ctx.call_tool(
                        "memory_search", query=q["query"], task=spec["task"], max_results=10
                    )
                    rr["explicit"].append(reciprocal_rank(found["results"], q["path"], q["line"]))
                    session = {"messages": [{"role": "user", "content": m} for m in spec["messages"]]}
                    request = SearchRequest(query=q["query"], max_results=10, session=session, record=False)
                    outcome = run_search(host.ctx, request)
                    results = [
                        {"path": c.path, "start_line": c.start_line, "end_line": c.end_line}
                        for c in outcome.results
                    ]
                    rr["inferred"].append(reciprocal_rank(results, q["path"], q["line"]))
                    plain = host.ctx.call_tool("memory_search", query=q["query"], max_results=10)
                    rr["no_task"].append(reciprocal_rank(plain["results"], q["path"], q["line"]))
        finally:
            host.close()
        out[label] = {k: round(sum(v) / len(v), 3) for k, v in rr.items()}
    out["queries"] = len(queries)
    return out


def pooled(per_seed: dict[int, dict[str, Any]], seeds: list[int]) -> dict[str, Any]:
    rows = [per_seed[s] for s in seeds if s in per_seed]
    if not rows:
        return {}
    out: dict[str, Any] = {}
    for label in ("with_task_focus", "without_task_focus"):
        out[label] = {k: round(sum(r[label][k] for r in rows) / len(rows), 3) for k in rows[0][label]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals.task_focus_mrr", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--seeds", default="1,2,3", help="tuning seeds")
    parser.add_argument("--held-out", default="4,5,6", help="seeds never used for tuning")
    parser.add_argument("--embedding", choices=("local", "none"), default="local")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    tuning = [int(s) for s in args.seeds.split(",") if s]
    held = [int(s) for s in args.held_out.split(",") if s]
    per_seed: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in tuning + held:
            per_seed[seed] = measure_seed(seed, args.embedding, Path(tmp))
            r = per_seed[seed]
            print(
                f"seed {seed}{' (held out)' if seed in held else ''}: MRR with task focus "
                f"explicit {r['with_task_focus']['explicit']} inferred {r['with_task_focus']['inferred']} | "
                f"without: explicit {r['without_task_focus']['explicit']} inferred "
                f"{r['without_task_focus']['inferred']} | no task given {r['with_task_focus']['no_task']}",
                flush=True,
            )
    report = {"embedding": args.embedding, "per_seed": per_seed, "tuning": pooled(per_seed, tuning)}
    report["held_out"] = pooled(per_seed, held)
    for part in ("tuning", "held_out"):
        p = report[part]
        if p:
            print(
                f"{part}: MRR explicit task {p['without_task_focus']['explicit']} -> {p['with_task_focus']['explicit']}, "
                f"inferred task {p['without_task_focus']['inferred']} -> {p['with_task_focus']['inferred']} "
                f"(without -> with task focus)"
            )
    if args.json:
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
