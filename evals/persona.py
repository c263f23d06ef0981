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
# what an agent also searches all day (a pre-reply gate searches before every reply): questions
# that no note answers, so whatever they return is no recall of it
OFF_TOPIC_QUERIES = [
    "how does compound interest work",
    "recipe for banana bread",
    "best way to learn Spanish",
    "what is the capital of Australia",
    "python list comprehension syntax",
    "how long to boil an egg",
    "good podcasts about history",
    "convert miles to kilometres",
    "how to fix a squeaky door hinge",
    "ideas for a rainy weekend",
    "what does a VPN do",
    "tips for sleeping better",
    "how many cups in a litre",
    "explain the offside rule",
    "summarise this article for me",
    "write a polite reply to a complaint",
    "which houseplants need little light",
    "how to remove a wine stain",
    "draft a birthday message",
    "what time zone is Tokyo in",
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
    fact_texts: dict[str, tuple[str, ...]] = field(default_factory=dict)  # paraphrase months: every wording

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
# paraphrased months: each fact said three ways, asked about in other words


@dataclass(frozen=True)
class FactKind:
    """One durable fact about a subject: three statements in different words (``{S}|`` marks a
    statement whose subject may move to a parent list item or a heading), and queries that share
    few words with any of them."""

    topic: str
    subject: str  # which subject slot: person | company | kid | project | landlord | doctor | coach
    statements: tuple[str, str, str]
    queries: tuple[str, ...]


PARAPHRASE_KINDS: tuple[FactKind, ...] = (
    FactKind(
        "comm-style",
        "person",
        (
            "{S}|prefers short messages after work, no long emails in the evening.",
            "Keep it brief with {F} once the workday is over: a quick text, never a wall of email.",
            "Evenings: {F} only wants a two-line note if anything, she reads nothing long after six.",
        ),
        (
            "how should I reach {F} at night",
            "does {L} like lengthy mails",
            "best way to contact {F} off hours",
            "{F} communication habits",
        ),
    ),
    FactKind(
        "birthday",
        "person",
        (
            "{S}|has her birthday on {date}.",
            "{F} turns {age} on {date} — get a card in time.",
            "Don't forget {F}'s big day, {date}; she likes dark chocolate.",
        ),
        (
            "when was {F} born",
            "card for {L} which date",
            "{F} celebration day",
            "gift for {F} when",
        ),
    ),
    FactKind(
        "funding",
        "company",
        (
            "{S}|raised a {money} seed round led by {investor}.",
            "{C}'s seed closed at {money}; {investor} led it.",
            "{investor} put up the lead cheque in {C}'s {money} round.",
        ),
        (
            "who invested in {C}",
            "how much money did {C} get",
            "{C} financing size",
            "lead investor of the round",
        ),
    ),
    FactKind(
        "office",
        "company",
        (
            "{S}|moved its office to {town}, near the main station.",
            "{C} now works out of {town}; the old Berlin desk is gone.",
            "New address for {C}: a floor in {town}, five minutes from the station.",
        ),
        (
            "where is {C} based",
            "{C} headquarters city",
            "which town do I visit for {C}",
            "{C} location",
        ),
    ),
    FactKind(
        "allergy",
        "kid",
        (
            "{S}|is allergic to {food}.",
            "No {food} for {K}, she reacts badly; check every menu.",
            "The allergist confirmed it again: {K} must avoid {food}.",
        ),
        (
            "what can't {K} eat",
            "{K} food reaction",
            "restaurant menu check for my daughter",
            "is {K} ok with {food}",
        ),
    ),
    FactKind(
        "pickup",
        "kid",
        (
            "{S}|gets out of school at {pickup} on weekdays.",
            "Collect {K} at {pickup} sharp, Monday to Friday.",
            "School day for {K} ends at {pickup}; {partner} covers Fridays.",
        ),
        (
            "what time does class finish for {K}",
            "when do I fetch {K}",
            "{K} collection schedule",
            "who gets {K} on Friday",
        ),
    ),
    FactKind(
        "launch",
        "project",
        (
            "{S}|launch is set for {date2}.",
            "{P} goes live on {date2}; press release the day before.",
            "We ship {P} to customers on {date2}.",
        ),
        (
            "release date of {P}",
            "when does {P} go out",
            "{P} deadline",
            "how long until {P} is public",
        ),
    ),
    FactKind(
        "release-owner",
        "project",
        (
            "{S}|release notes are written by {owner}.",
            "{owner} owns the {P} changelog this cycle.",
            "Ask {owner} for anything about the {P} notes; that's her job.",
        ),
        (
            "who writes the {P} changelog",
            "{P} notes responsible person",
            "who to ask about {P} release text",
            "changelog owner",
        ),
    ),
    FactKind(
        "rent",
        "landlord",
        (
            "{S}|gets the rent, EUR {rent}, by the 3rd of every month.",
            "Monthly rent is {rent} euros, transferred to {N} before the third.",
            "Pay {N} {rent} € each month, due on the 3rd.",
        ),
        (
            "how much do I pay for the flat",
            "flat payment deadline",
            "housing cost per month",
            "when is the apartment money due",
        ),
    ),
    FactKind(
        "landlord-visits",
        "landlord",
        (
            "{S}|wants a week's notice before any repair visit.",
            "Tell {N} seven days ahead if a handyman needs to come in.",
            "Our landlord {N} insists on one week of warning for repairs.",
        ),
        (
            "advance warning for repairs",
            "can a repair person just show up",
            "{N} repair rules",
            "how early to announce a handyman",
        ),
    ),
    FactKind(
        "gp",
        "doctor",
        (
            "{S}|is my family doctor, at the {street} practice.",
            "My GP: {D}, practice on {street}.",
            "For check-ups I see {D} on {street}.",
        ),
        (
            "who is my physician",
            "where do I go for a check-up",
            "medical practice address",
            "name of my general practitioner",
        ),
    ),
    FactKind(
        "gp-hours",
        "doctor",
        (
            "{S}|has the practice closed on Wednesday afternoons.",
            "{D} doesn't see patients Wednesday after lunch.",
            "No appointments with {D} midweek afternoons; Wednesdays they shut at 12.",
        ),
        (
            "when is the surgery shut",
            "can I book {D} on Wednesday",
            "practice opening times",
            "midweek appointment possible",
        ),
    ),
    FactKind(
        "training",
        "coach",
        (
            "{S}|trains me on Tuesdays and Thursdays at 18:00.",
            "Sessions with {T}: Tue and Thu, six in the evening.",
            "Gym slots are twice a week with {T}, Tuesday/Thursday at 6 pm.",
        ),
        (
            "when do I work out",
            "weekly exercise plan",
            "which evenings are fitness",
            "{T} session days",
        ),
    ),
    FactKind(
        "training-price",
        "coach",
        (
            "{S}|charges EUR {fee} per session.",
            "Each hour with {T} costs {fee} euros.",
            "{T}'s rate is {fee} € a session, paid monthly.",
        ),
        (
            "how much does personal training cost",
            "{T} price",
            "fee for the coach",
            "what do I pay per workout",
        ),
    ),
    # facts with no name to hang them on ("Standup moved to 9:15"): two per slot, sharing a value
    # or a word with each other, which must not merge
    FactKind(
        "standup",
        "routine",
        (
            "Daily standup is now at {hhmm}, not 9:30 any more.",
            "Reminder: the morning team sync starts at {hhmm} from now on.",
            "Standup moved to {hhmm}, every weekday.",
        ),
        (
            "when is the daily meeting",
            "what time do we sync in the morning",
            "team call start time",
            "is the morning meeting still at half past",
        ),
    ),
    FactKind(
        "dentist",
        "routine",
        (
            "Dentist appointment on {date2} at {hhmm}.",
            "Teeth cleaning is booked for {date2}, {hhmm}; bring the insurance card.",
            "Check-up at the dental practice: {date2} at {hhmm}.",
        ),
        (
            "when do I see the dentist",
            "teeth cleaning date",
            "dental check-up time",
            "what's booked for my teeth",
        ),
    ),
    FactKind(
        "flat-rent",
        "flat",
        (
            "Rent is EUR {rent} a month, due on the 1st.",
            "Paid this month's rent today, {rent} euros; it goes out on the first.",
            "Monthly rent for the flat: EUR {rent}, transferred on the 1st.",
        ),
        (
            "how much do I pay for the apartment",
            "housing cost per month",
            "when does the apartment payment go out",
            "monthly payment for where I live",
        ),
    ),
    FactKind(
        "wifi",
        "flat",
        (
            "The home wifi password is now {wifi}.",
            "New router at the flat, password {wifi}.",
            "Wifi at home changed: {wifi}.",
        ),
        (
            "what's the internet password",
            "router login",
            "network key for guests",
            "how do visitors get online",
        ),
    ),
)
SUBJECT_SLOTS = ("person", "company", "kid", "project", "landlord", "doctor", "coach")
UNNAMED_SLOTS = ("routine", "flat")  # one of them joins every month's named subjects
STARTUPS = ["Fernwood", "Quillmark", "Brightloom", "Cobaltine", "Haversack"]
INVESTORS = ["Acme Capital", "Point Nine", "Cherry Ventures", "Earlybird", "Speedinvest"]
TOWNS = ["Leipzig", "Potsdam", "Hamburg", "Dresden", "Rostock"]


def _subject_values(rng: random.Random, persona: dict[str, str]) -> dict[str, str]:
    first, last = rng.choice(["Emma", "Clara", "Hanna", "Julia", "Mara"]), rng.choice(SURNAMES)
    project = _pick(rng, PROJECTS)
    landlord = f"{rng.choice(['Karl', 'Otto', 'Rolf', 'Uwe'])} {rng.choice(SURNAMES)}"
    doctor = f"Dr. {rng.choice(SURNAMES)}"
    coach = rng.choice(["Nora", "Ines", "Lina", "Sofia"])
    return {
        "person": f"{first} {last}",
        "F": first,
        "L": last,
        "company": (c := _pick(rng, STARTUPS)),
        "C": c,
        "kid": persona["kid"],
        "K": persona["kid"],
        "project": f"The {project}",
        "P": project,
        "landlord": landlord,
        "N": landlord.split()[0],
        "doctor": doctor,
        "D": doctor,
        "coach": f"Coach {coach}",
        "T": coach,
        "partner": persona["partner"],
        "date": _date(rng),
        "date2": _date(rng),
        "age": str(rng.randint(30, 60)),
        "money": f"${rng.choice([1.5, 2, 3, 4])}M".replace(".0M", "M"),
        "investor": _pick(rng, INVESTORS),
        "town": _pick(rng, TOWNS),
        "food": persona["food"],
        "pickup": f"15:{rng.choice(['15', '30', '45'])}",
        "owner": _pick(rng, PEOPLE),
        "rent": str(rng.choice([950, 1180, 1420])),
        "street": _pick(rng, STREETS),
        "fee": str(rng.choice([40, 55, 70])),
        "routine": "",
        "flat": "",
        "hhmm": rng.choice(["8:45", "9:15", "10:00"]),
        "wifi": f"{rng.choice(['kiwi', 'maple', 'cobalt'])}-{rng.choice(['otter', 'fox', 'heron'])}-{rng.randint(10, 99)}",
    }


def _statement(template: str, values: dict[str, str], subject: str) -> tuple[str, str | None, str]:
    """(full sentence, subject or None, predicate) of one statement template."""
    if template.startswith("{S}|"):
        predicate = template[4:].format(**values)
        return f"{subject} {predicate}", subject, predicate
    text = template.format(**values)
    return text, None, text


def generate_paraphrase_month(
    seed: int = 1,
    *,
    days: int = 30,
    start: dt.date = dt.date(2026, 4, 1),
    n_subjects: int = 4,
    unnamed: int = 1,
    used: set[str] | None = None,
    off_topic: int = 2,
) -> PersonaMonth:
    """A month in which every durable fact is stated on 3 different days in 3 different wordings
    (sometimes with its subject only in a parent list item or a heading), searched on 4-6 later
    days with queries that share few words with any statement. Facts come in pairs about one
    subject (a person's birthday and her messaging habits, a startup's round and its office), so
    the two must not merge; ``unnamed`` more pairs have no name at all (the standup time and a
    dentist appointment at that same time, the rent and the wifi password of the flat). Chit-chat
    is written once; a few one-offs are searched once, and some
    same-day bursts three times; up to ``off_topic`` searches a day ask what no note answers (what
    a pre-reply gate sends), drawn from their own random stream so the rest of the month is the
    same with or without them (writes nothing)."""
    rng = random.Random(10_000 + seed)
    first = _pick(rng, PEOPLE)
    persona = {
        "name": f"{first} {_pick(rng, SURNAMES)}",
        "surname": _pick(rng, SURNAMES),
        "kid": _pick(rng, ["Mila", "Emma", "Ida", "Lotta", "Greta"]),
        "partner": _pick(rng, [p for p in PEOPLE if p != first]),
        "food": _pick(rng, FOODS),
        "city": "Berlin",
    }
    values = _subject_values(rng, persona)
    subjects = rng.sample(SUBJECT_SLOTS, n_subjects)
    # a month has one rent: with a landlord's, the flat's would be the same fact twice
    subjects += rng.sample(
        [u for u in UNNAMED_SLOTS if not (u == "flat" and "landlord" in subjects)], unnamed
    )
    month = PersonaMonth(seed, start, days, persona, [])
    # day -> list of (section, rendered lines (text, label) with indentation kept)
    blocks: dict[int, list[tuple[str, list[tuple[str, LineLabel]]]]] = {d: [] for d in range(days)}
    searches: dict[int, list[str]] = {d: [] for d in range(days)}
    last_intro = max(1, days * 2 // 3 - 6)
    n = 0
    for slot in subjects:
        subject = values[slot]
        for kind in (k for k in PARAPHRASE_KINDS if k.subject == slot):
            fid = f"f{n:02d}-{kind.topic}"
            n += 1
            first_day = rng.randint(0, last_intro)
            said = sorted(rng.sample(range(first_day + 1, min(days - 3, first_day + 14)), 2))
            statement_days = [first_day, *said]
            wordings = list(kind.statements)
            rng.shuffle(wordings)
            texts = []
            for day, template in zip(statement_days, wordings, strict=True):
                full, subj, predicate = _statement(template, values, subject)
                texts.append(full)
                label = LineLabel("durable", day, fid, 0)
                style = rng.random() if subj else 1.0
                if style < 0.3:  # subject in a parent item
                    block = [(f"- {subj}", LineLabel("heading", day)), (f"  - {predicate}", label)]
                    blocks[day].append(("Notes", block))
                elif style < 0.5:  # subject as a heading
                    blocks[day].append((f"### {subj}", [(f"- {predicate}", label)]))
                else:
                    blocks[day].append((rng.choice(["Work", "Home"]), [(f"- {full}", label)]))
            queries = [q.format(**values) for q in kind.queries]
            rng.shuffle(queries)
            window = list(range(first_day, days))
            recall_days = sorted(rng.sample(window, min(rng.randint(4, 6), len(window))))
            for i, day in enumerate(recall_days):
                searches[day].append(queries[i % len(queries)])
            month.facts.append(
                Fact(fid, kind.topic, (FactVersion(fid, 0, texts[0], first_day, None),), tuple(queries))
            )
            month.fact_texts[fid] = tuple(sorted(texts))

    used = used if used is not None else set()  # pass one set to keep chit-chat unique over months
    for day in range(days):
        for _ in range(rng.randint(3, 5)):
            for _attempt in range(20):  # chit-chat is written once
                extra = {"thing": _pick(rng, FILL["thing"])}
                text = _fill(rng, _pick(rng, CHATTER), extra)
                if text not in used:
                    break
            if text in used:
                continue
            used.add(text)
            blocks[day].append((rng.choice(["Work", "Home"]), [(f"- {text}", LineLabel("chatter", day))]))
            for prefix, query in ONE_OFF_QUERIES.items():
                if text.startswith(prefix) and rng.random() < 0.35:
                    searches[day].append(query.format(**extra))
        if rng.random() < 0.2:
            template, queries = _pick(rng, BURSTS)
            extra = {
                "lvl": str(rng.randint(1, 6)),
                "mall": rng.choice(["Alexa", "Ostbahnhof", "Mall of Berlin"]),
                "cafe": _pick(rng, FILL["cafe"]),
                "plumber": _pick(rng, SURNAMES),
            }
            text = template.format(**extra)
            if text not in used:
                used.add(text)
                blocks[day].append(("Home", [(f"- {text}", LineLabel("burst", day))]))
                searches[day].extend(q.format(**extra) for q in queries)

    off = random.Random(20_000 + seed)
    for day in range(days):
        date = start + dt.timedelta(days=day)
        path = month.path(day)
        out = [f"# {date.isoformat()}", ""]
        month.labels[(path, 1)] = LineLabel("heading", day)
        by_section: dict[str, list[list[tuple[str, LineLabel]]]] = {}
        for section, block in blocks[day]:
            by_section.setdefault(section, []).append(block)
        order = [s for s in ("Work", "Home", "Notes") if s in by_section]
        order += sorted(s for s in by_section if s not in order)
        for section in order:
            items = by_section[section]
            rng.shuffle(items)
            if section.startswith("###"):
                out.append(section)
            else:
                out.append(f"## {section}")
            month.labels[(path, len(out))] = LineLabel("heading", day)
            for block in items:
                for text, label in block:
                    out.append(text)
                    month.labels[(path, len(out))] = label
            out.append("")
        month.dailies[day] = "\n".join(out).rstrip() + "\n"
        hours = sorted(rng.sample(range(8 * 60, 22 * 60), len(searches[day])))
        month.searches[day] = [(m // 60, m % 60, q) for m, q in zip(hours, searches[day], strict=True)]
        # questions no note answers, from their own stream: the rest of the month stays the same
        asked = off.sample(OFF_TOPIC_QUERIES, off.randint(0, off_topic))
        free = sorted(set(range(8 * 60, 22 * 60)) - set(hours))
        month.searches[day] += [
            (m // 60, m % 60, q) for m, q in zip(off.sample(free, len(asked)), asked, strict=True)
        ]
        month.searches[day].sort()
    return month


def generate_paraphrase_year(
    seed: int = 1, *, months: int = 12, start: dt.date = dt.date(2025, 4, 1)
) -> PersonaMonth:
    """``months`` paraphrased months back to back (30 days each, fresh subjects every month,
    chit-chat never repeated over the year), as one labelled stretch of dailies with no searches:
    what ``dream --backfill`` meets on an existing workspace."""
    used: set[str] = set()
    year = PersonaMonth(seed, start, 30 * months, {}, [])
    for i in range(months):
        month = generate_paraphrase_month(seed * 100 + i, start=start + dt.timedelta(days=30 * i), used=used)
        year.persona = year.persona or month.persona
        prefix = f"m{i:02d}-"
        ids: dict[str, str] = {}
        for f in month.facts:
            # the same wordings in two months (same coach, same schedule) are the same fact
            same = next((k for k, v in year.fact_texts.items() if v == month.fact_texts[f.fact_id]), None)
            ids[f.fact_id] = same or prefix + f.fact_id
            if same:
                continue
            versions = tuple(
                FactVersion(prefix + v.fact_id, v.version, v.text, v.from_day + 30 * i, v.until_day)
                for v in f.versions
            )
            year.facts.append(Fact(prefix + f.fact_id, f.topic, versions, f.queries))
            year.fact_texts[prefix + f.fact_id] = month.fact_texts[f.fact_id]
        for (path, n), label in month.labels.items():
            fid = ids[label.fact_id] if label.fact_id else None
            year.labels[(path, n)] = LineLabel(label.kind, label.day + 30 * i, fid, label.version)
        for day, text in month.dailies.items():
            year.dailies[day + 30 * i] = text
            year.searches[day + 30 * i] = []
    return year


def run_backfill(year: PersonaMonth, root: Path, *, embedding: str = "local") -> dict[str, Any]:
    """Write every daily of ``year`` into a fresh workspace and run ``dream --backfill`` once, the
    morning after the last day, with no recall history. Scores what it proposes against the labels,
    next to the per-line baseline: a line whose exact text is written on 3 or more days."""
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
    human = "# MEMORY\n\n## About me\n- I live in Berlin.\n"
    (root / "MEMORY.md").write_text(human, "utf-8")
    for day, text in year.dailies.items():
        (root / year.path(day)).write_text(text, "utf-8")
    host = Host(Workspace(root), builtins=("embeddings", "recall", "dreaming"), entry_points=False)
    from lifelong_plugins.dreaming.run import run_dream

    last = year.start + dt.timedelta(days=year.days)
    started = time.monotonic()
    try:
        with clock.pinned(dt.datetime(last.year, last.month, last.day, 3, tzinfo=tz)):
            run = run_dream(host, backfill=True)
    finally:
        host.close()
    elapsed = time.monotonic() - started
    promotions = []
    for item in run.promoted:
        label, correct = judge(year, year.days, item.get("sources") or item["source"])
        promotions.append(
            Promotion(
                year.days, item["key"], item["text"], item["source"], label, correct, item.get("sources", [])
            )
        )
    result = score_month(year, promotions)
    # the per-line baseline: exact text (normalised) written on 3 or more days
    days_of: dict[str, set[int]] = {}
    where: dict[str, tuple[str, int]] = {}
    for day, text in year.dailies.items():
        for n, line in enumerate(text.split("\n"), 1):
            body = line.strip().lstrip("-*+ ").strip()
            label = year.labels.get((year.path(day), n))
            if not body or label is None or label.kind == "heading":
                continue
            norm = " ".join(body.lower().split())
            days_of.setdefault(norm, set()).add(day)
            where.setdefault(norm, (year.path(day), n))
    base = []
    for norm, ds in days_of.items():
        if len(ds) >= 3:
            path, n = where[norm]
            label, correct = judge(year, year.days, f"{path}#L{n}-L{n}")
            base.append(Promotion(year.days, "", norm, f"{path}#L{n}-L{n}", label, correct))
    baseline = score_month(year, base)
    result.update(
        human_text_kept=(root / "MEMORY.md").read_text("utf-8").startswith(human.rstrip("\n")),
        dailies=len(year.dailies),
        elapsed_s=round(elapsed, 1),
        baseline_exact_recurrence={
            k: baseline[k] for k in ("promoted", "precision", "recall", "facts_promoted")
        },
        promotions=[{"text": p.text, "sources": p.sources, "correct": p.correct} for p in promotions],
    )
    return result


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
    sources: list[str] = field(default_factory=list)


def judge(month: PersonaMonth, night: int, source: str | list[str]) -> tuple[LineLabel | None, bool]:
    """The label of a promotion's first source line, and whether the promotion is correct: a
    durable fact's statement still current on ``night``, every cited line stating that same fact
    (a promotion citing lines of two different facts merged them: wrong)."""
    sources = [source] if isinstance(source, str) else list(source)
    labels = []
    for src in sources:
        path, _, lines = src.partition("#L")
        bounds = [int(x.lstrip("L")) for x in lines.split("-")] if lines else [0]
        start, end = bounds[0], bounds[-1]  # "#L4-L5" or a single line "#L4"
        found = [month.labels.get((path, n)) for n in range(start, end + 1)]
        found = [x for x in found if x is not None and x.kind != "heading"] or [
            month.labels.get((path, start))
        ]
        labels.append(found[0])
    label = labels[0] if labels else None
    if label is None or label.kind != "durable":
        return label, False
    if any(x is None or x.kind != "durable" or x.fact_id != label.fact_id for x in labels):
        return LineLabel("merged", label.day, label.fact_id, label.version), False
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
    seen: set[tuple[str | None, int | None]] = set()
    duplicated: list[str] = []
    for p in promotions:
        if p.correct and p.label is not None:
            ident = (p.label.fact_id, p.label.version)
            if ident in seen:
                duplicated.append(str(p.label.fact_id))
            seen.add(ident)
    precision = correct / len(promotions) if promotions else 1.0
    recall = len(found) / len(final) if final else 1.0
    kinds: dict[str, int] = {}
    for p in promotions:
        if not p.correct:
            kind = p.label.kind if p.label else "unlabelled"
            if p.label and p.label.kind == "merged":
                kind = "merged two facts"
            elif p.label and p.label.kind == "durable":
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
        "duplicate_items": len(duplicated),
        "duplicated_facts": sorted(duplicated),
        "chatter_leaked": sum(
            1 for p in promotions if p.label is not None and p.label.kind in ("chatter", "burst")
        ),
        "false_positives_by_kind": kinds,
    }


def run_persona_month(
    month: PersonaMonth,
    root: Path,
    *,
    embedding: str = "local",
    plugins: tuple[str, ...] | None = ("embeddings", "recall", "dreaming"),
    echo: Callable[[str], None] | None = None,
    off_topic_source: str = "gate",
) -> dict[str, Any]:
    """Replay ``month`` in a fresh workspace at ``root`` through the real recall and nightly job.
    Searches no note answers are sent as ``off_topic_source`` (the pre-reply gate by default,
    which is what asks about everything; ``tool`` makes them deliberate agent searches)."""
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
    human = f"# MEMORY\n\n## About me\n- I'm {p['name']}, I live in {p['city']} with {p['partner']} and {p['kid']}.\n"
    (root / "MEMORY.md").write_text(human, "utf-8")
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
                    source = off_topic_source if query in OFF_TOPIC_QUERIES else "tool"
                    result = host.ctx.call_tool("memory_search", query=query, source=source)
                if "error" in result:
                    raise RuntimeError(f"search {query!r} failed: {result['error']}")
            night = date + dt.timedelta(days=1)
            with clock.pinned(dt.datetime(night.year, night.month, night.day, 3, tzinfo=tz)):
                run = run_dream(host)
            for item in run.promoted:
                label, correct = judge(month, day + 1, item.get("sources") or item["source"])
                promotions.append(
                    Promotion(
                        day + 1,
                        item["key"],
                        item["text"],
                        item["source"],
                        label,
                        correct,
                        list(item.get("sources") or [item["source"]]),
                    )
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
    result["human_text_kept"] = (root / "MEMORY.md").read_text("utf-8").startswith(human.rstrip("\n"))
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
                "sources": p.sources,
                "correct": p.correct,
                "kind": p.label.kind if p.label else None,
            }
            for p in promotions
        ],
    )
    return result
