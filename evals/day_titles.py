"""A day's title or a statement: title readers on note lines written by someone who never read them.

``python -m evals.day_titles [--lines evals/heldout/titles-1.yaml] [--json FILE] [--misses]``

Many people open each day's notes with a line that only names the day ("5 Şubat Pzt",
"4月16日(月) 晴れ", "══ Thứ Hai, 14/10/2030 ══ ☔"). Recall makes such a line the context of the
lines under it, not a retrieval unit: alone it would match any question about the day and tell the
reader nothing ("1 Mart Per" led a search for a club fee through "per"). A statement taken for a
title is the worse error: it stops being a unit of its own.

Each line (``line``, ``title``: whether it is a day's title; ``lang``) is read by each reader
below. Printed per reader: titles read as titles, statements kept as statements, and accuracy;
then accuracy by script.

Readers:

- ``core title_line``: :func:`lifelong.markdown.title_line` (what recall's units use);
- ``baseline: every line a statement``: what a chunker of lines does, the first a user would try;
- ``baseline: short with a digit``: a line of at most four words with a digit in it;
- ``dateparser``: when it is installed, a line in which ``dateparser.search.search_dates`` finds a
  date and at most four other words remain.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

import yaml

from evals.reader_sets import grouped, reader_parser, write_figures
from lifelong.markdown import TITLE_MAX_WORDS, title_line

HELDOUT = Path(__file__).parent / "heldout" / "titles-1.yaml"
_WORD = re.compile(r"[^\W_]+")


def short_with_digit(line: str) -> bool:
    return len(_WORD.findall(line)) <= TITLE_MAX_WORDS and any(ch.isdecimal() for ch in line)


def _dateparser_reader() -> Callable[[str], bool] | None:
    try:
        from dateparser.search import search_dates
    except ImportError:
        return None

    def read(line: str) -> bool:
        found = search_dates(line, settings={"RETURN_AS_TIMEZONE_AWARE": False}) or []
        if not found:
            return False
        rest = line
        for text, _ in found:
            rest = rest.replace(text, " ")
        return len(_WORD.findall(rest)) <= TITLE_MAX_WORDS

    return read


def readers() -> dict[str, Callable[[str], bool]]:
    out: dict[str, Callable[[str], bool]] = {
        "core title_line": title_line,
        "baseline: every line a statement": lambda _line: False,
        "baseline: short with a digit": short_with_digit,
    }
    if (dp := _dateparser_reader()) is not None:
        out["dateparser"] = dp
    return out


def script(line: str) -> str:
    """The script of a line's first letter outside Latin, else Latin."""
    for ch in line:
        if ch.isalpha() and not ch.isascii():
            name = unicodedata.name(ch, "")
            first = name.split(" ")[0]
            if first not in ("LATIN", "FEMININE", "MASCULINE", "MODIFIER"):  # "2ª": Latin
                return {"CJK": "Han", "HIRAGANA": "Kana", "KATAKANA": "Kana"}.get(first, first.title())
    return "Latin"


def summarise(rows: list[dict]) -> dict:
    titles = [r for r in rows if r["title"]]
    statements = [r for r in rows if not r["title"]]
    return {
        "lines": len(rows),
        "titles_read_titles": sum(r["read"] for r in titles) / max(1, len(titles)),
        "statements_kept": sum(not r["read"] for r in statements) / max(1, len(statements)),
        "accuracy": sum(r["read"] == r["title"] for r in rows) / max(1, len(rows)),
    }


def run(path: Path) -> dict:
    lines = yaml.safe_load(path.read_text("utf-8"))["lines"]
    out: dict = {
        "file": path.name,
        "lines": len(lines),
        "titles": sum(x["title"] for x in lines),
        "readers": {},
    }
    for name, read in readers().items():
        rows = [{**x, "read": bool(read(str(x["line"])))} for x in lines]
        out["readers"][name] = summarise(rows) | {
            "by_script": grouped(rows, lambda r: script(str(r["line"])), summarise),
            "rows": rows,
        }
    return out


def main(argv: list[str] | None = None) -> None:
    args = reader_parser("python -m evals.day_titles", __doc__ or "", "--lines", HELDOUT, "lines").parse_args(
        argv
    )
    r = run(args.lines)
    print(f"{r['file']}: {r['lines']} lines, {r['titles']} day titles")
    print(f"  {'reader':34} {'titles':>7} {'statements kept':>15} {'accuracy':>8}")
    for name, s in r["readers"].items():
        print(f"  {name:34} {s['titles_read_titles']:7.3f} {s['statements_kept']:15.3f} {s['accuracy']:8.3f}")
    scripts = next(iter(r["readers"].values()))["by_script"]
    print("  accuracy by script (lines): " + ", ".join(r["readers"]))
    for name in scripts:
        print(
            f"    {name:12} {scripts[name]['lines']:4d} "
            + "  ".join(f"{s['by_script'][name]['accuracy']:.3f}" for s in r["readers"].values())
        )
    if args.misses:
        for name, s in r["readers"].items():
            for row in s["rows"]:
                if row["read"] != row["title"]:
                    print(f"  miss [{name}] {row['id']} {row['lang']} title={row['title']}: {row['line']!r}")
    if args.json:
        write_figures(r, args.json)


if __name__ == "__main__":
    main()
