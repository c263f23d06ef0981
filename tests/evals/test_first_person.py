"""The first-person rewrite behind ``python -m evals.first_person``."""

from __future__ import annotations

from lifelong_evals.first_person import first_person


def test_questions_about_the_first_speaker_are_asked_in_the_first_person() -> None:
    assert first_person("What did Caroline research?", "Caroline") == "What did I research?"
    assert first_person("What is Caroline's identity?", "Caroline") == "What is my identity?"
    assert first_person("When did Melanie paint a sunrise?", "Caroline") is None
    assert first_person("Is Carolinex here?", "Caroline") is None
