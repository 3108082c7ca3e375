"""One judge's reading of a session, and the strict two-judge rule."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.model.base import Strict
from core.model.intent import ShiftOperator
from core.model.sample import FaultType

JudgeKind = Literal["heuristic", "llm", "human"]
Verdict = Literal["misaligned", "clean", "contested", "unjudged"]


class SessionJudgment(Strict):
    """What one judge extracted from one session."""

    session_id: str
    judge: str = Field(description="e.g. 'heuristic:lexicon', 'llm:openai/gpt-4o', 'human:ann1'.")
    kind: JudgeKind
    intents: tuple[str, ...] = Field(default=(), description="The user's intents, in order.")
    fault_types: tuple[FaultType, ...] = Field(
        default=(), description="Communication faults of the user's requests."
    )
    shift_types: tuple[ShiftOperator, ...] = Field(
        default=(), description="Intent shifts, one per shift, in order."
    )
    valid: bool = Field(default=True, description="False when the judge's output was unusable.")
    error: str | None = None
    raw: str | None = Field(default=None, description="The judge's raw output, if any.")

    @property
    def misaligned(self) -> bool:
        """Whether this judge saw any communication fault or intent shift."""
        return bool(self.fault_types or self.shift_types)


class TwoJudgeVerdict(Strict):
    """The strict two-judge decision for one session."""

    session_id: str
    verdict: Verdict
    fault_types: tuple[FaultType, ...] = Field(
        default=(), description="Fault types both judges gave (misaligned sessions only)."
    )
    shift_types: tuple[ShiftOperator, ...] = Field(
        default=(), description="Shift types both judges gave (misaligned sessions only)."
    )


def strict_verdict(a: SessionJudgment, b: SessionJudgment) -> TwoJudgeVerdict:
    """Combine two judges under strict agreement.

    * ``unjudged``: either judgment is invalid.
    * ``misaligned``: both judges flag the session **and** they share at least one fault type
      or one shift type; the shared types are kept.
    * ``clean``: neither judge flags anything.
    * ``contested``: anything else (one flags, or both flag with nothing in common). Contested
      sessions are in neither comparison group.
    """
    if a.session_id != b.session_id:
        raise ValueError(f"judgments of different sessions: {a.session_id} vs {b.session_id}")
    if not (a.valid and b.valid):
        return TwoJudgeVerdict(session_id=a.session_id, verdict="unjudged")
    if not a.misaligned and not b.misaligned:
        return TwoJudgeVerdict(session_id=a.session_id, verdict="clean")
    faults = tuple(f for f in FaultType if f in a.fault_types and f in b.fault_types)
    shifts = tuple(s for s in ShiftOperator if s in a.shift_types and s in b.shift_types)
    if a.misaligned and b.misaligned and (faults or shifts):
        return TwoJudgeVerdict(
            session_id=a.session_id, verdict="misaligned", fault_types=faults, shift_types=shifts
        )
    return TwoJudgeVerdict(session_id=a.session_id, verdict="contested")
