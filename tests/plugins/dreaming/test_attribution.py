"""Attribution of a paraphrased search (no word shared with any line) to the lines it found."""

from __future__ import annotations

from .conftest import at, dream, record_event

A = "memory/2026-04-20.md"
B = "memory/2026-04-12.md"
FILES = {
    A: "# 2026-04-20\n\n## Home\n- My GP: Dr. Keller, practice on Kastanienallee.\n"
    "- Left my umbrella at Father Carpenter, must pick it up.\n",
    B: "# 2026-04-12\n\n## Home\n- Dr. Keller: is my family doctor.\n",
}


def test_a_paraphrased_search_credits_the_best_line_of_each_file_not_its_neighbours(dream_host) -> None:
    """ "who is my physician" shares no word with any line. It found the GP line, the same fact
    in another daily, and the line below the GP's (whose score carries their chunk's): the two
    statements of the fact are credited, the neighbour is not, though its score is within the
    share of the best that a paraphrase needs."""
    host = dream_host(FILES)
    when = at("2026-04-28", 18)
    record_event(host, A, 4, 4, "who is my physician", when, score=0.444)
    record_event(host, B, 4, 4, "who is my physician", when, score=0.40)
    record_event(host, A, 5, 5, "who is my physician", when, score=0.342)
    dream(host, at("2026-04-29"))
    credited = {
        text
        for (text,) in host.store.conn.execute(
            "SELECT c.text FROM dream_signals s JOIN dream_candidates c ON c.key = s.key"
        )
    }
    assert credited == {
        "My GP: Dr. Keller, practice on Kastanienallee.",
        "Dr. Keller: is my family doctor.",
    }
