"""Rollback never loses a human's text: random hand edits between random dreams, random rollbacks.

``python -m evals.rollback_trials [--trials 200] [--seed 1] [--nights 6] [--json FILE]``

Each trial is a fresh workspace (FTS-only index, plugins recall + dreaming) whose dailies state a
dozen facts on several days; every day each fact due that day is looked up with ``memory_search``
as an agent would, and every night the real consolidation runs. Between nights a simulated human
edits MEMORY.md and DREAMS.md at random, each edit carrying a unique marker:

- corrects the text of a promoted item (a word replaced),
- writes a note after an item's key marker,
- adds a line inside a managed section, or outside every fence,
- writes inside a dream diary entry,
- deletes an item (its markers are then no longer expected).

After some nights a random earlier run (a dream, or a forced rollback) is rolled back, with or
without ``--force`` at random; sometimes the rollback itself is rolled back. After every dream and
every rollback each marker the human still means to keep must stand in its file, and a refused
rollback must leave every file byte for byte as it was. Printed: trials, dreams, rollbacks
(applied / refused), human characters written and lost (target 0), refusals that changed a byte
(target 0), and the failures, if any, with their trial seed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lifelong import clock
from lifelong.errors import LifelongError
from lifelong.host import Host
from lifelong.workspace import Workspace, find_regions, init_workspace

TZ = "Europe/Berlin"
START = dt.date(2026, 5, 4)
FACTS = [
    (
        ["Mila's swimming class is on Tuesdays at 16:30.", "Swimming for Mila: Tuesdays, 16:30, Nordbad."],
        ["when is mila swimming", "mila swim class day", "swimming lesson time", "which day is swimming"],
    ),
    (
        ["The landlord Herr Brandt can be reached on 0171 555 0192.", "Landlord Brandt: 0171 555 0192."],
        ["landlord phone", "how to reach the landlord", "brandt number", "call the landlord"],
    ),
    (
        [
            "Our wifi is called Fuchsbau and the router sits in the hall.",
            "Wifi name: Fuchsbau (router in hall).",
        ],
        ["wifi name", "what is the wifi called", "router location", "home network name"],
    ),
    (
        ["The offsite budget is 4,000 euros.", "Offsite budget: EUR 4,000 for the team."],
        ["offsite budget", "how much for the offsite", "team offsite money", "budget offsite"],
    ),
    (
        ["Dr. Aydin is our GP at the Praxis am Markt.", "GP: Dr. Aydin, Praxis am Markt."],
        ["who is our doctor", "gp name", "which practice", "family doctor"],
    ),
    (
        ["Jonas is allergic to peanuts.", "Peanut allergy: Jonas (carry the pen)."],
        ["jonas allergy", "what is jonas allergic to", "food allergy kids", "peanuts"],
    ),
    (
        ["The car's plate is HH-MK 482.", "Plate of our car: HH-MK 482."],
        ["car plate", "licence plate", "number plate of the car", "registration"],
    ),
    (
        ["Choir rehearsal is on Thursdays at 19:00 in St. Georg.", "Choir: Thursdays 19:00, St. Georg."],
        ["choir rehearsal", "when is choir", "singing evening", "choir day"],
    ),
    (
        ["The project Nordlicht ships on June 30.", "Nordlicht ship date: June 30."],
        ["nordlicht release", "when does nordlicht ship", "ship date", "project deadline"],
    ),
    (
        ["Gym membership costs 45 euros a month.", "Gym: 45 EUR per month."],
        ["gym price", "how much is the gym", "membership cost", "monthly gym fee"],
    ),
]
KEY_RE = re.compile(r"<!--\s*key:([0-9a-f]{6,64})\b[^>]*-->")


@dataclass
class Tally:
    trials: int = 0
    dreams: int = 0
    rollbacks: int = 0
    applied: int = 0
    refused: int = 0
    undo_rollbacks: int = 0
    edits: dict[str, int] = field(default_factory=dict)
    chars_written: int = 0
    chars_lost: int = 0
    refusals_that_changed_bytes: int = 0
    refusals: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def build(root: Path, rng: random.Random, nights: int) -> Path:
    ws = root / "ws"
    init_workspace(ws, timezone=TZ)
    (ws / "lifelong.yaml").write_text(f"timezone: {TZ}\nembedding: {{provider: none}}\n", encoding="utf-8")
    for day in range(nights):
        date = START + dt.timedelta(days=day)
        lines = [f"# {date.isoformat()}", ""]
        for statements, _ in FACTS:
            if rng.random() < 0.5:
                lines.append(f"- {rng.choice(statements)}")
        lines.append(f"- Lunch on day {day} was {rng.choice(['soup', 'pasta', 'a salad', 'curry'])}.")
        (ws / "memory" / f"{date.isoformat()}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ws


class Human:
    """Edits MEMORY.md and DREAMS.md at random; remembers what it wrote and still means to keep."""

    def __init__(self, root: Path, rng: random.Random, tally: Tally):
        self.root, self.rng, self.tally = root, rng, tally
        self.kept: dict[str, str] = {}  # marker -> file it was written to
        self.n = 0

    def marker(self) -> str:
        self.n += 1
        return f"zqh{self.n}x{self.rng.randrange(10**6):06d}"

    def edit(self) -> None:
        kind = self.rng.choice(["correct", "note", "section-line", "outside", "diary", "delete"])
        name = "DREAMS.md" if kind == "diary" else "MEMORY.md"
        path = self.root / name
        if not path.exists():
            return
        text = path.read_text("utf-8")
        lines = text.split("\n")
        items = [i for i, ln in enumerate(lines) if KEY_RE.search(ln)]
        mark = self.marker()
        if kind in ("correct", "note", "delete"):
            if not items:
                return
            i = self.rng.choice(items)
            if kind == "correct":
                words = lines[i][: KEY_RE.search(lines[i]).start()].split()
                free = [k for k in range(2, len(words)) if "zqh" not in words[k]]  # not its own words
                if not free:
                    return
                words[self.rng.choice(free)] = mark
                lines[i] = " ".join(words) + " " + lines[i][KEY_RE.search(lines[i]).start() :]
            elif kind == "note":
                lines[i] = f"{lines[i]} ({mark} checked)"
            else:
                for m in [m for m in self.kept if m in lines[i]]:
                    del self.kept[m]
                del lines[i]
                path.write_text("\n".join(lines), "utf-8")
                self.tally.edits[kind] = self.tally.edits.get(kind, 0) + 1
                return
        elif kind == "section-line":
            regions = [r for r in find_regions(text) if r.name.startswith(("topic-", "promoted-"))]
            if not regions:
                return
            region = self.rng.choice(regions)
            at = text.count("\n", 0, region.end) - 1  # the end fence's line
            lines.insert(self.rng.randint(text.count("\n", 0, region.start) + 1, at), f"- {mark} my own line")
        elif kind == "outside":
            lines.insert(self.rng.choice([2, len(lines)]), f"{mark} written by hand")
        else:
            regions = [r for r in find_regions(text) if r.name.startswith("dream-")]
            if not regions:
                return
            region = self.rng.choice(regions)
            lines.insert(text.count("\n", 0, region.end) - 1, f"{mark}: what I thought of that night")
        path.write_text("\n".join(lines), "utf-8")
        self.kept[mark] = name
        self.tally.edits[kind] = self.tally.edits.get(kind, 0) + 1
        self.tally.chars_written += len(mark)

    def lost(self) -> list[str]:
        out = []
        for mark, name in self.kept.items():
            path = self.root / name
            if not path.exists() or mark not in path.read_text("utf-8"):
                out.append(mark)
        return out


def snapshot(root: Path) -> dict[str, bytes]:
    return {n: (root / n).read_bytes() for n in ("MEMORY.md", "DREAMS.md") if (root / n).exists()}


def trial(seed: int, nights: int, tally: Tally) -> None:
    from lifelong_plugins.dreaming.rollback import rollback_run
    from lifelong_plugins.dreaming.run import run_dream
    from lifelong_plugins.dreaming.state import history

    rng = random.Random(seed)
    tz = clock.zone(TZ)
    with tempfile.TemporaryDirectory(prefix="lifelong-rollback-") as tmp:
        root = build(Path(tmp), rng, nights + 1)
        host = Host(Workspace(root), builtins=("recall", "dreaming"), entry_points=False)
        human = Human(root, rng, tally)
        try:
            for day in range(nights):
                date = START + dt.timedelta(days=day + 1)
                for n, (_, queries) in enumerate(FACTS):
                    for k in rng.sample(range(len(queries)), rng.randint(0, 3)):
                        at = dt.datetime(date.year, date.month, date.day, 9 + k, n, tzinfo=tz)
                        with clock.pinned(at):
                            host.call_tool("memory_search", {"query": queries[k], "source": "tool"})
                night = date + dt.timedelta(days=1)
                with clock.pinned(dt.datetime(night.year, night.month, night.day, 3, 0, tzinfo=tz)):
                    run_dream(host)
                tally.dreams += 1
                check(human, tally, seed, "dream")
                for _ in range(rng.randint(0, 3)):
                    human.edit()
                if day >= 2 and rng.random() < 0.6:
                    rows = [r for r in history(host.store) if r["status"] in ("ok", "applied")]
                    if rows:
                        row = rng.choice(rows)
                        force = rng.random() < 0.5
                        before = snapshot(root)
                        tally.rollbacks += 1
                        tally.undo_rollbacks += row["mode"] == "rollback"
                        try:
                            with clock.pinned(
                                dt.datetime(night.year, night.month, night.day, 9, 0, tzinfo=tz)
                            ):
                                rollback_run(host, row["run_id"], force=force)
                            tally.applied += 1
                        except LifelongError as exc:
                            tally.refused += 1
                            why = re.sub(r"[0-9a-f]{12}|\d{8}-\d{6}-[0-9a-f]{4}", "…", str(exc))[:90]
                            tally.refusals[f"force={force}: {why}"] = (
                                tally.refusals.get(f"force={force}: {why}", 0) + 1
                            )
                            if snapshot(root) != before:
                                tally.refusals_that_changed_bytes += 1
                                tally.failures.append(f"seed {seed}: a refused rollback changed a file")
                        check(human, tally, seed, f"rollback of {row['run_id']} (force={force})")
                        for _ in range(rng.randint(0, 2)):
                            human.edit()
        finally:
            host.close()
    tally.trials += 1


def check(human: Human, tally: Tally, seed: int, after: str) -> None:
    lost = human.lost()
    if lost:
        tally.chars_lost += sum(len(m) for m in lost)
        tally.failures.append(f"seed {seed}: after {after}, lost {lost}")
        for m in lost:  # reported once
            del human.kept[m]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nights", type=int, default=6)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    tally = Tally()
    for t in range(args.trials):
        trial(args.seed * 100_000 + t, args.nights, tally)
    out = {k: v for k, v in tally.__dict__.items()}
    print(
        f"trials {tally.trials}, dreams {tally.dreams}, rollbacks {tally.rollbacks} "
        f"({tally.applied} applied, {tally.refused} refused; {tally.undo_rollbacks} of a rollback)"
    )
    print(f"human edits: {tally.edits}")
    for why, n in sorted(tally.refusals.items(), key=lambda x: -x[1]):
        print(f"  refused {n}x: {why}")
    print(f"human characters written {tally.chars_written}, lost {tally.chars_lost} (target 0)")
    print(f"refused rollbacks that changed a byte: {tally.refusals_that_changed_bytes} (target 0)")
    for f in tally.failures[:20]:
        print(f"  FAIL {f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), "utf-8")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
