"""One reducer per GRIP dimension: the definitions of the per-episode metric columns.

Each reducer folds the rows it cares about and, at the end, defines its columns of the
per-episode record (``None`` = the episode is outside that metric's denominator). The shared
state they read (the moving target, the valid extractions) is :class:`core.grip.target.Target`;
how the rows reach them is :mod:`core.grip.extract`.

* :class:`Grounding` — Success, Score, Earned, Inferred and the episode's bucket.
* :class:`Inquiry` — Aim, Recovery, Patience.
* :class:`Persistence` — Staleness, Reaction, PostShift.
* :class:`RoleRealism` — the user-turn count that makes an episode eligible for the judged
  Identification and Consistency (whose values come from :mod:`core.grip.realism`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, NamedTuple

from core.grip.record import Bucket
from core.grip.rows import ActionRow, ProposalRow, ReplyRow, ShiftRow, StaleRow, seq
from core.grip.target import Target

SCORE_BENCHMARKS: frozenset[str] = frozenset({"webshop"})
"""Benchmarks that report WebShop's Score column beside Success."""

QUESTION_REPLY_KINDS: frozenset[str] = frozenset(
    {"answer", "decline", "already_asked", "confusion", "context"}
)
"""Reply kinds that answer a question (a scoreable question got one of these)."""


class Facts(NamedTuple):
    """What every dimension needs to know about the episode as a whole."""

    scored: bool
    """Ended and not ERROR."""
    success: bool
    readable: bool
    """Every shift could be replayed on the graph."""
    hidden_target: bool | None
    """Non-empty target at the final commit (None when not scored or not readable)."""
    full_at_commit: bool
    """The target was fully extracted (by answers) when the last proposal was judged."""
    known_at_commit: bool
    """The target was fully known (answers plus environment discovery) at that commit."""
    moving: bool
    """At least one answer-moving shift fired."""


def _on_target(facts: Facts, v: float) -> float | None:
    return v if (facts.scored and facts.hidden_target) else None


class Grounding:
    """Success, Score, Earned and Inferred: did the agent solve it, and on what grounds."""

    METRICS: ClassVar[tuple[str, ...]] = ("success", "score", "earned", "inferred")
    __slots__ = ("n_proposals", "last_score", "commit", "accept_turns")

    def __init__(self) -> None:
        self.n_proposals = 0
        self.last_score: float | None = None
        self.commit: tuple[bool, bool, bool] | None = None
        self.accept_turns: list[int] = []

    def on_proposal(self, row: ProposalRow, target: Target) -> None:
        """A judged proposal: the final commit is the last one."""
        self.n_proposals += 1
        accepted = bool(row.accepted)
        self.last_score = float(row.score) if row.score is not None else float(accepted)
        self.commit = target.commit()
        if accepted:
            self.accept_turns.append(row.turn)

    def bucket(self, facts: Facts, ever_full: bool, n_questions: int) -> Bucket:
        """Exactly one bucket per episode."""
        if not facts.scored or not facts.readable:
            return Bucket.UNSCORED
        if not facts.hidden_target:
            return Bucket.NO_HIDDEN_INTENT
        if facts.success:
            return Bucket.EARNED if facts.full_at_commit else Bucket.INFERRED
        if ever_full:
            return Bucket.RECOVERED_NOT_SOLVED
        if self.n_proposals > 0 and n_questions == 0:
            return Bucket.PREMATURE
        return Bucket.INCOMPLETE

    def finish(self, facts: Facts, bucket: Bucket, benchmark: str) -> dict[str, Any]:
        """Define Success, Score, Earned and Inferred.

        Success over scored episodes; Score over scored WebShop episodes (the last proposal's
        reward, 0 without one); Earned / Inferred (success with / without the target fully
        extracted at the final commit) over episodes with a hidden target.
        """
        score: float | None = None
        if facts.scored and benchmark in SCORE_BENCHMARKS:
            score = self.last_score if self.last_score is not None else 0.0
        return {
            "n_proposals": self.n_proposals,
            "success": (1.0 if facts.success else 0.0) if facts.scored else None,
            "score": score,
            "earned": _on_target(facts, 1.0 if bucket == Bucket.EARNED else 0.0),
            "inferred": _on_target(facts, 1.0 if bucket == Bucket.INFERRED else 0.0),
        }


class Inquiry:
    """Aim, Recovery and Patience: did the agent ask the right questions, at what cost."""

    METRICS: ClassVar[tuple[str, ...]] = ("aim", "recovery", "discovery", "patience")
    __slots__ = ("n_questions", "n_scoreable", "n_aimed", "pending_ask")

    def __init__(self) -> None:
        self.n_questions = 0
        self.n_scoreable = 0
        self.n_aimed = 0
        self.pending_ask: Any = None

    def on_action(self, row: ActionRow) -> None:
        """An agent action: a question waits for its reply; anything else cancels it."""
        if row.action_kind == "ask":
            self.n_questions += 1
            self.pending_ask = row.asked_slots if row.asked_slots is not None else ()
        else:
            self.pending_ask = None

    def on_reply(
        self, row: ReplyRow, disclosures: Iterable[Mapping[str, Any]], target: Target
    ) -> None:
        """A reply to a question makes it scoreable; aimed when it asked for an owed slot.

        Must run before the reply's disclosures are credited (aim is judged on what was owed).
        """
        if self.pending_ask is not None and row.reply_kind in QUESTION_REPLY_KINDS:
            mapped = set(seq(row.asked) or seq(self.pending_ask))
            mapped.update(x["slot"] for x in disclosures if x.get("how") == "answer")
            if target.readable:
                self.n_scoreable += 1
                if target.aims_at_owed(mapped):
                    self.n_aimed += 1
        self.pending_ask = None

    def finish(self, facts: Facts, patience_left: float | None) -> dict[str, Any]:
        """Define Aim, Recovery, Discovery and Patience.

        Aim (share of scoreable questions that asked for an owed slot) over readable scored
        episodes with a scoreable question; Recovery (target fully extracted *by answers* at
        the final commit) and Discovery (fully known only because the environment showed the
        rest) over episodes with a hidden target; Patience (budget left) over scored ones.
        """
        aim = None
        if facts.scored and facts.readable and self.n_scoreable:
            aim = self.n_aimed / self.n_scoreable
        return {
            "n_questions": self.n_questions,
            "n_scoreable": self.n_scoreable,
            "n_aimed": self.n_aimed,
            "aim": aim,
            "recovery": _on_target(facts, 1.0 if facts.full_at_commit else 0.0),
            "discovery": _on_target(
                facts, 1.0 if (facts.known_at_commit and not facts.full_at_commit) else 0.0
            ),
            "patience": patience_left if facts.scored else None,
        }


class Persistence:
    """Staleness, Reaction and PostShift: does the agent follow a goal that moved."""

    METRICS: ClassVar[tuple[str, ...]] = ("staleness", "reaction", "postshift")
    __slots__ = ("n_shifts", "n_moving", "last_shift_turn", "last_moving_turn", "stale")

    def __init__(self) -> None:
        self.n_shifts = 0
        self.n_moving = 0
        self.last_shift_turn: int | None = None
        self.last_moving_turn: int | None = None
        self.stale: bool | None = None

    def on_shift(self, row: ShiftRow) -> None:
        """A fired shift (answer-moving when its destination's ground truth differs)."""
        self.n_shifts += 1
        self.last_shift_turn = row.turn
        if row.gt_moved:
            self.n_moving += 1
            self.last_moving_turn = row.turn

    def on_stale(self, row: StaleRow) -> None:
        """A failed final answer re-judged against the superseded intent."""
        self.stale = bool(row.valid_under_old)

    def accept_turn(self, facts: Facts, accept_turns: list[int]) -> int | None:
        """The first accepted proposal at or after the last moving shift (successes only)."""
        if not (facts.success and accept_turns):
            return None
        last = self.last_moving_turn
        after = [t for t in accept_turns if last is None or t >= last]
        return after[0] if after else None

    def finish(self, facts: Facts, accept_turns: list[int]) -> dict[str, Any]:
        """Define Staleness, Reaction and PostShift.

        Staleness (the failed answer was right for the superseded intent) over failed
        moving-shift episodes with a stale check; Reaction (turns from the last moving shift to
        the accepted answer) over successful moving-shift episodes; PostShift (success) over
        episodes with an answer-moving shift.
        """
        accept = self.accept_turn(facts, accept_turns)
        staleness = None
        if facts.scored and not facts.success and facts.moving and self.stale is not None:
            staleness = 1.0 if self.stale else 0.0
        reaction = None
        last = self.last_moving_turn
        if facts.scored and facts.success and facts.moving:
            if accept is not None and last is not None:
                reaction = float(accept - last)
        return {
            "n_shifts": self.n_shifts,
            "n_moving_shifts": self.n_moving,
            "last_shift_turn": self.last_shift_turn,
            "accept_turn": accept,
            "staleness": staleness,
            "reaction": reaction,
            "postshift": float(facts.success) if (facts.scored and facts.moving) else None,
        }


class RoleRealism:
    """The per-episode part of Identification and Consistency: the user turns judges read.

    The metric values come from the judges (:func:`core.grip.realism.role_realism`); an
    episode is eligible with ≥ 2 user turns (:func:`core.grip.realism.eligible`).
    """

    METRICS: ClassVar[tuple[str, ...]] = ()
    __slots__ = ("n_user_turns",)

    def __init__(self) -> None:
        self.n_user_turns = 0

    def on_reply(self, row: ReplyRow) -> None:
        """Every reply but a mute one is a user turn."""
        if row.reply_kind != "mute":
            self.n_user_turns += 1

    def finish(self) -> dict[str, Any]:
        """The user-turn count."""
        return {"n_user_turns": self.n_user_turns}


REDUCERS: dict[str, type[Grounding | Inquiry | Persistence | RoleRealism]] = {
    "Grounding": Grounding,
    "Inquiry": Inquiry,
    "Persistence": Persistence,
    "Role-realism": RoleRealism,
}
"""Dimension name (as in :data:`core.grip.metrics.METRICS`) → its reducer."""
