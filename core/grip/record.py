"""The compact per-episode score record GRIP computes once per episode and caches.

Every GRIP metric except the two role-realism ones is the mean of one per-episode column over
the episodes where that column is defined (``None`` = the episode is not in the metric's
denominator). So one flat record per episode is all the aggregation ever needs.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from core.model.base import Strict

GRIP_VERSION = "grip-3"
"""Version of the metric definitions (DECISIONS.md GRIP table; ``grip-2``: a rejection hint is
not extraction; ``grip-3``: Recovery counts answers only, environment discovery is its own
column; docs/PROTOCOL.md)."""


class Bucket(StrEnum):
    """Exactly one bucket per episode."""

    EARNED = "EARNED"
    INFERRED = "INFERRED"
    RECOVERED_NOT_SOLVED = "RECOVERED_NOT_SOLVED"
    PREMATURE = "PREMATURE"
    INCOMPLETE = "INCOMPLETE"
    NO_HIDDEN_INTENT = "NO_HIDDEN_INTENT"
    UNSCORED = "UNSCORED"


HIDDEN_TARGET_BUCKETS: frozenset[str] = frozenset(
    {
        Bucket.EARNED,
        Bucket.INFERRED,
        Bucket.RECOVERED_NOT_SOLVED,
        Bucket.PREMATURE,
        Bucket.INCOMPLETE,
    }
)
"""Buckets that partition the episodes with a hidden target."""


class EpisodeRecord(Strict):
    """The per-episode quantities of GRIP (``None`` = not in that metric's denominator)."""

    episode_id: str
    run_id: str | None = None
    sample_id: str
    benchmark: str
    method: str
    persona: str
    backbone: str = Field(description="Agent spec (the header's ``agent``).")
    user_voice: str = ""
    seed: int
    k: int = Field(description="Number of composed faults of the sample.")
    shifts_on: bool = Field(description="Whether the config enabled silent shifts.")
    outcome: str | None = Field(description="SUCCESS / EXHAUSTED / … ; None if not ended.")
    scored: bool = Field(description="Ended and not ERROR.")
    readable: bool = Field(description="Every shift could be replayed on the graph.")
    bucket: Bucket
    hidden_target: bool | None = Field(description="Non-empty target at the final commit.")
    n_questions: int = 0
    n_scoreable: int = 0
    n_aimed: int = 0
    n_proposals: int = 0
    n_shifts: int = 0
    n_moving_shifts: int = 0
    n_user_turns: int = 0
    turns: int | None = None
    budget: float | None = None
    ever_full: bool = False
    last_shift_turn: int | None = None
    accept_turn: int | None = None
    # -- metric columns ----------------------------------------------------------------------
    success: float | None = None
    score: float | None = None
    earned: float | None = None
    inferred: float | None = None
    aim: float | None = None
    recovery: float | None = None
    discovery: float | None = None
    patience: float | None = None
    staleness: float | None = None
    reaction: float | None = None
    postshift: float | None = None


RECORD_COLUMNS: tuple[str, ...] = tuple(EpisodeRecord.model_fields)
"""Column order of the record (also the cache table's columns)."""
