"""What the held-out reader sets' scripts share (``evals.value_pairs``, ``evals.day_titles``): the
command line (a set file, ``--json``, ``--misses``), figures per group of rows, the JSON without
the rows."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any


def reader_parser(prog: str, doc: str, flag: str, default: Path, wrong: str) -> argparse.ArgumentParser:
    """``prog``'s arguments: ``flag`` (the set file, ``default`` when not given), ``--json FILE``
    and ``--misses`` (print each reader's wrong ``wrong``, which makes the set tuned-on)."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    parser.add_argument(flag, type=Path, default=default)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--misses", action="store_true", help=f"print each reader's wrong {wrong} (makes the set tuned-on)"
    )
    return parser


def grouped(
    rows: list[dict], key: Callable[[dict], str], summarise: Callable[[list[dict]], dict]
) -> dict[str, dict]:
    """``summarise`` of the rows of each ``key``, keys in order."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return {k: summarise(v) for k, v in sorted(groups.items())}


def write_figures(result: dict[str, Any], path: Path) -> None:
    """The figures as JSON, each reader's rows left out."""
    for s in result["readers"].values():
        s.pop("rows", None)
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
