"""Issue 15 (what a new user trips on): the recall items 8, 12, 16, 17, 18 and wiki/reports."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import yaml
from click.testing import CliRunner
from lifelong_plugins.recall import service

from lifelong import clock
from lifelong.cli import cli
from lifelong.host import Host

NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=clock.zone("Europe/Berlin"))


def schema_defaults() -> dict[str, object]:
    manifest = yaml.safe_load((Path(service.__file__).parent / "plugin.yaml").read_text("utf-8"))
    return {k: p["default"] for k, p in manifest["config_schema"]["properties"].items()}


# item 12 ----------------------------------------------------------------------------------------
def test_every_default_in_the_tool_schema_is_the_config_schema_default() -> None:
    defaults = schema_defaults()
    checked = set()
    for params in (service.SEARCH_PARAMETERS, service.GET_PARAMETERS):
        for name, prop in params["properties"].items():
            if name not in defaults:  # e.g. memory_get's from: always line 1, not configurable
                continue
            for value in re.findall(r"Default:? ([0-9][0-9.]*[0-9]|[0-9])", prop.get("description", "")):
                assert value == str(defaults[name]), (name, value, defaults[name])
                checked.add(name)
            for bound in ("minimum", "maximum"):
                assert prop.get(bound) == yaml_bound(name, bound), (name, bound)
    assert {"min_score", "max_results"} <= checked


def yaml_bound(name: str, bound: str) -> object:
    manifest = yaml.safe_load((Path(service.__file__).parent / "plugin.yaml").read_text("utf-8"))
    return manifest["config_schema"]["properties"][name].get(bound)


def test_every_default_in_search_and_get_help_is_the_config_schema_default(tmp_path: Path) -> None:
    defaults = schema_defaults()
    runner = CliRunner()
    for command, options in (
        ("search", {"--min-score": "min_score", "--max-results": "max_results"}),
        ("get", {"--lines": "get_max_lines"}),
    ):
        out = runner.invoke(cli, ["--workspace", str(tmp_path), command, "--help"], catch_exceptions=False)
        assert out.exit_code == 0, out.output
        text = " ".join(out.output.split())
        for flag, key in options.items():
            # the option's help text, up to the next option
            m = re.search(re.escape(flag) + r" [A-Z]+ (.*?)(?= -{1,2}[a-z]|$)", text)
            assert m, (flag, text)
            numbers = re.findall(r"(?:default|at most):? ([0-9][0-9.]*[0-9]|[0-9])", m.group(1))
            assert numbers == [str(defaults[key])], (flag, m.group(1), defaults[key])


# item 18 ----------------------------------------------------------------------------------------
def test_lexical_rescue_only_fills_free_slots(make_workspace, write_plugin) -> None:
    mod = write_plugin(
        "tp_rescue",
        """
        @hookimpl
        def retrieval_post(ctx, request, candidates):
            for c in candidates:
                c.score = 0.05  # the exact keyword hit scores below min_score: only rescue keeps it
            return candidates

        @hookimpl
        def corpus_supplement(ctx, request):
            return [dict(chunk_id=-1 - i, path=f"wiki/claims/c{i}.md", start_line=1, end_line=1,
                         corpus="wiki", text=text, score=score)
                    for i, (text, score) in enumerate([("The release train leaves on Fridays.", 0.9),
                                                       ("Quarterly planning happens in the barn.", 0.8)])]
        """,
        ["retrieval_post", "corpus_supplement"],
    )
    ws = make_workspace(
        {"memory/2026-03-04.md": "# 2026-03-04\n- Sync bug TW-418 loses the older paragraph.\n"},
        {"embedding": {"provider": "none"}},
    )
    host = Host(ws, entry_points=False, extra_plugins=[mod])
    try:
        with clock.pinned(NOW):
            two = host.call_tool("memory_search", {"query": "TW-418", "corpus": "all", "max_results": 2})
            three = host.call_tool("memory_search", {"query": "TW-418", "corpus": "all", "max_results": 3})
            alone = host.call_tool("memory_search", {"query": "TW-418", "max_results": 2})
    finally:
        host.close()
    # two strict results fill k=2: the rescued keyword hit does not take the second one's slot
    assert [r["path"] for r in two["results"]] == ["wiki/claims/c0.md", "wiki/claims/c1.md"]
    # a free slot is filled by it
    assert [r["path"] for r in three["results"]] == [
        "wiki/claims/c0.md",
        "wiki/claims/c1.md",
        "memory/2026-03-04.md",
    ]
    assert [r["path"] for r in alone["results"]] == ["memory/2026-03-04.md"]


# wiki/reports ----------------------------------------------------------------------------------
def test_wiki_reports_are_not_indexed_and_old_rows_go(make_workspace, monkeypatch) -> None:
    from lifelong_plugins.recall import scan as scan_mod

    ws = make_workspace(
        {
            "wiki/offsite.md": "# Offsite\n- Venue: Gut Boltenhagen.\n",
            "wiki/reports/lint.md": "# Lint\n- offsite: Gut Boltenhagen claim has one source.\n",
            "wiki/reports/contradictions.md": "# Contradictions\n- Boltenhagen vs Potsdam offsite.\n",
        },
        {"embedding": {"provider": "none"}},
    )
    host = Host(ws)
    try:
        # an index built before reports were skipped holds them
        monkeypatch.setattr(scan_mod, "GENERATED_DIRS", ("memory/dreaming/", ".lifelong/"))
        service.index_for(host.ctx).sync()
        paths = {r["path"] for r in host.store.query("SELECT path FROM files")}
        assert "wiki/reports/lint.md" in paths
        monkeypatch.undo()
        with clock.pinned(NOW):
            out = host.call_tool("memory_search", {"query": "Boltenhagen offsite", "corpus": "all"})
        assert [r["path"] for r in out["results"]] == ["wiki/offsite.md"]
        paths = {r["path"] for r in host.store.query("SELECT path FROM files")}
        chunk_paths = {r["path"] for r in host.store.query("SELECT path FROM chunks")}
        assert paths == chunk_paths == {"wiki/offsite.md"}
    finally:
        host.close()


# item 16 ----------------------------------------------------------------------------------------
MULTILINGUAL = {
    "memory/2026-03-02.md": "# 2026-03-02\n- Flug nach München gebucht, Abflug 7:40.\n",
    "memory/2026-03-03.md": "# 2026-03-03\n- Met Lena at the café on the corner for the design review.\n",
    "memory/2026-03-04.md": "# 2026-03-04\n- 明天下午和王经理开会讨论预算。\n",
    "memory/2026-03-05.md": "# 2026-03-05\n- 来週の金曜日に東京タワーへ行きます。\n",
    "memory/2026-03-06.md": "# 2026-03-06\n- ประชุมทีมเรื่องงบประมาณวันพฤหัสบดี\n",
    "memory/2026-03-07.md": "# 2026-03-07\n- मैंने किताब पढ़ना शुरू किया।\n",
    "memory/2026-03-08.md": "# 2026-03-08\n- Bought groceries and fixed the bike.\n",
}


def test_fts_only_search_normalises_and_finds_cjk_thai_words(make_workspace) -> None:
    import unicodedata

    ws = make_workspace(MULTILINGUAL, {"embedding": {"provider": "none"}})
    host = Host(ws, entry_points=False, builtins=["recall"])
    nfd = lambda s: unicodedata.normalize("NFD", s)  # noqa: E731
    cases = {
        nfd("München"): "memory/2026-03-02.md",
        nfd("café"): "memory/2026-03-03.md",
        "预算": "memory/2026-03-04.md",  # "budget", inside a run without spaces
        "王经理": "memory/2026-03-04.md",
        "東京タワー": "memory/2026-03-05.md",
        "งบประมาณ": "memory/2026-03-06.md",  # Thai "budget", inside a run, tone marks included
        "किताब": "memory/2026-03-07.md",  # a Devanagari word with vowel signs
    }
    try:
        with clock.pinned(NOW):
            for query, path in cases.items():
                out = host.call_tool("memory_search", {"query": query, "max_results": 5})
                assert [r["path"] for r in out["results"]][:1] == [path], (query, out)
                assert out["results"][0]["snippet"] in MULTILINGUAL[path]  # the file's own text
    finally:
        host.close()
    # the stored chunk text stays the file's text (citations and snippets are exact)
    assert all("  " not in r["text"] for r in host.store.query("SELECT text FROM chunks"))


# item 17 ----------------------------------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from lifelong_plugins.recall.chunking import (  # noqa: E402
    chunk_markdown,
    chunk_units,
    line_pieces,
    retrieval_units,
    split_lines,
)

from lifelong.markdown import estimate_tokens  # noqa: E402

_WORDISH = st.text(alphabet="abcdefghij 。，.!?,;东京预算会议ภาษาไทย", min_size=0, max_size=12)


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(_WORDISH, min_size=1, max_size=400), bound=st.integers(min_value=20, max_value=400))
def test_line_pieces_rejoin_exactly_and_respect_the_bound(parts: list[str], bound: int) -> None:
    line = "".join(parts)
    pieces = line_pieces(line, bound)
    assert "".join(pieces) == line
    assert (
        all(estimate_tokens(p) <= bound for p in pieces)
        or len(pieces) == 1
        and estimate_tokens(line) <= bound
    )


def _long_doc(line: str) -> str:
    return f"# Notes\n\n{line}\n\n- a short item after it\n"


def _check_bounded(text: str, target: int = 400, unit_tokens: int = 160) -> list:
    chunks = chunk_markdown(text, target_tokens=target, overlap_tokens=80)
    lines = split_lines(text)
    units = retrieval_units(text, unit_tokens=unit_tokens)
    for c in chunks:
        assert estimate_tokens(c.text) <= 2 * target, (c.start_line, len(c.text))
        whole = "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.text == whole or (c.start_line == c.end_line and c.text in whole)
        for u in chunk_units(c, units, lines, unit_tokens):
            assert estimate_tokens(u.text) <= unit_tokens and u.text in c.text
    # the slices of the long line cover it exactly, in order
    sliced = [c.text for c in chunks if c.start_line == 3]
    assert "".join(sliced) == lines[2]
    return chunks


def test_a_36k_character_line_is_split_into_bounded_chunks_and_units() -> None:
    sentence = "The migration of the billing service moved invoices to the new ledger on Tuesday. "
    line = (sentence * (36_000 // len(sentence) + 1))[:36_000]
    chunks = _check_bounded(_long_doc(line))
    assert len([c for c in chunks if c.start_line == 3]) >= 36_000 // 4 // 400
    # 2,000+ characters of one line: split too (a chunk of 500 tokens is over the 400 target)
    assert len([c for c in _check_bounded(_long_doc(line[:2400])) if c.start_line == 3]) == 2


def test_cjk_is_sized_by_character_not_at_english_rates() -> None:
    line = "明天下午和王经理开会讨论预算。" * 140  # 2,100 characters: ~2,100 tokens, not ~525
    chunks = _check_bounded(_long_doc(line))
    assert len([c for c in chunks if c.start_line == 3]) >= 2_100 // 400
    # cut after a sentence end
    assert all(c.text.endswith("。") for c in chunks if c.start_line == 3)


def test_a_long_line_is_indexed_and_found_as_a_bounded_slice(make_workspace) -> None:
    filler = "Routine status update about the weekly sync with nothing special to report. "
    line = filler * 200 + "The vault combination was changed to Zephyr-7731 by Priya. " + filler * 200
    ws = make_workspace({"memory/2026-03-04.md": _long_doc(line)}, {"embedding": {"provider": "none"}})
    host = Host(ws, entry_points=False, builtins=["recall"])
    try:
        with clock.pinned(NOW):
            out = host.call_tool("memory_search", {"query": "Zephyr-7731 vault combination"})
        top = out["results"][0]
        assert top["citation"] == "Source: memory/2026-03-04.md#L3-L3"
        assert "Zephyr-7731" in top["snippet"] and len(top["snippet"]) <= 1000
        texts = [r["text"] for r in host.store.query("SELECT text FROM units ORDER BY id")]
        assert texts and all(estimate_tokens(t) <= 160 for t in texts)
    finally:
        host.close()


# item 8 -----------------------------------------------------------------------------------------
def test_search_with_now_in_the_past_does_not_see_notes_dated_after_it(make_workspace) -> None:
    import json

    ws = make_workspace(
        {
            "memory/2026-03-02.md": "# 2026-03-02\n- Offsite venue shortlist: Potsdam or Boltenhagen.\n",
            "memory/2026-03-16.md": "# 2026-03-16\n- Offsite venue booked: Gut Boltenhagen.\n",
            "memory/2026-03-23.md": "# 2026-03-23\n- Offsite venue confirmed, Boltenhagen deposit paid.\n",
            "notes/trip.md": "---\ndate: 2026-03-20\n---\n# Trip\n- Offsite venue tour at Boltenhagen.\n",
            "notes/ideas.md": "# Ideas\n- An offsite venue by the sea, maybe Boltenhagen.\n",
        },
        {"embedding": {"provider": "none"}, "plugins": {"recall": {"extra_paths": ["notes/*.md"]}}},
    )
    runner = CliRunner()

    def paths(now: str) -> set[str]:
        out = runner.invoke(
            cli,
            ["--workspace", str(ws.root), "search", "offsite venue Boltenhagen", "--json", "--now", now],
            catch_exceptions=False,
        )
        assert out.exit_code == 0, out.output
        return {r["path"] for r in json.loads(out.output)["results"]}

    assert paths("2026-03-03T09:00") == {"memory/2026-03-02.md", "notes/ideas.md"}
    assert paths("2026-03-21T09:00") == {
        "memory/2026-03-02.md",
        "memory/2026-03-16.md",
        "notes/trip.md",
        "notes/ideas.md",
    }
    assert "memory/2026-03-23.md" in paths("2026-03-24T09:00")


def test_m007_rebuilds_an_old_full_text_table(make_workspace) -> None:
    """An index built before m007 (raw text, marks splitting words) is rebuilt on open and the
    next search re-chunks it: a Chinese word inside a run is found without vectors."""
    ws = make_workspace(MULTILINGUAL, {"embedding": {"provider": "none"}})
    host = Host(ws, entry_points=False, builtins=["recall"])
    service.index_for(host.ctx).sync()
    conn = host.store.conn
    conn.execute("DROP TABLE chunks_vocab")
    conn.execute("DROP TABLE chunks_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(text, heading, tokenize = 'unicode61 remove_diacritics 2')"
    )
    conn.execute("CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, row)")
    conn.execute("INSERT INTO chunks_fts(rowid, text, heading) SELECT id, text, heading FROM chunks")
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm007_fts_text'")
    conn.commit()
    with clock.pinned(NOW):
        assert host.call_tool("memory_search", {"query": "预算"})["results"] == []  # the old table
    host.close()
    host = Host(ws, entry_points=False, builtins=["recall"])
    try:
        with clock.pinned(NOW):
            out = host.call_tool("memory_search", {"query": "预算"})
        assert [r["path"] for r in out["results"]][:1] == ["memory/2026-03-04.md"]
    finally:
        host.close()


# item 2 -----------------------------------------------------------------------------------------
def test_extra_paths_take_folders_absolute_paths_and_globs_and_one_bad_entry_stops_nothing(
    tmp_path: Path,
) -> None:
    """An absolute glob inside the workspace, a folder name, a relative glob and a duplicate are
    indexed; an empty entry and a path outside the workspace are skipped with one line each in
    `status`; `index`, `search` and the gate keep working."""
    root, outside = tmp_path / "ws", tmp_path / "elsewhere"
    (root / "memory").mkdir(parents=True)
    (root / "notes" / "deep").mkdir(parents=True)
    (root / "docs").mkdir()
    outside.mkdir()
    (root / "notes" / "deep" / "a.md").write_text("- the zebra migration runs on Fridays\n")
    (root / "docs" / "b.md").write_text("- the okapi cache is warmed at boot\n")
    (outside / "c.md").write_text("- the narwhal secret lives outside\n")
    extra = [str(root / "docs" / "*.md"), "notes", " notes ", "", str(outside / "*.md")]
    config = {"embedding": {"provider": "none"}, "plugins": {"recall": {"extra_paths": extra}}}
    (root / "lifelong.yaml").write_text(yaml.safe_dump(config))
    run = CliRunner().invoke
    base = ["--workspace", str(root), "--now", "2026-03-24T09:00"]
    indexed = run(cli, [*base, "index"])
    assert indexed.exit_code == 0, indexed.output
    for word, path in (("zebra", "notes/deep/a.md"), ("okapi", "docs/b.md")):
        found = run(cli, [*base, "search", word])
        assert found.exit_code == 0 and path in found.output, found.output
    assert "narwhal" not in run(cli, [*base, "search", "narwhal"]).output
    gate = run(cli, [*base, "gate", "when does the zebra migration run?"])
    assert gate.exit_code == 0, gate.output
    status = run(cli, [*base, "status"]).output
    assert "extra_paths: an empty entry is ignored" in status
    assert f"extra_paths: {outside / '*.md'} is outside the workspace" in status
