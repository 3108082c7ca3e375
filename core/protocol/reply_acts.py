"""The speech act of a user's reply: yes, no, a hedge, or neither.

Independent of any world: how people agree ("yes please", "sounds good", "go for it"), refuse
("no", "not quite", "hold on"), and hedge or hand the choice back ("not sure", "no idea",
"whatever you think", "I'd rather not say", "doesn't matter"). The reply reader
(:mod:`core.protocol.reply_reader`) combines these with the values a reply states.

>>> lead("Yeah, go ahead with that"), lead("Nope, wrong one"), lead("No idea, honestly")
('yes', 'no', '')
>>> hedged("whatever you think is best"), hedged("I want navy")
(True, False)
"""

from __future__ import annotations

import re
from typing import Literal

from core.protocol.textnorm import clean

Lead = Literal["yes", "no", ""]

_HEDGES = tuple(
    re.compile(p)
    for p in (
        r"\b(i am |i'm )?not (really |entirely |totally |too |so |100% )?(sure|certain|positive)\b",
        r"\bunsure\b",
        r"\b(i )?(do not|dont) (really )?(know|remember|recall|care|mind)\b",
        r"\bno (idea|clue|preference|strong preference|particular preference|opinion|"
        r"strong feelings?|preferences)\b",
        r"\bnot (fussed|bothered|picky|particular|important|a big deal)\b",
        r"\b(can not|cannot|can't) (remember|recall|say|tell)\b",
        r"\b(i )?(forgot|forget)\b",
        r"\b(rather|prefer) not\b",
        r"\b(would|will) not (say|tell|share|disclose)\b",
        r"\bnot (going to|gonna) (say|tell|share)\b",
        r"\bnone of your business\b",
        r"\b(does not|doesnt|do not|dont) matter\b",
        r"\bwhatever\b",
        r"\bup to you\b",
        r"\b(you|u) (decide|choose|pick|tell me)\b",
        r"\byour (call|choice|pick|decision)\b",
        r"\b(any|either|anything|any one|any of them|either one|all) (is|are|would be|will be|"
        r"works?|should be)? ?(fine|ok|okay|good|great)\b",
        r"\beither (way|is fine|works)\b",
        r"\b(i am |i'm )?(flexible|open to anything|easy|indifferent)\b",
        r"\bsurprise me\b",
        r"\b(i have|i've) (no|not) (idea|decided|thought)\b",
        r"\bhaven'?t (decided|thought about)\b",
        r"\b(dunno|idk|beats me|who knows|no comment|pass|skip (it|that|this))\b",
        r"\bnothing (specific|in particular|particular)\b",
        r"\bwhat(ever)? (do )?you (think|recommend|suggest)\b",
        r"\b(let me|i will|i'll|i need to) (think|check|get back)\b",
        r"\bdoes not really matter\b",
        r"\bi (would not|wouldn't) know\b",
        r"\bno (particular|specific) (one|color|colour|size|brand|style)\b",
        r"\bnot (that|too) (important|fussy)\b",
        r"\bgood question\b",
    )
)
_YES = re.compile(
    r"^\s*(yes|yeah|yea|ya|yep|yup|yas|aye|sure|certainly|absolutely|definitely|of course|"
    r"ok|okay|k|alright|all right|right|correct|exactly|indeed|precisely|perfect|great|"
    r"sounds (good|great|right|fine|perfect)|that (works|is right|is correct|is fine|is it|"
    r"would be great|sounds (good|right|fine))|looks (good|right|fine)|go (ahead|for it)|"
    r"please (do|go ahead|proceed)|do it|proceed|confirmed?|i confirm|affirmative|agreed|"
    r"fine|good|cool|why not|let us do it|let's do it|please|yes please|bingo|spot on|"
    r"you got it|that one|that is the one|exactly right|mhm|uh huh)\b"
)
_NO = re.compile(
    r"^\s*(no|nope|nah|nay|negative|not really|not quite|not exactly|not that|not yet|"
    r"incorrect|wrong|that is (wrong|not right|not correct|incorrect|not it|not what)|"
    r"that's (wrong|not)|do not|don't|dont|wait|hold on|hang on|stop|never ?mind|"
    r"absolutely not|definitely not|of course not|no way|not at all|please do not|"
    r"cancel that|i do not (want|think so)|i don't (want|think so)|that is not)\b"
)
_YES_ANYWHERE = re.compile(
    r"\b(that is (right|correct)|sounds (good|right)|go ahead|please proceed|yes please|"
    r"that works|looks good)\b"
)
_NO_ANYWHERE = re.compile(
    r"\b(that is (wrong|not right|not correct|incorrect)|not what i (want|asked|said|meant)|"
    r"please do not|do not (do|go ahead|proceed)|not correct)\b"
)


def _text(text: str) -> str:
    t = clean(text).replace("’", "'")
    return re.sub(r"\s+", " ", t).strip()


def lead(text: str) -> Lead:
    """Return ``yes`` / ``no`` when the reply opens by agreeing or refusing, else ``""``.

    A refusal that is really a hedge ("no idea", "not sure") is neither.
    """
    t = _text(text)
    if not t:
        return ""
    first_hedge = any(h.match(t) for h in _HEDGES)
    if _NO.match(t) and not first_hedge and not re.match(r"^\s*no (idea|clue|preference)", t):
        return "no"
    if _YES.match(t):
        return "yes"
    if _NO_ANYWHERE.search(t):
        return "no"
    if _YES_ANYWHERE.search(t):
        return "yes"
    return ""


def strong_yes(text: str) -> bool:
    """Whether the reply opens with an unmistakable yes (not just "sure", "ok", "please")."""
    return bool(
        re.match(
            r"^\s*(yes|yeah|yep|yup|correct|exactly|absolutely|definitely|confirmed?|"
            r"that is (right|correct)|go ahead|please (do|proceed)|do it|affirmative)\b",
            _text(text),
        )
    )


def hedged(text: str) -> bool:
    """Whether the reply hedges, hands the choice back or refuses to say."""
    t = _text(text)
    return any(h.search(t) for h in _HEDGES)
