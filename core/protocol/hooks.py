"""Optional host-world hooks the protocol uses, each with a documented default.

:class:`~core.envs.base.HostWorld` fixes the required surface, including how proposals are
judged (``judge``, ``is_proposal_action``, ``is_mutating``; defaults in
:class:`~core.envs.base.WorldBase`). Worlds may additionally define the presentation hooks
below; this module is the single place that probes for them, so the rest of the protocol calls
plain functions.

=========================  ==========================================================
hook                       default
=========================  ==========================================================
``slot_label(cond)``       humanised tail of the slot name (``attr:machine wash`` →
                           ``machine wash``; ``arg:0:cancel_order:reason`` → ``reason``)
``slot_words(condition)``  label words + value words (no digits, ≥ 3 chars, no
                           stopwords)
``context_facts(intent)``  ``intent.context``
``unmet_slots(i, s)``      ``None`` (the protocol falls back to the owed slots)
``unmet_problems(i, s)``   one problem per ``unmet_slots`` entry ("the colour isn't right")
``slot_lexicon(cond)``     label + ``slot_words`` as cues, the value as its phrase
``context_lexicon(key)``   the key's words (``first_name`` → ``first name``)
``lexicon_families()``     ``()`` (no topics beyond the intent's own slots)
``action_lexicon(i)``      ``None`` (confirmations are checked slot by slot only)
``final_answer_format()``  a generic note
``compile_intent(i)``      ``[]`` (the oracle then cannot act)
``max_observation_chars``  4000
=========================  ==========================================================
"""

from __future__ import annotations

import re
from typing import Any

from core.envs.base import EnvSession, HostWorld
from core.envs.lexicon import ActionLexicon, Problem, SlotLexicon
from core.model.intent import Condition, Intent
from core.model.world import EnvAction

STOPWORDS = frozenset(
    "the and for with that this you your are was were have has had not but any all can "
    "what which who whom how why when where there their them they from into about would "
    "could should like want need please some more less than then also just does did "
    "arg attr option item items value".split()
)
_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Return lower-cased word tokens of ``text``."""
    return _TOKEN.findall(text.lower())


def content_words(text: str) -> set[str]:
    """Return tokens of ``text`` usable for matching (no digits, ≥ 3 chars, no stopwords)."""
    return {
        t
        for t in tokens(text)
        if len(t) >= 3 and t not in STOPWORDS and not any(ch.isdigit() for ch in t)
    }


def default_slot_label(slot: str) -> str:
    """Humanise a slot name: the last ':'-separated part, underscores to spaces."""
    tail = slot.rsplit(":", 1)[-1] if ":" in slot else slot
    return tail.replace("_", " ").strip() or slot


def slot_label(world: HostWorld, cond: Condition) -> str:
    """Return the user-facing name of ``cond``'s slot (never its value)."""
    fn = getattr(world, "slot_label", None)
    if callable(fn):
        return str(fn(cond))
    return default_slot_label(cond.slot)


def slot_words(world: HostWorld, cond: Condition) -> set[str]:
    """Return the words that show a message is about ``cond``'s slot."""
    fn = getattr(world, "slot_words", None)
    if callable(fn):
        return {str(w).lower() for w in fn(cond)}
    words = content_words(slot_label(world, cond))
    if isinstance(cond.value, str):
        words |= content_words(cond.value)
    return words


def context_facts(world: HostWorld, intent: Intent) -> dict[str, str]:
    """Return facts the user may state freely (account ids, names)."""
    fn = getattr(world, "context_facts", None)
    if callable(fn):
        return {str(k): str(v) for k, v in dict(fn(intent)).items()}
    return dict(intent.context)


def unmet_slots(world: HostWorld, intent: Intent, session: EnvSession) -> list[str] | None:
    """Return the slots a rejected proposal fails, if the world can tell."""
    fn = getattr(world, "unmet_slots", None)
    if callable(fn):
        got = fn(intent, session)
        return None if got is None else [str(s) for s in got]
    return None


def final_answer_format(world: HostWorld) -> str:
    """Return the note telling the agent how to give its final answer."""
    fn = getattr(world, "final_answer_format", None)
    if callable(fn):
        return str(fn())
    return "Give your final answer now (propose it); anything else counts as no answer."


def compile_intent(world: HostWorld, intent: Intent) -> list[EnvAction]:
    """Return the environment actions that realise ``intent`` (for the oracle)."""
    fn = getattr(world, "compile_intent", None)
    if callable(fn):
        return list(fn(intent))
    return []


def max_observation_chars(world: HostWorld) -> int:
    """Return how many characters of an observation the agent sees."""
    val: Any = getattr(world, "max_observation_chars", 4000)
    return int(val) if isinstance(val, int) else 4000


def slot_lexicon(world: HostWorld, cond: Condition) -> SlotLexicon:
    """Return how people talk about ``cond``'s slot (the world's lexicon, or a default)."""
    fn = getattr(world, "slot_lexicon", None)
    if callable(fn):
        got = fn(cond)
        if isinstance(got, SlotLexicon):
            return got
    label = slot_label(world, cond)
    value = str(cond.value).lower() if isinstance(cond.value, str) else ""
    cues = tuple(sorted(w for w in slot_words(world, cond) if w != value))
    number = (
        float(cond.value)
        if isinstance(cond.value, (int, float)) and not isinstance(cond.value, bool)
        else None
    )
    return SlotLexicon(
        slot=cond.slot,
        label=label,
        family=label,
        cues=cues,
        values=(value,) if value else (),
        number=number,
        op=cond.op,
    )


def context_lexicon(world: HostWorld, key: str) -> SlotLexicon:
    """Return how people ask for the context fact ``key`` (e-mail, user id, name …)."""
    fn = getattr(world, "context_lexicon", None)
    if callable(fn):
        got = fn(key)
        if isinstance(got, SlotLexicon):
            return got
    label = key.replace("_", " ").strip()
    return SlotLexicon(slot=key, label=label, family="context", cues=(label,))


def lexicon_families(world: HostWorld) -> tuple[SlotLexicon, ...]:
    """Return the world's slot families (questions about things with no requirement)."""
    fn = getattr(world, "lexicon_families", None)
    if callable(fn):
        return tuple(x for x in fn() if isinstance(x, SlotLexicon))
    return ()


def action_lexicon(world: HostWorld, intent: Intent) -> ActionLexicon | None:
    """Return the kind of action ``intent`` asks for, if the world can tell."""
    fn = getattr(world, "action_lexicon", None)
    if callable(fn):
        got = fn(intent)
        return got if isinstance(got, ActionLexicon) else None
    return None


def unmet_problems(world: HostWorld, intent: Intent, session: EnvSession) -> list[Problem] | None:
    """Return what a rejected proposal gets wrong, in plain words (None if the world can't tell)."""
    fn = getattr(world, "unmet_problems", None)
    if callable(fn):
        got = fn(intent, session)
        return None if got is None else [p for p in got if isinstance(p, Problem)]
    slots = unmet_slots(world, intent, session)
    if slots is None:
        return None
    conds = intent.slot_map()
    out = []
    for s in slots:
        label = slot_label(world, conds[s]) if s in conds else default_slot_label(s)
        out.append(Problem(slots=(s,), text=f"the {label} isn't right"))
    return out
