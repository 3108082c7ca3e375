"""The simulated user's decisions: what a reply discloses, declines or names.

Code owns the truth. These functions read the episode state and decide a :class:`ReplyPlan`;
a voice (template, LLM, human) only phrases the plan. Nothing here ever puts a value into a
plan that code did not decide to disclose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.envs.base import EnvSession, HostWorld
from core.envs.requirement_lexicon import Problem, default_slot_label, tokens
from core.model.events import Disclosure, DisclosureHow, ReplyKind
from core.model.intent import ConditionValue
from core.protocol.interpret import QuestionAct, interpret
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
    act: str = "slots"
    note: str = ""
    problems: tuple[str, ...] = ()

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
        label=world.slot_label(cond),
        value=cond.value,
        phrase=world.phrase(cond),
        how=how,
    )


def declines_question(state: EpisodeState) -> bool:
    """Draw the persona's decline coin for the current question (one draw per question).

    Table 5 defines decline as refusing an otherwise-valid *answer*: the coin is drawn once per
    question, so asking two slots at once does not dodge it.
    """
    assert state.persona is not None
    p = state.persona
    return p.decline > 0 and draw(state.rng_key, "decline", state.turn * 16) < p.decline


def _split_declined(
    state: EpisodeState, slots: Sequence[str], limit: int
) -> tuple[list[str], list[str], bool]:
    """Apply one question's decline coin to ``slots``; return (granted, declined, coin).

    A decline refuses the whole answer, except slots the agent has been persistent about (the
    same slot in 2 consecutive questions or 4 in total, tracked per slot): those are answered.
    At most ``limit`` slots are granted.
    """
    coin = declines_question(state)
    declined: list[str] = []
    granted: list[str] = []
    for s in slots:
        if coin and not is_persistent(state, s):
            declined.append(s)
        elif len(granted) < limit:
            granted.append(s)
    return granted, declined, coin


def _volunteer(
    world: HostWorld, state: EpisodeState, taken: set[str], facts: list[Fact]
) -> list[Fact]:
    assert state.persona is not None
    if state.persona.volunteer > 0 and draw(state.rng_key, "volunteer", state.turn) < (
        state.persona.volunteer
    ):
        extra = [s for s in state.owed_slots() if s not in taken]
        if extra:
            return [*facts, _fact(world, state, extra[0], "volunteer")]
    return facts


def _reading(
    state: EpisodeState, question: str, asked: Sequence[str], world: HostWorld
) -> QuestionAct:
    slots = state.current.slot_map()
    declared = tuple(s for s in asked if s in slots)
    if declared:
        return QuestionAct(act="slots", slots=declared)
    return interpret(question, state.current, world)


def plan_answer(
    state: EpisodeState,
    question: str,
    asked: Sequence[str],
    world: HostWorld,
    act: QuestionAct | None = None,
) -> ReplyPlan:
    """Decide the reply to a question.

    Rules (DECISIONS.md, docs/PROTOCOL.md): asked slots already disclosed get a "you already
    asked" reply; the persona's decline coin is drawn once per question and, when it falls,
    refuses the whole answer except the slots the agent has been persistent about; at most
    ``slots_per_answer`` slots are disclosed; with the persona's volunteer
    probability one more not-yet-known slot is added. The interpreter's act decides the rest:
    an open question discloses owed slots (slots-per-answer); a confirmation is answered
    against the current intent (yes, or a no that discloses what it gets wrong); a question
    about something the user has no requirement on gets "no preference"; context facts
    (account ids …) are stated freely; only an off-topic message gets the confused reply.

    Args:
        state: The episode state (current intent, disclosures, persona).
        question: The agent's message.
        asked: Slots the message asks about (declared or read by the interpreter).
        world: The host world.
        act: The interpreter's reading (read here, offline, when None).
    """
    assert state.persona is not None
    reading = act if act is not None else _reading(state, question, asked, world)
    if reading.act == "confirm":
        return _plan_confirm(state, question, reading, world)
    if reading.act == "open":
        return _plan_open(state, question, world)
    persona, turn = state.persona, state.turn
    slots = state.current.slot_map()
    asked_in = tuple(s for s in (asked or reading.slots) if s in slots)
    if not asked_in:
        ctx = world.context_facts(state.current)
        keys = [k for k in reading.context if k in ctx]
        if not keys:  # a fact asked for by its own name: every word of it ("last name")
            words = set(tokens(question))
            keys = [k for k in sorted(ctx) if _fact_words(k) <= words]
        if keys:
            cfacts = tuple(
                Fact(
                    slot=k, label=k, value=ctx[k], phrase=_context_phrase(k, ctx[k]), how="context"
                )
                for k in keys
            )
            return ReplyPlan(kind="context", turn=turn, question=question, facts=cfacts)
        if reading.act == "slots" and reading.topics:
            return ReplyPlan(
                kind="answer", turn=turn, question=question, act="slots", note="no_requirement"
            )
        return ReplyPlan(kind="confusion", turn=turn, question=question, act=reading.act)
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
    granted, declined, coin = _split_declined(state, fresh, persona.slots_per_answer)
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
    if not coin:  # a reluctant reply (persistence forced part of it) volunteers nothing
        facts = _volunteer(world, state, set(granted) | set(declined) | set(asked_in), facts)
    return ReplyPlan(
        kind="answer",
        turn=turn,
        question=question,
        facts=tuple(facts),
        asked=asked_in,
        declined=tuple(declined),
        repeated=repeated,
    )


_CONTEXT_WORDS = {
    "user_id": "user id",
    "first_name": "first name",
    "last_name": "last name",
    "dob": "date of birth",
    "zip": "zip code",
    "email": "email",
}


def _fact_words(key: str) -> set[str]:
    """Return the words naming a context fact (``last_name`` → last, name).

    A question asks for the fact only when it uses all of them: "last night" or "the first
    game" ask for no name.
    """
    return set(tokens(key.replace("_", " "))) or {key.lower()}


def _context_phrase(key: str, value: str) -> str:
    return f"my {_CONTEXT_WORDS.get(key, key.replace('_', ' '))} is {value}"


def _plan_open(state: EpisodeState, question: str, world: HostWorld) -> ReplyPlan:
    """An open question: disclose owed slots, slots-per-answer at a time."""
    assert state.persona is not None
    persona, turn = state.persona, state.turn
    owed = state.owed_slots()
    if not owed:
        return ReplyPlan(
            kind="answer", turn=turn, question=question, act="open", note="nothing_else"
        )
    if declines_question(state):
        return ReplyPlan(kind="decline", turn=turn, question=question, act="open")
    granted = owed[: persona.slots_per_answer]
    facts = [_fact(world, state, s, "answer") for s in granted]
    facts = _volunteer(world, state, set(granted), facts)
    return ReplyPlan(kind="answer", turn=turn, question=question, facts=tuple(facts), act="open")


def _plan_confirm(
    state: EpisodeState, question: str, reading: QuestionAct, world: HostWorld
) -> ReplyPlan:
    """Plan the reply to a yes/no confirmation.

    Yes when the described action matches the current intent. Otherwise no — and, with the
    persona's hint probability (the coin a rejected proposal uses), the no says which part is
    wrong ("the colour isn't right"), never the value: like a rejection hint it is feedback,
    not a disclosure (``proto-4``; before, a wrong confirmation disclosed the true values).
    """
    assert state.persona is not None
    persona, turn = state.persona, state.turn
    slots = state.current.slot_map()
    mentioned = tuple(s for s in reading.slots if s in slots)
    wrong = [s for s in reading.wrong if s in slots]
    if reading.confirm is not False and not wrong:
        facts = _volunteer(world, state, set(mentioned), [])
        return ReplyPlan(
            kind="answer",
            turn=turn,
            question=question,
            facts=tuple(facts),
            asked=mentioned,
            act="confirm",
            note="confirm_yes",
        )
    if not wrong:
        wrong = state.owed_slots()[:1]
    hinted: tuple[str, ...] = ()
    if wrong and draw(state.rng_key, "hint", turn) < persona.hint_on_rejection:
        hinted = tuple(wrong)
    return ReplyPlan(
        kind="answer",
        turn=turn,
        question=question,
        asked=mentioned,
        hinted=hinted,
        hinted_labels=tuple(world.slot_label(slots[s]) for s in hinted),
        act="confirm",
        note="confirm_no",
    )


def plan_reaction(
    state: EpisodeState, accepted: bool, world: HostWorld, session: EnvSession
) -> ReplyPlan:
    """Decide the reaction to an adjudicated proposal.

    With the persona's hint probability a rejection names what is actually wrong with the
    proposal, in plain words from the world's "what is unmet" hook ("it's the wrong colour",
    "the exchange still isn't done") — never a hidden value: a phrasing that names values is
    used only when the agent already knows every slot it concerns. Otherwise it only says it is
    not right. A hint is given even when the agent knew everything.
    """
    assert state.persona is not None
    if accepted:
        return ReplyPlan(kind="acceptance", turn=state.turn, accepted=True)
    hinted: list[str] = []
    texts: list[str] = []
    if draw(state.rng_key, "hint", state.turn) < state.persona.hint_on_rejection:
        slots = state.current.slot_map()
        problems = world.unmet_problems(state.current, session)
        if problems is None or not problems:
            problems = [
                Problem(slots=(s,), text=f"the {_label(world, state, s)} isn't right")
                for s in state.owed_slots()
            ]
        known = state.known_slots()
        for p in problems[:MAX_HINTED]:
            mine = [s for s in p.slots if s in slots]
            use_known = bool(p.known_text) and bool(mine) and set(mine) <= known
            texts.append(p.known_text if use_known else p.text)
            hinted += [s for s in mine if s not in hinted]
    return ReplyPlan(
        kind="rejection",
        turn=state.turn,
        hinted=tuple(hinted),
        hinted_labels=tuple(dict.fromkeys(_label(world, state, s) for s in hinted)),
        accepted=False,
        problems=tuple(texts),
    )


def _label(world: HostWorld, state: EpisodeState, slot: str) -> str:
    cond = state.current.slot_map().get(slot)
    return world.slot_label(cond) if cond is not None else default_slot_label(slot)


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
