"""Text readers measured one by one: the suite's hand rules vs the field's libraries vs a baseline.

``python -m evals.readers [--corpus evals/heldout/readers.yaml] [--lists phones,dates,...]
[--json FILE] [--misses] [--no-import-cost] [--repeat N]``

The corpus (``evals/heldout/readers.yaml``, its top comment gives the schema) has four lists:
``phones``, ``dates``, ``amounts`` and ``statements``. For each list and each reader this prints
precision, recall and F1 (micro: true positives summed over items, each item's predictions
matched to its expected values as sets: a value read twice counts once), the share of items read exactly right, the time per
item (µs, the fastest of ``--repeat`` passes after the scored one, so lazily loaded data is not
counted), and the cost of the
reader's first use in a fresh interpreter (import ms, then first call ms).

Readers (each maps its output to the corpus' normal form; the shims for the current code are as
generous as their output allows):

phones (normal form: E.164 when the country is known from the number or the hint, else the digits)
  - ``rules: facts._SLOT_PHONE``: the rule the facts module read phones by before this eval
    (``slot_values``, since removed): each ``_SLOT_PHONE`` match of seven digits or more, and each
    ``_SLOT_NUMBER`` value shaped like a phone (an unseparated "3125550111", :func:`_phone_shaped`).
  - ``rules: dreaming _digit_runs``: the matches of ``_DIGIT_GROUPS`` that ``_digit_runs`` keeps.
  - ``baseline regex``: ``\\+?\\(?\\d[\\d\\s().\\/-]{5,}\\d`` with seven digits or more.
  The rules find digits only; :func:`to_e164` gives all three the E.164 form on their behalf:
  ``+`` kept (a ``(0)`` after it dropped), ``00`` read as ``+``, a leading trunk ``0`` replaced by
  the hint's country code, ten digits in a NANP hint region given ``+1``, and with a hint of a
  country without a trunk prefix (ES, IT...) nine digits or more given its code.
  - ``phonenumbers`` (:func:`lifelong.readers.phones`, leniency VALID and POSSIBLE; and VALID
    trying only the hint's region when there is one, a variant added after reading misses).

dates (normal form: ISO dates; the item's ``written_on`` is "now")
  - ``rules: facts.extract``: the ``date``, ``until`` and ``weekday`` values of
    ``lifelong.facts.extract(text, now=written_on 12:00)`` that carry a resolved ``.date``.
  - ``rules: dreaming values_of``: the "14 march" / "14-16 march" values of
    ``values_of`` (``_numeric_dates`` and ``themes.month_date``) in ``written_on``'s year.
  - ``baseline regex``: ISO dates, and d.m.yyyy / d/m/yyyy with a four-digit year.
  - ``dateparser`` (:func:`lifelong.readers.dates`) with PREFER_DATES_FROM ``future`` and
    ``current_period``, languages en/de/fr/es/nl/it/pt.

amounts (normal form: value and ISO currency; an expected currency of null matches any)
  - ``rules: facts.extract``: its ``money`` values ("EUR 1200").
  - ``baseline regex``: $ € £ ¥ ₹ or USD/EUR/GBP/CHF/JPY/INR next to a number; the last "." or
    "," followed by one or two digits is the decimal mark.
  - ``price-parser alone``: ``Price.fromstring`` on the whole text (one price at most), currency
    read with the adapter's babel lexicon.
  - ``price-parser+babel+text2num`` (:func:`lifelong.readers.amounts`), and the same without
    spelled numbers (``words=False``).

statements (normal form: see ``--exact``; primary figure on normalised edges)
  - ``rules: dreaming parse_snippets``: snippet texts of the block read as a daily
    (``min_chars=1``; the context prefix, if any, removed): markdown items, ``title_line``,
    ``lifelong.markdown.line_groups``, long paragraphs split into sentences.
  - ``rules: recall retrieval_units``: units of ``plugins/recall/chunking.retrieval_units``
    (the same markdown blocks and ``line_groups``; the unit text is the exact lines).
  - ``rules: recall split_sentences``: ``plugins/recall/chunking.split_sentences``.
  - ``baseline``: split at line breaks and after ``.``/``!``/``?`` followed by a space.
  - ``pysbd`` and ``sentencex`` (:func:`lifelong.readers.statements`): per line, on the whole
    block, and inside the markdown units the suite reads already (``line_groups``: a hybrid of
    the current grouping and a library's sentence ends).
  Statements are compared on normalised edges (whitespace runs as one space; list markers and
  bullet-journal signifiers, emoji and symbols, a leading "also", separators such as " - " and a
  trailing ".", "," or ";" removed at either end, as the corpus' convention leaves them out); the
  ``exact`` column compares the trimmed strings as they are.

Reading a miss here and changing an adapter makes this corpus tuning data for that reader: report
the later figure as "after reading misses", and write a new corpus for the next held-out figure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from lifelong import readers

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "heldout" / "readers.yaml"
LISTS = ("phones", "dates", "amounts", "statements")

# ---------------------------------------------------------------------------------------------
# Phones

_NANP = {"US", "CA"}


def to_e164(raw: str, region: str | None) -> str:
    """The corpus' normal form of a phone number found by a reader that gives digits: see the
    module docstring (the shim that lets digit readers be compared with E.164)."""
    import phonenumbers

    text = raw.strip()
    if text.startswith("+"):
        digits = re.sub(r"\D", "", text.replace("(0)", "", 1))
        return "+" + digits
    digits = re.sub(r"\D", "", text)
    if digits.startswith("00"):
        return "+" + digits[2:]
    if not region:
        return digits
    code = phonenumbers.country_code_for_region(region)
    if not code:
        return digits
    if region in _NANP:
        if len(digits) == 10:
            return "+1" + digits
        if len(digits) == 11 and digits.startswith("1"):
            return "+" + digits
        return digits
    meta = phonenumbers.PhoneMetadata.metadata_for_region(region)
    trunk = meta.national_prefix if meta else None
    if trunk and digits.startswith(trunk):
        return f"+{code}{digits[len(trunk) :]}"
    if not trunk and len(digits) >= 9:
        return f"+{code}{digits}"
    return digits


def _phone_shaped(value: str) -> bool:
    """The rule the facts module read a bare number as a phone by before phonenumbers replaced it
    (seven digits or more, no date or time separator, no currency): kept here as the measured
    "rules" reader."""
    if re.search(r"[€$£]|eur|usd|gbp|chf|dollar|pound|quid", value, re.I):
        return False
    return len(re.sub(r"\D", "", value)) >= 7 and not re.search(r"[./:]", value)


def rules_slot_phones(text: str, region: str | None) -> list[str]:
    from lifelong import facts

    found: list[tuple[int, str]] = []
    for m in facts._SLOT_PHONE.finditer(text):
        if len(re.sub(r"\D", "", m.group(0))) >= 7:
            found.append((m.start(), m.group(0)))
    for m in facts._SLOT_NUMBER.finditer(text):
        value = re.sub(r"[\s,]", "", m.group(0)).rstrip(".-/").lower()
        if _phone_shaped(value) and not any(s <= m.start() < s + len(r) for s, r in found):
            plus = "+" if text[max(0, m.start() - 1) : m.start()] == "+" else ""
            found.append((m.start(), plus + m.group(0)))
    return _unique(to_e164(raw, region) for _, raw in sorted(found))


def rules_dreaming_phones(text: str, region: str | None) -> list[str]:
    from lifelong_plugins.dreaming import facts as dfacts

    kept = dfacts._digit_runs(text)
    out = []
    for m in dfacts._DIGIT_GROUPS.finditer(text):
        if re.sub(r"\D", "", m.group(0)) in kept:
            out.append(to_e164(m.group(0), region))
    return _unique(out)


_BASE_PHONE = re.compile(r"\+?\(?\d[\d\s().\/-]{5,}\d")


def baseline_phones(text: str, region: str | None) -> list[str]:
    return _unique(
        to_e164(m.group(0), region)
        for m in _BASE_PHONE.finditer(text)
        if len(re.sub(r"\D", "", m.group(0))) >= 7
    )


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


# ---------------------------------------------------------------------------------------------
# Dates


def _noon(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(12))


def rules_extract_dates(text: str, written_on: dt.date) -> list[str]:
    from lifelong.facts import extract

    values = extract(text, now=_noon(written_on)).values
    return [
        v.date.isoformat() for v in values if v.kind in ("date", "until", "weekday") and v.date is not None
    ]


_MONTH_VALUE = re.compile(r"^(\d{1,2})(?:-(\d{1,2}))? ([a-z]+)$")


def rules_dreaming_dates(text: str, written_on: dt.date) -> list[str]:
    from lifelong_plugins.dreaming.facts import values_of

    from lifelong.facts import MONTH_NUMBERS

    out = []
    for value in values_of(text):
        m = _MONTH_VALUE.match(value)
        if not m or m.group(3) not in MONTH_NUMBERS:
            continue
        month = MONTH_NUMBERS[m.group(3)]
        for day in filter(None, (m.group(1), m.group(2))):
            try:
                out.append(dt.date(written_on.year, month, int(day)).isoformat())
            except ValueError:
                continue
    return sorted(set(out))


_BASE_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b|\b(\d{1,2})[./](\d{1,2})[./](\d{4})\b")


def baseline_dates(text: str, written_on: dt.date) -> list[str]:
    out = []
    for m in _BASE_DATE.finditer(text):
        y, mo, d = (
            (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(6), m.group(5), m.group(4))
        )
        try:
            out.append(dt.date(int(y), int(mo), int(d)).isoformat())
        except ValueError:
            continue
    return out


def library_dates(prefer: str) -> Callable[[str, dt.date], list[str]]:
    def read(text: str, written_on: dt.date) -> list[str]:
        return [d.isoformat() for d in readers.dates(text, written_on, prefer=prefer)]

    return read


# ---------------------------------------------------------------------------------------------
# Amounts

Amount = tuple[Decimal, "str | None"]


def rules_extract_amounts(text: str) -> list[Amount]:
    from lifelong.facts import extract

    out = []
    for v in extract(text).of_kind("money", negated=None):
        currency, _, number = v.value.partition(" ")
        try:
            out.append((Decimal(number), currency or None))
        except InvalidOperation:
            continue
    return out


_BASE_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
_BASE_AMOUNT = re.compile(
    r"([$€£¥₹]|\b(?:USD|EUR|GBP|CHF|JPY|INR)\b)\s?(\d[\d.,]*\d|\d)"
    r"|(\d[\d.,]*\d|\d)\s?([$€£¥₹]|(?:USD|EUR|GBP|CHF|JPY|INR)\b)"
)


def _base_number(text: str) -> Decimal | None:
    m = re.search(r"[.,](\d{1,2})$", text)
    whole = text[: m.start()] if m else text
    digits = re.sub(r"\D", "", whole) + ("." + m.group(1) if m else "")
    try:
        return Decimal(digits)
    except InvalidOperation:
        return None


def baseline_amounts(text: str) -> list[Amount]:
    out = []
    for m in _BASE_AMOUNT.finditer(text):
        symbol, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        value = _base_number(number)
        if value is not None:
            out.append((value, _BASE_SYMBOLS.get(symbol, symbol)))
    return out


def price_parser_alone(text: str) -> list[Amount]:
    from price_parser import Price

    price = Price.fromstring(text)
    if price.amount is None:
        return []
    currency = None
    if price.currency:
        symbols, names, _, _ = readers._currency_lexicon()
        currency = symbols.get(price.currency) or names.get(price.currency.lower())
    return [(price.amount, currency)]


# ---------------------------------------------------------------------------------------------
# Statements


def rules_snippets(block: str) -> list[str]:
    from lifelong_plugins.dreaming.snippets import parse_snippets

    out = []
    for s in parse_snippets(block, "memory/2026-01-01.md", min_chars=1):
        text = s.text
        if s.context and text.startswith(s.context + ": "):
            text = text[len(s.context) + 2 :]
        out.append(text)
    return out


def rules_units(block: str) -> list[str]:
    from lifelong_plugins.recall.chunking import retrieval_units

    return [u.text.strip() for u in retrieval_units(block)]


def rules_split_sentences(block: str) -> list[str]:
    from lifelong_plugins.recall.chunking import split_sentences

    return split_sentences(block)


_BASE_SPLIT = re.compile(r"\n|(?<=[.!?])\s+")


def baseline_statements(block: str) -> list[str]:
    return [p.strip() for p in _BASE_SPLIT.split(block) if p and p.strip()]


def library_statements(engine: str, unit: str) -> Callable[[str], list[str]]:
    def read(block: str) -> list[str]:
        return readers.statements(block, engine=engine, unit=unit)

    return read


_EDGE_MARK = re.compile(r"^(?:[-*+•×·–—/;,|]|\d{1,3}[.)])\s+|^also\s+|[.,;]+$|\s+[-–—/|]$", re.I)


def _symbolic(ch: str) -> bool:
    return unicodedata.category(ch) in ("So", "Sk", "Cn", "Mn", "Cf") or ch in "\ufe0f\u200d"


def edge_form(statement: str) -> str:
    """A statement with normalised edges (see the module docstring)."""
    text = re.sub(r"\s+", " ", statement).strip()
    while True:
        before = text
        while text and _symbolic(text[0]):
            text = text[1:]
        while text and _symbolic(text[-1]):
            text = text[:-1]
        text = _EDGE_MARK.sub("", text.strip()).strip()
        if text == before:
            return text


# ---------------------------------------------------------------------------------------------
# Scoring


def _amount_key(amount: Any) -> tuple[Decimal, str | None]:
    value, currency = amount
    return Decimal(str(value)).normalize(), currency


def as_set(values: list[Any], kind: str) -> list[Any]:
    """An item's values once each (the match is a set match), in order."""
    if kind == "amounts":
        values = [_amount_key(v) for v in values]
    return list(dict.fromkeys(values))


def match_count(predicted: list[Any], expected: list[Any], kind: str) -> int:
    """True positives of one item: the expected values (a set) that a prediction matches, each
    prediction used once; an amount matches on its value, and on its currency where the expected
    one names it."""
    predicted, expected = as_set(predicted, kind), as_set(expected, kind)
    if kind == "amounts":
        left = list(predicted)
        hits = 0
        for value, currency in expected:
            for i, (pv, pc) in enumerate(left):
                if pv == value and (currency is None or pc == currency):
                    hits += 1
                    del left[i]
                    break
        return hits
    return len(set(predicted) & set(expected))


def prf(tp: int, n_pred: int, n_exp: int) -> tuple[float, float, float]:
    p = tp / n_pred if n_pred else (1.0 if not n_exp else 0.0)
    r = tp / n_exp if n_exp else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def item_input(kind: str, item: dict[str, Any]) -> tuple[Any, ...]:
    if kind == "phones":
        return (item["text"], item.get("region_hint"))
    if kind == "dates":
        return (item["text"], dt.date.fromisoformat(str(item["written_on"])))
    return (item["text"],)


def expected_of(kind: str, item: dict[str, Any]) -> list[Any]:
    if kind == "phones":
        return [str(p) for p in item["phones"]]
    if kind == "dates":
        return [str(d) for d in item["dates"]]
    if kind == "amounts":
        return [(Decimal(str(a["value"])), a.get("currency")) for a in item["amounts"]]
    return [s.strip() for s in item["statements"]]


def score(
    kind: str, read: Callable[..., list[Any]], items: list[dict[str, Any]], repeat: int = 1
) -> dict[str, Any]:
    predictions = []
    for item in items:
        try:
            predictions.append(list(read(*item_input(kind, item))))
        except Exception as exc:  # noqa: BLE001 - a reader that raises scores nothing on the item
            predictions.append([])
            print(f"  {kind}: reader raised {type(exc).__name__}: {exc}", file=sys.stderr)
    passes = []
    for _ in range(max(1, repeat)):  # the timed passes: lazily loaded data is already there
        start = time.perf_counter()
        for item in items:
            try:
                read(*item_input(kind, item))
            except Exception:  # noqa: BLE001
                pass
        passes.append(time.perf_counter() - start)
    us = min(passes) * 1e6 / max(1, len(items))
    forms = [(edge_form, "edges"), (lambda s: s.strip(), "exact")] if kind == "statements" else [(None, "")]
    out: dict[str, Any] = {"us_per_item": round(us, 1), "items": len(items)}
    for form, label in forms:
        tp = n_pred = n_exp = right = 0
        misses = []
        for item, pred in zip(items, predictions, strict=True):
            exp = expected_of(kind, item)
            if form is not None:
                pred = [x for x in (form(p) for p in pred) if x]
                exp = [form(e) for e in exp]
            pred, exp = as_set(pred, kind), as_set(exp, kind)
            hits = match_count(pred, exp, kind)
            tp, n_pred, n_exp = tp + hits, n_pred + len(pred), n_exp + len(exp)
            exact = hits == len(exp) == len(pred)
            right += exact
            if not exact:
                misses.append({"text": item["text"], "expected": _show(exp), "got": _show(pred)})
        p, r, f = prf(tp, n_pred, n_exp)
        suffix = f"_{label}" if label and label != "edges" else ""
        out.update(
            {
                f"precision{suffix}": round(p, 3),
                f"recall{suffix}": round(r, 3),
                f"f1{suffix}": round(f, 3),
                f"items_right{suffix}": right,
                f"tp{suffix}": tp,
                f"predicted{suffix}": n_pred,
                f"expected{suffix}": n_exp,
            }
        )
        if not suffix:
            out["misses"] = misses
    return out


def _show(values: list[Any]) -> list[Any]:
    return [f"{v[0]} {v[1]}" if isinstance(v, tuple) else v for v in values]


# ---------------------------------------------------------------------------------------------
# The readers of each list, and what their first use costs

READERS: dict[str, dict[str, Callable[..., list[Any]]]] = {
    "phones": {
        "rules: facts._SLOT_PHONE": rules_slot_phones,
        "rules: dreaming _digit_runs": rules_dreaming_phones,
        "baseline regex": baseline_phones,
        "phonenumbers (VALID)": lambda t, r: readers.phones(t, r),
        "phonenumbers (POSSIBLE)": lambda t, r: readers.phones(t, r, leniency="POSSIBLE"),
        # added after reading the held-out misses (a GB drama-range number read as German)
        "phonenumbers (VALID, hint only) [after misses]": lambda t, r: readers.phones(t, r, fallback=False),
    },
    "dates": {
        "rules: facts.extract": rules_extract_dates,
        "rules: dreaming values_of": rules_dreaming_dates,
        "baseline regex": baseline_dates,
        "dateparser (future)": library_dates("future"),
        "dateparser (current_period)": library_dates("current_period"),
    },
    "amounts": {
        "rules: facts.extract": rules_extract_amounts,
        "baseline regex": baseline_amounts,
        "price-parser alone": price_parser_alone,
        "price-parser+babel (digits)": lambda t: readers.amounts(t, words=False),
        "price-parser+babel+text2num": lambda t: readers.amounts(t),
    },
    "statements": {
        "rules: dreaming parse_snippets": rules_snippets,
        "rules: recall retrieval_units": rules_units,
        "rules: recall split_sentences": rules_split_sentences,
        "baseline split": baseline_statements,
        "pysbd (per line)": library_statements("pysbd", "line"),
        "pysbd (whole block)": library_statements("pysbd", "block"),
        "pysbd (in markdown units)": library_statements("pysbd", "markdown"),
        "sentencex (per line)": library_statements("sentencex", "line"),
        "sentencex (whole block)": library_statements("sentencex", "block"),
        "sentencex (in markdown units)": library_statements("sentencex", "markdown"),
    },
}

# reader -> (import statement, first call), run in a fresh interpreter
FIRST_USE: dict[str, tuple[str, str]] = {
    "rules: facts._SLOT_PHONE": (
        "import lifelong.facts",
        "lifelong.facts._SLOT_PHONE.findall('call 0176 4411 2290')",
    ),
    "rules: facts.extract": (
        "import lifelong.facts",
        "lifelong.facts.extract('dentist on 14 May, €1,200', None)",
    ),
    "rules: dreaming _digit_runs": (
        "import lifelong_plugins.dreaming.facts",
        "lifelong_plugins.dreaming.facts._digit_runs('call 0176 4411 2290')",
    ),
    "rules: dreaming values_of": (
        "import lifelong_plugins.dreaming.facts",
        "lifelong_plugins.dreaming.facts.values_of('dentist on 14 May')",
    ),
    "rules: dreaming parse_snippets": (
        "import lifelong_plugins.dreaming.snippets",
        "lifelong_plugins.dreaming.snippets.parse_snippets('paid rent\\ncall mum', 'memory/2026-01-01.md')",
    ),
    "rules: recall retrieval_units": (
        "import lifelong_plugins.recall.chunking",
        "lifelong_plugins.recall.chunking.retrieval_units('paid rent\\ncall mum')",
    ),
    "rules: recall split_sentences": (
        "import lifelong_plugins.recall.chunking",
        "lifelong_plugins.recall.chunking.split_sentences('Paid rent. Call mum.')",
    ),
    "phonenumbers (VALID)": (
        "import phonenumbers",
        "lifelong.readers.phones('call 0176 4411 2290', 'DE')",
    ),
    "dateparser (future)": (
        "import dateparser.search",
        "lifelong.readers.dates('dentist next thursday', __import__('datetime').date(2026, 3, 7))",
    ),
    "price-parser alone": ("import price_parser", "price_parser.Price.fromstring('€1.200')"),
    "price-parser+babel (digits)": (
        "import price_parser, babel.numbers",
        "lifelong.readers.amounts('rent €1.200', words=False)",
    ),
    "price-parser+babel+text2num": (
        "import price_parser, babel.numbers, text_to_num",
        "lifelong.readers.amounts('twelve hundred euros')",
    ),
    "pysbd (per line)": ("import pysbd", "lifelong.readers.statements('Paid rent. Call mum.')"),
    "sentencex (per line)": (
        "import sentencex",
        "lifelong.readers.statements('Paid rent. Call mum.', engine='sentencex')",
    ),
}
SAME_FIRST_USE = {
    "phonenumbers (POSSIBLE)": "phonenumbers (VALID)",
    "phonenumbers (VALID, hint only) [after misses]": "phonenumbers (VALID)",
    "dateparser (current_period)": "dateparser (future)",
    "pysbd (whole block)": "pysbd (per line)",
    "pysbd (in markdown units)": "pysbd (per line)",
    "sentencex (whole block)": "sentencex (per line)",
    "sentencex (in markdown units)": "sentencex (per line)",
}


def first_use_cost(reader: str, repeat: int = 1) -> dict[str, float] | None:
    """(import ms, first call ms) of ``reader`` in a fresh interpreter (the fastest of
    ``repeat`` interpreters), or None when unknown."""
    if reader not in FIRST_USE:
        return None
    runs = [_first_use_once(reader) for _ in range(max(1, repeat))]
    runs = [r for r in runs if r is not None]
    if not runs:
        return None
    return {k: min(r[k] for r in runs) for k in runs[0]}


def _first_use_once(reader: str) -> dict[str, float] | None:
    imp, call = FIRST_USE[reader]
    code = (
        "import time, json, lifelong.readers\n"
        f"t0 = time.perf_counter()\n{imp}\nt1 = time.perf_counter()\n{call}\n"
        "t2 = time.perf_counter()\n"
        "print(json.dumps({'import_ms': (t1 - t0) * 1e3, 'first_call_ms': (t2 - t1) * 1e3}))"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
        )
        cost = json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return None
    return {k: round(v, 1) for k, v in cost.items()}


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("phonenumbers", "dateparser", "price-parser", "babel", "text2num", "pysbd", "sentencex"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "missing"
    return out


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (subprocess.SubprocessError, OSError):
        return "unknown"


def run(
    corpus: dict[str, Any], lists: Iterable[str] = LISTS, import_cost: bool = True, repeat: int = 1
) -> dict[str, dict[str, dict[str, Any]]]:
    results: dict[str, dict[str, dict[str, Any]]] = {}
    costs: dict[str, dict[str, float] | None] = {}
    for kind in lists:
        items = corpus.get(kind) or []
        results[kind] = {}
        for name, read in READERS[kind].items():
            row = score(kind, read, items, repeat)
            if import_cost:
                source = SAME_FIRST_USE.get(name, name)
                if source not in costs:
                    costs[source] = first_use_cost(source, repeat)
                row["first_use"] = costs[source]
            results[kind][name] = row
    return results


def print_tables(results: dict[str, dict[str, dict[str, Any]]], misses: bool = False) -> None:
    for kind, rows in results.items():
        n = next(iter(rows.values()))["items"] if rows else 0
        extra = f" {'exactF1':>7}" if kind == "statements" else ""
        print(f"\n{kind} ({n} items)")
        print(
            f"{'reader':48} {'P':>6} {'R':>6} {'F1':>6}{extra} {'right':>7} {'µs/item':>9} "
            f"{'import ms':>9} {'1st call ms':>11}"
        )
        for name, r in rows.items():
            cost = r.get("first_use") or {}
            exact = f" {r['f1_exact']:>7.3f}" if kind == "statements" else ""
            print(
                f"{name:48} {r['precision']:>6.3f} {r['recall']:>6.3f} {r['f1']:>6.3f}{exact} "
                f"{r['items_right']:>3}/{r['items']:<3} {r['us_per_item']:>9.0f} "
                f"{cost.get('import_ms', float('nan')):>9.1f} {cost.get('first_call_ms', float('nan')):>11.1f}"
            )
        if misses:
            for name, r in rows.items():
                print(f"  -- misses of {name}")
                for m in r["misses"]:
                    print(
                        f"     {m['text']!r}\n        expected {m['expected']}\n        got      {m['got']}"
                    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--lists", default=",".join(LISTS), help="comma-separated: " + ", ".join(LISTS))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--misses", action="store_true", help="print every item a reader got wrong")
    ap.add_argument("--no-import-cost", action="store_true", help="skip the fresh-interpreter timings")
    ap.add_argument("--repeat", type=int, default=1, help="timed passes per reader (the fastest is kept)")
    args = ap.parse_args(argv)
    corpus = yaml.safe_load(args.corpus.read_text("utf-8"))
    lists = [x.strip() for x in args.lists.split(",") if x.strip()]
    unknown = [x for x in lists if x not in LISTS]
    if unknown:
        ap.error(f"unknown lists: {unknown}")
    results = run(corpus, lists, import_cost=not args.no_import_cost, repeat=args.repeat)
    print(f"corpus {args.corpus}: " + ", ".join(f"{k} {len(corpus.get(k) or [])}" for k in lists))
    print_tables(results, misses=args.misses)
    if readers.ERRORS:
        print(f"\nlibrary errors caught: {dict(readers.ERRORS)}")
    if args.json:
        payload = {
            "corpus": str(args.corpus),
            "commit": git_commit(),
            "command": " ".join(["python -m evals.readers", *(argv if argv is not None else sys.argv[1:])]),
            "versions": versions(),
            "python": sys.version.split()[0],
            "results": results,
        }
        args.json.write_text(json.dumps(payload, indent=1, ensure_ascii=False), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
