"""Per-episode GRIP extraction: typed rows in, one :class:`~core.grip.record.EpisodeRecord` out.

The same fold serves the typed path (:func:`score_episode`, events as pydantic models, turned
into rows by :func:`core.grip.rows.row_of`) and the columnar path of :mod:`core.grip.cache`
(rows built straight from SQL). Rules (DECISIONS.md, GRIP ``grip-3``):

* the moving target, valid extractions and environment discovery: :mod:`core.grip.target`;
* the *final commit* is the last adjudicated proposal; ``full_at_commit`` = a non-empty target
  contained in the valid extractions at that moment;
* buckets: UNSCORED (not ended, ERROR, or a shift the graph cannot replay); NO_HIDDEN_INTENT
  (empty target at the commit); success → EARNED / INFERRED; failure → RECOVERED_NOT_SOLVED
  (target fully extracted at some point), PREMATURE (proposed without ever asking), INCOMPLETE;
* every metric column is defined by the reducer of its dimension: :mod:`core.grip.dimensions`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.grip.dimensions import (
    QUESTION_REPLY_KINDS,
    SCORE_BENCHMARKS,
    Facts,
    Grounding,
    Inquiry,
    Persistence,
    RoleRealism,
)
from core.grip.record import EpisodeRecord
from core.grip.rows import (
    ROW_KINDS,
    ActionRow,
    EndRow,
    ObservationRow,
    ProposalRow,
    ReplyRow,
    Row,
    ShiftRow,
    StaleRow,
    row_of,
    seq,
)
from core.grip.target import (
    CREDITED_HOW,
    MIN_DISCOVERY_CHARS,
    StartInfo,
    Target,
    discovery_strings,
    start_info,
)

__all__ = [
    "CREDITED_HOW",
    "MIN_DISCOVERY_CHARS",
    "NEEDED_KINDS",
    "QUESTION_REPLY_KINDS",
    "SCORE_BENCHMARKS",
    "EpisodeMeta",
    "StartInfo",
    "discovery_strings",
    "extract",
    "extract_events",
    "meta_from_header",
    "score_episode",
    "start_info",
]

NEEDED_KINDS: tuple[str, ...] = ("episode_started", *ROW_KINDS)
"""Event kinds the extraction reads (the others never change a GRIP quantity)."""


@dataclass(frozen=True)
class EpisodeMeta:
    """Index fields of an episode (from its header or the store's episode row)."""

    episode_id: str
    sample_id: str
    benchmark: str
    method: str
    persona: str
    seed: int
    backbone: str = ""
    user_voice: str = ""
    run_id: str | None = None
    shifts_on: bool = True


class _Fold:
    """One episode's state: the target and the four dimension reducers, fed row by row."""

    __slots__ = ("target", "grounding", "inquiry", "persistence", "realism", "end")

    def __init__(self, info: StartInfo | None) -> None:
        self.target = Target(info)
        self.grounding = Grounding()
        self.inquiry = Inquiry()
        self.persistence = Persistence()
        self.realism = RoleRealism()
        self.end: EndRow | None = None

    def feed(self, rows: Iterable[Row]) -> None:
        on = _ON
        for row in rows:
            on[type(row)](self, row)

    def _action(self, row: ActionRow) -> None:
        self.inquiry.on_action(row)
        self.target.note_action(row.action)

    def _reply(self, row: ReplyRow) -> None:
        disclosures = seq(row.disclosures)
        self.realism.on_reply(row)
        self.inquiry.on_reply(row, disclosures, self.target)  # judged before crediting
        self.target.credit(row.intent_id, disclosures)

    def _observation(self, row: ObservationRow) -> None:
        self.target.discover(row.text)

    def _shift(self, row: ShiftRow) -> None:
        self.persistence.on_shift(row)
        self.target.shift(row)

    def _proposal(self, row: ProposalRow) -> None:
        self.grounding.on_proposal(row, self.target)

    def _end(self, row: EndRow) -> None:
        self.end = row

    def _stale(self, row: StaleRow) -> None:
        self.persistence.on_stale(row)

    def facts(self) -> Facts:
        outcome = str(self.end.outcome) if self.end is not None else None
        scored = outcome is not None and outcome != "ERROR"
        readable = self.target.readable
        commit = self.grounding.commit
        if commit is None:
            commit = (bool(self.target.slots), False, False)
        return Facts(
            scored=scored,
            success=outcome == "SUCCESS",
            readable=readable,
            hidden_target=commit[0] if (scored and readable) else None,
            full_at_commit=commit[1],
            known_at_commit=commit[2],
            moving=self.persistence.n_moving > 0,
        )

    def record(self, meta: EpisodeMeta) -> dict[str, Any]:
        facts = self.facts()
        info, end = self.target.info, self.end
        bucket = self.grounding.bucket(facts, self.target.ever_full, self.inquiry.n_questions)
        patience_left = None
        if end is not None:
            patience_left = float(end.patience_left) if end.patience_left is not None else 0.0
        return {
            "episode_id": meta.episode_id,
            "run_id": meta.run_id,
            "sample_id": meta.sample_id,
            "benchmark": meta.benchmark,
            "method": meta.method,
            "persona": meta.persona,
            "backbone": meta.backbone,
            "user_voice": meta.user_voice,
            "seed": meta.seed,
            "k": info.k if info else 0,
            "shifts_on": meta.shifts_on,
            "outcome": str(end.outcome) if end is not None else None,
            "scored": facts.scored,
            "readable": facts.readable,
            "bucket": bucket.value,
            "hidden_target": facts.hidden_target,
            "turns": (int(end.turns) if end.turns is not None else 0) if end else None,
            "budget": info.budget if info else None,
            "ever_full": self.target.ever_full,
            **self.grounding.finish(facts, bucket, meta.benchmark),
            **self.inquiry.finish(facts, patience_left),
            **self.persistence.finish(facts, self.grounding.accept_turns),
            **self.realism.finish(),
        }


_ON: dict[type, Callable[[_Fold, Any], None]] = {
    ActionRow: _Fold._action,
    ReplyRow: _Fold._reply,
    ObservationRow: _Fold._observation,
    ShiftRow: _Fold._shift,
    ProposalRow: _Fold._proposal,
    StaleRow: _Fold._stale,
    EndRow: _Fold._end,
}
"""Row type → the fold's handler (one dispatch per row)."""


def extract(meta: EpisodeMeta, start: StartInfo | None, rows: Iterable[Row]) -> dict[str, Any]:
    """Compute the GRIP record of one episode from its typed rows.

    Args:
        meta: The episode's index fields.
        start: The reduced ``episode_started`` event (None: the episode has none; UNSCORED).
        rows: The other events as typed rows (:mod:`core.grip.rows`) in ``seq`` order.

    Returns:
        A dict with exactly the fields of :class:`~core.grip.record.EpisodeRecord`.
    """
    fold = _Fold(start)
    fold.feed(rows)
    return fold.record(meta)


def extract_events(meta: EpisodeMeta, events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Compute the GRIP record from stored event dicts (``episode_started`` first)."""
    info: StartInfo | None = None
    rows: list[Row] = []
    for ev in events:
        if ev.get("kind") == "episode_started":
            if info is None:
                info = start_info(ev)
            continue
        row = row_of(ev)
        if row is not None:
            rows.append(row)
    return extract(meta, info, rows)


def meta_from_header(header: Any) -> EpisodeMeta:
    """Build :class:`EpisodeMeta` from an ``EpisodeHeader``."""
    return EpisodeMeta(
        episode_id=header.episode_id,
        sample_id=header.sample_id,
        benchmark=header.benchmark,
        method=header.method,
        persona=header.persona_id,
        seed=header.seed,
        backbone=header.agent,
        user_voice=header.user_voice,
        run_id=header.run_id,
        shifts_on=bool(header.config.shifts_enabled),
    )


def score_episode(header: Any, events: Sequence[Any]) -> EpisodeRecord:
    """Score one episode from its typed header and events (the reference path).

    Args:
        header: The ``EpisodeHeader``.
        events: The typed events in order (``EpisodeStarted`` first).

    Returns:
        The validated per-episode record.
    """
    dumped = [e.model_dump(mode="json") for e in events]
    return EpisodeRecord.model_validate(extract_events(meta_from_header(header), dumped))
