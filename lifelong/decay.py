"""The suite's one temporal decay: recall's search, the concept index, dreaming's recency signal
and the wiki's evidence weights all age things by the same half-life formula."""

from __future__ import annotations

import math


def decay_factor(age_days: float | None, half_life_days: float, floor: float = 0.0) -> float:
    """floor + (1-floor)*2^(-age/half_life); 1.0 for evergreen content (age None), for future
    dates (age below 0 counts as 0) and for a half-life of 0 (no decay). With floor 0 (the
    default) this is the plain half-life decay."""
    if age_days is None or half_life_days <= 0:
        return 1.0
    return floor + (1.0 - floor) * math.pow(2.0, -max(0.0, age_days) / half_life_days)
