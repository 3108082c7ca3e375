"""The reply reader: what a user's reply tells the agent, read from its words.

A reply — a person's in Play as user, or any voice's — is read over the user's *current* intent
into

* an **act**: ``answer`` (states one or more requirement values), ``decline`` (refuses, does not
  know, hands the choice back), ``confirm_yes``, ``confirm_no`` or ``other``;
* **disclosures**: the slots of the intent whose goal value the reply states (the value is the
  intent's own);
* **contradictions**: slots for which the reply states a *different* value (``said``: the words
  used; ``goal``: the intent's value) — "red" when the goal is navy, "under $80" when the cap
  is $60, "not navy" when it is navy;
* **declined**: asked slots the reply declines.

The offline reader (:func:`read_offline`) is the question interpreter's sibling: it reads the
same world lexicons (:mod:`core.protocol.reply_index`), the same stems
(:mod:`core.protocol.textnorm`), quantities in digits or words (:mod:`core.protocol.numwords`)
and the speech acts of :mod:`core.protocol.reply_acts`. It scopes negation ("not the red one"),
reads multi-slot answers, hedges and yes/no with extra words, and never returns a slot outside
the intent it is given. :func:`read_reply` picks the reader: ``offline`` or a model spec
(:mod:`core.protocol.reply_llm`, falling back to offline, recorded).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from core.envs.base import HostWorld
from core.model.intent import ConditionValue, Intent
from core.protocol.numwords import Quantity
from core.protocol.reply_acts import hedged, lead, strong_no, strong_yes
from core.protocol.reply_evidence import (
    Evidence,
    Hit,
    Sentence,
    goal_sign,
    match_sentence,
    read_sentence,
    split_sentences,
)
from core.protocol.reply_index import (
    ReplyIndex,
    SlotEntry,
    reply_index,
)

ReplyAct = Literal["answer", "decline", "confirm_yes", "confirm_no", "other"]
REPLY_ACTS: tuple[str, ...] = ("answer", "decline", "confirm_yes", "confirm_no", "other")
OFFLINE = "offline"
"""Reader spec of the offline reader (the default)."""


@dataclass(frozen=True)
class Disclosed:
    """One slot whose goal value the reply states."""

    slot: str
    value: ConditionValue
    said: str = ""


@dataclass(frozen=True)
class Contradiction:
    """One slot for which the reply states a value other than the goal."""

    slot: str
    said: str
    goal: ConditionValue


@dataclass(frozen=True)
class ReplyReading:
    """What a reply tells the agent.

    Attributes:
        act: ``answer`` / ``decline`` / ``confirm_yes`` / ``confirm_no`` / ``other``.
        disclosures: Slots whose goal value the reply states, in intent order.
        contradictions: Slots for which it states another value, in intent order.
        declined: Asked slots the reply declines.
        source: Which reader read it (``offline`` or a model spec).
        fallback: A model reader failed and the offline reading was used.
        detail: Why the model reading was not used (empty otherwise).
        raw: The model's answer (empty for the offline reader).
    """

    act: ReplyAct
    disclosures: tuple[Disclosed, ...] = ()
    contradictions: tuple[Contradiction, ...] = ()
    declined: tuple[str, ...] = ()
    source: str = OFFLINE
    fallback: bool = False
    detail: str = ""
    raw: str = ""

    @property
    def slots(self) -> tuple[str, ...]:
        """The disclosed slot ids."""
        return tuple(d.slot for d in self.disclosures)

    def payload(self) -> dict[str, Any]:
        """The ``driftbench user read`` fields: ``act``, ``disclosures``, ``contradictions``."""
        return {
            "act": self.act,
            "disclosures": [{"slot": d.slot, "value": d.value} for d in self.disclosures],
            "contradictions": [
                {"slot": c.slot, "said": c.said, "goal": c.goal} for c in self.contradictions
            ],
        }


# ------------------------------------------------------------------------------- numbers
def _claim_numbers(
    sents: Sequence[Sentence],
    used_by: Sequence[set[int]],
    idx: ReplyIndex,
    ev: dict[str, Evidence],
    asked: Sequence[str],
    hedge: bool = False,
) -> None:
    numeric = [e for e in idx.slots.values() if e.number is not None]
    if not numeric:
        return
    money = [e for e in numeric if e.money]
    counts = [e for e in numeric if not e.money]
    free: list[tuple[Quantity, int]] = []
    for si, sent in enumerate(sents):
        used = used_by[si]
        for q in sent.qty:
            if any(k in used for k in range(q.start, q.end)):
                continue
            free.append((q, si))
    taken: set[int] = set()
    for n, (q, si) in enumerate(free):
        if money and (q.money or q.bound in ("<=", ">=", "~")):
            target = _closest(money, q, sents[si]) or money[0]
            if ev[target.slot].number is None:
                ev[target.slot].number = (q, si)
            taken.add(n)
    for n, (q, si) in enumerate(free):
        if n in taken or not counts:
            continue
        for count in _ranked(counts, q, sents[si]):
            if ev[count.slot].number is None:
                ev[count.slot].number = (q, si)
                taken.add(n)
                break
    asked_numeric = [e for e in numeric if e.slot in asked and ev[e.slot].number is None]
    rest = [(q, si) for n, (q, si) in enumerate(free) if n not in taken]
    if len(asked_numeric) == 1 and len(rest) >= 1 and not hedge:
        ev[asked_numeric[0].slot].number = rest[0]


def _closest(entries: Sequence[SlotEntry], q: Quantity, sent: Sentence) -> SlotEntry | None:
    ranked = _ranked(entries, q, sent)
    return ranked[0] if ranked else None


def _ranked(entries: Sequence[SlotEntry], q: Quantity, sent: Sentence) -> list[SlotEntry]:
    """Slots whose cues stand near the quantity, closest (and most general) first."""
    scored: list[tuple[float, int, SlotEntry]] = []
    shared: dict[str, int] = {}
    for e in entries:
        for s in e.cue_stems:
            shared[s] = shared.get(s, 0) + 1
    for e in entries:
        score = 0.0
        for k, s in enumerate(sent.stems):
            if s not in e.cue_stems:
                continue
            d = min(abs(k - q.start), abs(k - (q.end - 1)))
            if d > 4:
                continue
            score += (1.0 / (1 + d)) * (0.5 if shared.get(s, 0) > 1 else 1.0)
        # a tie goes to the more general slot ("3 bags": all bags, not the paid ones)
        score -= len(e.cue_stems) * 1e-6
        if score > 0:
            scored.append((score, len(scored), e))
    return [e for _, _, e in sorted(scored, key=lambda x: (-x[0], x[1]))]


def _number_ok(entry: SlotEntry, q: Quantity) -> bool:
    goal = float(entry.number or 0.0)
    tol = max(0.01 * abs(goal), 0.005) if q.bound != "~" else max(0.1 * abs(goal), 1.0)
    if entry.op == "<=" and q.bound == ">=":
        return False
    if entry.op == ">=" and q.bound == "<=":
        return False
    return abs(q.value - goal) <= tol


# ------------------------------------------------------------------------------- reading
def _said(sent: Sentence, positions: Iterable[int], negated_from: int = -1) -> str:
    ps = sorted(positions)
    if not ps:
        return ""
    return _dollars(_span(sent, ps, negated_from))


def _dollars(text: str) -> str:
    return re.sub(r"\bdollar (\d[\d.]*)", r"$\1", text)


def _span(sent: Sentence, ps: list[int], negated_from: int) -> str:
    lo = min(ps[0], negated_from) if negated_from >= 0 else ps[0]
    hi = ps[-1]
    if hi - lo > 7:
        return " ".join(sent.raw[q] for q in ps)
    return " ".join(sent.raw[lo : hi + 1])


def _decide(
    entry: SlotEntry,
    e: Evidence,
    sents: Sequence[Sentence],
    asked: Sequence[str],
    idx: ReplyIndex,
    claimed: set[tuple[int, int]],
) -> tuple[str, str]:
    """Return ("disclosed" | "contradicted" | "", the words used).

    ``claimed`` holds the (sentence, position) pairs another slot's contradiction already
    used (asked slots are decided first); they do not contradict this slot too.
    """
    slot = entry.slot
    if entry.number is not None:
        if e.number is None:
            return "", ""
        q, si = e.number
        sent = sents[si]
        hi = q.hi + 1 if q.hi < len(sent.stems) and sent.stems[q.hi] in entry.cue_stems else q.hi
        said = _dollars(" ".join(sent.raw[q.lo : hi]))
        return ("disclosed" if _number_ok(entry, q) else "contradicted"), said
    if entry.boolean:
        if e.polarity is None:
            return "", ""
        sign, si, at = e.polarity
        neg = sents[si].negator_at[at]
        said = _said(sents[si], [at], neg)
        return ("disclosed" if sign == goal_sign(entry) else "contradicted"), said
    wrong: tuple[str, int, tuple[int, ...], int] | None = None
    right: tuple[int, tuple[int, ...]] | None = None
    for g in range(entry.groups):
        vals = e.values.get(g, [])
        if g == 0 and vals and entry.groups > 1 and slot not in asked:
            shared = idx.shared_names.get(slot, frozenset())
            vals = [h for h in vals if not h.phrase.dist <= shared]
        if vals:
            if right is None:
                right = (vals[0].sentence, vals[0].positions)
            continue
        alts = [
            h
            for h in e.alternatives.get(g, [])
            if _plausible(h, entry, e, asked, g)
            and not any((h.sentence, q) in claimed for q in h.positions)
        ]
        if alts:
            h = alts[0]
            if wrong is None:
                wrong = (h.phrase.text, h.sentence, h.positions, -1)
                claimed.update((h.sentence, q) for q in h.positions)
            continue
        negs = e.negated_values.get(g, [])
        if negs and not (g > 0 and right is None and slot not in asked):
            h = negs[0]
            at = sents[h.sentence].negator_at[h.positions[0]]
            wrong = wrong or (h.phrase.text, h.sentence, h.positions, at)
    if wrong is not None:
        _, si, ps, neg = wrong
        return "contradicted", _said(sents[si], ps, neg)
    if right is not None:
        si, ps = right
        return "disclosed", _said(sents[si], ps)
    if e.ids:
        value = str(entry.lexicon.values[0]).lower().lstrip("#") if entry.lexicon.values else ""
        digits = value.isdigit()
        for w, si in e.ids:
            if w == value:
                continue
            if digits and not (slot in asked or si in e.cue_sentences):
                continue  # a bare number is a zip code only where zip codes are talked about
            return "contradicted", w
    return "", ""


def _plausible(h: Hit, entry: SlotEntry, e: Evidence, asked: Sequence[str], g: int) -> bool:
    """Whether naming another value of the slot states it (rather than mentioning a word)."""
    if entry.slot in asked or h.sentence in e.cue_sentences:
        return True
    if g > 0:
        return False  # an item option: only with a cue ("instead", "new one") or when asked
    if all(s.isdigit() for s in h.phrase.dist):
        return False
    return h.phrase.closed


def read_offline(
    text: str, intent: Intent, world: HostWorld, *, asked: Sequence[str] = ()
) -> ReplyReading:
    """Read ``text`` as a reply over ``intent`` (offline, deterministic; never raises on text).

    Args:
        text: The user's reply.
        intent: The user's current intent (the only slots that can be returned).
        world: The host world (supplies the lexicons).
        asked: Slots the agent's last question asked about (ids outside ``intent`` are ignored).

    Returns:
        The reading.
    """
    idx = reply_index(world, intent)
    asked = tuple(s for s in asked if s in idx.slots)
    parts = split_sentences(text)
    sents = [read_sentence(p, idx) for p in parts]
    ev = {slot: Evidence() for slot in idx.slots}
    used_by = [match_sentence(si, sent, idx, ev) for si, sent in enumerate(sents)]
    hedge = hedged(text)
    _claim_numbers(sents, used_by, idx, ev, asked, hedge)
    disclosed: list[Disclosed] = []
    contradicted: list[Contradiction] = []
    claimed: set[tuple[int, int]] = set()
    verdicts: dict[str, tuple[str, str]] = {}
    for slot in sorted(idx.slots, key=lambda x: x not in asked):  # asked slots first
        verdicts[slot] = _decide(idx.slots[slot], ev[slot], sents, asked, idx, claimed)
    for slot, entry in idx.slots.items():
        verdict, said = verdicts[slot]
        if verdict == "disclosed":
            disclosed.append(Disclosed(slot=slot, value=entry.condition.value, said=said))
        elif verdict == "contradicted":
            contradicted.append(Contradiction(slot=slot, said=said, goal=entry.condition.value))
    act = _act(text, disclosed, contradicted, asked, hedge)
    said_slots = {d.slot for d in disclosed} | {c.slot for c in contradicted}
    declined: tuple[str, ...] = ()
    if act == "decline" or (act == "answer" and hedge):
        declined = tuple(s for s in asked if s not in said_slots)
    return ReplyReading(
        act=act,
        disclosures=tuple(disclosed),
        contradictions=tuple(contradicted),
        declined=declined,
    )


def _act(
    text: str,
    disclosed: Sequence[Disclosed],
    contradicted: Sequence[Contradiction],
    asked: Sequence[str],
    hedge: bool,
) -> ReplyAct:
    says = bool(disclosed or contradicted)
    yes_no = lead(text)
    if asked and says:
        return "answer"
    if yes_no == "no" and says and not strong_no(text):
        return "answer"  # "I don't want to spend more than $30" states a value
    if yes_no == "yes" and not (says and not strong_yes(text)):
        if hedge and asked and not says:
            return "decline"
        return "confirm_yes"
    if yes_no == "no":
        return "confirm_no"
    if says:
        return "answer"
    if hedge:
        return "decline"
    return "other"


def restrict(reading: ReplyReading, intent: Intent) -> ReplyReading:
    """Return ``reading`` with every slot outside ``intent`` removed (a safety net)."""
    have = {c.slot for c in intent.conditions}
    return replace(
        reading,
        disclosures=tuple(d for d in reading.disclosures if d.slot in have),
        contradictions=tuple(c for c in reading.contradictions if c.slot in have),
        declined=tuple(s for s in reading.declined if s in have),
    )


def read_reply(
    text: str,
    intent: Intent,
    world: HostWorld,
    *,
    asked: Sequence[str] = (),
    reader: str = OFFLINE,
) -> ReplyReading:
    """Read a user's reply with ``reader`` (``offline`` or a model spec).

    This is the engine's one entry point for reading a user's words (the Play as user page,
    ``driftbench user read``, an LLM user voice). A model reader that fails or answers
    outside the contract falls back to the offline reading, recorded in ``fallback`` and
    ``detail``.

    Args:
        text: The reply.
        intent: The user's current intent.
        world: The host world.
        asked: Slots the agent's last question asked about.
        reader: ``offline`` (default) or a model spec.

    Returns:
        The reading; its slots are always slots of ``intent``.
    """
    spec = (reader or OFFLINE).strip() or OFFLINE
    if spec == OFFLINE:
        return restrict(read_offline(text, intent, world, asked=asked), intent)
    from core.protocol.reply_llm import reader_for

    return restrict(reader_for(spec).read(text, intent, world, asked=asked), intent)
