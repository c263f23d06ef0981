"""Which MEMORY.md section a promoted item is filed under (issue 13: "a human reading MEMORY.md
sees People, Projects, Preferences…"), measured on labelled statements:

    python -m evals.topics [--by-meaning]

Two sets: every wording of the persona generator's facts in months 1-8 (their kind names the
section: a birthday is People, the wifi password Home and money; an allergy of a child may be
Family or Health), and the facts of the hand-written months (evals/months/*.yaml), labelled by
hand with every section a reader would accept. Printed: items filed right by the words of each
topic (``memory_file.topic_of``, the shipped rule), and how many went to Other.

``--by-meaning`` also files the items that use no topic's words by the nearest of a few
descriptions per topic (bundled e5 embeddings), the variant measured and not adopted: it files
about six in ten of those items right, and its wrong choices are not told apart by the margin
over the second topic, so an item stays under Other rather than under a wrong heading.
"""

from __future__ import annotations

import argparse
from collections import Counter

from evals.persona import generate_paraphrase_month

KIND_SECTIONS: dict[str, set[str]] = {
    "comm-style": {"people"},
    "birthday": {"people"},
    "funding": {"projects"},
    "office": {"projects"},
    "allergy": {"family", "health"},
    "pickup": {"family"},
    "launch": {"projects"},
    "release-owner": {"projects"},
    "rent": {"home"},
    "landlord-visits": {"home"},
    "gp": {"health"},
    "gp-hours": {"health"},
    "training": {"health"},
    "training-price": {"health"},
    "standup": {"projects"},
    "dentist": {"health"},
    "flat-rent": {"home"},
    "wifi": {"home"},
}

# the hand-written months' facts as promoted (or as written), with the sections a reader accepts
WRITTEN: tuple[tuple[str, set[str]], ...] = (
    ("Climbing at The Arch tonight and again Thursday, same as every week (7pm).", {"health"}),
    ("Harriet turns 34 on June 14th — book the table at the Vietnamese place.", {"people", "family"}),
    ("Reminder: Northwind only settles an invoice forty-five days after they get it.", {"projects"}),
    (
        "The code for the Brompton's lock is 4471 (wrote it here because I forgot it twice).",
        {"home", "other"},
    ),
    ("Harriet can't have any shellfish, so the paella is out.", {"health", "people", "family"}),
    ("Rui Alves (Northwind Ceramics): operations lead, the one who approves artwork.", {"projects"}),
    ("Booked the autumn check-up with Dr. Okafor, my dentist (Karl-Heine-Straße).", {"health"}),
    (
        "Spoke & Chain (Elm Road) did the service on the folding bike; they're my bike people.",
        {"home", "other"},
    ),
    ("**On call:** I'm on call every second week now; the rotation starts on Mondays.", {"projects"}),
    ("**Home:** wifi network is Raman-5G, password HX7-pelican-22.", {"home"}),
    ("Rent for the flat: 1,250 € a month by bank transfer on the 1st.", {"home"}),
    ("Landlord is Pieter Brandt; reach him on WhatsApp, he does not read email.", {"home", "people"}),
    ("Noor starts swimming lessons: Saturdays 9am at De Wetering pool.", {"family"}),
    ("Noor had a fever; Dr. Visser (her paediatrician) saw her the same day.", {"health", "family"}),
    ("**Car:** insurance is with Centraal Beheer and renews on 1 September every year.", {"home"}),
    ("We deploy payments only on Tuesdays and Thursdays; every other day is a change freeze.", {"projects"}),
    (
        "Suppliers: Café Origem — what: green beans; contact: Leonor; order by Thursday, delivered Monday",
        {"projects"},
    ),
    (
        "TermoPro (Hélder) serviced the Giesen today; next visit in April, it's every six months.",
        {"projects"},
    ),
    ("Paulo Reis, the new accountant, wants the receipts once a month in one PDF.", {"projects", "home"}),
    ("Bolacha: vet: Dr. Nunes, Clínica Estrela (Rua de Cedofeita)", {"health", "family", "other"}),
    ("Bolacha: eats Royal Canin Mini, two cups a day", {"family", "other", "home"}),
    ("21:00 futsal at Pavilhão Rosa Mota, lost 6-4", {"health", "other"}),
    ('Inês: "never let them give me penicillin, I come out in hives"', {"health", "people"}),
    ("Espresso blend: 60% Brazil Cerrado, 40% Ethiopia Guji", {"projects"}),
    ("Shop insurance: Fidelidade, policy 44-7719, renews 1 Feb.", {"projects", "home"}),
    ("alarm: 2580, panel by the back door", {"home", "projects"}),
    ("08:00 — physio w/ [[Kasia]], left knee, exercises 3x daily #health", {"health"}),
    ("Booked the Grand Theatre voucher for Chidi's birthday (14 March).", {"people", "family"}),
    (
        "Nursery says Tobi must not have anything with sesame (hummus, tahini, some bread). Allergy "
        "confirmed by the GP.",
        {"health", "family"},
    ),
    (
        "Car's MOT is due 9 December. Kirkstall Garage can do it, booked via "
        "[their site](https://example.org/kirkstall-garage/book).",
        {"home"},
    ),
    ("🚲 new D-lock for the bike, code 4417", {"home", "other"}),
    ("[[Norland Press]]: style sheet in, [[Gareth Pugh]] wants chapters weekly", {"projects"}),
    ("Boiler making a banging noise. Patel Heating services it every year, Dev is coming Tuesday.", {"home"}),
    ("recycling: blue bin out Wednesday night, collected Thursday early", {"home"}),
    ("From this week choir rehearses on **Wednesdays**, still 7.30 at St Chad's.", {"other"}),
    (
        "Then at 17:15 my first Züritüütsch class at the Volkshochschule, Wednesdays for twelve weeks.",
        {"other"},
    ),
    (
        "Uni: Email from Regula Baumgartner (Züritüütsch teacher) w/ homework: describe your flat in dialect.",
        {"people", "other"},
    ),
    ("Mateo: CF Benimaclet alevines, Mon + Thu 18:00 at the poliesportiu. Quim took him today.", {"family"}),
    ("Mila's swimming class moved to Saturdays at 9; her teacher is Ana.", {"family"}),
)

# the variant not adopted: a few descriptions per topic, nearest by embedding cosine
DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "people": (
        "a person's birthday",
        "how a friend or colleague likes to be contacted",
        "my partner, friends and colleagues",
    ),
    "family": (
        "my children: school, pickup, lessons, their activities",
        "my kid's daily routine and schooling",
        "family pets and relatives",
    ),
    "projects": (
        "work: projects, clients, launches, deadlines and invoices",
        "the business: suppliers, products, team and customers",
        "my job: meetings, on-call rota, releases",
    ),
    "health": (
        "health: doctors, dentist, allergies, medication",
        "exercise: gym, sports, training sessions with a coach",
        "medical appointments and checkups",
    ),
    "home": (
        "home: rent, landlord, wifi, bills",
        "household: car, insurance, repairs, bank",
        "the flat, utilities and household money",
    ),
    "preferences": ("what I like and dislike", "my personal preferences and habits"),
}


def labelled(seeds: range = range(1, 9)) -> list[tuple[str, set[str], str]]:
    """(text, accepted sections, set name) for every persona wording and hand-written fact."""
    items, seen = [], set()
    for seed in seeds:
        month = generate_paraphrase_month(seed)
        for fact in month.facts:
            for text in month.fact_texts.get(fact.fact_id, ()):
                if text not in seen:
                    seen.add(text)
                    items.append((text, KIND_SECTIONS[fact.topic], "persona"))
    items += [(text, sections, "written") for text, sections in WRITTEN]
    return items


def score(items: list[tuple[str, set[str], str]], filed: list[str]) -> dict[str, str]:
    right, total, other = Counter(), Counter(), Counter()
    for (_, accepted, name), section in zip(items, filed, strict=True):
        right[name] += section in accepted
        total[name] += 1
        other[name] += section == "other"
    return {name: f"{right[name]}/{total[name]} right, {other[name]} under Other" for name in total}


def by_meaning(texts: list[str]) -> list[str]:
    """The nearest topic of each text (the best cosine over each topic's descriptions)."""
    import numpy as np
    from lifelong_plugins.embeddings.providers import float_engine

    engine = float_engine()

    def unit(v):  # noqa: ANN001, ANN202
        v = np.asarray(v, dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    names = list(DESCRIPTIONS)
    described = [unit(engine.embed(list(DESCRIPTIONS[n]))) for n in names]
    vecs = unit(engine.embed(texts))
    sims = np.stack([(vecs @ d.T).max(1) for d in described], 1)
    return [names[i] for i in sims.argmax(1)]


def main(argv: list[str] | None = None) -> None:
    from lifelong_plugins.dreaming.memory_file import topic_of

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--by-meaning", action="store_true", help="Also the variant not adopted (embeddings).")
    args = ap.parse_args(argv)
    items = labelled()
    words = [topic_of(text) for text, _, _ in items]
    print("by words (shipped):", score(items, words))
    if args.by_meaning:
        meaning = by_meaning([text for text, _, _ in items])
        fallback = [w if w != "other" else m for w, m in zip(words, meaning, strict=True)]
        print("by meaning alone:", score(items, meaning))
        print("by words, then by meaning for the rest:", score(items, fallback))
        rest = [(i, m) for i, (w, m) in enumerate(zip(words, meaning, strict=True)) if w == "other"]
        ok = sum(m in items[i][1] for i, m in rest)
        print(f"  of the {len(rest)} items no topic's words fit, filed right by meaning: {ok}")


if __name__ == "__main__":
    main()
