"""Lexical (FTS-only) recall across scripts (issue 15 item 16). ``python -m evals.multilingual
[--json]`` prints hit@5 per language for three ways of tokenising, on the same small set:

- ``unicode61 (old)``: what the recall index did before: FTS5 ``unicode61 remove_diacritics 2``
  over the raw text, the query's ``\\w+`` words OR-ed. A run of Chinese, Japanese or Thai is one
  token (a word inside it never matches); Thai and Devanagari vowel signs split words; a
  decomposed query word ("Mu\\u0308nchen") becomes two words.
- ``trigram``: an FTS5 ``trigram`` table beside it (substring match, any script), the query's
  words of three or more characters OR-ed (FTS5's trigram tokenizer cannot match shorter ones:
  most Chinese words are two characters).
- ``recall (now)``: the recall plugin itself on an index with embedding provider ``none``:
  NFKC text, runs of unspaced scripts as character bigrams (``lifelong.text.fts_text``), marks
  kept inside words. Measured through ``memory_search``, so it includes the plugin's ranking.

The set: one daily note per fact in English, German, French (accents; the queries decomposed,
NFD, as macOS file names and some keyboards produce), Chinese, Japanese, Thai and Hindi, with
same-language distractors about neighbouring subjects. Each query shares only a word or two
with its note (a name or a noun inside a run, not the note's wording), and none is a
substring of its note's full line. hit@5: the note is among the first five results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sqlite3
import tempfile
import unicodedata
from pathlib import Path

import yaml

# language -> [(note, query)]; every note is a target of one query and a distractor for the rest
SET: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("Maya booked the offsite at Gut Boltenhagen for April.", "where is the offsite venue Boltenhagen"),
        ("The pitch deck opens with the offline sync demo.", "what opens the pitch deck"),
        ("Sync bug TW-418 loses the older paragraph.", "TW-418 symptoms"),
        ("Lena prefers oat milk in her flat white.", "Lena coffee order oat"),
        ("The landlord raised the rent to 1,450 euros.", "how much rent does the landlord want"),
    ],
    "de": [
        ("Flug nach München gebucht, Abflug um 7:40.", "Flug München"),
        ("Die Übergabe an Jürgen ist am Donnerstag.", "Übergabe Jürgen"),
        ("Kündigung der Wohnung in Köln abgeschickt.", "Wohnung Köln Kündigung"),
        ("Größere Schränke für das Büro bestellt.", "Schränke Büro"),
        ("Der Zahnarzttermin wurde auf Freitag verschoben.", "Zahnarzttermin verschoben"),
    ],
    "fr": [
        ("Rendez-vous au café de la gare avec Hélène.", "café Hélène"),
        ("Le déménagement à Besançon est prévu en mai.", "déménagement Besançon"),
        ("Réunion budgétaire reportée à jeudi après-midi.", "réunion budgétaire"),
        ("Acheté des crêpes et du cidre pour la fête.", "crêpes fête"),
        ("Le vélo électrique est réparé chez Cédric.", "vélo Cédric"),
    ],
    "zh": [
        ("明天下午和王经理开会讨论预算。", "预算"),
        ("小李下周去上海出差三天。", "上海出差"),
        ("女儿的钢琴课改到星期六上午。", "钢琴课"),
        ("房东说下个月房租要涨价。", "房租"),
        ("我们决定把发布会推迟到六月。", "发布会"),
    ],
    "ja": [
        ("来週の金曜日に東京タワーへ行きます。", "東京タワー"),
        ("田中さんの送別会は駅前の居酒屋です。", "送別会"),
        ("新しいノートパソコンを注文しました。", "ノートパソコン"),
        ("歯医者の予約を水曜日に変更した。", "歯医者"),
        ("京都の旅館を三泊予約しました。", "京都の旅館"),
    ],
    "th": [
        ("ประชุมทีมเรื่องงบประมาณวันพฤหัสบดี", "งบประมาณ"),
        ("จองตั๋วเครื่องบินไปเชียงใหม่แล้ว", "เชียงใหม่"),
        ("แม่อยากกินข้าวมันไก่ที่ร้านใกล้บ้าน", "ข้าวมันไก่"),
        ("ส่งรถไปซ่อมที่อู่ของสมชาย", "สมชาย"),
        ("ลูกสาวเริ่มเรียนเปียโนเดือนหน้า", "เปียโน"),
    ],
    "hi": [
        ("मैंने नई किताब पढ़ना शुरू किया।", "किताब"),
        ("रविवार को दिल्ली में शादी है।", "दिल्ली शादी"),
        ("डॉक्टर ने दवाई बदल दी है।", "दवाई"),
        ("बिजली का बिल अभी तक नहीं आया।", "बिजली बिल"),
        ("गुरुवार को टीम की बैठक है।", "बैठक"),
    ],
}

DECOMPOSED = {"de", "fr"}  # their queries are asked in NFD


def cases() -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """The notes (relpath -> text) and the queries (language, query, relpath)."""
    files: dict[str, str] = {}
    queries: list[tuple[str, str, str]] = []
    day = dt.date(2026, 1, 1)
    for lang, pairs in SET.items():
        for note, query in pairs:
            rel = f"memory/{day.isoformat()}.md"
            files[rel] = f"# {day.isoformat()}\n\n- {note}\n"
            q = unicodedata.normalize("NFD", query) if lang in DECOMPOSED else query
            queries.append((lang, q, rel))
            day += dt.timedelta(days=1)
    return files, queries


def _fts_table(tokenizer: str, files: dict[str, str], transform) -> sqlite3.Connection:  # noqa: ANN001
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(path UNINDEXED, text, tokenize = {tokenizer})")
    conn.executemany("INSERT INTO t(path, text) VALUES (?, ?)", [(p, transform(x)) for p, x in files.items()])
    return conn


def _top(conn: sqlite3.Connection, match: str | None, k: int = 5) -> list[str]:
    if not match:
        return []
    return [
        r[0] for r in conn.execute("SELECT path FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", [match, k])
    ]


def _quoted_or(units: list[str]) -> str | None:
    units = [u for u in dict.fromkeys(units) if u]
    return " OR ".join('"' + u.replace('"', '""') + '"' for u in units) or None


def old_unicode61(files: dict[str, str], queries: list[tuple[str, str, str]]) -> list[bool]:
    conn = _fts_table('"unicode61 remove_diacritics 2"', files, lambda x: x)
    return [rel in _top(conn, _quoted_or(re.findall(r"\w+", q.casefold()))) for _, q, rel in queries]


def trigram(files: dict[str, str], queries: list[tuple[str, str, str]]) -> list[bool]:
    conn = _fts_table("trigram", files, lambda x: unicodedata.normalize("NFKC", x))
    out = []
    for _, q, rel in queries:
        words = [w for w in re.findall(r"\S+", unicodedata.normalize("NFKC", q).casefold()) if len(w) >= 3]
        out.append(rel in _top(conn, _quoted_or([w.strip(".,!?") for w in words])))
    return out


def recall_now(files: dict[str, str], queries: list[tuple[str, str, str]]) -> list[bool]:
    from lifelong import clock
    from lifelong.host import Host
    from lifelong.workspace import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "lifelong.yaml").write_text(
            yaml.safe_dump({"timezone": "UTC", "embedding": {"provider": "none"}}), encoding="utf-8"
        )
        (root / "memory").mkdir()
        for rel, text in files.items():
            (root / rel).write_text(text, encoding="utf-8")
        host = Host(Workspace(root), entry_points=False, builtins=["recall"])
        try:
            with clock.pinned(dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)):
                out = []
                for _, q, rel in queries:
                    res = host.call_tool("memory_search", {"query": q, "max_results": 5, "source": "eval"})
                    out.append(rel in [r["path"] for r in res.get("results", [])])
        finally:
            host.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    files, queries = cases()
    langs = list(SET)
    variants = {
        "unicode61 (old)": old_unicode61(files, queries),
        "trigram": trigram(files, queries),
        "recall (now)": recall_now(files, queries),
    }
    table: dict[str, dict[str, float]] = {}
    for name, hits in variants.items():
        row = {}
        for lang in langs:
            mine = [h for (lg, _, _), h in zip(queries, hits, strict=True) if lg == lang]
            row[lang] = sum(mine) / len(mine)
        row["all"] = sum(hits) / len(hits)
        table[name] = row
    if args.json:
        print(json.dumps({"hit@5": table, "queries": len(queries)}, indent=2))
        return 0
    print(f"FTS-only hit@5 per language ({len(queries)} queries, {len(files)} notes)")
    print(f"{'variant':<18}" + "".join(f"{lang:>6}" for lang in [*langs, "all"]))
    for name, row in table.items():
        print(f"{name:<18}" + "".join(f"{row[lang]:>6.2f}" for lang in [*langs, "all"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
