"""The held-out flush eval scores its same-run baseline: each session's whole transcript kept as
one note and searched the same way (real workspaces, real index; FTS only, so no model loads)."""

from __future__ import annotations

from pathlib import Path

import yaml

from evals.flush_sessions import run_heldout


def test_the_heldout_flush_eval_scores_the_whole_transcript_beside_the_capture(tmp_path: Path) -> None:
    ack = [{"role": "user", "text": "ok thx"}, {"role": "assistant", "text": "You're welcome."}]
    sessions = [
        {
            "id": "x01",
            "topic": "gym",
            "messages": [
                {"role": "user", "text": "can you help me plan my week at the gym"},
                {
                    "role": "assistant",
                    "text": "Sure. Which days are you free, and what do you want to train?",
                },
                {"role": "user", "text": "btw the locker code is now 4417"},
                *ack,
            ],
            "details": [
                {"message": 2, "question": "what opens my locker", "match": r"\b4417\b"},
                {"message": 2, "question": "which digits for the cabinet", "match": r"\b4417\b"},
            ],
        },
        {
            "id": "x02",
            "topic": "vet",
            "messages": [
                {"role": "user", "text": "our cat Miso needs her booster, vet is Dr Amsel"},
                {"role": "assistant", "text": "Good to keep the booster on time."},
                *ack,
            ],
            "details": [{"message": 0, "question": "who is Miso's vet", "match": "amsel"}],
        },
    ]
    path = tmp_path / "sessions.yaml"
    path.write_text(yaml.safe_dump({"sessions": sessions}), "utf-8")
    result = run_heldout(path, "none")
    assert result["details"] == 3
    # lexical search: the two questions that share a word with the message find it, "which digits
    # for the cabinet" shares none, in the captured notes and in the transcript alike
    assert result["findable"] == 2 / 3
    assert result["transcript_findable"] == 2 / 3
    assert result["restorable"] == 1.0
