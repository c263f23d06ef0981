"""One value written two ways is one value: value readers on pairs of note lines written by someone
who never read them.

``python -m evals.value_pairs [--pairs evals/heldout/values-1.yaml] [--json FILE] [--misses]``

Each pair (``kind``: phone, money, date, time, plate, id, quantity, percent, email, flight,
address; lines ``a`` and ``b``; ``same``: whether they state the same value) is read by each reader
below. A reader says **same** when the two lines share a value it reads, **different** when both
have values and share none, and **unread** when either line gives it none. Printed per reader:
the share of same pairs read as same, the share of different pairs read as different (a merge
there is the worse error: supersede and the gate would take a changed value for the old one), the
share of same pairs read as two different values (the other error that matters: a change where
there is none), the share unread, and accuracy over all pairs; then per kind.

Readers:

- ``core typed_values``: :func:`lifelong.facts.typed_value_pair` (supersede, ``relate``, the
  gate): every (shape, value) :func:`lifelong.facts.typed_values` reads in each line, a date
  without a year or an amount without a currency completed from the other line;
- ``dreaming values_of``: the grouping's values (``lifelong_plugins.dreaming.facts.values_of``);
- ``baseline: digits``: what a user would try first, each line's digits compared as one string
  (in a line without a digit, its e-mail-like words, lower-cased).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import yaml
from lifelong_plugins.dreaming.facts import values_of

from evals.reader_sets import grouped, reader_parser, write_figures
from lifelong.facts import typed_value_pair

HELDOUT = Path(__file__).parent / "heldout" / "values-1.yaml"


def digits_baseline(text: str) -> frozenset[str]:
    """Each line's digits as one string; a line without one, its e-mail-like words."""
    digits = "".join(ch for ch in text if ch.isdecimal())
    if digits:
        return frozenset({str(int(digits)) if digits.isascii() else digits})
    return frozenset(w.lower() for w in re.findall(r"\S+@\S+", text))


PairReader = Callable[[str, str], tuple[frozenset, frozenset]]


def each_line(read: Callable[[str], frozenset]) -> PairReader:
    """A reader of one line as a reader of a pair: each line read alone."""
    return lambda a, b: (read(a), read(b))


READERS: dict[str, PairReader] = {
    "core typed_values": typed_value_pair,
    "dreaming values_of": each_line(values_of),
    "baseline: digits": each_line(digits_baseline),
}


def verdict(a: frozenset, b: frozenset) -> str:
    if a & b:
        return "same"
    return "different" if a and b else "unread"


def score(pairs: list[dict], read: PairReader) -> dict:
    rows = []
    for p in pairs:
        va, vb = read(p["a"], p["b"])
        rows.append(
            {**p, "verdict": verdict(va, vb), "read_a": sorted(map(str, va)), "read_b": sorted(map(str, vb))}
        )
    return summarise(rows) | {"rows": rows}


def summarise(rows: list[dict]) -> dict:
    same = [r for r in rows if r["same"]]
    diff = [r for r in rows if not r["same"]]
    right = sum(r["verdict"] == ("same" if r["same"] else "different") for r in rows)
    return {
        "pairs": len(rows),
        "same_read_same": sum(r["verdict"] == "same" for r in same) / max(1, len(same)),
        "different_read_different": sum(r["verdict"] == "different" for r in diff) / max(1, len(diff)),
        "different_merged": sum(r["verdict"] == "same" for r in diff) / max(1, len(diff)),
        # one value read as two: where a reader of changes would see a change that is none
        "same_split": sum(r["verdict"] == "different" for r in same) / max(1, len(same)),
        "unread": sum(r["verdict"] == "unread" for r in rows) / max(1, len(rows)),
        "accuracy": right / max(1, len(rows)),
    }


def run(path: Path) -> dict:
    pairs = yaml.safe_load(path.read_text("utf-8"))["pairs"]
    kinds = Counter(p["kind"] for p in pairs)
    out: dict = {"file": path.name, "pairs": len(pairs), "kinds": dict(sorted(kinds.items())), "readers": {}}
    for name, read in READERS.items():
        result = score(pairs, read)
        result["by_kind"] = grouped(result["rows"], lambda r: r["kind"], summarise)
        out["readers"][name] = result
    return out


def main(argv: list[str] | None = None) -> None:
    args = reader_parser(
        "python -m evals.value_pairs", __doc__ or "", "--pairs", HELDOUT, "pairs"
    ).parse_args(argv)
    r = run(args.pairs)
    kinds = r["kinds"]
    print(f"{r['file']}: {r['pairs']} pairs ({', '.join(f'{k} {n}' for k, n in kinds.items())})")
    print(
        f"  {'reader':22} {'same->same':>10} {'diff->diff':>10} {'diff merged':>11} {'same split':>10}"
        f" {'unread':>7} {'accuracy':>8}"
    )
    for name, s in r["readers"].items():
        print(
            f"  {name:22} {s['same_read_same']:10.3f} {s['different_read_different']:10.3f} "
            f"{s['different_merged']:11.3f} {s['same_split']:10.3f} {s['unread']:7.3f} {s['accuracy']:8.3f}"
        )
    print("  accuracy by kind: " + ", ".join(r["readers"]))
    for kind in kinds:
        print(
            f"    {kind:9} "
            + "  ".join(f"{s['by_kind'][kind]['accuracy']:.3f}" for s in r["readers"].values())
        )
    if args.misses:
        for name, s in r["readers"].items():
            for row in s["rows"]:
                if row["verdict"] != ("same" if row["same"] else "different"):
                    print(
                        f"  miss [{name}] {row['id']} {row['kind']} same={row['same']} -> {row['verdict']}: "
                        f"{row['a']!r} {row['read_a']} | {row['b']!r} {row['read_b']}"
                    )
    if args.json:
        write_figures(r, args.json)


if __name__ == "__main__":
    main()
