"""The simulated user's question interpreter: an agent message as a question act.

The act is read over the user's *current* intent:

* ``slots`` — the message asks about these requirement slots (one or several); with no slot it
  asks about something the user has no requirement on (``topics``) or for facts the user may
  state freely (``context``: identification);
* ``open`` — an open question ("what are you looking for?", "anything else?");
* ``confirm`` — a yes/no confirmation of a described action ("Shall I go ahead?", "I'll
  exchange the black shoes for size 11, OK?"); ``confirm`` is True when nothing the message
  describes contradicts the current intent, and ``wrong`` lists the slots it gets wrong;
* ``offtopic`` — nothing the user could answer.

The offline interpreter (:func:`interpret`) matches the world's slot lexicons
(:mod:`core.envs.requirement_lexicon`) with normalised stems (:mod:`core.protocol.textnorm`) and
scores sentences (:mod:`core.protocol.lexmatch`); it only ever returns slots of the intent it
is given.
An LLM interpreter (:mod:`core.protocol.interpret_llm`) maps messages to the same acts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from core.envs.base import HostWorld
from core.envs.requirement_lexicon import ActionLexicon, SlotLexicon
from core.model.intent import Condition, Intent
from core.protocol.lexmatch import Compiled, Score, compile_lexicons, score, selected
from core.protocol.mentions import Profile, contradicted, profile, strip_dates
from core.protocol.textnorm import WORD_NUMBERS, Sentence, clean, sentences, stem, tokens

Act = Literal["slots", "open", "confirm", "offtopic"]
ACTS: tuple[str, ...] = ("slots", "open", "confirm", "offtopic")
OFFLINE = "offline"
"""Interpreter spec of the offline interpreter (the default)."""


@dataclass(frozen=True)
class QuestionAct:
    """How the simulated user reads one agent message.

    Attributes:
        act: ``slots`` / ``open`` / ``confirm`` / ``offtopic``.
        slots: Slots of the current intent the message asks about (``slots``) or describes
            (``confirm``), in intent order.
        confirm: For ``confirm``: whether the described action matches the current intent.
        wrong: For ``confirm``: the slots the described action gets wrong.
        context: Context facts asked for (identification: e-mail, user id, name, zip …).
        topics: Slot families asked about on which the user has no requirement.
        source: Which interpreter read it (``offline`` or a model spec).
    """

    act: Act
    slots: tuple[str, ...] = ()
    confirm: bool | None = None
    wrong: tuple[str, ...] = ()
    context: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    source: str = OFFLINE


@dataclass
class Index:
    """Compiled lexicons of one intent in one world."""

    conditions: dict[str, Condition]
    slots: Compiled
    context: Compiled
    action: ActionLexicon | None
    order: tuple[str, ...] = field(default=())
    profile: Profile | None = None


INDEX_MEMO = "protocol.interpret"
"""The world's memo table of compiled lexicons (per intent content; immutable values)."""
INDEX_MEMO_SIZE = 2048
"""Compiled lexicons kept per world."""


def index_for(world: HostWorld, intent: Intent) -> Index:
    """Return the compiled lexicons of ``intent`` (cached per world and intent content)."""
    memo = world.memo(INDEX_MEMO, size=INDEX_MEMO_SIZE)
    key = (
        tuple(c.key() for c in intent.conditions),
        intent.base,
        tuple(sorted(intent.context)),
    )
    got: Index | None = memo.get(key)
    if got is not None:
        return got
    conds = {c.slot: c for c in intent.conditions}
    lexicons = [world.slot_lexicon(c) for c in conds.values()]
    ctx = [world.context_lexicon(k) for k in sorted(intent.context)]
    idx = Index(
        conditions=conds,
        slots=compile_lexicons(lexicons, world.lexicon_families()),
        context=compile_lexicons(ctx),
        action=world.action_lexicon(intent),
        order=tuple(conds),
        profile=profile(
            list(conds.values()),
            {c.slot: (*world.slot_lexicon(c).values, _phrase(world, c)) for c in conds.values()},
            intent.context,
            {
                c.slot: (world.slot_lexicon(c).label, *world.slot_lexicon(c).cues)
                for c in conds.values()
            },
        ),
    )
    memo.put(key, idx)
    return idx


def _phrase(world: HostWorld, cond: Condition) -> str:
    try:
        return str(world.phrase(cond))
    except Exception:  # noqa: BLE001 - a world that cannot phrase a value still gets a reading
        return ""


def compiled_for(world: HostWorld, conditions: Sequence[Condition]) -> Compiled:
    """Return the compiled lexicons of an arbitrary set of conditions (cached)."""
    memo = world.memo(INDEX_MEMO, size=INDEX_MEMO_SIZE)
    key = ("conds", tuple(c.key() for c in conditions))
    got = memo.get(key)
    if got is None:
        got = Index(
            conditions={c.slot: c for c in conditions},
            slots=compile_lexicons(world.slot_lexicon(c) for c in conditions),
            context=compile_lexicons(()),
            action=None,
        )
        memo.put(key, got)
    return got.slots


# --------------------------------------------------------------------------- patterns

_COMMIT = (
    r"(go ahead|proceed|continue|do (that|it|this|so)|get (that|this|it) (done|started|going)|"
    r"place|submit|complete|finali[sz]e|book|cancel|exchange|return|refund|modify|change|update|"
    r"buy|purchase|order|process|make|add|remove|upgrade|downgrade|send|issue|apply|charge|"
    r"check ?out|confirm|move|switch|swap|file|initiate|start|execute|finish|lock|reserve|"
    r"rebook|select|pick|choose|go with|use|pay|ship|replace|transfer|put|set|mark|schedule|"
    r"arrange|request|register|enroll|activate|reserve|refund|reroute|redirect|upgrade)"
)
_CONFIRM_RES = tuple(
    re.compile(p)
    for p in (
        r"^\s*(shall|should|may|can) (i|we)( do (it|that|so|this))?( now)?\s*\?\s*$",
        rf"\b(shall|should|may|can|could|might) (i|we) "
        rf"(now |then |just |please |also )?{_COMMIT}\b",
        rf"\b(do|would|did|will) you (still )?(want|like|wish|need) (me|us) to "
        rf"(now |just )?{_COMMIT}\b",
        rf"\b(want|like|need) me to (now |just )?{_COMMIT}\b",
        r"\b(do|would) you (want|like|wish) to (go ahead|proceed|continue|confirm)\b",
        rf"\b(ready|okay|ok|happy|good|alright|fine) (for me |with me )?to (now )?{_COMMIT}\b",
        r"\b(i will|i am going to|i am about to|i can|i would|let me|i plan to|going to|we will)"
        r"\b.*,? (ok|okay|alright|all right|right|correct|fine|good|agreed|sound good|"
        r"yes or no)\s*\??\s*$",
        r"\b(is|does|would|will|are) (that|this|it|everything|all (of )?(that|this)|these|those)"
        r" (all )?(be )?(ok|okay|alright|all right|correct|right|fine|good|acceptable|accurate|"
        r"work|works|sound (good|right|okay|fine)|look (good|right|correct|okay))\b",
        r"\b(are|is) (these|those|the|this|all (the|these)) (details|information|info|changes|"
        r"options|choices|selections|terms|arrangements|plans|plan|summary) (all )?"
        r"(correct|right|accurate|okay|fine|good)\b",
        r"[,.\-:]\s*(ok|okay|alright|all right|right|correct|agreed|fine|good|sound good|yes or no)"
        r"\s*\?\s*$",
        r"\byes or no\b",
        r"\bare you sure\b",
        r"\b(your|explicit|final) (confirmation|approval|consent|go ahead|ok|okay)\b"
        r"(?! (number|code))",
        r"\b(can|may) i (have|get) (a |your )?(yes|confirmation|go ahead|ok|okay|approval)\b",
        r"\b(confirm|approve|authori[sz]e) (that|this|these|the (following|details|change|changes|"
        r"action|cancellation|exchange|return|booking|purchase|order|request|modification|update|"
        r"refund|plan|above|transaction|upgrade|reservation))\b(?! (number|id|code))",
        r"^\s*(confirm|proceed|go ahead|okay to proceed|ok to proceed)\s*\??\s*$",
        r"^\s*(ok|okay|alright|all right|right|correct|agreed|fine|good|sound good|sounds good|"
        r"deal|yes or no|is that (ok|okay|alright|right|correct|fine))\s*\?\s*$",
        r"\b(okay|ok|alright) to (proceed|go ahead|continue|place|book|buy|submit)\b",
        r"\bgood to go\b",
        r"\bwould (that|this) (be )?(work|okay|ok|alright|acceptable)\b",
        r"\bshould i go ahead\b",
        rf"^\s*(please )?{_COMMIT}\b[^?]*\?\s*$",
        r"\b(go ahead|proceed|continue)\s*\?\s*$",
        r",\s*(shall|should|may|can) (i|we)\s*\?\s*$",
    )
)
_CONFIRM_VERB = re.compile(
    r"\b(do|can|could|would|will) you (please )?(confirm|approve|authori[sz]e|verify)\b"
    r"|\bplease (confirm|approve|verify)\b|\bconfirm (for me )?(your|the)\b"
)
_OPEN_RES = tuple(
    re.compile(p)
    for p in (
        r"\b(anything|something|what) else\b",
        r"\bany(thing)? (other|more|further|additional)\b",
        r"\b(other|more|further|additional) (preferences|requirements|requests|details|needs|"
        r"constraints|specifics|criteria|wishes|info|information|things|requests)\b",
        r"\bhow (can|may|could|might|shall) (i|we) (help|assist|be of)\b",
        r"\bwhat can (i|we) (do|help)\b",
        r"\bwhat (are|were|is) you (looking|searching|shopping|hoping|after|trying)\b",
        r"\bwhat (exactly )?(do|would|did) you (need|want|like|have in mind|prefer|require|"
        r"wish|mean|expect)\b",
        r"\bwhat brings you\b",
        r"\bwhat (can|should|shall) i (find|get|look for|search for|do)\b",
        r"\btell me (more|about|what)\b",
        r"\bwhat (kind|type|sort) of (product|item|thing|help|assistance|request|change)\b",
        r"\bis there (anything|something)\b",
        r"\bwhat (seems to be|is|are) (the|your) (request|issue|problem|goal|needs|requirements|"
        r"preferences|matter|trouble|"
        r"criteria|priorities|wishes|situation|question|concern)\b",
        r"\bwhat would you like (me )?to\b",
        r"\bhow (can|could) i (make|get) (this|it) right\b",
        r"\bdescribe (what|your)\b",
        r"\b(any|your) (preferences|requirements|needs|wishes|criteria)\b",
        r"\bwhat (do|did) you have in mind\b",
        r"\bwhat are we (looking|shopping)\b",
        r"\bmore about what\b",
        r"\bwhat (matters|is important) (most )?to you\b",
        r"\bwhich (product|item|one) (are|do|would) you\b",
        r"\bwhat (product|item) (are|do|would)\b",
        r"\bwhat can i (get|find) for you\b",
        r"\bhow (do|would) you (want|like) (me )?to (proceed|handle)\b",
        r"\bwhat would you like\b",
        r"\bhow may i\b",
    )
)


def _any(res: Iterable[re.Pattern[str]], text: str) -> bool:
    return any(r.search(text) for r in res)


_WH = frozenset("what which how where when who whom whose why".split())
_TAG_RES = tuple(
    re.compile(p)
    for p in (
        r"\byes or no\b",
        r"[,.\-:]\s*(ok|okay|alright|all right|right|correct|agreed|fine|good|sound good)\s*\?\s*$",
        r"\b(is|does|would|will) (that|this|it|everything) (all )?(be )?(ok|okay|alright|all right|"
        r"correct|right|fine|good|acceptable|work|sound (good|right|okay|fine))\b",
    )
)
_SHARED_CONTEXT = frozenset({"zip", "user_id"})
_SHARED_FAMILIES = frozenset({"zip", "user"})


_CHOICE = re.compile(r"\bor\b(?! not\b)")


def _confirms(focus: Sequence[Sentence]) -> bool:
    """Return whether a focus sentence confirms an action.

    One opening with a question word ("which card should I use?") confirms only through a tag
    ("…, is that OK?").
    """
    for s in focus:
        first = s.text.split(maxsplit=1)[0] if s.text else ""
        choice = bool(_CHOICE.search(s.text)) and "yes or no" not in s.text
        res = _TAG_RES if first.strip(",.!?") in _WH or choice else _CONFIRM_RES
        if _any(res, s.text):
            return True
    return False


def is_open(text: str) -> bool:
    """Return whether ``text`` is an open question."""
    return _any(_OPEN_RES, clean(text))


# --------------------------------------------------------------------------- reading


def _focus(sents: Sequence[Sentence]) -> list[Sentence]:
    asks = [s for s in sents if s.question]
    return asks or list(sents)


def _ordered(slots: Iterable[str], order: Sequence[str]) -> tuple[str, ...]:
    want = set(slots)
    return tuple(s for s in order if s in want)


def _scores(sents: Sequence[Sentence], c: Compiled) -> list[Score]:
    return [score(s, c) for s in sents]


def asked_about(text: str, world: HostWorld, conditions: Sequence[Condition]) -> list[str]:
    """Return the slots among ``conditions`` that the message's own words ask about.

    Used by the suggestibility trigger: it reads the question's words, never slot ids an agent
    declares. Open questions and off-topic messages name no slot.
    """
    if not conditions:
        return []
    c = compiled_for(world, conditions)
    hit: set[str] = set()
    for sc in _scores(_focus(sentences(text)), c):
        hit.update(selected(sc))
    return [x.slot for x in conditions if x.slot in hit]


def interpret(text: str, intent: Intent, world: HostWorld) -> QuestionAct:
    """Read ``text`` as a question act over ``intent`` (offline; never raises on text).

    Args:
        text: The agent's message.
        intent: The user's current intent.
        world: The host world (supplies the lexicons).
    """
    sents = sentences(text)
    if not sents:
        return QuestionAct(act="offtopic")
    idx = index_for(world, intent)
    focus = _focus(sents)
    focus_text = " ".join(s.text for s in focus)
    scores = _scores(focus, idx.slots)
    asked: set[str] = set()
    strong: set[str] = set()
    topics: set[str] = set()
    for sc in scores:
        asked.update(selected(sc))
        strong.update(sc.strong)
        topics.update(sc.topics)
    ctx_hit: set[str] = set()
    for sc in _scores(focus, idx.context):
        ctx_hit.update(s for s in selected(sc) if s in sc.strong)
    context = tuple(k for k in sorted(intent.context) if k in ctx_hit)
    if context and set(context) - _SHARED_CONTEXT and asked:
        fams = {idx.slots.lexicons[s].family for s in asked if s in idx.slots.lexicons}
        if fams <= _SHARED_FAMILIES:
            asked = set()  # "your name and zip code": identification, not a new address
    if _confirms(focus) or (_CONFIRM_VERB.search(focus_text) and not (asked & strong or context)):
        return _confirmation(text, sents, idx)
    if asked:
        asked = _scoped(asked, focus, focus_text, idx.action)
        return QuestionAct(act="slots", slots=_ordered(asked, idx.order))
    if context:
        return QuestionAct(act="slots", context=context)
    if _any(_OPEN_RES, focus_text):
        return QuestionAct(act="open")
    if topics:
        return QuestionAct(act="slots", topics=tuple(sorted(topics)))
    if _about_the_need(focus, intent):
        return QuestionAct(act="open")
    return QuestionAct(act="offtopic")


_NEED_RES = tuple(
    re.compile(p)
    for p in (
        r"\b(qualit(y|ies)|features?|characteristics?|propert(y|ies)|requirements?|specs?|"
        r"specifications?|details?|preferences?|criteria|particulars|must[- ]haves?|"
        r"priorities|attributes?)\b",
        r"\b(prefer|looking for|look for|after|important|matters?|care (about|for)|ideal|"
        r"perfect|describe|in mind|hoping for|expect|plans?|go(ing)? for)\b",
        r"\b(kind|type|sort|style|model|version|variant) of\b",
        r"\bshould (i|we) know\b",
    )
)
_NEED_NOUNS = frozenset(
    stem(w)
    for w in (
        "product item order purchase trip flight booking reservation seat ticket bag luggage "
        "delivery shipment exchange return refund replacement pair travel journey cabin "
        "payment account request change"
    ).split()
)


def _about_the_need(focus: Sequence[Sentence], intent: Intent) -> bool:
    """Whether a question asks about the user's need itself (qualities, features, plans).

    "What qualities are you looking for in the wireless headphones?" names no slot, but it is
    about what the user wants: an open question, never off-topic. A question counts when it
    asks with requirement words, or names the product or a thing of the task (order, trip …).
    """
    product = {stem(w) for w in tokens(str(intent.context.get("product", ""))) if len(w) > 2}
    for s in focus:
        if not s.question:
            continue
        words = set(s.stems)
        if words & (_NEED_NOUNS | product) or _any(_NEED_RES, s.text):
            return True
    return False


def _scoped(
    asked: set[str], focus: Sequence[Sentence], focus_text: str, action: ActionLexicon | None
) -> set[str]:
    """Keep the asked slots of the actions a question's own verbs name.

    "Which items would you like to return?" asks about the return's items, not those of an
    exchange in the same intent. Slots outside any verb-scoped action stay; without such a
    verb, or when no asked slot belongs to the actions it names, every asked slot stays.
    """
    if action is None or not action.scopes:
        return asked
    words = {stem(w) for s in focus for w in tokens(s.text)}
    text = f" {focus_text.lower()} "
    named: set[str] = set()
    scoped: set[str] = set()
    for slot, verbs in action.scopes:
        if slot not in asked or not verbs:
            continue
        scoped.add(slot)
        if any((stem(v) in words) if " " not in v else (f" {v} " in text) for v in verbs):
            named.add(slot)
    if not named:
        return asked
    return named | (asked - scoped)


# --------------------------------------------------------------------------- confirmations

_NUM_TOKEN = re.compile(r"^\d+(?:\.\d+)?$")


_MONEY = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:dollars|usd)\b")


def _numbers_near(text: str, lex: SlotLexicon) -> list[float]:
    """Numbers the message writes for ``lex``'s slot (next to one of its cues, or ``$x``).

    Dates never count, and amounts of money count only for money slots (price, amount).
    """
    text = strip_dates(text)
    if lex.family not in ("price", "amount"):
        text = _MONEY.sub(" ", text)
    else:  # written amounts of money, when there are any, are what a price is compared with
        amounts = [
            float(re.sub(r"[^\d.]", "", m.group(0).replace(",", "")))
            for m in _MONEY.finditer(text)
            if re.sub(r"[^\d.]", "", m.group(0))
        ]
        if amounts:
            return amounts
    t = clean(text)
    toks = tokens(t)
    weak = {stem(w) for cue in lex.weak for w in cue.split()}
    cue_stems = {stem(w) for cue in (lex.label, *lex.cues) for w in cue.split()} - weak
    money = lex.family in ("price", "amount")
    if money:
        cue_stems |= {"dollar", "usd", "buck"}
    out: list[float] = []
    for i, tok in enumerate(toks):
        val: float | None = None
        if _NUM_TOKEN.match(tok):
            val = float(tok)
        elif tok in WORD_NUMBERS and not money:
            val = float(WORD_NUMBERS[tok])
        if val is None:
            continue
        window = {stem(w) for w in toks[max(0, i - 3) : i + 4] if w != tok}
        if window & cue_stems:
            out.append(val)
    return out


def _number_ok(lex: SlotLexicon, val: float) -> bool:
    assert lex.number is not None
    if lex.op == "<=":
        return val <= lex.number + 1e-9
    if lex.op == ">=":
        return val >= lex.number - 1e-9
    return abs(val - lex.number) < 1e-9


def describe(text: str, idx: Index) -> tuple[list[str], list[str]]:
    """Return (mentioned, wrong): the slots a message's description names.

    ``wrong`` are those it names wrongly: a number off, another value of the slot's family,
    another action.
    """
    whole = score(tuple(w for s in sentences(text) for w in s.stems), idx.slots)
    mentioned: list[str] = []
    wrong: list[str] = []
    for slot in idx.order:
        lex = idx.slots.lexicons.get(slot)
        if lex is None:
            continue
        nums = _numbers_near(text, lex) if lex.number is not None else []
        vals, alts = whole.values.get(slot, set()), whole.alternatives.get(slot, set())
        part = whole.partial.get(slot, set())
        if nums:
            mentioned.append(slot)
            if not any(_number_ok(lex, n) for n in nums):
                wrong.append(slot)
            continue
        if vals or alts or part:
            mentioned.append(slot)
            if any(g not in vals for g in alts):
                wrong.append(slot)
    if idx.profile is not None:  # a value of a slot's kind that the intent does not hold
        for slot in contradicted(text, idx.profile, idx.order):
            if slot not in mentioned:
                mentioned.append(slot)
            if slot not in wrong:
                wrong.append(slot)
    act = idx.action
    if act is not None:
        words = {stem(w) for s in sentences(text) for w in tokens(s.text)}
        own = {stem(v) for v in act.verbs}
        other = {stem(v) for v in act.others} - own
        if words & other and not words & own:
            target = act.slot if act.slot in idx.conditions else (idx.order[0] if idx.order else "")
            if target and target not in wrong:
                wrong.append(target)
                if target not in mentioned:
                    mentioned.append(target)
    return mentioned, wrong


def _confirmation(text: str, sents: Sequence[Sentence], idx: Index) -> QuestionAct:
    mentioned, wrong = describe(text, idx)
    return QuestionAct(
        act="confirm",
        slots=_ordered(mentioned, idx.order),
        confirm=not wrong,
        wrong=_ordered(wrong, idx.order),
    )


def restrict(act: QuestionAct, intent: Intent) -> QuestionAct:
    """Return ``act`` with every slot not in ``intent`` removed (a safety net for readers)."""
    have = {c.slot for c in intent.conditions}
    order = [c.slot for c in intent.conditions]
    slots = _ordered((s for s in act.slots if s in have), order)
    wrong = _ordered((s for s in act.wrong if s in have), order)
    if slots == act.slots and wrong == act.wrong:
        return act
    return QuestionAct(
        act=act.act,
        slots=slots,
        confirm=act.confirm,
        wrong=wrong,
        context=act.context,
        topics=act.topics,
        source=act.source,
    )
