"""lifelong.readers: the library adapters on a few examples of our own, their soft failure, and
that importing the module loads no library."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from lifelong import readers

ROOT = Path(__file__).resolve().parents[2]
LIBRARY_MODULES = ("phonenumbers", "dateparser", "price_parser", "babel", "text_to_num", "pysbd", "sentencex")
ODD = ["", " ", "\x00\x00", "🎉🎉🎉", "9" * 400, "€€€ 1.2.3.4.5 ,,, $", "\n\n- \n1.\n", "ﷺ" * 50]


def test_importing_the_module_loads_no_library() -> None:
    code = f"import sys, lifelong.readers\nprint([m for m in {LIBRARY_MODULES!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_phones_are_e164_in_order_and_codes_are_not_phones() -> None:
    pytest.importorskip("phonenumbers")
    assert readers.phones("ring Anna at 030 1234 5678 tomorrow", "DE") == ["+493012345678"]
    assert readers.phones("cell (617) 555-0100, her office +33 1 42 68 53 00", "US") == [
        "+16175550100",
        "+33142685300",
    ]
    # no hint: a number with its country code reads the same anywhere
    assert readers.phones("Marco +39 06 6982 1234") == ["+390669821234"]
    assert readers.phones("order 12345678 arrives Monday", "DE") == []
    # a Spanish mobile written without its code: read in Spain, not in the fallback regions
    assert readers.phones("Lucía 612 34 56 78", "ES", fallback=False) == ["+34612345678"]


def test_dates_resolve_from_the_note_date() -> None:
    pytest.importorskip("dateparser")
    wed = dt.date(2025, 9, 10)
    assert readers.dates("kickoff 2025-10-02 in Berlin", wed) == [dt.date(2025, 10, 2)]
    assert readers.dates("yesterday was rough", wed) == [dt.date(2025, 9, 9)]
    assert readers.dates("Zahnarzttermin morgen um 9", wed) == [dt.date(2025, 9, 11)]
    assert readers.dates("call at 3pm", wed) == []  # a time of day alone is no date
    assert readers.dates("today at 6pm yoga", wed) == [wed]
    assert readers.dates("dinner on Friday", wed) == [dt.date(2025, 9, 12)]
    assert readers.dates("dinner on Friday", wed, prefer="past") == [dt.date(2025, 9, 5)]


def test_amounts_read_separators_magnitudes_currencies_and_words() -> None:
    for module in ("price_parser", "babel", "text_to_num"):
        pytest.importorskip(module)
    assert readers.amounts("lunch was €12,40 and the taxi 18 €") == [
        (Decimal("12.4"), "EUR"),
        (Decimal("18"), "EUR"),
    ]
    assert readers.amounts("the flat costs 2 400 € a month") == [(Decimal("2400"), "EUR")]
    assert readers.amounts("Hypothek 250.000 CHF") == [(Decimal("250000"), "CHF")]
    assert readers.amounts("er verdient 3,2 Mio. Euro") == [(Decimal("3200000"), "EUR")]
    assert readers.amounts("a 40k salary") == [(Decimal("40000"), None)]
    assert readers.amounts("vingt euros le menu") == [(Decimal("20"), "EUR")]
    assert readers.amounts("vingt euros le menu", words=False) == []
    assert readers.amounts("raised USD 4.5 million, then twenty euros") == [
        (Decimal("4500000"), "USD"),
        (Decimal("20"), "EUR"),
    ]
    assert readers.amounts("drove 12 km, 30% uphill, at 9:15") == []


def test_statements_are_exact_substrings() -> None:
    block = "Paid the bill. Call Ana tomorrow.\nThe plumber comes on\nfriday morning\n\n- buy milk"
    for engine in ("pysbd", "sentencex"):
        pytest.importorskip(engine)
        for unit in readers.UNITS:
            pieces = readers.statements(block, engine=engine, unit=unit)
            assert pieces and all(p in block and p == p.strip() for p in pieces), (engine, unit)
        per_line = readers.statements(block, engine=engine)
        assert per_line == [
            "Paid the bill.",
            "Call Ana tomorrow.",
            "The plumber comes on",
            "friday morning",
            "buy milk",
        ]
        grouped = readers.statements(block, engine=engine, unit="markdown")
        assert grouped[-2:] == ["The plumber comes on\nfriday morning", "buy milk"]


def test_a_missing_library_gives_nothing_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "_importable", lambda module: False)
    assert readers.missing("phones") == ("phonenumbers",)
    assert not readers.available("amounts")
    assert readers.phones("030 1234 5678", "DE") == []
    assert readers.dates("tomorrow", dt.date(2025, 9, 10)) == []
    assert readers.amounts("€12") == []
    assert readers.statements("One. Two.") == []
    assert readers.statements("One. Two.", engine="no-such-engine") == []


@pytest.mark.parametrize("text", ODD)
def test_odd_text_never_raises(text: str) -> None:
    readers.phones(text, "DE")
    readers.phones(text, "not-a-region")
    readers.amounts(text)
    for engine in ("pysbd", "sentencex"):
        for unit in readers.UNITS:
            readers.statements(text, engine=engine, unit=unit)
    if readers.available("dates"):
        readers.dates(text, dt.date(2025, 9, 10))


def test_the_currency_lexicon_is_cached_per_user_and_read_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first process builds the lexicon from babel and writes it to $XDG_CACHE_HOME; the next
    reads it back equal (the same keys, codes and Decimal factors) without babel; a cache made
    for other inputs (another key) or a damaged file is rebuilt, never believed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = readers._build_currency_lexicon()
    readers._currency_lexicon.cache_clear()
    try:
        assert readers._currency_lexicon() == built
        path = tmp_path / "lifelong" / "currency-lexicon.json"
        assert readers.lexicon_cache_path() == path and path.is_file()
        key = readers._lexicon_key()
        read = readers._read_lexicon(path, key)
        assert read == built
        assert [str(f) for f, _, _ in read[2].values()] == [str(f) for f, _, _ in built[2].values()]
        assert readers._read_lexicon(path, "another key") is None
        path.write_text("{not json", "utf-8")
        assert readers._read_lexicon(path, key) is None
        readers._currency_lexicon.cache_clear()
        assert readers._currency_lexicon() == built  # rebuilt and written again
        assert readers._read_lexicon(path, key) == built
    finally:
        readers._currency_lexicon.cache_clear()


def test_an_unwritable_cache_folder_costs_the_build_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", "utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    readers._currency_lexicon.cache_clear()
    try:
        assert readers.amounts("paid €1.200,50 and 3k") == [
            (Decimal("1200.50"), "EUR"),
            (Decimal(3000), None),
        ]
    finally:
        readers._currency_lexicon.cache_clear()


def test_the_lexicon_key_is_the_same_in_every_process() -> None:
    """The key names code by its bytecode, not by object addresses, so a second process finds
    the first one's cache."""
    code = "from lifelong import readers; print(readers._lexicon_key())"
    keys = {
        subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(keys) == 1 and len(keys.pop().strip()) == 64


def test_month_weekday_and_unit_names_are_read_from_babel_and_cached_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Month names in other languages ("marca" is March in Polish, "декабря" December in Russian;
    "listopad", two months in Czech and Polish, is neither), weekday names in every language
    ("pzt" Monday in Turkish, "jumatatu" in Swahili, "木曜日" Thursday; "ma", Monday in Dutch and
    Tuesday in French, is a weekday of no known number) and unit names ("кг", "procent", "yüzde"
    written before its number) come from babel's CLDR data; the second process reads them back
    equal from $XDG_CACHE_HOME; a damaged cache is rebuilt, never believed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cached = (readers.month_names, readers.unit_names, readers.weekday_names)
    for f in cached:
        f.cache_clear()
    try:
        months, units, weekdays = readers.month_names(), readers.unit_names(), readers.weekday_names()
        assert months["marca"] == 3 and months["декабря"] == 12 and "listopad" not in months
        assert "set" not in months  # Italian "set." for settembre is an English word
        assert units["кг"] == ("mass", "1000", False) and units["procent"] == ("ratio", "1", False)
        assert units["yüzde"] == ("ratio", "1", True)
        assert weekdays["pzt"] == 0 and weekdays["jumatatu"] == 0 and weekdays["木曜日"] == 3
        assert weekdays["ma"] == -1
        for name in ("month-names", "unit-names", "weekday-names"):
            path = tmp_path / "lifelong" / f"{name}.json"
            assert path.is_file()
            path.write_text("{not json", "utf-8")
        for f in cached:
            f.cache_clear()
        assert readers.month_names() == months and readers.unit_names() == units
        assert readers.weekday_names() == weekdays
        readers.month_names.cache_clear()
        assert readers.month_names() == months  # read back from the rewritten file
    finally:
        for f in cached:
            f.cache_clear()
