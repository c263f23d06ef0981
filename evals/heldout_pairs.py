"""The contradiction gate on update and compatible pairs written by someone who never read it.

``python -m evals.heldout_pairs [--pairs evals/heldout/pairs.yaml] [--mode supersede] [--json FILE]
[--misses]``

Each pair (``old``, ``new``, ``label`` update | compatible, a ``query``, the ``new_value`` and
``old_value`` patterns) runs in a workspace of its own, as a user would: ``lifelong remember OLD``,
``days_between`` days later ``lifelong remember NEW`` (plugin ``supersede`` in ``--mode``; the
bundled embedder, or ``--embedding none`` for FTS-only search), and a day after that ``memory_search QUERY`` in mode ``current`` (what an agent sees) and
in mode ``all``. Scored on what the caller receives:

- update pairs **resolved**: the new value is shown and the old one is hidden, or shown marked (it
  carries ``superseded_by``, or ``extra.earlier_than``: the newer statement of the same thing);
- compatible pairs **wrongly closed**: the old fact's interval was closed (it is hidden from
  current search);
- **current values hidden**: a fact that is still true (the new one of an update, either of a
  compatible pair) missing from current search while mode ``all`` finds it;
- compatible pairs **marked earlier**: the old fact shown marked as replaced by the new one
  (``extra.earlier_than``) although both are true: a wrong "now X" in the gate's note;
- **leads with the new value**: the first result holding either value holds the new one.

Baseline in the same run, what a user would try first: no gate at all (``supersede`` disabled) and
"the newest matching line" read as the answer: it hides nothing (so it closes nothing wrongly), and
it leads with the new value whenever the newest result holding either value is the new one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml

from lifelong import clock
from lifelong.host import Host
from lifelong.workspace import Workspace, init_workspace

PAIRS = Path(__file__).resolve().parent / "heldout" / "pairs.yaml"
TZ = "Europe/Berlin"
START = dt.datetime(2026, 3, 2, 10, 0)
EMBEDDING = "local"  # what a user runs; --embedding none for FTS-only


def _host(root: Path, mode: str | None) -> Host:
    init_workspace(root, timezone=TZ)
    plugins = {"supersede": {"mode": mode}} if mode else {"supersede": {"enabled": False}}
    (root / "lifelong.yaml").write_text(
        yaml.safe_dump({"timezone": TZ, "embedding": {"provider": EMBEDDING}, "plugins": plugins}), "utf-8"
    )
    return Host(Workspace(root))


def run_pair(pair: dict[str, Any], root: Path, mode: str | None) -> dict[str, Any]:
    from lifelong_plugins.supersede.commands import remember  # the plugin under test

    host = _host(root, mode)
    tz = host.workspace.timezone
    t0 = START.replace(tzinfo=tz)
    t1 = t0 + dt.timedelta(days=int(pair.get("days_between") or 1))
    try:
        with clock.pinned(t0):
            remember(host.ctx, pair["old"])
        with clock.pinned(t1):
            decision = remember(host.ctx, pair["new"])
        with clock.pinned(t1 + dt.timedelta(days=1)):
            current = host.call_tool(
                "memory_search",
                {"query": pair["query"], "mode": "current", "min_score": 0, "max_results": 10},
            )
            everything = host.call_tool(
                "memory_search", {"query": pair["query"], "mode": "all", "min_score": 0, "max_results": 10}
            )
    finally:
        host.close()
    new_re, old_re = re.compile(pair["new_value"], re.I), re.compile(pair["old_value"], re.I)

    def holds(results: list[dict[str, Any]], pattern: re.Pattern[str]) -> list[dict[str, Any]]:
        return [r for r in results if pattern.search(r["snippet"])]

    cur, alls = current.get("results", []), everything.get("results", [])
    new_shown, old_shown = holds(cur, new_re), holds(cur, old_re)
    # an old value is "shown" only on a line that does not also state the new one
    old_only = [r for r in old_shown if not new_re.search(r["snippet"])]
    # marked where the caller sees it: superseded_by, or the newer statement named beside it
    marked = all(r.get("superseded_by") or (r.get("extra") or {}).get("earlier_than") for r in old_only)
    either = [r for r in cur if new_re.search(r["snippet"]) or old_re.search(r["snippet"])]
    newest = sorted(
        (r for r in alls if new_re.search(r["snippet"]) or old_re.search(r["snippet"])),
        key=lambda r: (r.get("source_date") or "", r["start_line"]),
        reverse=True,
    )
    return {
        "id": pair["id"],
        "label": pair["label"],
        "kind": pair.get("kind"),
        "action": decision["action"],
        "new_shown": bool(new_shown),
        "old_hidden": not old_only,
        "old_marked": bool(old_only) and marked,
        "old_marked_earlier": any((r.get("extra") or {}).get("earlier_than") for r in old_only),
        "new_in_all": bool(holds(alls, new_re)),
        "old_in_all": bool([r for r in holds(alls, old_re) if not new_re.search(r["snippet"])]),
        "leads_new": bool(either) and bool(new_re.search(either[0]["snippet"])),
        "newest_is_new": bool(newest) and bool(new_re.search(newest[0]["snippet"])),
    }


def score(rows: list[dict[str, Any]], *, baseline: bool = False) -> dict[str, Any]:
    upd = [r for r in rows if r["label"] == "update"]
    comp = [r for r in rows if r["label"] == "compatible"]
    if baseline:  # the newest matching line: hides nothing, leads with whatever is newest
        resolved = sum(r["newest_is_new"] for r in upd)
        return {
            "updates": len(upd),
            "updates_resolved": resolved / len(upd) if upd else 0.0,
            "compatible": len(comp),
            "compatible_wrongly_closed": 0.0,
            "compatible_marked_earlier": 0.0,
            "current_values_hidden": 0,
            "leads_with_new": sum(r["newest_is_new"] for r in rows) / len(rows),
        }
    resolved = [r for r in upd if r["new_shown"] and (r["old_hidden"] or r["old_marked"])]
    wrongly_closed = [r for r in comp if r["old_hidden"] and r["old_in_all"]]
    hidden = [r for r in upd if not r["new_shown"] and r["new_in_all"]]
    hidden += [
        r for r in comp if (not r["new_shown"] and r["new_in_all"]) or (r["old_hidden"] and r["old_in_all"])
    ]
    return {
        "updates": len(upd),
        "updates_resolved": len(resolved) / len(upd) if upd else 0.0,
        "compatible": len(comp),
        "compatible_wrongly_closed": len(wrongly_closed) / len(comp) if comp else 0.0,
        "compatible_marked_earlier": sum(r["old_marked_earlier"] for r in comp) / len(comp) if comp else 0.0,
        "current_values_hidden": len(hidden),
        "leads_with_new": sum(r["leads_new"] for r in rows) / len(rows),
        "unresolved": [r["id"] for r in upd if r not in resolved],
        "wrongly_closed": [r["id"] for r in wrongly_closed],
        "hidden": [r["id"] for r in hidden],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=Path, default=PAIRS)
    ap.add_argument("--mode", default="supersede", choices=["supersede", "warn"])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--embedding", default="local", choices=["local", "none"])
    args = ap.parse_args(argv)
    global EMBEDDING
    EMBEDDING = args.embedding
    pairs = yaml.safe_load(args.pairs.read_text("utf-8"))["pairs"]
    ours, base = [], []
    with tempfile.TemporaryDirectory(prefix="lifelong-pairs-") as tmp:
        for n, pair in enumerate(pairs):
            ours.append(run_pair(pair, Path(tmp) / f"g{n}", args.mode))
            base.append(run_pair(pair, Path(tmp) / f"b{n}", None))
    s_ours, s_base = score(ours), score(base, baseline=True)
    print(f"{args.pairs.name}: {s_ours['updates']} update pairs, {s_ours['compatible']} compatible pairs")
    print(
        f"{'':34} {'updates resolved':>17} {'compat. closed':>15} {'compat. marked':>15} "
        f"{'current hidden':>15} {'leads new':>10}"
    )
    for name, s in (
        (f"lifelong (supersede: {args.mode})", s_ours),
        ("newest matching line (baseline)", s_base),
    ):
        print(
            f"{name:34} {s['updates_resolved']:>17.3f} {s['compatible_wrongly_closed']:>15.3f} "
            f"{s['compatible_marked_earlier']:>15.3f} {s['current_values_hidden']:>15} {s['leads_with_new']:>10.3f}"
        )
    if args.misses:
        by_id = {p["id"]: p for p in pairs}
        for key in ("unresolved", "wrongly_closed", "hidden"):
            for pid in s_ours[key]:
                p = by_id[pid]
                row = next(r for r in ours if r["id"] == pid)
                print(f"  {key}: {pid} ({p['kind']}, {row['action']}): {p['old']!r} -> {p['new']!r}")
    if args.json:
        args.json.write_text(
            json.dumps({"lifelong": s_ours, "baseline": s_base, "rows": ours}, indent=1), "utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
