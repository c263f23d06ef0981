"""Thin adapters over the field's text readers: phone numbers, dates, money amounts, statements.

Each reader answers in the normal form ``evals/heldout/readers.yaml`` uses, so ``evals/readers.py``
can measure it against the hand rules of :mod:`lifelong.facts` and the dreaming plugin. Nothing
here replaces those rules yet: a reader is adopted only where it measures at least as well.

- :func:`phones` — ``phonenumbers``' :class:`PhoneNumberMatcher`: E.164 strings.
- :func:`dates` — ``dateparser``'s :func:`search_dates`, resolved from the note's date: dates.
- :func:`amounts` — spelled numbers to digits (``text2num``'s ``alpha2digit``), each number
  read by ``price-parser`` and given the currency ``babel``'s locale data names next to it:
  ``(Decimal, ISO 4217 code or None)``.
- :func:`statements` — ``pysbd`` or ``sentencex`` sentence boundaries, per line or across
  lines: exact substrings of the block.

Every library is imported inside the function that uses it, so ``import lifelong.readers``
costs nothing. A reader whose library is not installed returns ``[]`` and says so in
:func:`missing`; none raises on odd text (a library error on one text gives ``[]`` too and is
counted in :data:`ERRORS`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
import logging
import os
import re
import types
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# the regions tried after the caller's hint, in this order: where this suite's users write from
DEFAULT_REGIONS: tuple[str, ...] = ("DE", "US", "GB", "FR", "ES", "NL", "IT")
# the languages dates and spelled numbers are read in (the languages the suite's notes use)
DEFAULT_LANGUAGES: tuple[str, ...] = ("en", "de", "fr", "es", "nl", "it", "pt")

# which library each reader needs (pip names)
LIBRARIES: dict[str, tuple[str, ...]] = {
    "phones": ("phonenumbers",),
    "dates": ("dateparser",),
    "amounts": ("price_parser", "babel", "text_to_num"),
    "statements:pysbd": ("pysbd",),
    "statements:sentencex": ("sentencex",),
}
ERRORS: Counter[str] = Counter()  # library errors caught, by reader (a text that made one fail)


@cache
def _importable(module: str) -> bool:
    """Whether ``module`` is installed: found, not imported (a search that reads no amount in
    words must not pay for ``text_to_num``, nor for ``babel`` when the currency lexicon is
    cached). A library found but broken fails in its reader, which returns ``[]``."""
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        log.warning("lifelong.readers: %s is not installed; its reader returns nothing", module)
    return found


def missing(reader: str) -> tuple[str, ...]:
    """The libraries ``reader`` (a key of :data:`LIBRARIES`) needs that are not installed; empty
    when it can run."""
    return tuple(m for m in LIBRARIES[reader] if not _importable(m))


def available(reader: str) -> bool:
    return not missing(reader)


# ---------------------------------------------------------------------------------------------
# Phones


def phones(
    text: str, region: str | None = None, *, leniency: str = "VALID", fallback: bool = True
) -> list[str]:
    """Telephone numbers in ``text`` as E.164 (``+4917644112290``), in order of appearance.

    ``phonenumbers.PhoneNumberMatcher`` runs with ``region`` first, then
    :data:`DEFAULT_REGIONS`; a span is read in the first region where the matcher accepts it
    (a number written with ``+`` or ``00`` reads the same in all). ``leniency`` is the name of a
    ``phonenumbers.Leniency`` level (``POSSIBLE``, ``VALID``, ``STRICT_GROUPING``...). With
    ``fallback=False`` a ``region`` given is the only one tried (a British number the library
    rejects is then not read as a German one)."""
    if not text or missing("phones"):
        return []
    import phonenumbers

    level = getattr(phonenumbers.Leniency, leniency.upper(), phonenumbers.Leniency.VALID)
    regions = [region.upper()] if region else []
    if fallback or not regions:
        regions += [r for r in DEFAULT_REGIONS if r not in regions]
    found: list[tuple[int, int, str]] = []
    try:
        for r in regions:
            for m in phonenumbers.PhoneNumberMatcher(text, r, leniency=level):
                if any(m.start < e and s < m.end for s, e, _ in found):
                    continue
                e164 = phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164)
                found.append((m.start, m.end, e164))
    except Exception:  # noqa: BLE001 - a library failure on odd text is no answer, never a crash
        ERRORS["phones"] += 1
        return []
    return [number for _, _, number in sorted(found)]


def national_number(e164: str) -> str:
    """An E.164 number's national significant number ("+447912340118" -> "7912340118"): one
    number written with and without its country code, or read in the wrong region, is the same."""
    import phonenumbers

    try:
        return str(phonenumbers.parse(e164).national_number)
    except phonenumbers.NumberParseException:
        return e164.lstrip("+")


# ---------------------------------------------------------------------------------------------
# Dates

# what dateparser calls the precision of a parse ("period") that names one calendar day
_DAY_PERIODS = frozenset({"day", "part_of_day"})


def dates(
    text: str,
    written_on: dt.date,
    *,
    prefer: str = "future",
    languages: tuple[str, ...] | None = DEFAULT_LANGUAGES,
) -> list[dt.date]:
    """The calendar days ``text`` names, resolved from ``written_on`` (the note's date), in order of
    appearance.

    ``dateparser.search.search_dates`` finds the spans (``RELATIVE_BASE`` = the start of
    ``written_on``, ``PREFER_DATES_FROM`` = ``prefer``: ``future``, ``past`` or
    ``current_period``; ``languages`` the candidates its language detection chooses from, None
    for all it knows). Each span is parsed again with ``RETURN_TIME_AS_PERIOD`` to learn its
    precision: a span that names a month, a year or a week only is not a day; one that names a
    time of day only ("at 3pm": parsed as ``written_on`` itself, the base being midnight, and no
    word of it a day alone) is not either."""
    if not text or missing("dates"):
        return []
    from dateparser.search import search_dates

    base = dt.datetime.combine(written_on, dt.time())
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer}
    langs = list(languages) if languages else None
    try:
        found = search_dates(text, languages=langs, settings=settings) or []
        parser = _date_parser(tuple(langs) if langs else None, base, prefer)
        out = []
        for span, when in found:
            period = parser.get_date_data(span).period
            if period in _DAY_PERIODS or (period == "time" and _names_a_day(parser, span, when, written_on)):
                out.append(when.date())
    except Exception:  # noqa: BLE001
        ERRORS["dates"] += 1
        return []
    return out


def _names_a_day(parser: Any, span: str, when: dt.datetime, written_on: dt.date) -> bool:
    """Whether a span parsed with a time of day also names its day: it falls on another day than
    the note's ("Friday at 7pm"), or one of its words alone is a day ("tonight 8pm", "today at
    noon"); "at 3pm" alone is not."""
    if when.date() != written_on:
        return True
    for word in span.split():
        data = parser.get_date_data(word)
        if data.date_obj is not None and data.period in _DAY_PERIODS:
            return True
    return False


@lru_cache(maxsize=64)
def _date_parser(languages: tuple[str, ...] | None, base: dt.datetime, prefer: str) -> Any:
    from dateparser.date import DateDataParser

    return DateDataParser(
        languages=list(languages) if languages else None,
        settings={"RELATIVE_BASE": base, "PREFER_DATES_FROM": prefer, "RETURN_TIME_AS_PERIOD": True},
    )


# the languages whose month names :func:`month_names` reads ("14 marca", "5 декабря", "4 juillet")
MONTH_LOCALES: tuple[str, ...] = (
    *"en de fr es it pt nl pl ru uk tr sv da nb fi cs sk ro hu el id ms vi tl sw ca hr sl sr bg".split(),
    *"lt lv et is ga cy af zu ha yo am fa ar he hi bn ur ta ko th".split(),
)
# abbreviations are read in these languages only, and not those that are English words ("2 out
# of 3" is no 2 October, "set 5" no 5 September)
_ABBREVIATED_LOCALES = frozenset(DEFAULT_LANGUAGES)
_ENGLISH_WORDS = frozenset({"set", "out", "ago", "gen", "mag", "sat", "mar", "may", "dec"})


@cache
def month_names() -> dict[str, int]:
    """Month name -> month number in :data:`MONTH_LOCALES` from babel's CLDR data: the format and
    stand-alone forms (Polish "marca" and "marzec"), wide, and abbreviated in the main languages;
    casefolded, without a final dot. A name two months share (Czech/Polish "listopad") is left
    out. English names are kept too (the caller reads them its own way as well). ``{}`` without
    babel. Cached on disk (:func:`_cached_names`)."""
    if not _importable("babel"):
        return {}
    return _cached_names("month-names", _build_month_names, MONTH_LOCALES, sorted(_ENGLISH_WORDS))


def _build_month_names() -> dict[str, int]:
    from babel import Locale

    found: dict[str, set[int]] = {}
    for tag in MONTH_LOCALES:
        try:
            months = Locale.parse(tag).months
        except Exception:  # noqa: BLE001
            continue
        for context in ("format", "stand-alone"):
            widths = ("wide", "abbreviated") if tag in _ABBREVIATED_LOCALES else ("wide",)
            for width in widths:
                for number, name in months[context][width].items():
                    key = name.casefold().rstrip(".")
                    if (
                        len(key) >= 3
                        and not key.isdigit()
                        and not (width == "abbreviated" and key in _ENGLISH_WORDS)
                    ):
                        found.setdefault(key, set()).add(number)
    return {name: next(iter(numbers)) for name, numbers in found.items() if len(numbers) == 1}


@cache
def weekday_names() -> dict[str, int]:
    """Weekday name -> weekday (0 is Monday) in every language of babel's CLDR data: wide,
    abbreviated and short forms, format and stand-alone ("Pzt", "пн", "Jumatatu", "木曜日",
    "周三", "월"); casefolded, without a final dot. A name languages give to different weekdays
    ("ma": Monday in Dutch, Tuesday in French) maps to -1. ``{}`` without babel. Cached on disk (:func:`_cached_names`): ~1.5 s to read, once."""
    if not _importable("babel"):
        return {}
    return _cached_names("weekday-names", _build_weekday_names)


def _build_weekday_names() -> dict[str, int]:
    from babel import Locale, localedata

    found: dict[str, set[int]] = {}
    for tag in localedata.locale_identifiers():
        if "_" in tag:
            continue  # a language's regional variants name the days as it does
        try:
            days = Locale.parse(tag).days
        except Exception:  # noqa: BLE001
            continue
        for context in ("format", "stand-alone"):
            for width in ("wide", "abbreviated", "short"):
                for number, name in days.get(context, {}).get(width, {}).items():
                    key = name.casefold().rstrip(".")
                    if key and not any(ch.isdigit() for ch in key):
                        found.setdefault(key, set()).add(number)
    return {name: next(iter(numbers)) if len(numbers) == 1 else -1 for name, numbers in found.items()}


# the units :func:`unit_names` names in every language of :data:`MONTH_LOCALES`: CLDR unit ->
# (dimension, factor to the base unit lifelong.facts writes quantities in: g, ml, m, %)
CLDR_UNITS: dict[str, tuple[str, str]] = {
    "concentr-percent": ("ratio", "1"),
    "mass-kilogram": ("mass", "1000"),
    "mass-gram": ("mass", "1"),
    "volume-liter": ("volume", "1000"),
    "volume-milliliter": ("volume", "1"),
    "length-kilometer": ("length", "1000"),
    "length-meter": ("length", "1"),
    "length-centimeter": ("length", "0.01"),
}


@cache
def unit_names() -> dict[str, tuple[str, str, bool]]:
    """A unit's name -> (dimension, factor as text, written before the number) in
    :data:`MONTH_LOCALES`, from babel's CLDR unit patterns, long and short, for the counts whose
    grammar differs (Polish "2 kilogramy", "5 kilogramów"; Turkish "yüzde 7" before its number):
    casefolded, at least two letters, a name two units share left out. ``{}`` without babel.
    Cached on disk (:func:`_cached_names`)."""
    if not _importable("babel"):
        return {}
    return {
        k: (d, f, bool(b))
        for k, (d, f, b) in _cached_names("unit-names", _build_unit_names, MONTH_LOCALES, CLDR_UNITS).items()
    }


def _build_unit_names() -> dict[str, list[Any]]:
    from babel.units import format_unit

    found: dict[str, set[tuple[str, str, bool]]] = {}
    for tag in MONTH_LOCALES:
        for unit, (dimension, factor) in CLDR_UNITS.items():
            for length in ("long", "short"):
                for count in (1, 2, 5, 7, 21):
                    try:
                        written = format_unit(count, unit, length, locale=tag)
                    except Exception:  # noqa: BLE001
                        continue
                    written = re.sub(r"[\s\u00a0\u202f]+", " ", written).strip()
                    if not re.search(r"\d", written):
                        continue  # Arabic "لتر": one litre written without its number
                    before = not written[:1].isdigit()
                    name = re.sub(r"\d+", " ", written).strip().casefold().rstrip(".")
                    if sum(ch.isalpha() for ch in name) >= 2:
                        found.setdefault(name, set()).add((dimension, factor, before))
    return {name: list(next(iter(v))) for name, v in found.items() if len(v) == 1}


# ---------------------------------------------------------------------------------------------
# Amounts

# the locales whose currency symbols and names are read, first one first when two disagree
# ("$" is the US dollar, "kr" the Swedish krona): the suite's languages with their main regions,
# then the countries of the most traded currencies
CURRENCY_LOCALES: tuple[str, ...] = (
    "en_US",
    "en_GB",
    "en_IN",
    "en_AU",
    "en_CA",
    "de_DE",
    "de_CH",
    "fr_FR",
    "es_ES",
    "es_MX",
    "it_IT",
    "nl_NL",
    "pt_BR",
    "pt_PT",
    "ja_JP",
    "zh_CN",
    "ko_KR",
    "sv_SE",
    "nb_NO",
    "da_DK",
    "pl_PL",
    "tr_TR",
    # more of the world's currencies in their own writing ("KSh", "₦", "Rs", "TL", "جنيه", "đồng"):
    # values-2's money 0.303 -> see docs/readers.md
    "en_KE",
    "en_NG",
    "en_ZA",
    "en_SG",
    "en_PK",
    "ar_EG",
    "vi_VN",
    "id_ID",
    "ms_MY",
    "fil_PH",
    "bn_BD",
    "fa_IR",
    "sw_KE",
    "cs_CZ",
    "hu_HU",
    "ro_RO",
    "uk_UA",
    "ru_RU",
    "fi_FI",
    "es_AR",
    "es_CO",
    "fr_CA",
    "am_ET",
    "hi_IN",
    "th_TH",
)
# a number as written: digits, maybe grouped or split by ".", ",", "'" (price-parser tells which
# is the decimal mark), or by spaces before groups of three ("1 015")
_NUMBER = re.compile(r"(?<![\w.,'’])\d+(?:[.,'’]\d+)*(?:[ \u00a0\u202f]\d{3}(?!\d))*")


Lexicon = tuple[dict[str, str], dict[str, str], dict[str, tuple[Decimal, bool, bool]], int]


@lru_cache(maxsize=1)
def _currency_lexicon() -> Lexicon:
    """(symbols and ISO codes as written -> code, currency names in lower case -> code,
    magnitude words -> (factor, written after a space, a short form), the longest key) from
    babel's CLDR data for :data:`CURRENCY_LOCALES`.

    Reading 22 locales' CLDR data takes babel ~150 ms, paid by every process that reads an
    amount (every search in mode current, through :func:`lifelong.facts.typed_values`): the
    lexicon is kept in :func:`lexicon_cache_path`, keyed by what it is made of (babel's files,
    the locales, today's date, this code), and rebuilt when the key changes. A cache that
    cannot be read or written is ignored (the lexicon is then built, as without one)."""
    key = _lexicon_key()
    path = lexicon_cache_path()
    cached = _read_lexicon(path, key) if path else None
    if cached is not None:
        return cached
    lexicon = _build_currency_lexicon()
    if path:
        _write_lexicon(path, key, lexicon)
    return lexicon


def lexicon_cache_path() -> Path | None:
    """Where the currency lexicon is cached: ``$XDG_CACHE_HOME/lifelong/`` (default
    ``~/.cache/lifelong/``); None when no such folder can be named."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    try:
        root = Path(base) if base else Path.home() / ".cache"
    except RuntimeError:  # no home directory
        return None
    return root / "lifelong" / "currency-lexicon.json"


def _lexicon_key() -> str:
    """What the lexicon is made of: babel's installed files (their path, size and time),
    :data:`CURRENCY_LOCALES`, today's date (the currencies in use) and the code that builds it."""
    parts: list[object] = [CURRENCY_LOCALES, dt.date.today().isoformat(), *_babel_files()]
    parts += [
        _code_text(fn.__code__) for fn in (_build_currency_lexicon, _currencies_in_use, _territory_currency)
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _babel_files() -> list[object]:
    """babel's installed files (path, size, time): a new babel rebuilds what was read from it."""
    parts: list[object] = []
    spec = importlib.util.find_spec("babel")
    for name in ("__init__.py", "core.py", "numbers.py", "units.py", "global.dat"):
        path = Path(spec.origin).parent / name if spec and spec.origin else None
        try:
            st = path.stat() if path else None
        except OSError:
            st = None
        parts.append((str(path), st.st_size, st.st_mtime_ns) if st else None)
    return parts


def _cached_names(name: str, build: Callable[[], dict[str, Any]], *made_of: object) -> dict[str, Any]:
    """``build()`` (a JSON-able dict read from babel's CLDR data), kept in the folder of
    :func:`lexicon_cache_path` as ``<name>.json``, keyed by babel's files, ``made_of`` and the
    code of ``build``; rebuilt when the key changes. Reading babel's data for dozens of locales
    takes ~0.5 s, paid otherwise by every process that reads a value. A cache that cannot be
    read or written is ignored."""
    key = hashlib.sha256(repr([made_of, _babel_files(), _code_text(build.__code__)]).encode()).hexdigest()
    folder = lexicon_cache_path()
    path = folder.parent / f"{name}.json" if folder else None
    if path is not None:
        try:
            data = json.loads(path.read_text("utf-8"))
            if data.get("key") == key and isinstance(data.get("names"), dict):
                return dict(data["names"])
        except (OSError, ValueError):
            pass
    names = build()
    if path is not None:
        _write_json(path, {"key": key, "names": names})
    return names


def _code_text(code: types.CodeType) -> str:
    """A function's bytecode and constants as text that is the same in every process (a nested
    function's code object is written out, not its address)."""
    consts = [_code_text(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts]
    return f"{code.co_code.hex()}:{code.co_names}:{consts}"


def _read_lexicon(path: Path, key: str) -> Lexicon | None:
    try:
        data = json.loads(path.read_text("utf-8"))
        if data.get("key") != key:
            return None
        magnitudes = {k: (Decimal(f), bool(s), bool(sh)) for k, (f, s, sh) in data["magnitudes"].items()}
        return dict(data["symbols"]), dict(data["names"]), magnitudes, int(data["longest"])
    except (OSError, ValueError, KeyError, TypeError, ArithmeticError):
        return None


def _write_lexicon(path: Path, key: str, lexicon: Lexicon) -> None:
    """Written whole or not at all (a temporary file renamed), so a reader never sees half."""
    symbols, names, magnitudes, longest = lexicon
    data = {
        "key": key,
        "symbols": symbols,
        "names": names,
        "magnitudes": {k: [str(f), s, sh] for k, (f, s, sh) in magnitudes.items()},
        "longest": longest,
    }
    _write_json(path, data)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """A cache file written whole or not at all (a temporary file renamed), so a reader never
    sees half; a folder that cannot be written leaves it unwritten (logged at debug level)."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        log.debug("lifelong.readers: %s not cached (%s)", path.name, exc)


def _build_currency_lexicon() -> Lexicon:
    """What :func:`_currency_lexicon` returns, read from babel."""
    from babel import Locale

    current = _currencies_in_use()
    symbols: dict[str, str] = {}
    names: dict[str, str] = {}
    magnitudes: dict[str, tuple[Decimal, bool, bool]] = {}
    for tag in CURRENCY_LOCALES:
        locale = Locale.parse(tag)
        own = locale.territory and _territory_currency(tag)
        for code, symbol in locale.currency_symbols.items():
            if code == own:  # a locale's own symbol ("kr" in Sweden) before other locales' claims
                symbols.setdefault(symbol, code)
        for code, symbol in locale.currency_symbols.items():
            if code in current:
                symbols.setdefault(symbol, code)
                symbols.setdefault(code, code)
        for code, name in locale.currencies.items():
            if code in current:
                names.setdefault(name.lower(), code)
        for code, forms in locale._data["currency_names_plural"].items():
            for name in forms.values() if code in current else ():
                names.setdefault(name.lower(), code)
        for style in ("short", "long"):
            formats = locale.compact_decimal_formats.get(style, {})
            for count in formats:
                for magnitude, pattern in formats[count].items():
                    text = str(getattr(pattern, "pattern", pattern)).replace("'", "")
                    zeros = text.count("0")
                    word = text.replace("0", "").replace("\u00a0", " ").replace("\u202f", " ").strip()
                    if word and zeros and text.startswith("0"):
                        factor = Decimal(10) ** (len(magnitude) - zeros)
                        spaced = not text[zeros:][:1].isalpha()
                        key = word if style == "short" else word.lower()
                        magnitudes.setdefault(key, (factor, spaced, style == "short"))
    longest = max(len(k) for k in (*symbols, *names, *magnitudes))
    return symbols, names, magnitudes, longest


def _currencies_in_use() -> frozenset[str]:
    """ISO codes of the currencies some territory uses today (CLDR): no Deutsche Mark, no franc
    français ("F"), whose symbols would read ordinary letters as money."""
    from babel.core import get_global
    from babel.numbers import get_territory_currencies

    today = dt.date.today()
    codes: set[str] = set()
    for territory in get_global("territory_currencies"):
        codes.update(get_territory_currencies(territory, today, tender=True))
    return frozenset(codes)


def _territory_currency(tag: str) -> str | None:
    from babel.numbers import get_territory_currencies

    territory = tag.split("_")[-1]
    try:
        current = get_territory_currencies(territory, dt.date.today())
    except Exception:  # noqa: BLE001
        return None
    return current[0] if current else None


def _currency_at(text: str, start: int, end: int) -> str | None:
    """The currency named right before ``start`` or right after ``end`` (a symbol attached or
    after a space, a name or an ISO code; a name or code is a whole word)."""
    symbols, names, _, longest = _currency_lexicon()
    after = text[end:]
    after = after[1:] if after[:1] in (" ", "\u00a0", "\u202f") else after
    for n in range(min(longest, len(after)), 0, -1):
        key, rest = after[:n], after[n : n + 1]
        code = symbols.get(key) or names.get(key.lower())
        if code and not (key[-1].isalpha() and rest.isalpha()):
            return code
    before = text[:start]
    before = before[:-1] if before[-1:] in (" ", "\u00a0", "\u202f") else before
    for n in range(min(longest, len(before)), 0, -1):
        key, rest = before[-n:], before[-n - 1 : -n] if n < len(before) else ""
        code = symbols.get(key) or names.get(key.lower())
        if code and not (key[0].isalpha() and rest.isalpha()):
            return code
    return None


def _magnitude_at(text: str, end: int) -> tuple[Decimal, int, bool] | None:
    """(factor, where the magnitude word ends, whether it is a short form) of a compact magnitude
    right after a number, written as CLDR writes it: "12k" and "£3.5m" attached, "1,5 Mio." and
    "3 million" after a space."""
    _, _, magnitudes, _ = _currency_lexicon()
    after = text[end:]
    space = after[:1] in (" ", "\u00a0", "\u202f")
    rest = after[1:] if space else after
    for n in range(min(16, len(rest)), 0, -1):
        key = rest[:n].replace("\u202f", " ").replace("\u00a0", " ")
        found = magnitudes.get(key) or magnitudes.get(key.lower())
        if found is None or (key[-1].isalpha() and rest[n : n + 1].isalpha()):
            continue
        factor, spaced, short = found
        if space and not spaced:
            continue  # "12 m" is twelve metres; "12m" a magnitude
        return factor, end + int(space) + n, short
    return None


def amounts(text: str, *, words: bool = True) -> list[tuple[Decimal, str | None]]:
    """Money amounts in ``text``: ``(value, ISO 4217 code or None)`` in order of appearance.

    Numbers spelled out become digits first (``text2num.alpha2digit`` in each of
    :data:`DEFAULT_LANGUAGES`, when ``words``); each number is read by ``price_parser`` (which
    tells a decimal comma from a thousands separator), scaled by a compact magnitude from babel's
    CLDR formats ("12k", "1,5 Mio.", "3 million"), and is an amount when a currency symbol, code
    or name from babel's data (:data:`CURRENCY_LOCALES`) stands next to it, or when it carries a
    short magnitude ("12k budget": no currency; a single digit with a magnitude above thousands,
    "room 3B", is a code)."""
    if not text or missing("amounts"):
        return []
    try:
        from price_parser import Price

        if words:
            text = _digits_for_words(text)
        out: list[tuple[Decimal, str | None]] = []
        for m in _NUMBER.finditer(text):
            start, end = m.start(), m.end()
            value = Price.fromstring(m.group(0)).amount
            if value is None:
                continue
            magnitude = _magnitude_at(text, end)
            if magnitude:
                value *= magnitude[0]
                end = magnitude[1]
            currency = _currency_at(text, start, end)
            if currency is None and not (magnitude and magnitude[2]):
                continue
            if currency is None and magnitude and magnitude[0] > 1000 and re.fullmatch(r"\d", m.group(0)):
                continue  # "room 3B", "flat 4M": a code; "3k", "1.5M", "12M" stay amounts
            out.append((_plain(value), currency))
    except Exception:  # noqa: BLE001
        ERRORS["amounts"] += 1
        return []
    return out


def _plain(value: Decimal) -> Decimal:
    """``value`` without trailing zeros nor an exponent (1200, 3.5)."""
    value = value.normalize()
    return value.quantize(Decimal(1)) if value == value.to_integral_value() else value


def digits_for_words(text: str) -> str:
    """``text`` with its spelled numbers in digits (``text2num``'s ``alpha2digit`` in English,
    German, Dutch, Italian, Spanish, French and Portuguese; ``text`` as it is without text2num)."""
    if not text or missing("amounts"):
        return text
    try:
        return _digits_for_words(text)
    except Exception:  # noqa: BLE001
        ERRORS["amounts"] += 1
        return text


def _digits_for_words(text: str) -> str:
    """``text`` with its spelled numbers in digits. A number already in digits keeps its
    magnitude word ("2.5 million": alpha2digit alone would write "2.5 1000000"): only the text
    between such numbers is converted."""
    kept, pos = [], 0
    for m in _NUMBER.finditer(text):
        magnitude = _magnitude_at(text, m.end())
        end = magnitude[1] if magnitude else m.end()
        kept += [_words_to_digits(text[pos : m.start()]), text[m.start() : end]]
        pos = end
    return "".join([*kept, _words_to_digits(text[pos:])])


def _words_to_digits(text: str) -> str:
    if not text.strip():
        return text
    from text_to_num import alpha2digit

    # Spanish before French and Portuguese: "mil doscientos" is one Spanish number
    for lang in ("en", "de", "nl", "it", "es", "fr", "pt"):
        try:
            text = alpha2digit(text, lang, threshold=0)
        except Exception:  # noqa: BLE001 - a language the installed version lacks
            continue
    return text


# ---------------------------------------------------------------------------------------------
# Statements

_LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
UNITS = ("line", "block", "markdown")


def statements(block: str, *, engine: str = "pysbd", unit: str = "line", language: str = "en") -> list[str]:
    """The sentences of ``block`` as exact, trimmed substrings of it, in order.

    ``engine`` is ``pysbd`` (the rule-based "Golden Rules" segmenter) or ``sentencex``
    (Wikimedia's, ~300 languages). ``unit`` is what the engine is given: each ``line`` on its own
    after its markdown list marker; the whole ``block``; or each ``markdown`` unit the suite
    reads already (:func:`lifelong.markdown.parse_blocks` items and paragraphs, a paragraph's
    :func:`lifelong.markdown.line_groups`, a day's :func:`lifelong.markdown.title_line` left
    out), its line breaks read as spaces, so the engine only splits inside a unit."""
    reader = f"statements:{engine}"
    if not block or reader not in LIBRARIES or unit not in UNITS or missing(reader):
        return []
    try:
        spans = [
            (s + offset, e + offset)
            for offset, text in _units(block, unit)
            for s, e in _segment(engine, text.replace("\n", " "), language)
        ]
    except Exception:  # noqa: BLE001
        ERRORS[reader] += 1
        return []
    return [piece for s, e in spans if (piece := block[s:e].strip())]


def _units(block: str, unit: str) -> list[tuple[int, str]]:
    """(offset in ``block``, text) of each piece the engine segments on its own."""
    if unit == "block":
        return [(0, block)]
    starts, pos = [], 0
    for line in block.split("\n"):
        starts.append(pos)
        pos += len(line) + 1
    lines = block.split("\n")

    def piece(first: int, last: int) -> tuple[int, str]:
        """Lines first..last (0-based, inclusive) without the first one's list marker."""
        marker = _LIST_MARKER.match(lines[first])
        skip = marker.end() if marker else 0
        begin = starts[first] + skip
        return begin, block[begin : starts[last] + len(lines[last])]

    if unit == "line":
        return [piece(i, i) for i in range(len(lines))]
    from .markdown import line_groups, parse_blocks, title_line

    out = []
    for b in parse_blocks(block, nested_items=True):
        first, last = b.start - 1, min(b.end, len(lines)) - 1
        if b.kind == "paragraph":
            if title_line(lines[first]):
                first += 1
            if first > last:
                continue
            out += [piece(first + i, first + j) for i, j in line_groups(lines[first : last + 1])]
        elif b.kind not in ("fence", "code_block", "hr", "html_block", "heading"):
            out.append(piece(first, last))
    return out


def _segment(engine: str, text: str, language: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``."""
    if not text.strip():
        return []
    if engine == "pysbd":
        return [(span.start, span.end) for span in _pysbd(language).segment(text)]
    import sentencex

    return [(b["start_index"], b["end_index"]) for b in sentencex.get_sentence_boundaries(language, text)]


@lru_cache(maxsize=16)
def _pysbd(language: str) -> Any:
    import pysbd

    return pysbd.Segmenter(language=language, clean=False, char_span=True)
