"""Time in a query (pure): the period it names, resolved against ``now``, and whether it asks
about an event's time ("when did ...", "the first time ...") so recency must not decide.

Understood (English, case-insensitive): ``today``, ``yesterday``, ``this``/``last``
``week``/``month``/``year``, ``N days``/``weeks ago``, ``last Monday`` / ``on Monday``, ``in March``
(``in March 2023``), ``on 8 May`` / ``May 8th`` / ``8th of May`` (with an optional year), ``in
2023``, ``the first week of April`` / ``the last weekend of October 2023``, ISO dates ``2023-05-08``; after ``as of``, ``until`` or ``up to``, a date ends the period
instead (everything up to it). A period without a year is the latest one that has begun by
``now``. Periods are half-open ``[start, end)`` in epoch seconds, days in the workspace time zone.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from lifelong.facts import MONTH_NUMBERS, MONTH_PATTERN, WEEKDAYS

_MONTH = f"({MONTH_PATTERN})"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(\d{4}))?"

EVENT_TIME = re.compile(
    r"\b(when (?:did|was|were|is|are|will|had|has|have|do|does)|what (?:date|day|month|year|time)|"
    r"how long ago|how long has|first time|the first|for the first|since when|which (?:day|month|year))\b",
    re.IGNORECASE,
)
ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
DAY_MONTH = re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH}\b{_YEAR}", re.IGNORECASE)
MONTH_DAY = re.compile(rf"\b{_MONTH}\s+{_DAY}\b{_YEAR}", re.IGNORECASE)
IN_MONTH = re.compile(
    rf"\b(?:in|during|of|since)\s+(?:early\s+|late\s+|mid-?\s*)?{_MONTH}\b{_YEAR}", re.IGNORECASE
)
WEEK_OF = re.compile(
    rf"\b(first|1st|second|2nd|third|3rd|fourth|4th|last)\s+(week|weekend)\s+(?:of|in)\s+{_MONTH}\b{_YEAR}",
    re.IGNORECASE,
)
_ORDINALS = {
    "first": 1,
    "1st": 1,
    "second": 2,
    "2nd": 2,
    "third": 3,
    "3rd": 3,
    "fourth": 4,
    "4th": 4,
    "last": -1,
}
IN_YEAR = re.compile(r"\b(?:in|during|of)\s+(\d{4})\b", re.IGNORECASE)
AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month)s?\s+ago\b", re.IGNORECASE)
RELATIVE = re.compile(
    r"\b(today|tonight|yesterday|(this|last|past|previous)\s+(week|month|year))\b", re.IGNORECASE
)
WEEKDAY = re.compile(r"\b(?:last|on|this|past)\s+(" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class QueryTime:
    period: tuple[float, float] | None = None  # [start, end) epoch seconds
    no_decay: bool = False  # the query asks about an event's time or names a period
    label: str = ""  # what was understood, for --explain


def _span(a: dt.date, b: dt.date, tz: dt.tzinfo) -> tuple[float, float]:
    start = dt.datetime(a.year, a.month, a.day, tzinfo=tz)
    end = dt.datetime(b.year, b.month, b.day, tzinfo=tz)
    return start.timestamp(), end.timestamp()


def _month_span(year: int, month: int) -> tuple[dt.date, dt.date]:
    nxt = dt.date(year + (month == 12), month % 12 + 1, 1)
    return dt.date(year, month, 1), nxt


def _week_of(year: int, month: int, nth: int, weekend: bool) -> tuple[dt.date, dt.date]:
    """The ``nth`` (-1: last) week of a month (days 1-7, 8-14, ...; the last: its final seven
    days) or weekend (its nth Saturday and the Sunday after)."""
    first, nxt = _month_span(year, month)
    if weekend:
        saturday = first + dt.timedelta(days=(5 - first.weekday()) % 7)
        if nth == -1:
            while saturday + dt.timedelta(days=7) < nxt:
                saturday += dt.timedelta(days=7)
        else:
            saturday += dt.timedelta(days=7 * (nth - 1))
        return saturday, saturday + dt.timedelta(days=2)
    if nth == -1:
        return nxt - dt.timedelta(days=7), nxt
    start = first + dt.timedelta(days=7 * (nth - 1))
    return start, min(start + dt.timedelta(days=7), nxt)


def _safe_day(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def query_time(query: str, now: dt.datetime, tz: dt.tzinfo) -> QueryTime:
    """The period ``query`` names (if any) and whether recency should stay out of its ranking."""
    today = now.astimezone(tz).date()
    event = bool(EVENT_TIME.search(query))
    period: tuple[dt.date, dt.date] | None = None
    label = ""
    used: re.Match[str] | None = None  # the date expression the period comes from
    if m := ISO_DAY.search(query):
        day = _safe_day(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        if day:
            period, label, used = (day, day + dt.timedelta(days=1)), day.isoformat(), m
    if period is None:
        for rx, order in ((DAY_MONTH, "dm"), (MONTH_DAY, "md")):
            m = rx.search(query)
            if not m:
                continue
            d, mon = (m.group(1), m.group(2)) if order == "dm" else (m.group(2), m.group(1))
            month = MONTH_NUMBERS[mon.lower()]
            year = int(m.group(3)) if m.group(3) else today.year
            day = _safe_day(year, month, int(d))
            if day and not m.group(3) and day > today:
                day = _safe_day(year - 1, month, int(d))
            if day:
                period, label, used = (day, day + dt.timedelta(days=1)), day.isoformat(), m
                break
    if period is None and (m := WEEK_OF.search(query)):
        month = MONTH_NUMBERS[m.group(3).lower()]
        year = int(m.group(4)) if m.group(4) else today.year
        if not m.group(4) and dt.date(year, month, 1) > today:
            year -= 1
        period = _week_of(year, month, _ORDINALS[m.group(1).lower()], m.group(2).lower() == "weekend")
        label, used = f"{period[0].isoformat()}..{(period[1] - dt.timedelta(days=1)).isoformat()}", m
    if period is None and (m := IN_MONTH.search(query)):
        month = MONTH_NUMBERS[m.group(1).lower()]
        year = int(m.group(2)) if m.group(2) else today.year
        if not m.group(2) and dt.date(year, month, 1) > today:
            year -= 1
        period, label, used = _month_span(year, month), f"{year}-{month:02d}", m
    if period is None and (m := IN_YEAR.search(query)):
        year = int(m.group(1))
        if 1900 <= year <= 2200:
            period, label, used = (dt.date(year, 1, 1), dt.date(year + 1, 1, 1)), str(year), m
    if period is None and (m := AGO.search(query)):
        n = NUMBERS.get(m.group(1).lower()) or int(m.group(1))
        unit = m.group(2).lower()
        days = {"day": 1, "week": 7, "month": 30}[unit] * n
        centre = today - dt.timedelta(days=days)
        slack = {"day": 1, "week": 3, "month": 10}[unit]
        period = (centre - dt.timedelta(days=slack), centre + dt.timedelta(days=slack + 1))
        label = f"about {centre.isoformat()}"
    if period is None and (m := RELATIVE.search(query)):
        word = m.group(1).lower()
        if word in ("today", "tonight"):
            period = (today, today + dt.timedelta(days=1))
        elif word == "yesterday":
            period = (today - dt.timedelta(days=1), today)
        else:
            which, unit = m.group(2).lower(), m.group(3).lower()
            this = which == "this"
            if unit == "week":
                monday = today - dt.timedelta(days=today.weekday())
                period = (
                    (monday, today + dt.timedelta(days=1))
                    if this
                    else (monday - dt.timedelta(days=7), monday)
                )
            elif unit == "month":
                first = today.replace(day=1)
                prev = (first - dt.timedelta(days=1)).replace(day=1)
                period = (first, today + dt.timedelta(days=1)) if this else (prev, first)
            else:
                jan = today.replace(month=1, day=1)
                period = (
                    (jan, today + dt.timedelta(days=1)) if this else (jan.replace(year=jan.year - 1), jan)
                )
        label = word
    if period is None and (m := WEEKDAY.search(query)):
        target = WEEKDAYS.index(m.group(1).lower())
        back = (today.weekday() - target) % 7 or 7
        day = today - dt.timedelta(days=back)
        period, label = (day, day + dt.timedelta(days=1)), day.isoformat()
    if period is None:
        return QueryTime(None, event, "event time" if event else "")
    if used is not None and _cumulative(query, used):  # "as of May": everything up to its end
        period, label = (dt.date(1, 1, 2), period[1]), f"up to {label}"
    return QueryTime(_span(period[0], period[1], tz), True, label)


UP_TO = re.compile(r"\b(?:as\s+of|until|till|up\s+to)\s*$", re.IGNORECASE)


def _cumulative(query: str, m: re.Match[str]) -> bool:
    """Whether the date expression ``m`` ends a span ("as of December 2023", "until 8 May"): a
    state as of then is told by every note up to it, not only by notes from then."""
    before = query[: m.start()]
    if re.match(r"of\b", m.group(0), re.IGNORECASE):  # IN_MONTH took the "of" of "as of May"
        before += "of"
    return bool(UP_TO.search(before))
