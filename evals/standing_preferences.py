"""A user's own standing instructions against an assistant's advice (issue 42).

    python -m evals.standing_preferences [--set name='{"preference_boost": 0.2}' ...]

A month of chat kept as dailies (``**User:** ...`` / ``**Assistant:** ...``, each message in
paragraphs, as a chat export writes it), hand-written: in sixteen topics the user states a
standing instruction or preference once ("Always keep my resume minimalist: one page, no
photo."), and on other days asks about the topic and gets advice, several paragraphs that share
the question's words ("A strong resume leads with a summary of your skills..."). Each topic has
two questions of the kind an agent gets ("how should I format my resume?", "what should my
resume look like?"): the answer a personal agent needs is the user's own instruction. Every
question goes through ``memory_search`` (recall defaults, FTS5 + local embeddings, the clock
pinned to the day after the last daily), and the rank of the first result holding the user's
statement is scored: hit@1, hit@3, MRR, per variant (defaults; ``preference_boost`` 0; any
``--set``), for topics 1-8 and 9-16 apart.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

from .ablate_scoring import ROOT
from .suite_retrieval import PLUGINS, deep_merge

START = dt.date(2026, 1, 5)

# topic: (the user's standing statement, the user's later question turn, the assistant's advice
# paragraphs, the questions asked of memory)
TOPICS: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = [
    (
        "Always keep my resume minimalist: one page, no photo, no colours.",
        "Can you look at my resume before I send it to the agency?",
        (
            "A strong resume leads with a short summary of your skills and the roles you want.",
            "List your experience in reverse order and quantify results where you can.",
            "Recruiters skim a resume in seconds, so use clear headings and consistent dates.",
        ),
        ("how should I format my resume?", "what should my resume look like?"),
    ),
    (
        "I prefer short emails: three sentences at most, and no greeting fluff.",
        "I need to email the landlord about the broken heater.",
        (
            "A good email to a landlord states the problem, when it started and what you need.",
            "Keep a friendly tone in the email and attach a photo of the heater if you can.",
            "End the email with a clear request and a date by which you expect an answer.",
        ),
        ("how should I write emails?", "how long should my email to the landlord be?"),
    ),
    (
        "Never book me flights before 9 am, I am useless in the early morning.",
        "I have to fly to Madrid for the conference in March.",
        (
            "For a conference trip, book flights early to get better fares and seat choices.",
            "Morning flights are usually cheaper and less often delayed than evening ones.",
            "Compare the flight times with the conference schedule so you arrive rested.",
        ),
        ("what time should I book my flight to Madrid?", "which flights should I book for the conference?"),
    ),
    (
        "I'm vegetarian, and I would rather not cook anything that takes more than thirty minutes.",
        "What should we cook for dinner on Friday with my sister?",
        (
            "A roast chicken with vegetables is an easy dinner that feeds a few people.",
            "For a Friday dinner, a pasta dish with a simple salad is quick and crowd-pleasing.",
            "You could marinate salmon in the morning and bake it when your sister arrives.",
        ),
        ("what should I cook for dinner?", "how should I plan meals for the week?"),
    ),
    (
        "Please always write my code examples in Python with type hints, never JavaScript.",
        "I am stuck parsing the CSV export from the bank.",
        (
            "To parse a CSV file, read it line by line and split each row on the delimiter.",
            "In JavaScript you could use a library such as Papa Parse to read the CSV.",
            "Check the encoding of the bank's CSV export first, many banks use Latin-1.",
        ),
        ("how should I write the code to parse the CSV?", "which language should code examples use?"),
    ),
    (
        "I like my presentations with big images and almost no text on the slides.",
        "I present the quarterly results to the board next Tuesday.",
        (
            "A board presentation should open with the three numbers that matter most.",
            "Put the detailed tables of the quarterly results in an appendix to the slides.",
            "Rehearse the presentation twice and time each section of the slides.",
        ),
        ("how should I design my slides?", "what should my presentation slides look like?"),
    ),
    (
        "I want to run only in the evening, mornings are for writing.",
        "I signed up for the half marathon in June.",
        (
            "For a half marathon, build up your long run by about ten percent each week.",
            "Many runners train in the morning, before work, when it is cooler.",
            "Add one interval session a week to your running plan to improve your pace.",
        ),
        ("when should I go running?", "how should I schedule my training runs?"),
    ),
    (
        "Don't suggest anything with a subscription, I want to pay once and own things.",
        "My photo library is getting too big for the laptop.",
        (
            "A cloud photo service keeps your library backed up and frees space on the laptop.",
            "An external drive is a cheap way to move old photos off the laptop.",
            "Sort the photo library by year before moving it, so it is easy to find things later.",
        ),
        ("what should I use to store my photos?", "how should I back up my photo library?"),
    ),
    (
        "Keep my budget spreadsheet simple: one tab, no macros, totals at the top.",
        "My spending on takeaway food got out of hand last month.",
        (
            "A budget spreadsheet usually has a tab per month and a summary tab with charts.",
            "Track every expense in the spreadsheet for a month to see where money goes.",
            "Set a monthly limit for takeaway food and compare it with your actual spending.",
        ),
        ("how should I set up my budget spreadsheet?", "what should my budget look like?"),
    ),
    (
        "I prefer to meet people in cafés, not at their homes or in bars.",
        "A friend from the climbing gym asked to catch up next week.",
        (
            "Meeting a friend at the climbing gym is a nice way to catch up and stay active.",
            "If you catch up over dinner, pick a place that takes reservations.",
            "A walk in the park works well to catch up with a friend you have not seen in a while.",
        ),
        ("where should I meet my friend?", "how should I plan catching up with friends?"),
    ),
    (
        "Always reply to my mother in German, even when she writes in English.",
        "My mother sent me a long message about the family holiday.",
        (
            "When you reply to your mother about the holiday, thank her for organising it.",
            "A long message deserves a reply that answers each of her questions.",
            "You could call your mother instead of replying, if the message raises many points.",
        ),
        ("how should I reply to my mother?", "which language should I use with my mother?"),
    ),
    (
        "Never schedule meetings for me on Fridays, that is my focus day.",
        "The design team wants a kickoff meeting for the new app.",
        (
            "A kickoff meeting works best early in the week, when people have energy to plan.",
            "Send the agenda for the kickoff meeting a day before and keep it under an hour.",
            "Invite only the people who will make decisions to the design kickoff meeting.",
        ),
        ("when should I schedule the kickoff meeting?", "which days should I schedule meetings on?"),
    ),
    (
        "I'd rather take trains than fly for anything under six hours.",
        "I need to get to Vienna for my cousin's wedding in May.",
        (
            "Flying to Vienna is usually the fastest option and fares are low if you book early.",
            "Vienna's airport has a fast train link to the city centre.",
            "Book the trip to Vienna soon, May weddings fill the hotels quickly.",
        ),
        ("how should I travel to Vienna?", "should I fly or take the train to the wedding?"),
    ),
    (
        "I like my notes in plain markdown files, no apps with their own formats.",
        "I keep losing track of what I read for the thesis.",
        (
            "A reference manager such as Zotero keeps your reading for the thesis organised.",
            "Many students use note apps with tags and backlinks to organise thesis reading.",
            "Write a short summary of each paper right after reading it for the thesis.",
        ),
        ("how should I organise my notes?", "what should I use to keep thesis notes?"),
    ),
    (
        "Please keep any gift for my partner under 50 euros, we agreed on that.",
        "It's my partner's birthday in two weeks.",
        (
            "A weekend trip is a memorable birthday gift for a partner.",
            "Jewellery or a good watch makes a lasting birthday gift.",
            "Think about what your partner mentioned wanting lately when you choose the gift.",
        ),
        ("what should I buy my partner for the birthday?", "how much should I spend on the gift?"),
    ),
    (
        "I always want the window seat, and never the last row.",
        "I booked the flight to Lisbon for the workshop.",
        (
            "Choose your seat when you check in online, about a day before the flight to Lisbon.",
            "An aisle seat makes it easier to get up during the flight.",
            "Seats at the front of the plane let you leave faster after landing in Lisbon.",
        ),
        ("which seat should I pick on the plane?", "how should I choose my seat?"),
    ),
]

FILLER = (
    ("Thanks, that helps a lot.", "You're welcome, let me know how it goes."),
    ("I had a long day at work today.", "That sounds tiring. Try to get some rest tonight."),
    ("The weather was lovely this afternoon.", "Nice, a good day for a walk outside."),
)


def dailies() -> dict[str, str]:
    """The month of chat: topic i's standing statement on day i (among filler), its question
    and the advice on day 16 + i."""
    files: dict[str, str] = {}
    n = len(TOPICS)
    for day in range(2 * n):
        date = START + dt.timedelta(days=day)
        lines = [f"# {date.isoformat()}", ""]
        user, assistant = FILLER[day % len(FILLER)]
        if day < n:  # the statement opens the user's message, or follows its first paragraph
            first, second = (TOPICS[day][0], user) if day % 2 == 0 else (user, TOPICS[day][0])
            lines += [f"**User:** {first}", "", second, "", f"**Assistant:** {assistant}", "", "Noted.", ""]
        else:
            _s, asked, advice, _q = TOPICS[day - n]
            lines += [f"**User:** {asked}", "", f"**Assistant:** {advice[0]}", ""]
            for para in advice[1:]:
                lines += [para, ""]
            lines += [f"**User:** {user}", "", f"**Assistant:** {assistant}", ""]
        files[f"memory/{date.isoformat()}.md"] = "\n".join(lines)
    return files


def write(root: Path) -> None:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    cfg = root / "lifelong.yaml"
    if not cfg.exists():
        cfg.write_text(
            "timezone: UTC\nembedding: {provider: local}\nplugins:\n  recall: {record_events: false}\n",
            encoding="utf-8",
        )
    for rel, text in dailies().items():
        path = root / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    from lifelong_plugins.recall import service

    from lifelong import clock
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    from .suite_retrieval import variant_workspace

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", default="defaults,no-preference-boost", help="Comma-separated.")
    ap.add_argument(
        "--set", action="append", default=[], help="name=JSON recall overrides (an extra variant)."
    )
    ap.add_argument("--cache", type=Path, default=ROOT / "evals" / ".cache" / "standing-preferences")
    args = ap.parse_args(argv)
    write(args.cache)
    now = dt.datetime.combine(START + dt.timedelta(days=2 * len(TOPICS)), dt.time(9), dt.UTC)
    host = Host(Workspace(args.cache), builtins=PLUGINS, entry_points=False)
    try:
        with clock.pinned(now):
            service.index_for(host.ctx).sync()
    finally:
        host.close()
    known: dict[str, dict] = {"defaults": {}, "no-preference-boost": {"preference_boost": 0}}
    variants = {v: known[v] for v in args.variants.split(",") if v}
    for item in args.set:
        name, _, raw = item.partition("=")
        variants[name] = json.loads(raw)
    print(f"{'variant':22s} {'topics':7s} hit@1  hit@3  mrr")
    for name, overrides in variants.items():
        ws = variant_workspace(args.cache, deep_merge({}, {"plugins": {"recall": overrides}}))
        host = Host(ws, builtins=PLUGINS, entry_points=False)
        ranks: list[tuple[int, int | None]] = []
        try:
            with clock.pinned(now):
                for i, (statement, _a, _adv, questions) in enumerate(TOPICS):
                    for q in questions:
                        out = host.ctx.call_tool("memory_search", query=q, max_results=10, source="eval")
                        rank = next(
                            (n for n, r in enumerate(out["results"], 1) if statement[:40] in r["snippet"]),
                            None,
                        )
                        ranks.append((i, rank))
        finally:
            host.close()
        for label, pick in (("1-8", range(8)), ("9-16", range(8, 16)), ("all", range(16))):
            part = [r for i, r in ranks if i in pick]
            hit1 = sum(r == 1 for r in part) / len(part)
            hit3 = sum(r is not None and r <= 3 for r in part) / len(part)
            mrr = sum(1 / r for r in part if r) / len(part)
            print(f"{name:22s} {label:7s} {hit1:.3f}  {hit3:.3f}  {mrr:.3f}")


if __name__ == "__main__":
    main()
