"""The simulated user's decisions: what a reply discloses, declines or names.

Code owns the truth. These functions read the episode state and decide a :class:`ReplyPlan`;
a voice (template, LLM, human) only phrases the plan. Nothing here ever puts a value into a
plan that code did not decide to disclose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.envs.base import EnvSession, HostWorld
from core.model.events import Disclosure, DisclosureHow, ReplyKind
from core.model.intent import ConditionValue
from core.protocol.hooks import (
    content_words,
    context_facts,
    default_slot_label,
    slot_label,
    unmet_slots,
)
from core.protocol.rng import draw
from core.protocol.state import EpisodeState

PERSISTENT_STREAK = 2
"""The same slot asked in this many consecutive questions overrides a decline."""
PERSISTENT_TOTAL = 4
"""The same slot asked this many times in total overrides a decline."""
MAX_HINTED = 2
"""A hinted rejection names at most this many things."""


@dataclass(frozen=True)
class Fact:
    """One fact a reply discloses (already phrased by the host world)."""

    slot: str
    label: str
    value: ConditionValue | None
    phrase: str
    how: DisclosureHow

    def disclosure(self) -> Disclosure:
        """Return the structured disclosure of this fact."""
        return Disclosure(slot=self.slot, value=self.value, how=self.how)


@dataclass(frozen=True)
class ReplyPlan:
    """What code decided a reply does; the voice phrases exactly this."""

    kind: ReplyKind
    turn: int
    question: str = ""
    facts: tuple[Fact, ...] = ()
    asked: tuple[str, ...] = ()
    declined: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()
    hinted: tuple[str, ...] = ()
    hinted_labels: tuple[str, ...] = ()
    times_asked: int = 0
    accepted: bool | None = None

    def disclosures(self) -> tuple[Disclosure, ...]:
        """Return the structured disclosures (answers, volunteered and context facts)."""
        out = [f.disclosure() for f in self.facts]
        out += [Disclosure(slot=s, value=None, how="rejection_hint") for s in self.hinted]
        return tuple(out)


def is_persistent(state: EpisodeState, slot: str) -> bool:
    """Return whether the agent has been persistent about ``slot`` (decline overridden)."""
    return (
        state.ask_streak.get(slot, 0) >= PERSISTENT_STREAK
        or state.ask_total.get(slot, 0) >= PERSISTENT_TOTAL
    )


def _fact(world: HostWorld, state: EpisodeState, slot: str, how: DisclosureHow) -> Fact:
    cond = state.current.slot_map()[slot]
    return Fact(
        slot=slot,
        label=slot_label(world, cond),
        value=cond.value,
        phrase=world.phrase(cond),
        how=how,
    )


def plan_answer(
    state: EpisodeState, question: str, asked: Sequence[str], world: HostWorld
) -> ReplyPlan:
    """Decide the reply to a question.

    Rules (DECISIONS.md): asked slots already disclosed get a "you already asked" reply; each
    new asked slot is declined with the persona's probability unless the agent is persistent
    about it; at most ``slots_per_answer`` slots are disclosed; with the persona's volunteer
    probability one more not-yet-known slot is added; questions about no slot may still ask for
    context facts (account ids …), answered without revealing anything hidden.
    """
    assert state.persona is not None
    persona, turn, key = state.persona, state.turn, state.rng_key
    slots = state.current.slot_map()
    asked_in = tuple(s for s in asked if s in slots)
    if not asked_in:
        ctx = context_facts(world, state.current)
        words = content_words(question)
        hits = [k for k in sorted(ctx) if content_words(k) & words]
        if hits:
            cfacts = tuple(
                Fact(slot=k, label=k, value=ctx[k], phrase=f"my {k} is {ctx[k]}", how="context")
                for k in hits
            )
            return ReplyPlan(kind="context", turn=turn, question=question, facts=cfacts)
        return ReplyPlan(kind="confusion", turn=turn, question=question)
    repeated = tuple(
        s for s in asked_in if s in state.disclosed and state.disclosed[s] == slots[s].value
    )
    fresh = [s for s in asked_in if s not in repeated]
    if not fresh:
        times = max(state.ask_total.get(s, 1) for s in repeated)
        return ReplyPlan(
            kind="already_asked",
            turn=turn,
            question=question,
            asked=asked_in,
            repeated=repeated,
            times_asked=times,
        )
    declined: list[str] = []
    granted: list[str] = []
    for i, s in enumerate(fresh):
        if (
            persona.decline > 0
            and not is_persistent(state, s)
            and draw(key, "decline", turn * 16 + i) < persona.decline
        ):
            declined.append(s)
        elif len(granted) < persona.slots_per_answer:
            granted.append(s)
    if not granted:
        return ReplyPlan(
            kind="decline",
            turn=turn,
            question=question,
            asked=asked_in,
            declined=tuple(declined),
            repeated=repeated,
        )
    facts = [_fact(world, state, s, "answer") for s in granted]
    if persona.volunteer > 0 and draw(key, "volunteer", turn) < persona.volunteer:
        taken = set(granted) | set(declined) | set(asked_in)
        extra = [s for s in state.owed_slots() if s not in taken]
        if extra:
            facts.append(_fact(world, state, extra[0], "volunteer"))
    return ReplyPlan(
        kind="answer",
        turn=turn,
        question=question,
        facts=tuple(facts),
        asked=asked_in,
        declined=tuple(declined),
        repeated=repeated,
    )


def plan_reaction(
    state: EpisodeState, accepted: bool, world: HostWorld, session: EnvSession
) -> ReplyPlan:
    """Decide the reaction to an adjudicated proposal.

    A rejection names what is wrong (slot labels, never values) with the persona's hint
    probability; otherwise it only says it is not right.
    """
    assert state.persona is not None
    if accepted:
        return ReplyPlan(kind="acceptance", turn=state.turn, accepted=True)
    hinted: tuple[str, ...] = ()
    if draw(state.rng_key, "hint", state.turn) < state.persona.hint_on_rejection:
        unmet = unmet_slots(world, state.current, session)
        cands = unmet if unmet is not None else state.owed_slots()
        hinted = tuple(cands[:MAX_HINTED])
    return ReplyPlan(
        kind="rejection",
        turn=state.turn,
        hinted=hinted,
        hinted_labels=tuple(_label(world, state, s) for s in hinted),
        accepted=False,
    )


def _label(world: HostWorld, state: EpisodeState, slot: str) -> str:
    cond = state.current.slot_map().get(slot)
    return slot_label(world, cond) if cond is not None else default_slot_label(slot)


def plan_human(
    state: EpisodeState, disclosed: Sequence[str], world: HostWorld
) -> tuple[Disclosure, ...]:
    """Turn the requirements a human ticked into disclosures (answer if asked, else volunteer).

    Raises:
        ValueError: If a ticked slot is not part of the current intent.
    """
    slots = state.current.slot_map()
    out = []
    for s in disclosed:
        if s not in slots:
            raise ValueError(f"{s!r} is not one of the current requirements")
        how: DisclosureHow = "answer" if s in state.pending_asked else "volunteer"
        out.append(Disclosure(slot=s, value=slots[s].value, how=how))
    return tuple(out)
