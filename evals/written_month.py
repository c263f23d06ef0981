"""Consolidation on months written by hand (``evals/months/*.yaml``), driven through the CLI as a
new user would: ``lifelong init``, each day's note written in the evening, one ``lifelong search
--now`` per query, one ``lifelong dream --now`` each night at 03:00.

    python -m evals.written_month [evals/months/written-1.yaml ...] [--json] [--verbose] [--keep DIR]
        [--dreaming KEY=VALUE ...] [--recall KEY=VALUE ...] [--why]

The persona months of ``evals/bench_dream.py`` come from one generator, whose templates the
nightly job was tuned against. A hand-written month has its own people, formats (prose, headings,
a subject in a parent list item) and wording, so it is a check the generator cannot give. Each
file lists its facts with a regular expression a promoted item must match to count as that fact,
and words that mark its chit-chat. Printed per month: facts promoted, precision (items matching
exactly one fact / items promoted), chit-chat leaked, duplicate items (two items for one fact),
items matching two facts (merged wrongly), whether the human text of MEMORY.md was kept byte
for byte, and for a fact that changes during the month (its ``stale`` pattern) the MEMORY.md items
still stating only its earlier value at the end. A month may mark a change's day (``changed_on``),
a question asked after it (``ask``) and the answer's pattern (``current``): then the changes
detected (MEMORY.md holds the new value and no item with only the old one left unmarked: struck
through or marked contested; "replaced" counts the struck ones only), the items struck or marked
contested that state a current value (a true fact marked), and whether the
pre-reply gate's note for the question leads with the current value are printed too, beside the
baseline a user would try first in the same run: the search's first result as the note. The
hand-written months written by helpers who never read the code are in ``evals/heldout/months/``:
``python -m evals.written_month evals/heldout/months/*.yaml``. The CLI runs in-process (click's test runner), so the embedding model loads once.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from click.testing import CliRunner  # noqa: E402

from lifelong.cli import cli  # noqa: E402
from lifelong.markdown import contested_mark, strip_bookkeeping  # noqa: E402
from lifelong.text import clip  # noqa: E402

from .bench_search import percentiles  # noqa: E402

MONTHS = Path(__file__).resolve().parent / "months"
TIMEZONE = "Europe/Berlin"


def _lifelong(runner: CliRunner, root: Path, *args: str) -> str:
    result = runner.invoke(cli, ["--workspace", str(root), *args], catch_exceptions=False)
    if result.exit_code != 0:
        raise RuntimeError(f"lifelong {' '.join(args)} exited {result.exit_code}: {result.output.strip()}")
    return result.output


def _patterns(month: dict[str, Any], field: str) -> dict[str, re.Pattern[str]]:
    """Each fact's ``field`` pattern (``match``, or ``stale`` for a fact that changes)."""
    return {fid: re.compile(f[field], re.IGNORECASE) for fid, f in month["facts"].items() if f.get(field)}


def judge(month: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """Which fact each promoted item states (by its text), and the month's figures. An item
    stating a fact's earlier value (its ``stale`` pattern, not its ``match``) was right when it
    was promoted: it counts for precision, not for recall."""
    facts, stale = _patterns(month, "match"), _patterns(month, "stale")
    chit = [w.lower() for w in month.get("chitchat", [])]
    per_fact: dict[str, list[str]] = {fid: [] for fid in facts}
    earlier: list[str] = []
    wrong: list[dict[str, Any]] = []
    merged = leaked = 0
    for item in items:
        text = item["text"]
        hits = [fid for fid, rx in facts.items() if rx.search(text)]
        if len(hits) == 1:
            per_fact[hits[0]].append(text)
            continue
        if not hits and any(rx.search(text) for rx in stale.values()):
            earlier.append(text)
            continue
        if len(hits) > 1:
            merged += 1
        elif any(w in text.lower() for w in chit):
            leaked += 1
        wrong.append({"text": text, "facts": hits})
    promoted = len(items)
    right = sum(len(v) for v in per_fact.values()) + len(earlier)
    return {
        "facts": len(facts),
        "facts_promoted": sum(1 for v in per_fact.values() if v),
        "recall": sum(1 for v in per_fact.values() if v) / len(facts),
        "precision": right / promoted if promoted else None,
        "promoted": promoted,
        "duplicates": sum(len(v) - 1 for v in per_fact.values() if len(v) > 1),
        "merged": merged,
        "leaked": leaked,
        "wrong": wrong,
        "missed": [fid for fid, v in per_fact.items() if not v],
        "earlier_values": len(earlier),
    }


def managed_items(memory: str) -> list[tuple[str, str, str]]:
    """MEMORY.md's promoted items (a ``key:`` marker) as (mark, line, text): mark ``struck``
    (``~~…~~ (superseded by …)``), ``contested`` (``… (contested by …)``) or ``live``; the line
    without its comment; the text without the marks and the pointer (which quotes the later
    line)."""
    out = []
    for line in memory.splitlines():
        if "<!-- key:" not in line:
            continue  # the human's own lines are theirs to keep
        text = re.sub(r"<!--.*?-->", "", line).strip()
        if not text.startswith(("- ", "* ")):
            continue
        body = text[2:].strip()
        mark = "struck" if body.startswith("~~") else "contested" if contested_mark(body) else "live"
        out.append((mark, text, strip_bookkeeping(body).replace("~~", "").strip()))
    return out


def stale_kept(month: dict[str, Any], memory: str, *, marked: bool = True) -> list[str]:
    """MEMORY.md's promoted items that state only a fact's earlier value and are not struck
    through (nor, with ``marked``, marked contested): what a reader of the file would take as
    true, unwarned, and no longer is."""
    facts, stale = _patterns(month, "match"), _patterns(month, "stale")
    out = []
    for mark, line, text in managed_items(memory):
        if mark == "struck" or (marked and mark == "contested"):
            continue
        for fid, rx in stale.items():
            if rx.search(text) and not facts[fid].search(text):
                out.append(line)
    return out


def true_items_marked(month: dict[str, Any], memory: str) -> dict[str, int]:
    """Items struck through or marked contested, and of them those stating a fact's current value
    (its ``match``): a true fact struck is hidden from a reader who trusts the strike."""
    facts = _patterns(month, "match")
    out = {"struck": 0, "struck_true": 0, "contested": 0, "contested_true": 0}
    for mark, _, text in managed_items(memory):
        if mark == "live":
            continue
        out[mark] += 1
        out[f"{mark}_true"] += any(rx.search(text) for rx in facts.values())
    return out


def changes_detected(
    month: dict[str, Any], memory: str, items: list[dict[str, Any]], *, marked: bool = True
) -> dict[str, bool]:
    """For each fact that changes during the month (``changed_on``): whether MEMORY.md at the end
    holds its new value and no item stating only the old one that is neither struck nor (with
    ``marked``) marked contested. ``marked=False``: the old item replaced (struck)."""
    facts, stale = _patterns(month, "match"), _patterns(month, "stale")
    out = {}
    kept = stale_kept(month, memory, marked=marked)
    for fid, fact in month["facts"].items():
        if fact.get("changed_on") is None:
            continue
        live_old = [t for t in kept if stale[fid].search(t) and not facts[fid].search(t)]
        new = any(facts[fid].search(i["text"]) for i in items) and facts[fid].search(memory)
        out[fid] = bool(new) and not live_old
    return out


def why_missed(
    month: dict[str, Any], root: Path, missed: list[str], dreaming: dict[str, Any] | None = None
) -> dict[str, Any]:
    """For each fact not promoted, what the dreaming tables hold about it: the candidates (note
    lines) whose text states it (its ``match``: a changed fact's new value), with their status
    and the searches credited to each; and whether those searches, pooled over all its wordings,
    pass the deep phase's count gates (recalls, distinct queries, days after it was first written:
    the dreaming plugin's, with ``dreaming``'s overrides). ``joined``: a line stating it is
    promoted, but only inside an item that states more than this fact (promoted as part of it, or
    joined to it as "the same fact" by the grouping), so no item states this fact alone;
    ``pooled`` facts would pass the count gates if their wordings were read as one fact;
    ``too_few`` are not looked up often enough (or not credited) even pooled. Read the output of
    held-out months and they are tuned on."""
    from lifelong_plugins.dreaming.scoring import ScoreConfig  # the plugin's gates, not a copy

    gates = ScoreConfig.from_config(dreaming or {})
    db = sqlite3.connect(root / ".lifelong" / "index.sqlite")
    try:
        cands = db.execute("SELECT key, text, status, status_reason FROM dream_candidates").fetchall()
        signals = db.execute("SELECT key, event_id, query_hash, day FROM dream_signals").fetchall()
        written = db.execute("SELECT key, day FROM dream_occurrences").fetchall()
    finally:
        db.close()
    by_key: dict[str, list[tuple[int, str, str]]] = {}
    for key, event, qhash, day in signals:
        by_key.setdefault(key, []).append((event, qhash, day))
    days: dict[str, set[str]] = {}
    for key, day in written:
        days.setdefault(key, set()).add(day)
    facts = month["facts"]
    out: dict[str, Any] = {"facts": {}, "no_candidate": 0, "joined": 0, "pooled": 0, "too_few": 0}
    for fid in missed:
        rx = re.compile(facts[fid]["match"], re.IGNORECASE)
        hits = [c for c in cands if rx.search(c[1])]
        recalls = [r for c in hits for r in by_key.get(c[0], [])]
        first = min((d for c in hits for d in days.get(c[0], ())), default=None)
        later = {d for _, _, d in recalls if first is None or d > first}
        events, queries = {e for e, _, _ in recalls}, {q for _, q, _ in recalls}
        if not hits:
            verdict = "no candidate"
        elif any(status == "promoted" for _, _, status, _ in hits):
            verdict = "joined"  # its line is in MEMORY.md only inside an item stating more
        elif (
            len(events) >= gates.min_recalls
            and len(queries) >= gates.min_unique_queries
            and len(later) >= gates.min_recall_days
        ):
            verdict = "pooled"
        else:
            verdict = "too few"
        out[verdict.replace(" ", "_")] += 1
        out["facts"][fid] = {
            "verdict": verdict,
            "pooled": {"recalls": len(events), "queries": len(queries), "later_days": len(later)},
            "candidates": [
                {
                    "status": status,
                    "reason": reason,
                    "recalls": len(by_key.get(key, [])),
                    "queries": len({q for _, q, _ in by_key.get(key, [])}),
                    "text": clip(text, 120),
                }
                for key, text, status, reason in hits
            ],
        }
    return out


NOTE_CHARS = 220  # the gate's note cap (gate.max_summary_chars)


def _leads(note: str, current: re.Pattern[str], old: re.Pattern[str] | None) -> bool:
    """Whether the first value ``note`` states is the current one, not the earlier one."""
    first_new = current.search(note)
    first_old = old.search(note) if old else None
    return bool(first_new) and (first_old is None or first_new.start() <= first_old.start())


def gate_leads(runner: CliRunner, root: Path, month: dict[str, Any], when: str) -> dict[str, dict[str, Any]]:
    """For each changing fact with an ``ask``: the pre-reply gate's note for that question at
    ``when``, and whether the first value it states is the current one (``current`` or ``match``)
    rather than the earlier one (``stale``); and the same for the baseline a user would try first,
    the search's first result as the note (``lifelong search``, its snippet clipped to the note's
    220 characters)."""
    out = {}
    for fid, fact in month["facts"].items():
        if not fact.get("ask"):
            continue
        current = re.compile(fact.get("current") or fact["match"], re.IGNORECASE)
        old = re.compile(fact["stale"], re.IGNORECASE) if fact.get("stale") else None
        note = (
            json.loads(_lifelong(runner, root, "gate", fact["ask"], "--json", "--now", when)).get("note")
            or ""
        )
        found = json.loads(_lifelong(runner, root, "search", fact["ask"], "--json", "--now", when))
        hits = found["results"] if isinstance(found, dict) else found
        first = clip(str(hits[0].get("snippet") or ""), NOTE_CHARS) if hits else ""
        out[fid] = {
            "leads": _leads(note, current, old),
            "note": note,
            "first_result_leads": _leads(first, current, old),
        }
    return out


def run_month(
    path: Path,
    root: Path,
    echo: Any = None,
    dreaming: dict[str, Any] | None = None,
    why: bool = False,
    recall: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One month through the CLI in a fresh workspace at ``root``; ``dreaming`` overrides settings
    of the dreaming plugin (``plugins.dreaming`` in lifelong.yaml); ``why`` adds
    :func:`why_missed` for the facts not promoted."""
    month = yaml.safe_load(path.read_text("utf-8"))
    runner = CliRunner()
    _lifelong(runner, root, "init", str(root))
    config = root / "lifelong.yaml"
    text = config.read_text("utf-8").replace("Etc/UTC", TIMEZONE)
    plugins = {name: given for name, given in (("dreaming", dreaming), ("recall", recall)) if given}
    if plugins:
        text += yaml.safe_dump({"plugins": plugins}, sort_keys=True)
    config.write_text(text, "utf-8")
    human = month["memory"]
    (root / "MEMORY.md").write_text(human, "utf-8")
    start: dt.date = month["start"]
    items: list[dict[str, Any]] = []
    searches = 0
    search_ms: list[float] = []  # each search's wall time through the CLI, in this one process
    started = time.monotonic()
    for day in sorted(month["days"]):
        spec = month["days"][day]
        date = start + dt.timedelta(days=int(day))
        (root / "memory" / f"{date.isoformat()}.md").write_text(spec["text"], "utf-8")
        for hhmm, query in sorted(spec.get("searches") or []):
            began = time.perf_counter()
            _lifelong(runner, root, "search", query, "--now", f"{date.isoformat()}T{hhmm}")
            search_ms.append((time.perf_counter() - began) * 1000)
            searches += 1
        night = date + dt.timedelta(days=1)
        out = json.loads(_lifelong(runner, root, "dream", "--json", "--now", f"{night.isoformat()}T03:00"))
        for item in out.get("promoted") or []:
            items.append({"night": night.isoformat(), "text": item["text"], "key": item.get("key")})
            if echo:
                echo(f"    {night} promoted: {item['text']}")
    figures = judge(month, items)
    memory = (root / "MEMORY.md").read_text("utf-8")
    last = start + dt.timedelta(days=max(int(d) for d in month["days"]) + 1)
    figures.update(
        month=path.name,
        searches=searches,
        search_ms=[round(ms, 1) for ms in search_ms],
        human_text_kept=human.rstrip("\n") in memory,
        stale_kept=stale_kept(month, memory),
        changes=changes_detected(month, memory, items),
        replaced=changes_detected(month, memory, items, marked=False),
        marks=true_items_marked(month, memory),
        gate=gate_leads(runner, root, month, f"{last.isoformat()}T12:00"),
        seconds=round(time.monotonic() - started, 1),
    )
    if why:
        figures["why_missed"] = why_missed(month, root, figures["missed"], dreaming)
    return figures


def _percentiles(ms: list[float]) -> str:
    """p50 and p95 of ``ms`` as printed ("p50 412 ms, p95 690 ms"; "no timings" when empty)."""
    if not ms:
        return "no timings"
    found = percentiles(ms)
    return f"p50 {found['p50']:.0f} ms, p95 {found['p95']:.0f} ms"


def report(f: dict[str, Any]) -> str:
    precision = "—" if f["precision"] is None else f"{f['precision']:.3f}"
    lines = [
        f"{f['month']}: {f['facts_promoted']}/{f['facts']} facts promoted (recall {f['recall']:.3f}), "
        f"precision {precision} ({f['promoted']} items), chit-chat leaked {f['leaked']}, "
        f"duplicates {f['duplicates']}, merged {f['merged']}, human text kept: "
        f"{'yes' if f['human_text_kept'] else 'NO'}; {f['searches']} searches"
        f" ({_percentiles(f['search_ms'])}), {f['seconds']} s"
    ]
    if f["stale_kept"]:
        lines.append(f"  earlier value still stated in MEMORY.md: {f['stale_kept']}")
    if f["changes"]:
        done = [k for k, v in f["changes"].items() if v]
        lines.append(
            f"  changes detected: {len(done)} of {len(f['changes'])}"
            + (
                f" (missed: {', '.join(k for k, v in f['changes'].items() if not v)})"
                if len(done) < len(f["changes"])
                else ""
            )
        )
        lines.append(f"  of them replaced (the old item struck): {sum(f['replaced'].values())}")
    m = f["marks"]
    if m["struck"] or m["contested"]:
        lines.append(
            f"  items struck {m['struck']} ({m['struck_true']} stating a current value), "
            f"marked contested {m['contested']} ({m['contested_true']} stating a current value)"
        )
    if f["gate"]:
        led = [k for k, v in f["gate"].items() if v["leads"]]
        first = sum(v.get("first_result_leads", False) for v in f["gate"].values())
        lines.append(
            f"  gate leads with the current value: {len(led)} of {len(f['gate'])}"
            f" (the search's first result as the note: {first})"
        )
        for k, v in f["gate"].items():
            if not v["leads"]:
                lines.append(f"    {k}: {v['note'][:160]!r}")
    if f["missed"]:
        lines.append(f"  missed: {', '.join(f['missed'])}")
    for w in f["wrong"]:
        lines.append(f"  not one fact: {w['text']!r} (matches {w['facts'] or 'none'})")
    for fid, why in (f.get("why_missed") or {}).get("facts", {}).items():
        p = why["pooled"]
        lines.append(
            f"  why not {fid}: {why['verdict']} (pooled: {p['recalls']} recalls, {p['queries']} queries,"
            f" {p['later_days']} later days)"
        )
        for c in why["candidates"]:
            lines.append(f"    [{c['status']}] {c['recalls']} recalls, {c['queries']} queries: {c['text']!r}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("months", nargs="*", type=Path, help="Month files (default: every evals/months/*.yaml).")
    ap.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    ap.add_argument("--verbose", action="store_true", help="Print each promotion as it happens.")
    ap.add_argument(
        "--keep", type=Path, default=None, help="Leave each month's workspace under this directory."
    )
    ap.add_argument(
        "--dreaming",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Set a dreaming setting for every month (VALUE read as YAML), e.g. --dreaming min_score=0.75.",
    )
    ap.add_argument(
        "--recall",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Set a recall setting for every month, e.g. --recall auto_sync_embed_budget_s=3600: a"
        " search then embeds every new line before it ranks, so figures no longer depend on the"
        " machine's load (with the default 3 s, a slower run leaves more lines to BM25 alone).",
    )
    ap.add_argument(
        "--why",
        action="store_true",
        help="For each fact not promoted: its candidates, the searches credited to each, and whether"
        " they pass the count gates pooled over its wordings (reading this for held-out months tunes on them).",
    )
    args = ap.parse_args(argv)
    overrides: dict[str, Any] = {}
    recall: dict[str, Any] = {}
    for flag, items, into in (("--dreaming", args.dreaming, overrides), ("--recall", args.recall, recall)):
        for item in items:
            key, sep, value = item.partition("=")
            if not sep:
                ap.error(f"{flag} {item!r}: expected KEY=VALUE")
            into[key.strip()] = yaml.safe_load(value)
    paths = args.months or sorted(MONTHS.glob("*.yaml"))
    results = []
    for path in paths:
        echo = print if args.verbose else None
        if args.keep:
            f = run_month(
                path, args.keep / path.stem, echo=echo, dreaming=overrides, why=args.why, recall=recall
            )
        else:
            with tempfile.TemporaryDirectory(prefix="written-month-") as tmp:
                f = run_month(
                    path, Path(tmp) / "ws", echo=echo, dreaming=overrides, why=args.why, recall=recall
                )
        results.append(f)
        if not args.json:
            print(report(f), flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
    elif len(results) > 1:
        facts = sum(f["facts"] for f in results)
        changes = [v for f in results for v in f["changes"].values()]
        replaced = sum(v for f in results for v in f["replaced"].values())
        marks = {k: sum(f["marks"][k] for f in results) for k in results[0]["marks"]}
        gate = [v["leads"] for f in results for v in f["gate"].values()]
        first = sum(v.get("first_result_leads", False) for f in results for v in f["gate"].values())
        print(
            f"all: {sum(f['facts_promoted'] for f in results)} of {facts} facts promoted"
            + (
                f"; changes detected {sum(changes)} of {len(changes)} ({replaced} replaced)"
                if changes
                else ""
            )
            + f"; items struck {marks['struck']} ({marks['struck_true']} true), contested"
            f" {marks['contested']} ({marks['contested_true']} true)"
            + (
                f"; gate leads with the current value {sum(gate)} of {len(gate)}"
                f" (the search's first result as the note: {first})"
                if gate
                else ""
            )
            + f"; searches {_percentiles([ms for f in results for ms in f['search_ms']])}"
        )
        if args.why:
            why = [f["why_missed"] for f in results]
            print(
                f"facts not promoted: {sum(w['joined'] for w in why)} in MEMORY.md only inside an item"
                f" stating more, {sum(w['pooled'] for w in why)} pass the count gates pooled over their wordings,"
                f" {sum(w['too_few'] for w in why)} too few recalls even pooled,"
                f" {sum(w['no_candidate'] for w in why)} no line states them"
            )


if __name__ == "__main__":
    main()
