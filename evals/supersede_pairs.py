"""The contradiction gate (plugin ``supersede``, rules in ``lifelong/facts.py``) measured.

``python -m evals.supersede_pairs [--seeds 1,2,3,4,5,6] [--dev-seeds 1,2] [--chunks 100000] [--queries 40]
[--json FILE]`` prints:

1. **calendar**: the reproduction end to end on a real workspace (FTS-only index, supersede mode):
   day 1 ``lifelong remember "team sync is on Wednesday"``, day 5 ``"team sync moved to
   Thursday"``; at day 6 a ``memory_search`` in mode current, valid-at 2026-05-03 and all.
2. **pairs**: a generated, labelled set of write pairs per seed (old fact, new fact, label
   conflict | compatible | unrelated), 96 per seed. Surfaces vary (templates per attribute,
   paraphrases with few shared words, "moved to" / "is now" / "was rescheduled to" / no change
   word at all); the compatible pairs are the ones that look like conflicts: a second meeting on
   another day, two people's budgets, a plan and its later completion, the same value written
   another way ($2M / $2,000,000, 2 hours / 120 minutes), a detail added (the same day plus a
   time). Some conflicts use wording the rules do not know ("handed over to"), so recall is not
   tuned to the templates. Scored three ways:

   - ``rules``: ``facts.compare`` on the pair alone;
   - ``gate``: end to end — the old fact and three same-workspace distractors in a daily, the new
     fact through ``host.decide_write`` (warn mode), which must find the old fact in the index
     itself; a conflict reported against a distractor counts as a false alarm;
   - baselines in the same run: ``similar_differs`` (Jaccard of content stems ≥ 0.4 and the texts
     differ: what an embedding-similarity invalidator does) and ``values_differ`` (Jaccard ≥ 0.4
     and the digits/capitalised tokens differ).

   Precision, recall and the false-positive rate (flagged non-conflicts / non-conflicts; also on
   the compatible look-alikes alone) are printed for the dev seed and the held-out seeds apart.
3. **validity overhead**: ``Searcher.search`` at ``--chunks`` synthetic chunks (FTS-only, 5% of
   chunks closed), mode current (validity predicate in the SQL) vs mode all (no predicate), with
   and without the supersede plugin's ``retrieval_post``; p50/p95 over the queries, the four
   combinations interleaved per query in rotating order.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from lifelong import clock
from lifelong.contracts import SearchRequest, WriteCandidate
from lifelong.facts import compare, extract
from lifelong.host import Host
from lifelong.text import content_tokens, jaccard, tokens
from lifelong.workspace import Workspace

UTC = dt.UTC
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
NAMES = ["Anna", "Bob", "Priya", "Dana", "Mateo", "Yuki", "Lena", "Omar", "Chloe", "Ravi"]
CITIES = ["Lisbon", "Porto", "Berlin", "Madrid", "Prague", "Vienna", "Oslo", "Dublin"]
EVENTS = ["team sync", "design review", "sprint planning", "board meeting", "ops standup", "retro"]
PROJECTS = ["payments migration", "search revamp", "mobile release", "billing rewrite", "data export"]
GATHERINGS = ["offsite", "company retreat", "hackathon", "summer party", "customer workshop"]
SERVERS = ["build server", "staging database", "render box", "CI runner"]


@dataclass(frozen=True)
class Pair:
    old: str
    new: str
    label: str  # conflict | compatible | unrelated
    kind: str


def _two(rng: random.Random, items: list[str]) -> tuple[str, str]:
    a, b = rng.sample(items, 2)
    return a, b


def generate(seed: int) -> list[Pair]:
    """The labelled pairs of one seed (see the module docstring)."""
    rng = random.Random(seed)
    pairs: list[Pair] = []

    def add(old: str, new: str, label: str, kind: str) -> None:
        pairs.append(Pair(old, new, label, kind))

    for _ in range(4):
        ev = rng.choice(EVENTS)
        d1, d2 = _two(rng, DAYS)
        old = rng.choice(
            [f"The {ev} is on {d1}", f"We hold the {ev} every {d1}", f"{ev.capitalize()}: {d1}s"]
        )
        new = rng.choice(
            [
                f"The {ev} moved to {d2}",
                f"Heads up, the {ev} was rescheduled to {d2}",
                f"The {ev} is now on {d2}",
                f"From next week the {ev} happens on {d2}",
                f"{ev.capitalize()} is on {d2}",
            ]
        )
        add(old, new, "conflict", "weekday")
        add(
            old,
            rng.choice([f"There is also a {ev} on {d2}", f"We added a second {ev} on {d2}"]),
            "compatible",
            "second-meeting",
        )
        t = rng.choice(["9:30", "10am", "2 pm", "16:00"])
        add(old, f"The {ev} on {d1} starts at {t}", "compatible", "detail-added")

        h1, h2 = rng.sample(["9:00", "9:30", "10:15", "11am", "2pm", "15:30"], 2)
        add(
            f"The {ev} starts at {h1}",
            rng.choice([f"The {ev} now starts at {h2}", f"The {ev} was pushed to {h2}"]),
            "conflict",
            "time",
        )

        n1, n2 = _two(rng, NAMES)
        m1, m2 = rng.sample(["$5k", "$8,000", "€3,500", "$12k", "$20,000"], 2)
        add(f"{n1}'s travel budget is {m1}", f"{n1}'s travel budget was cut to {m2}", "conflict", "money")
        add(f"{n1}'s travel budget is {m1}", f"{n2}'s travel budget is {m2}", "compatible", "two-budgets")
        add(
            "The seed round is $2M",
            rng.choice(["We raised a seed round of $2,000,000", "The seed round is 2 million dollars"]),
            "compatible",
            "same-amount",
        )
        add(
            "The seed round is $2M",
            rng.choice(["The seed round closed at $2.5M", "Seed round ended up at 2.5 million dollars"]),
            "conflict",
            "money",
        )

        g = rng.choice(GATHERINGS)
        c1, c2 = _two(rng, CITIES)
        add(
            f"The {g} is in {c1}",
            rng.choice(
                [f"The {g} moved to {c2}", f"The {g} will take place in {c2} instead", f"The {g} is in {c2}"]
            ),
            "conflict",
            "location",
        )
        add(f"The {g} is in {c1}", f"The {g} dinner is at the harbour in {c1}", "compatible", "detail-added")

        p = rng.choice(PROJECTS)
        add(
            f"The {p} is owned by {n1}",
            rng.choice([f"{n2} now owns the {p}", f"The {p} is owned by {n2}"]),
            "conflict",
            "assignee",
        )
        add(
            f"The {p} is owned by {n1}",
            f"The {p} was handed over to {n2}",
            "conflict",
            "assignee-unknown-wording",
        )
        month = rng.choice(["May", "June", "July"])
        add(
            f"We plan to ship the {p} in {month}",
            rng.choice([f"The {p} shipped", f"We finished the {p} on 3 {month}"]),
            "compatible",
            "plan-then-done",
        )
        add(
            f"We plan to ship the {p} in {month}",
            rng.choice([f"The {p} was cancelled", f"The {p} is on hold"]),
            "conflict",
            "status",
        )
        add(f"The {p} is experimental", f"The {p} is in production now", "conflict", "status")

        s = rng.choice(SERVERS)
        r1, r2 = rng.sample(["16 GB", "32 GB", "64 GB"], 2)
        add(f"The {s} has {r1} of RAM", f"The {s} was upgraded to {r2} of RAM", "conflict", "quantity")
        add(
            "The flight to Berlin takes 2 hours",
            rng.choice(["The flight to Berlin takes 120 minutes", "Berlin flight: 2 h"]),
            "compatible",
            "same-quantity",
        )

        # paraphrase with few shared words
        add(
            f"Our weekly {ev} happens on {d1}",
            rng.choice([f"Starting now the weekly {ev} is {d2}", f"We shifted the weekly {ev} to {d2}"]),
            "conflict",
            "paraphrase",
        )
        # harder surfaces: look-alikes the rules may flag, conflicts in wording they may not know
        add(old, f"The {ev} notes are due on {d2}", "compatible", "other-attribute-same-kind")
        add(
            f"{n1}'s travel budget is {m1}",
            f"{n1} has spent {m2} of the travel budget so far",
            "compatible",
            "spent-of-budget",
        )
        add(
            f"We meet for the {ev} on {d1}s",
            f"No more {d1} {ev}s, it is {d2}s from now on",
            "conflict",
            "hard-paraphrase",
        )
        add(f"{n1} leads the {p}", f"{n2} took over the {p} from {n1}", "conflict", "implicit-handover")
        # unrelated (including same-shape distractors about other subjects)
        ev2 = rng.choice([e for e in EVENTS if e != ev])
        add(f"The {ev} is on {d1}", f"The {ev2} is on {d2}", "unrelated", "other-event")
        add(f"{n1}'s travel budget is {m1}", f"The {g} is in {c2}", "unrelated", "other-subject")
    rng.shuffle(pairs)
    return pairs


# Written by hand after the rules were last changed, and never used to change them: other
# wording, other subjects, other attributes than the generator's templates.
FRESH_PAIRS = [
    Pair(
        "Mum's birthday dinner is on Saturday",
        "We're doing Mum's birthday dinner on Sunday instead",
        "conflict",
        "fresh",
    ),
    Pair("The gym class starts at 6:30 am", "Gym class is at 7 now", "conflict", "fresh"),
    Pair("Rent is $1,450 a month", "The landlord raised the rent to $1,600", "conflict", "fresh"),
    Pair("My flight to Tokyo leaves on 12 June", "Flight to Tokyo rebooked for 14 June", "conflict", "fresh"),
    Pair(
        "Sofia is the on-call engineer this week",
        "Marco is on call this week, not Sofia",
        "conflict",
        "fresh",
    ),
    Pair(
        "The quarterly report is due on Friday",
        "The quarterly report deadline slipped to Monday",
        "conflict",
        "fresh",
    ),
    Pair("The kids' school starts at 8:15", "School now starts at 8:40", "conflict", "fresh"),
    Pair("Our office is in Hamburg", "We relocated the office to Munich", "conflict", "fresh"),
    Pair(
        "The API rate limit is 100 requests per minute",
        "The API rate limit was raised to 500 requests per minute",
        "conflict",
        "fresh",
    ),
    Pair("The feature flag for dark mode is off", "Dark mode flag is on in production", "conflict", "fresh"),
    Pair(
        "Dr. Weber's appointment is on Tuesday at 3 pm",
        "Dr. Weber moved my appointment to Thursday at 3 pm",
        "conflict",
        "fresh",
    ),
    Pair(
        "The book club reads Dune this month",
        "Book club switched to Neuromancer this month",
        "conflict",
        "fresh",
    ),
    Pair(
        "The vendor contract is worth €40,000", "The vendor contract came in at €52,000", "conflict", "fresh"
    ),
    Pair("The wedding venue is in Sintra", "The wedding venue is now in Cascais", "conflict", "fresh"),
    Pair("Support tickets are handled by Lina", "Jonas handles support tickets now", "conflict", "fresh"),
    Pair("Mum's birthday dinner is on Saturday", "Mum's birthday brunch is on Sunday", "compatible", "fresh"),
    Pair("Rent is $1,450 a month", "The deposit was $2,900", "compatible", "fresh"),
    Pair(
        "The quarterly report is due on Friday",
        "The quarterly report review meeting is on Monday",
        "compatible",
        "fresh",
    ),
    Pair("Our office is in Hamburg", "Our new warehouse is in Bremen", "compatible", "fresh"),
    Pair("The gym class starts at 6:30 am", "The gym closes at 10 pm", "compatible", "fresh"),
    Pair("Sofia is the on-call engineer this week", "Sofia was on call last week too", "compatible", "fresh"),
    Pair(
        "The vendor contract is worth €40,000",
        "We paid €10,000 of the vendor contract upfront",
        "compatible",
        "fresh",
    ),
    Pair(
        "My flight to Tokyo leaves on 12 June",
        "My flight back from Tokyo is on 20 June",
        "compatible",
        "fresh",
    ),
    Pair(
        "The API rate limit is 100 requests per minute",
        "The API serves about 40 requests per minute on average",
        "compatible",
        "fresh",
    ),
    Pair(
        "We plan to launch the newsletter in September",
        "The newsletter launched on 2 September",
        "compatible",
        "fresh",
    ),
    Pair(
        "The wedding venue is in Sintra",
        "The wedding reception dinner is also in Sintra",
        "compatible",
        "fresh",
    ),
    Pair(
        "Dr. Weber's appointment is on Tuesday at 3 pm",
        "The dentist appointment is on Thursday at 3 pm",
        "compatible",
        "fresh",
    ),
    Pair(
        "The router password hint is the cat's name", "The wedding venue is in Sintra", "unrelated", "fresh"
    ),
    Pair("Rent is $1,450 a month", "The gym class starts at 6:30 am", "unrelated", "fresh"),
    Pair("Sofia is the on-call engineer this week", "Our office is in Hamburg", "unrelated", "fresh"),
]


# A second hand-written set, written after FRESH_PAIRS had been looked at (and the change-verb
# relaxation of the rules made from it) and before anything was run on it.
FRESH_PAIRS_2 = [
    Pair(
        "Piano lessons are on Wednesdays at 5 pm",
        "Piano lessons moved to Thursdays at 5 pm",
        "conflict",
        "fresh2",
    ),
    Pair("The team lunch budget is $300", "The team lunch budget went up to $450", "conflict", "fresh2"),
    Pair(
        "Grandma's surgery is scheduled for 9 March",
        "Grandma's surgery got pushed to 16 March",
        "conflict",
        "fresh2",
    ),
    Pair("Kai owns the onboarding docs", "The onboarding docs belong to Mira now", "conflict", "fresh2"),
    Pair(
        "The staging cluster runs in Frankfurt",
        "We migrated the staging cluster to Dublin",
        "conflict",
        "fresh2",
    ),
    Pair(
        "The conference talk is 30 minutes long",
        "Our conference talk got cut to 20 minutes",
        "conflict",
        "fresh2",
    ),
    Pair(
        "The beta of the mobile app is live",
        "The mobile app beta was pulled and cancelled",
        "conflict",
        "fresh2",
    ),
    Pair(
        "My passport expires on 2 August",
        "The passport renewal changed its expiry to 2 August 2036",
        "conflict",
        "fresh2",
    ),
    Pair("The daily standup is at 9:45", "Standup is now 10:00 every day", "conflict", "fresh2"),
    Pair(
        "The car service costs €180",
        "The garage quoted €240 for the car service instead",
        "conflict",
        "fresh2",
    ),
    Pair("Leo is the release manager for v2", "Release manager for v2 changed to Ines", "conflict", "fresh2"),
    Pair(
        "The sales kickoff is in Lyon",
        "Sales kickoff is happening in Nice instead of Lyon",
        "conflict",
        "fresh2",
    ),
    Pair(
        "Our yoga class is on Monday evenings",
        "No more Monday yoga; the class is on Tuesday evenings",
        "conflict",
        "fresh2",
    ),
    Pair(
        "The office Wi-Fi plan is 500 Mbps",
        "The office Wi-Fi plan was upgraded to 1000 Mbps",
        "conflict",
        "fresh2",
    ),
    Pair("The hiring freeze is planned for Q3", "The hiring freeze was called off", "conflict", "fresh2"),
    Pair(
        "Piano lessons are on Wednesdays at 5 pm",
        "There is also a piano recital on Saturday",
        "compatible",
        "fresh2",
    ),
    Pair("The team lunch budget is $300", "We spent $120 of the team lunch budget", "compatible", "fresh2"),
    Pair("Kai owns the onboarding docs", "Kai also owns the style guide", "compatible", "fresh2"),
    Pair(
        "The staging cluster runs in Frankfurt",
        "The production cluster runs in Dublin",
        "compatible",
        "fresh2",
    ),
    Pair(
        "The conference talk is 30 minutes long",
        "The Q&A after the talk is 10 minutes",
        "compatible",
        "fresh2",
    ),
    Pair("The daily standup is at 9:45", "The weekly planning is at 11:00", "compatible", "fresh2"),
    Pair("The car service costs €180", "The car insurance costs €600 a year", "compatible", "fresh2"),
    Pair("Leo is the release manager for v2", "Ines is the release manager for v3", "compatible", "fresh2"),
    Pair(
        "The hiring freeze is planned for Q3",
        "The hiring freeze started on 1 July as planned",
        "compatible",
        "fresh2",
    ),
    Pair(
        "Our yoga class is on Monday evenings",
        "Our yoga class on Monday evenings starts at 7 pm",
        "compatible",
        "fresh2",
    ),
    Pair(
        "Grandma's surgery is scheduled for 9 March",
        "Grandma's follow-up check is on 23 March",
        "compatible",
        "fresh2",
    ),
    Pair(
        "The sales kickoff is in Lyon",
        "The sales kickoff dinner is at a restaurant in Lyon",
        "compatible",
        "fresh2",
    ),
    Pair("The office Wi-Fi plan is 500 Mbps", "The guest Wi-Fi is capped at 50 Mbps", "compatible", "fresh2"),
    Pair("My passport expires on 2 August", "The piano lessons are on Wednesdays", "unrelated", "fresh2"),
    Pair("The car service costs €180", "Leo is the release manager for v2", "unrelated", "fresh2"),
]


# ---------------------------------------------------------------------------------------------
# Detectors


def rules_detector(pair: Pair, now: dt.datetime) -> bool:
    return compare(extract(pair.old, now), extract(pair.new, now)).conflicting


def similar_differs(pair: Pair) -> bool:
    a, b = content_tokens(pair.old), content_tokens(pair.new)
    return jaccard(a, b) >= 0.4 and a != b


def values_differ(pair: Pair) -> bool:
    def values(text: str) -> set[str]:
        return {t.lower() for t in tokens(text)[1:] if any(ch.isdigit() for ch in t) or t[:1].isupper()}

    a, b = content_tokens(pair.old), content_tokens(pair.new)
    return jaccard(a, b) >= 0.4 and values(pair.old) != values(pair.new)


def _config(mode: str) -> dict[str, Any]:
    return {"timezone": "UTC", "embedding": {"provider": "none"}, "plugins": {"supersede": {"mode": mode}}}


def _workspace(root: Path, files: dict[str, str], config: dict[str, Any]) -> Workspace:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "lifelong.yaml").write_text(yaml.safe_dump(config))
    for rel, text in files.items():
        (root / rel).write_text(text, encoding="utf-8")
    return Workspace(root)


def gate_detector(pair: Pair, distractors: list[str], root: Path) -> tuple[bool, bool]:
    """(conflict reported against the old fact, conflict reported against a distractor)."""
    daily = "# 2026-05-01\n\n" + "".join(f"- {t}\n" for t in [*distractors[:2], pair.old, *distractors[2:]])
    ws = _workspace(root, {"memory/2026-05-01.md": daily}, _config("warn"))
    host = Host(ws, builtins=("recall", "supersede"), entry_points=False)
    try:
        with clock.pinned(dt.datetime(2026, 5, 5, 10, tzinfo=UTC)):
            decision = host.decide_write(
                WriteCandidate(pair.new, "memory/2026-05-05.md", "remember", written_on=dt.date(2026, 5, 5)),
                [],
            )
    finally:
        host.close()
    hits = {f.text.lstrip("- ").strip() for f in decision.conflicts}
    return pair.old in hits, bool(hits - {pair.old})


def score(labels: list[str], flagged: list[bool]) -> dict[str, Any]:
    tp = sum(1 for lab, f in zip(labels, flagged, strict=True) if f and lab == "conflict")
    fp = sum(1 for lab, f in zip(labels, flagged, strict=True) if f and lab != "conflict")
    fn = sum(1 for lab, f in zip(labels, flagged, strict=True) if not f and lab == "conflict")
    neg = sum(1 for lab in labels if lab != "conflict")
    comp = [f for lab, f in zip(labels, flagged, strict=True) if lab == "compatible"]
    return {
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "fp_rate": round(fp / neg, 3) if neg else None,
        "fp_rate_lookalikes": round(sum(comp) / len(comp), 3) if comp else None,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "n": len(labels),
    }


def run_pairs(seeds: list[int], tmp: Path) -> dict[str, Any]:
    now = dt.datetime(2026, 5, 5, 10, tzinfo=UTC)
    out: dict[str, Any] = {}
    for seed in seeds:
        pairs = generate(seed)
        labels = [p.label for p in pairs]
        rng = random.Random(seed + 1000)
        gate_flags, distractor_alarms, missed = [], 0, []
        for i, p in enumerate(pairs):
            mine = content_tokens(p.old) | content_tokens(p.new)
            others = [q.old for q in pairs if jaccard(content_tokens(q.old), mine) < 0.2]
            distractors = rng.sample(sorted(set(others)), 3)
            hit, alarm = gate_detector(p, distractors, tmp / f"s{seed}-{i}")
            flagged = hit or alarm
            gate_flags.append(flagged)
            distractor_alarms += alarm
            if p.label == "conflict" and not hit:
                missed.append(p.kind)
        rules = [rules_detector(p, now) for p in pairs]
        out[str(seed)] = {
            "pairs": len(pairs),
            "by_label": {lab: labels.count(lab) for lab in sorted(set(labels))},
            "rules": score(labels, rules),
            "gate": {**score(labels, gate_flags), "distractor_alarms": distractor_alarms},
            "similar_differs": score(labels, [similar_differs(p) for p in pairs]),
            "values_differ": score(labels, [values_differ(p) for p in pairs]),
            "rules_false_alarms": sorted(
                {p.kind for p, f in zip(pairs, rules, strict=True) if f and p.label != "conflict"}
            ),
            "gate_missed_kinds": sorted(set(missed)),
        }
    return out


def pooled(per_seed: dict[str, Any], seeds: list[int], detector: str) -> dict[str, Any]:
    keys = ("tp", "fp", "fn", "n")
    tot = {k: sum(per_seed[str(s)][detector][k] for s in seeds) for k in keys}
    neg = sum(per_seed[str(s)]["pairs"] - per_seed[str(s)]["by_label"].get("conflict", 0) for s in seeds)
    tp, fp, fn = tot["tp"], tot["fp"], tot["fn"]
    return {
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
        "fp_rate": round(fp / neg, 3) if neg else None,
        **tot,
    }


# ---------------------------------------------------------------------------------------------
# The calendar case


def run_calendar(root: Path) -> dict[str, Any]:
    from lifelong_plugins.supersede.commands import remember

    ws = _workspace(root, {}, _config("supersede"))
    host = Host(ws, builtins=("recall", "supersede", "task_focus"), entry_points=False)
    out: dict[str, Any] = {}
    try:
        with clock.pinned(dt.datetime(2026, 5, 1, 10, tzinfo=UTC)):
            out["day1"] = remember(host.ctx, "team sync is on Wednesday")["action"]
        with clock.pinned(dt.datetime(2026, 5, 5, 10, tzinfo=UTC)):
            out["day5"] = remember(host.ctx, "team sync moved to Thursday")["action"]
        with clock.pinned(dt.datetime(2026, 5, 6, 10, tzinfo=UTC)):
            for label, args in (
                ("current", {"mode": "current"}),
                ("valid-at 2026-05-03", {"mode": "valid-at", "as_of": "2026-05-03"}),
                ("all", {"mode": "all"}),
            ):
                res = host.call_tool("memory_search", {"query": "team sync", "min_score": 0.01, **args})
                out[label] = [(r["snippet"].lstrip("- "), r["score"]) for r in res.get("results", [])]
    finally:
        host.close()
    out["ok"] = (
        [t for t, _ in out["current"]] == ["team sync moved to Thursday"]
        and [t for t, _ in out["valid-at 2026-05-03"]] == ["team sync is on Wednesday"]
        and sorted(t for t, _ in out["all"]) == ["team sync is on Wednesday", "team sync moved to Thursday"]
    )
    return out


# ---------------------------------------------------------------------------------------------
# Validity overhead


def _words(rng: random.Random, vocab: list[str], n: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(n))


def build_index(root: Path, n: int, seed: int) -> Workspace:
    """``n`` chunks of pseudo-text (Zipf-ish over 20k words) bulk-inserted into the recall tables,
    100 per daily file, 5% closed (validity_end in the past) and registered as superseded facts."""
    rng = random.Random(seed)
    syll = ["ka", "lo", "mi", "ren", "tos", "va", "qui", "bel", "dor", "sen", "ar", "mu", "tri", "pel"]
    vocab = sorted({"".join(rng.choice(syll) for _ in range(rng.randint(2, 4))) for _ in range(30000)})[
        :20000
    ]
    weights = [1 / (i + 2) ** 1.05 for i in range(len(vocab))]
    ws = _workspace(root, {}, _config("warn"))
    host = Host(ws, builtins=("recall", "supersede"), entry_points=False)
    try:
        conn = host.store.conn
        day0 = dt.date(2026, 5, 1)
        now = dt.datetime(2026, 5, 2, tzinfo=UTC).timestamp()
        rows, fts, facts = [], [], []
        for i in range(n):
            text = "- " + " ".join(rng.choices(vocab, weights, k=rng.randint(20, 60)))
            day = day0 - dt.timedelta(days=i // 100)
            path = f"memory/{day.isoformat()}.md"
            line = 3 + (i % 100)
            src = dt.datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
            closed = rng.random() < 0.05
            end = src + 3600 if closed else None
            rows.append(
                (
                    i + 1,
                    path,
                    "memory",
                    line,
                    line,
                    "",
                    text,
                    f"h{i}",
                    f"e{i}",
                    src,
                    0,
                    0,
                    src,
                    end,
                    now,
                    "x" if closed else None,
                )
            )
            fts.append((i + 1, text, ""))
            if closed:
                from lifelong_plugins.supersede import ledger

                facts.append(
                    (
                        ledger.fact_id(path, text),
                        path,
                        line,
                        line,
                        text,
                        ledger.text_hash(text),
                        " ",
                        "bench",
                        2,
                        src,
                        src,
                        end,
                        "x",
                        now,
                    )
                )
        with host.store.lock:
            conn.executemany(
                "INSERT INTO chunks(id, path, corpus, start_line, end_line, heading, text, hash, embed_hash, source_date,"
                " evergreen, generated, validity_start, validity_end, ingestion_time, superseded_by)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.executemany("INSERT INTO chunks_fts(rowid, text, heading) VALUES (?, ?, ?)", fts)
            conn.executemany(
                "INSERT INTO supersede_facts(id, path, start_line, end_line, text, text_hash, subject, source, strength,"
                " event_time, validity_start, validity_end, superseded_by, ingestion_time)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                facts,
            )
            conn.commit()
        (root / "queries.json").write_text(
            json.dumps([" ".join(rng.sample(vocab[200:3000], rng.randint(2, 3))) for _ in range(200)])
        )
    finally:
        host.close()
    return ws


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
    }


def run_overhead(root: Path, n: int, n_queries: int, reps: int) -> dict[str, Any]:
    from lifelong_plugins.recall import service
    from lifelong_plugins.recall.search import Searcher

    t0 = time.monotonic()
    ws = build_index(root, n, 7)
    build_s = round(time.monotonic() - t0, 1)
    queries = json.loads((root / "queries.json").read_text())[:n_queries]
    out: dict[str, Any] = {
        "chunks": n,
        "closed_share": 0.05,
        "build_s": build_s,
        "queries": len(queries),
        "reps": reps,
    }
    hosts = {
        label: Host(ws, builtins=b, entry_points=False)
        for label, b in (("recall", ("recall",)), ("recall+supersede", ("recall", "supersede")))
    }
    try:
        searchers = {label: Searcher(service.index_for(h.ctx)) for label, h in hosts.items()}
        combos = [(label, mode) for label in searchers for mode in ("current", "all")]
        times: dict[tuple[str, str], list[float]] = {c: [] for c in combos}
        with clock.pinned(dt.datetime(2026, 5, 2, 12, tzinfo=UTC)):
            for label, mode in combos:  # warm the page cache and the FTS structures
                for q in queries[:5]:
                    searchers[label].search(SearchRequest(q, mode=mode, record=False))  # type: ignore[arg-type]
            turn = 0
            for _ in range(reps):
                for q in queries:
                    turn += 1
                    for label, mode in combos[turn % 4 :] + combos[: turn % 4]:  # rotate the order
                        start = time.perf_counter()
                        searchers[label].search(SearchRequest(q, mode=mode, record=False))  # type: ignore[arg-type]
                        times[(label, mode)].append((time.perf_counter() - start) * 1000)
        for label in searchers:
            cur, allm = percentiles(times[(label, "current")]), percentiles(times[(label, "all")])
            out[label] = {
                "current": cur,
                "all": allm,
                "overhead_p50": round(cur["p50"] / allm["p50"] - 1, 3) if allm["p50"] else None,
            }
    finally:
        for h in hosts.values():
            h.close()
    return out


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m evals.supersede_pairs", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--seeds", default="1,2,3,4,5,6", help="Seeds of the labelled pairs (default 1-6).")
    parser.add_argument(
        "--dev-seeds", default="1,2", help="Seeds looked at while writing the rules (default 1,2)."
    )
    parser.add_argument(
        "--chunks", type=int, default=100_000, help="Chunks for the overhead figure (0: skip)."
    )
    parser.add_argument("--queries", type=int, default=40, help="Queries for the overhead figure.")
    parser.add_argument("--reps", type=int, default=3, help="Repetitions over the queries.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the figures to this JSON file.")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    dev = [int(s) for s in args.dev_seeds.split(",") if s.strip()]
    held = [s for s in seeds if s not in dev]
    tmp = Path(tempfile.mkdtemp(prefix="supersede-eval-"))
    results: dict[str, Any] = {}
    try:
        results["calendar"] = cal = run_calendar(tmp / "calendar")
        print("calendar (supersede mode, FTS-only):", "OK" if cal["ok"] else "FAILED")
        for label in ("current", "valid-at 2026-05-03", "all"):
            print(f"  {label:<20} " + "; ".join(f"{t!r} {s}" for t, s in cal[label]))

        started = time.monotonic()
        per_seed = run_pairs(seeds, tmp / "pairs")
        results["pairs"] = per_seed
        results["pairs_s"] = round(time.monotonic() - started, 1)
        print(f"\nlabelled pairs ({results['pairs_s']} s):")
        for s in seeds:
            r = per_seed[str(s)]
            print(f"  seed {s} ({'dev' if s in dev else 'held-out'}): {r['pairs']} pairs {r['by_label']}")
        for group, group_seeds in (("dev", [s for s in seeds if s in dev]), ("held-out", held)):
            if not group_seeds:
                continue
            print(f"  {group} seeds {group_seeds}:")
            for det in ("rules", "gate", "similar_differs", "values_differ"):
                p = pooled(per_seed, group_seeds, det)
                results.setdefault("pooled", {}).setdefault(group, {})[det] = p
                print(
                    f"    {det:<16} precision {p['precision']}  recall {p['recall']}  FP rate {p['fp_rate']}"
                    f"  (tp {p['tp']} fp {p['fp']} fn {p['fn']} of {p['n']})"
                )
        fresh_now = dt.datetime(2026, 5, 5, 10, tzinfo=UTC)
        for name, fresh, note in (
            ("fresh", FRESH_PAIRS, "looked at: the change-verb relaxation was made from it"),
            ("fresh_2", FRESH_PAIRS_2, "never tuned on"),
        ):
            fresh_labels = [p.label for p in fresh]
            flags = [rules_detector(p, fresh_now) for p in fresh]
            results[name] = {
                "rules": score(fresh_labels, flags),
                "similar_differs": score(fresh_labels, [similar_differs(p) for p in fresh]),
                "values_differ": score(fresh_labels, [values_differ(p) for p in fresh]),
                "rules_missed": [
                    p.new for p, f in zip(fresh, flags, strict=True) if p.label == "conflict" and not f
                ],
                "rules_false_alarms": [
                    p.new for p, f in zip(fresh, flags, strict=True) if p.label != "conflict" and f
                ],
            }
            print(f"  {name} hand-written pairs ({len(fresh)}, {note}):")
            for det in ("rules", "similar_differs", "values_differ"):
                p = results[name][det]
                print(
                    f"    {det:<16} precision {p['precision']}  recall {p['recall']}  FP rate {p['fp_rate']}"
                    f"  (tp {p['tp']} fp {p['fp']} fn {p['fn']} of {p['n']})"
                )
            print(f"    rules missed: {results[name]['rules_missed']}")
            print(f"    rules false alarms: {results[name]['rules_false_alarms']}")
        look = [per_seed[str(s)]["rules"]["fp_rate_lookalikes"] for s in seeds]
        print(f"  rules FP rate on the compatible look-alikes alone, per seed: {look}")
        print(
            f"  rules' false alarms by kind: {sorted({k for s in seeds for k in per_seed[str(s)]['rules_false_alarms']})}"
        )
        print(
            f"  gate missed conflict kinds: {sorted({k for s in seeds for k in per_seed[str(s)]['gate_missed_kinds']})}"
        )
        print(
            f"  gate conflicts reported against distractors: {[per_seed[str(s)]['gate']['distractor_alarms'] for s in seeds]}"
        )

        if args.chunks:
            print(f"\nvalidity predicate overhead at {args.chunks} chunks (FTS-only):")
            ov = run_overhead(tmp / "overhead", args.chunks, args.queries, args.reps)
            results["overhead"] = ov
            print(f"  built in {ov['build_s']} s; {ov['queries']} queries x {ov['reps']} reps, interleaved")
            for label in ("recall", "recall+supersede"):
                r = ov[label]
                print(
                    f"  {label:<17} current p50 {r['current']['p50']} ms p95 {r['current']['p95']} ms;"
                    f" all p50 {r['all']['p50']} ms p95 {r['all']['p95']} ms; overhead p50 {r['overhead_p50']:+.1%}"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
