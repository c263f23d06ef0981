"""evals/topics.py: its labelled statements and its count."""

from __future__ import annotations

from evals.topics import WRITTEN, labelled, score


def test_every_persona_kind_and_written_fact_is_labelled_and_counted() -> None:
    items = labelled(range(1, 2))
    assert {name for _, _, name in items} == {"persona", "written"}
    assert sum(1 for *_, name in items if name == "written") == len(WRITTEN)
    known = {"people", "family", "projects", "health", "home", "preferences", "other"}
    assert all(sections and sections <= known for _, sections, _ in items)
    three = [("a", {"home"}, "written"), ("b", {"health"}, "written"), ("c", {"home", "other"}, "written")]
    assert score(three, ["home", "other", "other"]) == {"written": "2/3 right, 2 under Other"}
