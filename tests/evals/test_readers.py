"""evals/readers.py on a tiny corpus of our own (tests/evals/data/readers_tiny.yaml)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

for _module in ("phonenumbers", "dateparser", "price_parser", "babel", "text_to_num", "pysbd", "sentencex"):
    pytest.importorskip(_module)

from evals import readers as ev  # noqa: E402

TINY = Path(__file__).resolve().parent / "data" / "readers_tiny.yaml"


def test_the_eval_runs_on_a_tiny_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "readers.json"
    assert ev.main(["--corpus", str(TINY), "--json", str(out), "--no-import-cost", "--misses"]) == 0
    printed = capsys.readouterr().out
    for kind in ev.LISTS:
        assert f"\n{kind} (" in printed
    payload = json.loads(out.read_text("utf-8"))
    results = payload["results"]
    assert set(results) == set(ev.LISTS)
    assert set(results["dates"]) == set(ev.READERS["dates"])
    for rows in results.values():
        for row in rows.values():
            assert 0 <= row["precision"] <= 1 and 0 <= row["recall"] <= 1 and 0 <= row["f1"] <= 1
            assert row["us_per_item"] >= 0
    # figures that follow from the fixture alone
    assert results["phones"]["phonenumbers (VALID)"]["f1"] == 1.0
    assert results["dates"]["rules: facts.extract"]["f1"] == 1.0
    assert results["dates"]["baseline regex"]["recall"] == 0.5
    assert results["amounts"]["price-parser+babel+text2num"]["f1"] == 1.0
    assert results["statements"]["pysbd (in markdown units)"]["items_right"] == 2
    assert "f1_exact" in results["statements"]["baseline split"]


def test_lists_can_be_chosen(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    ev.main(["--corpus", str(TINY), "--lists", "amounts", "--json", str(out), "--no-import-cost"])
    assert set(json.loads(out.read_text("utf-8"))["results"]) == {"amounts"}


def test_amounts_match_on_value_and_on_currency_where_given() -> None:
    expected = [(Decimal("12000"), None), (Decimal("5"), "EUR")]
    assert ev.match_count([(Decimal("12000"), "USD"), (Decimal("5"), "EUR")], expected, "amounts") == 2
    assert ev.match_count([(Decimal("5.00"), "USD")], expected, "amounts") == 0
    assert ev.match_count([(Decimal("12E3"), None), (Decimal("12000"), None)], expected, "amounts") == 1
    assert ev.as_set([(Decimal("12E3"), None), (Decimal("12000"), None)], "amounts") == [
        (Decimal("12000").normalize(), None)
    ]
    assert ev.match_count(["2026-01-01", "2026-01-01"], ["2026-01-01"], "dates") == 1


def test_statement_edges_and_phone_shim() -> None:
    assert ev.edge_form("- Paid rent.  ") == "Paid rent"
    assert ev.edge_form("🎉 also call\n  mum, ") == "call mum"
    assert ev.edge_form("is it 9:30?") == "is it 9:30?"
    assert ev.to_e164("0176 1234 567", "DE") == "+491761234567"
    assert ev.to_e164("+49 (0)89 1234", None) == "+49891234"
    assert ev.to_e164("0049 30 1234567", None) == "+49301234567"
    assert ev.to_e164("(617) 555-0100", "US") == "+16175550100"
    assert ev.to_e164("555-0100", "US") == "5550100"
    assert ev.to_e164("0176 1234 567", None) == "01761234567"
