"""Generated persona-months for the consolidation eval: a seeded generator and a runner.

``generate_persona_month(seed)`` writes nothing; it returns a :class:`PersonaMonth`: one person's
30 daily notes (``memory/YYYY-MM-DD.md``), the searches their agent runs each day, and a label for
every line of every daily. ``run_persona_month(month, root)`` replays it through the real suite:
day by day it writes that day's note, runs that day's searches through the real ``memory_search``
tool (``source="tool"``, clock pinned to the hour of each search), and runs the real nightly job
(``lifelong dream``) at 03:00 the next night; then it scores every promotion against the labels.

What a month holds (all drawn from the seed, so one seed is one exact month):

- **Planted durable facts** (12 by default, from 15 templates: a project launch date, the GP, the
  rent, a flight, the standup time, a child's allergy, the gym schedule, ...). Each is written on
  its day (in the first two thirds of the month), sometimes written again later ("Reminder: ..."),
  and *recalled across days*: on 4 to 7 later days the agent searches one of the fact's 4
  phrasings (at least 3 different ones), as an agent does when the person keeps asking.
- **Later corrections** (3 by default): a fact whose value changes mid-month ("Correction: the
  Atlas launch moved to May 19."). The earlier statement stops being current on the correction
  day; searches after it are about the new value, but they still surface the old line too.
- **One-off chit-chat** (3 to 6 lines a day: weather, lunch, shows, errands, random thoughts), a
  few of them searched once that day.
- **Same-day bursts** (hard negatives): a one-off ("Parked on level 3 of the Alexa garage.")
  searched three times with three different phrasings on the same day — it passes the count
  gates, and must still not be promoted, because it never recurs across days.

Facts and chatter share sections, so a durable fact and a one-off often sit in the same chunk:
attribution must credit the line the query was about.

Scoring: a promotion is correct when its source line is a durable fact's statement that was still
current on the night it was promoted; everything else (chatter, bursts, a statement promoted after
its correction was written) is a false positive. Precision = correct / promoted. Recall = planted
facts whose current statement was promoted by the end of the month / planted facts.
"""

from __future__ import annotations

import datetime as dt
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PEOPLE = ["Maya", "Jonas", "Priya", "Elena", "Tom", "Lina", "Omar", "Sofia", "Ben", "Ines", "Karl", "Nora"]
KIDS = ["Mila", "Leo", "Emma", "Noah", "Ida", "Finn"]
SURNAMES = ["Brandt", "Weber", "Okafor", "Schmidt", "Novak", "Rossi", "Keller", "Lange", "Yilmaz", "Berg"]
COMPANIES = ["Tidewater Labs", "Northwind", "Bluefern", "Kestrel Systems", "Orchard AI"]
PROJECTS = ["Atlas", "Heron", "Juniper", "Lumen", "Quarry", "Tangent"]
CITIES = ["Lisbon", "Vienna", "Oslo", "Madrid", "Prague", "Dublin"]
AIRLINES = [("Lufthansa", "LH"), ("easyJet", "U2"), ("KLM", "KL"), ("TAP", "TP")]
MONTHS = ["May", "June", "July"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday"]
STREETS = ["Torstraße", "Kastanienallee", "Bergmannstraße", "Oranienstraße"]
FOODS = ["peanuts", "sesame", "shellfish", "kiwi"]
SERVICES = ["Spotify", "Dropbox", "the newspaper", "Figma"]

CHATTER = [
    "Weather was {adj_w}, stayed in most of the afternoon.",
    "Lunch at {place} was {adj_g}.",
    "Watched two episodes of {show} in the evening.",
    "Tried the new {thing}, too {adj_t}.",
    "Random thought: maybe try {hobby} this summer.",
    "Train was {n} minutes late again this morning.",
    "Bought {item} on the way home.",
    "The neighbours had a party until midnight.",
    "Coffee at {cafe}; the barista remembered my order.",
    "Finally cleaned out the {room}.",
    "Called mum, she says hi to everyone.",
    "Long walk along the canal after dinner.",
]
FILL = {
    "adj_w": ["grim", "grey", "lovely", "windy", "hot"],
    "adj_g": ["great", "forgettable", "too salty", "excellent"],
    "place": ["the Vietnamese place", "Markthalle Neun", "the ramen bar", "the canteen"],
    "show": ["Severance", "The Bear", "Slow Horses", "Dark"],
    "thing": ["espresso machine", "standing desk", "running shoes", "office chair"],
    "adj_t": ["bitter", "wobbly", "tight", "loud"],
    "hobby": ["bouldering", "pottery", "sailing", "salsa"],
    "n": ["10", "15", "20", "25"],
    "item": ["flowers", "a new kettle", "batteries", "cat food"],
    "cafe": ["Bonanza", "the corner café", "Father Carpenter"],
    "room": ["garage", "hallway closet", "attic", "balcony"],
}
BURSTS = [
    (
        "Parked the car on level {lvl} of the {mall} garage.",
        ["where did I park the car", "which level of the {mall} garage", "parking spot today"],
    ),
    (
        "Left my umbrella at {cafe}, must pick it up.",
        ["where is my umbrella", "did I leave the umbrella somewhere", "umbrella at the café"],
    ),
    (
        "The plumber {plumber} comes between 14:00 and 16:00 today.",
        ["when does the plumber come", "plumber time window", "plumber {plumber} today"],
    ),
]
ONE_OFF_QUERIES = {
    "Lunch at": "where did I have lunch",
    "Watched two": "what show did I watch",
    "Tried the new": "how was the new {thing}",
    "Bought": "what did I buy on the way home",
}


@dataclass(frozen=True)
class FactVersion:
    fact_id: str
    version: int
    text: str
    from_day: int  # index of the day it is written (and becomes current)
    until_day: int | None  # index of the day its correction is written; None = current to the end


@dataclass(frozen=True)
class Fact:
    fact_id: str
    topic: str
    versions: tuple[FactVersion, ...]
    queries: tuple[str, ...]


@dataclass(frozen=True)
class LineLabel:
    kind: str  # durable | chatter | burst | heading
    day: int
    fact_id: str | None = None
    version: int | None = None


@dataclass
class PersonaMonth:
    seed: int
    start: dt.date
    days: int
    persona: dict[str, str]
    facts: list[Fact]
    dailies: dict[int, str] = field(default_factory=dict)
    labels: dict[tuple[str, int], LineLabel] = field(default_factory=dict)
    searches: dict[int, list[tuple[int, int, str]]] = field(
        default_factory=dict
    )  # day -> (hour, minute, query)

    def path(self, day: int) -> str:
        return f"memory/{(self.start + dt.timedelta(days=day)).isoformat()}.md"

    def version_of(self, fact_id: str, version: int) -> FactVersion:
        fact = next(f for f in self.facts if f.fact_id == fact_id)
        return fact.versions[version]


def _pick(rng: random.Random, seq: list[Any]) -> Any:
    return seq[rng.randrange(len(seq))]


def _date(rng: random.Random) -> str:
    return f"{_pick(rng, MONTHS)} {rng.randint(2, 28)}"


def _fact_templates(rng: random.Random, p: dict[str, str]) -> list[tuple[str, str, str | None, list[str]]]:
    """(topic, statement, correction or None, 4 search phrasings) for every template."""
    project, city = _pick(rng, PROJECTS), _pick(rng, CITIES)
    airline, code = _pick(rng, AIRLINES)
    doc, doc2 = rng.sample(SURNAMES, 2)
    hh = rng.choice([8, 9, 10])
    coach, friend, landlord = rng.sample(PEOPLE, 3)
    d1, d2 = _date(rng), _date(rng)
    while d2 == d1:
        d2 = _date(rng)
    room = rng.randint(2, 9)
    return [
        (
            "launch",
            f"The {project} launch is set for {d1}, with the press release the day before.",
            f"Correction: the {project} launch moved to {d2}; the press release moves with it.",
            [
                f"when is the {project} launch",
                f"{project} launch date",
                f"{project} deadline press release",
                f"how long until {project} ships",
            ],
        ),
        (
            "gp",
            f"My GP (family doctor) is Dr. {doc} at the {_pick(rng, STREETS)} practice, phone 030 {rng.randint(1000000, 9999999)}.",
            f"Update: my GP is now Dr. {doc2}, same practice and phone number; Dr. {doc} retired.",
            [
                "who is my GP",
                "doctor practice phone number",
                "which doctor do I see",
                "GP appointment doctor name",
            ],
        ),
        (
            "flight",
            f"Flight to {city} on {d1} at {rng.randint(6, 20)}:{rng.choice(['05', '25', '40'])}, {airline} {code}{rng.randint(100, 999)}.",
            f"Correction: the {city} flight is rebooked to {d2}, {airline} {code}{rng.randint(100, 999)}.",
            [
                f"when is my flight to {city}",
                f"{city} flight number",
                f"flight details {airline}",
                f"what time do I fly to {city}",
            ],
        ),
        (
            "standup",
            f"Team standup is daily at {hh}:30 in room {room}.",
            f"Correction: standup is now at {hh + 1}:00, still in room {room}.",
            ["standup time", "when is the daily standup", "which room is standup", "team standup meeting"],
        ),
        (
            "allergy",
            f"{p['kid']} is allergic to {p['food']}; always check restaurant menus for it.",
            None,
            [
                f"what is {p['kid']} allergic to",
                f"{p['kid']} allergy",
                "food allergies restaurant menus",
                f"can {p['kid']} eat {p['food']}",
            ],
        ),
        (
            "manager",
            f"My manager at {p['company']} is {p['manager']}; our 1:1 is every {_pick(rng, WEEKDAYS)} at {hh + 2}:00.",
            None,
            [
                f"who is my manager at {p['company']}",
                f"1:1 with {p['manager']}",
                "when is my one-on-one",
                "who do I report to",
            ],
        ),
        (
            "gym",
            f"Gym with coach {coach} on Tuesdays and Thursdays at {hh + 9}:00.",
            None,
            [
                f"when is gym with {coach}",
                "gym schedule this week",
                "which days do I train at the gym",
                f"coach {coach} session time",
            ],
        ),
        (
            "rent",
            f"Rent is EUR {rng.choice([950, 1180, 1420])}, due on the 3rd of each month to {landlord}.",
            None,
            ["how much is the rent", "when is rent due", f"pay rent to {landlord}", "monthly rent amount"],
        ),
        (
            "bookclub",
            f"Book club meets the first {_pick(rng, WEEKDAYS)} of each month at {friend}'s place.",
            None,
            [
                "when is book club",
                "where does book club meet",
                f"book club at {friend}'s",
                "next book club meeting",
            ],
        ),
        (
            "car",
            f"The car is due for a service at {rng.choice([45, 60, 75])},000 km at {_pick(rng, SURNAMES)} Garage.",
            None,
            [
                "car service due",
                "which garage services the car",
                "when does the car need a service",
                "car service kilometres",
            ],
        ),
        (
            "pickup",
            f"{p['kid']}'s school pickup is at 15:{rng.choice(['15', '30', '45'])} on weekdays; {p['partner']} does Fridays.",
            None,
            [
                f"school pickup time for {p['kid']}",
                f"who picks up {p['kid']} on Friday",
                "school pickup schedule",
                "when does school end",
            ],
        ),
        (
            "seats",
            "I prefer aisle seats on flights and never book flights before 08:00.",
            None,
            [
                "seat preference for flights",
                "do I like early flights",
                "aisle or window seat",
                "flight booking preferences",
            ],
        ),
        (
            "wifi",
            f"Home wifi is called {p['surname'].lower()}-net; the router sits in the hallway closet.",
            None,
            ["home wifi network name", "where is the router", "wifi router closet", "name of the wifi"],
        ),
        (
            "subscription",
            f"The {_pick(rng, SERVICES)} subscription renews on {d2} for EUR {rng.choice([99, 120, 144])} a year.",
            None,
            [
                "when does the subscription renew",
                "subscription renewal price",
                "yearly subscription cost",
                "which subscription renews soon",
            ],
        ),
        (
            "anniversary",
            f"Our wedding anniversary is on {d1}; {p['partner']} likes the Italian place on {_pick(rng, STREETS)}.",
            None,
            [
                "when is our wedding anniversary",
                f"anniversary dinner with {p['partner']}",
                "which restaurant for the anniversary",
                "anniversary date",
            ],
        ),
    ]


def _fill(rng: random.Random, template: str, extra: dict[str, str] | None = None) -> str:
    values = {k: _pick(rng, v) for k, v in FILL.items()}
    values.update(extra or {})
    return template.format(**values)


def generate_persona_month(
    seed: int = 1,
    *,
    days: int = 30,
    start: dt.date = dt.date(2026, 4, 1),
    n_facts: int = 12,
    n_corrections: int = 3,
) -> PersonaMonth:
    """One month of one person's notes and searches, all drawn from ``seed`` (writes nothing)."""
    rng = random.Random(seed)
    first = _pick(rng, PEOPLE)
    persona = {
        "name": f"{first} {_pick(rng, SURNAMES)}",
        "surname": _pick(rng, SURNAMES),
        "kid": _pick(rng, KIDS),
        "partner": _pick(rng, [p for p in PEOPLE if p != first]),
        "manager": f"{_pick(rng, PEOPLE)} {_pick(rng, SURNAMES)}",
        "company": _pick(rng, COMPANIES),
        "food": _pick(rng, FOODS),
        "city": "Berlin",
    }
    templates = _fact_templates(rng, persona)
    correctable = [t for t in templates if t[2] is not None]
    plain = [t for t in templates if t[2] is None]
    chosen_corr = rng.sample(correctable, min(n_corrections, len(correctable)))
    chosen = chosen_corr + rng.sample(plain, max(0, n_facts - len(chosen_corr)))
    rng.shuffle(chosen)

    month = PersonaMonth(seed, start, days, persona, [])
    lines: dict[int, dict[str, list[tuple[str, LineLabel]]]] = {
        d: {"Work": [], "Home": []} for d in range(days)
    }
    searches: dict[int, list[str]] = {d: [] for d in range(days)}
    last_intro = max(1, days * 2 // 3 - 1)
    for n, (topic, text, correction, queries) in enumerate(chosen):
        fid = f"f{n:02d}-{topic}"
        section = "Work" if topic in ("launch", "standup", "manager", "flight", "seats") else "Home"
        intro = rng.randint(0, last_intro)
        versions = []
        if correction is not None:
            fix = rng.randint(intro + 4, min(days - 8, intro + 12)) if intro + 4 <= days - 8 else None
        else:
            fix = None
        if fix is None:
            versions.append(FactVersion(fid, 0, text, intro, None))
        else:
            versions.append(FactVersion(fid, 0, text, intro, fix))
            versions.append(FactVersion(fid, 1, correction, fix, None))
        month.facts.append(Fact(fid, topic, tuple(versions), tuple(queries)))
        for v in versions:
            end = v.until_day if v.until_day is not None else days
            lines[v.from_day][section].append((v.text, LineLabel("durable", v.from_day, fid, v.version)))
            # sometimes written down again later
            for _ in range(rng.choice([0, 0, 1, 1, 2])):
                again = rng.randint(v.from_day + 1, max(v.from_day + 1, end - 1))
                if again < min(end, days):
                    restated = rng.choice([v.text, f"Reminder: {v.text}"])
                    lines[again][section].append((restated, LineLabel("durable", again, fid, v.version)))
            # recalled across days: a current version 4-7 days, a version later corrected 1-3 days
            window = list(range(v.from_day, min(end, days)))
            k = rng.randint(4, 7) if v.until_day is None else rng.randint(1, 3)
            recall_days = sorted(rng.sample(window, min(k, len(window))))
            phrasings = list(queries)
            rng.shuffle(phrasings)
            for i, day in enumerate(recall_days):
                searches[day].append(phrasings[i % len(phrasings)])

    used_bursts: set[str] = set()
    for day in range(days):
        for _ in range(rng.randint(3, 6)):
            template = _pick(rng, CHATTER)
            extra = {"thing": _pick(rng, FILL["thing"])}
            text = _fill(rng, template, extra)
            lines[day][rng.choice(["Work", "Home"])].append((text, LineLabel("chatter", day)))
            for prefix, query in ONE_OFF_QUERIES.items():
                if text.startswith(prefix) and rng.random() < 0.35:
                    searches[day].append(query.format(**extra))
        if rng.random() < 0.25:
            for _ in range(20):  # a one-off is never written twice in the month
                template, queries = _pick(rng, BURSTS)
                extra = {
                    "lvl": str(rng.randint(1, 6)),
                    "mall": rng.choice(["Alexa", "Ostbahnhof", "Mall of Berlin"]),
                    "cafe": _pick(rng, FILL["cafe"]),
                    "plumber": _pick(rng, SURNAMES),
                }
                text = template.format(**extra)
                if text not in used_bursts:
                    used_bursts.add(text)
                    lines[day]["Home"].append((text, LineLabel("burst", day)))
                    searches[day].extend(q.format(**extra) for q in queries)
                    break

    for day in range(days):
        date = start + dt.timedelta(days=day)
        path = month.path(day)
        out = [f"# {date.isoformat()}", ""]
        month.labels[(path, 1)] = LineLabel("heading", day)
        for section in ("Work", "Home"):
            items = lines[day][section]
            if not items:
                continue
            rng.shuffle(items)
            out += [f"## {section}"]
            month.labels[(path, len(out))] = LineLabel("heading", day)
            for text, label in items:
                out.append(f"- {text}")
                month.labels[(path, len(out))] = label
            out.append("")
        month.dailies[day] = "\n".join(out).rstrip() + "\n"
        hours = sorted(rng.sample(range(8 * 60, 22 * 60), len(searches[day])))
        month.searches[day] = [(m // 60, m % 60, q) for m, q in zip(hours, searches[day], strict=True)]
    return month


# ---------------------------------------------------------------------------------------------
# running a month through the real suite


@dataclass
class Promotion:
    night: int  # index of the day whose 03:00 run promoted it (the night after day night-1)
    key: str
    text: str
    source: str
    label: LineLabel | None
    correct: bool


def judge(month: PersonaMonth, night: int, source: str) -> tuple[LineLabel | None, bool]:
    path, _, lines = source.partition("#L")
    start = int(lines.split("-")[0]) if lines else 0
    label = month.labels.get((path, start))
    if label is None or label.kind != "durable":
        return label, False
    version = month.version_of(label.fact_id or "", label.version or 0)
    current = version.until_day is None or night <= version.until_day
    return label, current


def score_month(month: PersonaMonth, promotions: list[Promotion]) -> dict[str, Any]:
    correct = sum(p.correct for p in promotions)
    final = {(f.fact_id, len(f.versions) - 1) for f in month.facts}
    found = {
        (p.label.fact_id, p.label.version)
        for p in promotions
        if p.correct and p.label is not None and (p.label.fact_id, p.label.version) in final
    }
    precision = correct / len(promotions) if promotions else 1.0
    recall = len(found) / len(final) if final else 1.0
    kinds: dict[str, int] = {}
    for p in promotions:
        if not p.correct:
            kind = p.label.kind if p.label else "unlabelled"
            if p.label and p.label.kind == "durable":
                kind = "stale (promoted after its correction)"
            kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "promoted": len(promotions),
        "correct": correct,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "facts": len(final),
        "facts_promoted": len(found),
        "missed_facts": sorted(fid for fid, _ in final - found),
        "false_positives_by_kind": kinds,
    }


def run_persona_month(
    month: PersonaMonth,
    root: Path,
    *,
    embedding: str = "local",
    plugins: tuple[str, ...] | None = ("embeddings", "recall", "dreaming"),
    echo: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Replay ``month`` in a fresh workspace at ``root`` through the real recall and nightly job."""
    from zoneinfo import ZoneInfo

    from lifelong import clock
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    tz = ZoneInfo("Europe/Berlin")
    root.mkdir(parents=True, exist_ok=False)
    (root / "memory").mkdir()
    (root / "lifelong.yaml").write_text(
        f"timezone: Europe/Berlin\nembedding: {{provider: {embedding}}}\nllm: {{model: null}}\n", "utf-8"
    )
    p = month.persona
    (root / "MEMORY.md").write_text(
        f"# MEMORY\n\n## About me\n- I'm {p['name']}, I live in {p['city']} with {p['partner']} and {p['kid']}.\n",
        "utf-8",
    )
    host = Host(Workspace(root), builtins=plugins, entry_points=plugins is None)
    from lifelong_plugins.dreaming.run import run_dream  # the plugin under test

    promotions: list[Promotion] = []
    nights: list[dict[str, Any]] = []
    started = time.monotonic()
    try:
        for day in range(month.days):
            date = month.start + dt.timedelta(days=day)
            (root / month.path(day)).write_text(month.dailies[day], "utf-8")
            for hour, minute, query in month.searches[day]:
                with clock.pinned(dt.datetime(date.year, date.month, date.day, hour, minute, tzinfo=tz)):
                    result = host.ctx.call_tool("memory_search", query=query, source="tool")
                if "error" in result:
                    raise RuntimeError(f"search {query!r} failed: {result['error']}")
            night = date + dt.timedelta(days=1)
            with clock.pinned(dt.datetime(night.year, night.month, night.day, 3, tzinfo=tz)):
                run = run_dream(host)
            for item in run.promoted:
                label, correct = judge(month, day + 1, item["source"])
                promotions.append(
                    Promotion(day + 1, item["key"], item["text"], item["source"], label, correct)
                )
            memory_bytes = (root / "MEMORY.md").stat().st_size
            nights.append(
                {
                    "night": night.isoformat(),
                    "promoted": len(run.promoted),
                    "remembered": len(promotions),
                    "memory_bytes": memory_bytes,
                    "run_ms": round(run.elapsed_ms, 1),
                }
            )
            if echo:
                for item in run.promoted:
                    ok = (
                        "ok " if promotions[-len(run.promoted) :][run.promoted.index(item)].correct else "BAD"
                    )
                    echo(f"  {night.isoformat()} {ok} {item['text']}")
    finally:
        host.close()
    result = score_month(month, promotions)
    result.update(
        seed=month.seed,
        days=month.days,
        searches=sum(len(s) for s in month.searches.values()),
        nights=nights,
        elapsed_s=round(time.monotonic() - started, 1),
        promotions=[
            {
                "night": p.night,
                "text": p.text,
                "source": p.source,
                "correct": p.correct,
                "kind": p.label.kind if p.label else None,
            }
            for p in promotions
        ],
    )
    return result
