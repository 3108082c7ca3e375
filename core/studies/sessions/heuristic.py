"""Offline session judges (keyword and structure rules), labelled as heuristic everywhere.

They let the production-log pipeline run without keys. Two judges with different evidence:

* ``heuristic:lexicon`` looks for cue phrases: fault cues in the opening request, shift cues
  in later user messages.
* ``heuristic:structure`` reads the conversation's shape: how specific the opening request
  is, whether the assistant had to ask or declared it could not do something, whether the
  user corrected themselves, and how a later user message relates to earlier ones (new
  numbers, additions, dropped constraints, little overlap = a new goal).

They are deliberately simple; their numbers are an offline approximation, not a measurement.
Neither reads the session's score or metadata.
"""

from __future__ import annotations

import re

from core.model.intent import ShiftOperator
from core.model.sample import FaultType
from core.studies.sessions.format import SessionRecord
from core.studies.sessions.judgment import SessionJudgment

F, S = FaultType, ShiftOperator

FAULT_CUES: dict[FaultType, tuple[str, ...]] = {
    F.INDIRECT_INTENT: (
        "i was wondering",
        "it would be great if",
        "i've been thinking",
        "it would be nice if",
        "i'm not sure whether",
    ),
    F.CONTEXTUAL_IRRELEVANCE: ("by the way", "unrelated, but", "on another note"),
    F.FACTUAL_ERROR: ("sorry, i meant", "my mistake", "i misspoke", "i got the number wrong"),
    F.FALSE_PRESUPPOSITION: (
        "as you already",
        "the discount you promised",
        "like you said before",
        "since you already",
        "my usual discount",
    ),
    F.TOOL_CAPABILITY_MISMATCH: ("fax", "text me", "call me", "print it", "mail me a paper"),
    F.INSUFFICIENT_INFORMATION: ("help me with my order", "i need help", "something for me"),
    F.IRRELEVANT_INFORMATION: ("my neighbour", "my cousin", "my dog", "last summer"),
    F.LEXICAL_AMBIGUITY: (" light ", " cool ", " plain ", " fair "),
    F.SYNTACTIC_AMBIGUITY: ("with the case and", "for my son and the"),
    F.REFERENTIAL_AMBIGUITY: (
        "the same one",
        "that one",
        "like last time",
        "the usual",
        "same as before",
    ),
    F.VAGUENESS_SUBJECTIVITY: (
        "something nice",
        "not too expensive",
        "reasonably priced",
        "decent",
        "kind of",
    ),
}
"""Cue phrases per fault type, matched in the lower-cased opening request (padded)."""

SHIFT_CUES: dict[ShiftOperator, tuple[str, ...]] = {
    S.PIVOT: ("forget it", "forget about", "something else entirely", "change of plans"),
    S.SUBSTITUTE: ("instead", "rather than", "switch to", "change it to", "swap"),
    S.RELAX: ("doesn't matter", "don't care about", "is fine too", "not necessary", "drop the"),
    S.REFINE: ("also", "make sure", "one more thing", "in addition", "only the ones"),
}
"""Cue phrases per shift type (first match wins, in this order), in later user messages."""

_WORD = re.compile(r"[a-z0-9']+")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_STOP = frozenset(
    "a an the i me my to for of and or with in on it is be please can you could would "
    "want need like this that do have get just".split()
)
_HEDGES = ("i was wondering", "i've been thinking", "it would be", "i'm not sure")
_DEICTIC = re.compile(r"\b(that one|the same|it again|the usual|last time)\b")
_SUBJECTIVE = re.compile(r"\b(nice|decent|good|reasonable|affordable|fancy|kind of)\b")
_INABILITY = re.compile(r"\b(i can(?:no|')t|i am unable|i'm unable|not able to|no way to)\b")
_CORRECTION = re.compile(r"\b(i meant|my mistake|i misspoke|sorry, i)\b")
_TURNAROUND = re.compile(r"^(actually|wait|hmm|no|oh|on second thought)\b")
_ADDITION = re.compile(r"\b(also|too|plus|as well|additionally)\b")
_DROP = re.compile(r"\b(any|whatever|doesn't matter|don't care|fine too|either)\b")


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def _match(text: str, cues: tuple[str, ...]) -> bool:
    low = " " + text.lower() + " "
    return any(c in low for c in cues)


class LexiconJudge:
    """Cue-phrase judge (``heuristic:lexicon``)."""

    name = "heuristic:lexicon"
    kind = "heuristic"

    def judge(self, session: SessionRecord) -> SessionJudgment:
        """Label one session from cue phrases."""
        users = session.user_texts
        opening = users[0]
        found = {f for f, cues in FAULT_CUES.items() if _match(opening, cues)}
        # A self-correction later on reveals a factual error in an earlier request.
        if any(_match(t, FAULT_CUES[F.FACTUAL_ERROR]) for t in users[1:]):
            found.add(F.FACTUAL_ERROR)
        faults = tuple(f for f in FaultType if f in found)
        shifts: list[ShiftOperator] = []
        intents = [opening.strip()]
        for text in users[1:]:
            op = next((op for op, cues in SHIFT_CUES.items() if _match(text, cues)), None)
            if op is not None:
                shifts.append(op)
                intents.append(text.strip())
        return SessionJudgment(
            session_id=session.session_id,
            judge=self.name,
            kind="heuristic",
            intents=tuple(intents),
            fault_types=faults,
            shift_types=tuple(shifts),
        )


class StructureJudge:
    """Conversation-shape judge (``heuristic:structure``)."""

    name = "heuristic:structure"
    kind = "heuristic"

    def judge(self, session: SessionRecord) -> SessionJudgment:
        """Label one session from the shape of the conversation."""
        msgs = session.messages
        users = session.user_texts
        opening = users[0].lower()
        faults: set[FaultType] = set()
        words = _content_words(opening)
        if len(words) < 4 and not _NUMBER.search(opening):
            faults.add(F.INSUFFICIENT_INFORMATION)
        if opening.startswith(_HEDGES):
            faults.add(F.INDIRECT_INTENT)
        if _DEICTIC.search(opening) and not _NUMBER.search(opening):
            faults.add(F.REFERENTIAL_AMBIGUITY)
        if _SUBJECTIVE.search(opening) and not _NUMBER.search(opening):
            faults.add(F.VAGUENESS_SUBJECTIVITY)
        if len(opening.split()) > 45:
            faults.add(F.IRRELEVANT_INFORMATION)
        assistant_text = " ".join((m.content or "").lower() for m in msgs if m.role == "assistant")
        if _INABILITY.search(assistant_text):
            faults.add(F.TOOL_CAPABILITY_MISMATCH)
        if any(_CORRECTION.search(u.lower()) for u in users[1:]):
            faults.add(F.FACTUAL_ERROR)

        shifts: list[ShiftOperator] = []
        intents = [users[0].strip()]
        seen_words = set(words)
        seen_numbers = set(_NUMBER.findall(opening))
        for text in users[1:]:
            low = text.lower().strip()
            new_words = _content_words(low)
            numbers = set(_NUMBER.findall(low))
            if _TURNAROUND.match(low) and not _CORRECTION.search(low):
                overlap = len(new_words & seen_words) / max(1, len(new_words))
                if "instead" in low or "rather" in low:
                    op = S.SUBSTITUTE
                elif _DROP.search(low):
                    op = S.RELAX
                elif _ADDITION.search(low):
                    op = S.REFINE
                elif overlap < 0.2 and len(new_words) >= 3:
                    op = S.PIVOT
                else:
                    op = S.SUBSTITUTE
                shifts.append(op)
                intents.append(text.strip())
            seen_words |= new_words
            seen_numbers |= numbers
        return SessionJudgment(
            session_id=session.session_id,
            judge=self.name,
            kind="heuristic",
            intents=tuple(intents),
            fault_types=tuple(f for f in FaultType if f in faults),
            shift_types=tuple(shifts),
        )
