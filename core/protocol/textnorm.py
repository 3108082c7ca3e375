"""Normalisation for the question interpreter: word stems that survive inflection and spelling.

Everything here is project-written and offline: a lemma table for irregular forms, British →
American spelling rules, and a light suffix stemmer. Both the world's lexicon phrases and the
agent's message go through the same :func:`stem`, so only consistency matters — ``colours``,
``colour`` and ``colored`` all become ``color``; ``sizes``/``sizing``/``size`` become ``siz``.

>>> [stem(w) for w in ("colours", "Colored", "flavour", "sizes", "sizing", "shipping", "paid")]
['color', 'color', 'flavor', 'siz', 'siz', 'ship', 'pay']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from core.protocol.numwords import ONE_TO_TEN

IRREGULAR: dict[str, str] = {
    "paid": "pay",
    "bought": "buy",
    "sent": "send",
    "spent": "spend",
    "flew": "fly",
    "flown": "fly",
    "flies": "fly",
    "flying": "fly",
    "chose": "choose",
    "chosen": "choose",
    "children": "child",
    "kids": "child",
    "kid": "child",
    "people": "person",
    "persons": "person",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "teeth": "tooth",
    "went": "go",
    "gone": "go",
    "made": "make",
    "got": "get",
    "gotten": "get",
    "told": "tell",
    "said": "say",
    "wore": "wear",
    "worn": "wear",
    "sold": "sell",
    "took": "take",
    "taken": "take",
    "gave": "give",
    "given": "give",
    "kept": "keep",
    "brought": "bring",
    "held": "hold",
    "ran": "run",
    "cheaper": "cheap",
    "cheapest": "cheap",
    "pricier": "pricey",
    "priciest": "pricey",
    "bigger": "big",
    "biggest": "big",
    "larger": "large",
    "largest": "large",
    "smaller": "small",
    "smallest": "small",
    "lower": "low",
    "lowest": "low",
    "higher": "high",
    "highest": "high",
    "longer": "long",
    "longest": "long",
    "shorter": "short",
    "lighter": "light",
    "darker": "dark",
    "wider": "wide",
    "thicker": "thick",
    "thinner": "thin",
    "fewer": "few",
    "whom": "who",
    "whose": "who",
    "grey": "gray",
    "greys": "gray",
    "jewellery": "jewelry",
    "aluminium": "aluminum",
    "cheque": "check",
    "tyre": "tire",
    "tyres": "tire",
    "mould": "mold",
    "pyjamas": "pajamas",
    "programme": "program",
    "licence": "license",
    "defence": "defense",
    "practise": "practice",
    "cosy": "cozy",
    "mum": "mom",
    "postcode": "zip",
    "zipcode": "zip",
    "e-mail": "email",
    "emails": "email",
    "mails": "mail",
    "luggage": "baggage",
    "wifi": "wifi",
    "ok": "okay",
    "k": "okay",
    "yeah": "yes",
    "yep": "yes",
    "nope": "no",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "u": "you",
    "ur": "your",
    "r": "are",
    "wanna": "want",
    "gonna": "go",
    "qty": "quantity",
    "pcs": "piece",
    "pc": "piece",
    "oz": "ounce",
    "ounces": "ounce",
    "lbs": "pound",
    "lb": "pound",
    "ml": "milliliter",
    "millilitre": "milliliter",
    "millilitres": "milliliter",
    "litre": "liter",
    "litres": "liter",
    "centre": "center",
    "metre": "meter",
    "metres": "meter",
    "fibre": "fiber",
    "theatre": "theater",
    "catalogue": "catalog",
    "dialogue": "dialog",
    "analogue": "analog",
    "moustache": "mustache",
    "enrol": "enroll",
    "addresses": "address",
    "addressed": "address",
    "glasses": "glass",
    "buses": "bus",
    "status": "status",
    "this": "this",
    "his": "his",
    "was": "was",
    "has": "has",
    "does": "do",
    "doing": "do",
    "did": "do",
    "is": "is",
    "yes": "yes",
    "gas": "gas",
    "plus": "plus",
    "news": "news",
    "series": "series",
    "species": "species",
    "less": "less",
    "unless": "unless",
    "kindly": "kindly",
    "needed": "need",
    "needs": "need",
    "seed": "seed",
    "speed": "speed",
    "feed": "feed",
    "used": "use",
    "uses": "use",
    "using": "use",
    "bed": "bed",
    "red": "red",
    "wed": "wed",
    "shed": "shed",
    "sing": "sing",
    "ring": "ring",
    "king": "king",
    "thing": "thing",
    "things": "thing",
    "nothing": "nothing",
    "anything": "anything",
    "something": "something",
    "everything": "everything",
    "string": "string",
    "spring": "spring",
    "wing": "wing",
    "bring": "bring",
}
"""Irregular forms, British-only words and words the suffix rules would damage."""

_OUR = re.compile(r"^(?P<pre>[a-z]{3,})our(?P<suf>s|ed|ing|ful|ite|ites|able|less|ings)?$")
_ISE = re.compile(r"^(?P<pre>[a-z]{3,})is(?P<suf>e|es|ed|er|ers|ing|ation|ations|able)$")
_TRE = re.compile(r"^(?P<pre>[a-z]{2,}[^aeiou])tre(?P<suf>s?)$")
_ISE_KEEP = frozenset(
    "wise rise raise praise premise promise noise poise cruise expertise exercise advise "
    "surprise enterprise franchise merchandise otherwise likewise concise precise paradise "
    "revise supervise televise compromise demise despise devise disguise excise chastise "
    "comprise improvise apprise arise clockwise treatise reprise".split()
)


def american(word: str) -> str:
    """Return the American spelling of ``word`` (``colour`` → ``color``, ``organise`` → …)."""
    m = _OUR.match(word)
    if m:
        return f"{m['pre']}or{m['suf'] or ''}"
    m = _ISE.match(word)
    if m:
        base = f"{m['pre']}ise"
        if base not in _ISE_KEEP and not any(word.startswith(k) for k in _ISE_KEEP):
            return f"{m['pre']}iz{m['suf']}"
    m = _TRE.match(word)
    if m and len(word) >= 5:
        return f"{m['pre']}ter{m['suf']}"
    return word


_VOWEL = re.compile(r"[aeiouy]")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Return the matching stem of one lower-case word.

    Numbers and short words are kept as they are; otherwise: irregular table, American
    spelling, plural, ``-ing``/``-ed`` (with consonant undoubling), final ``y`` → ``i`` and a
    dropped final ``e``.
    """
    w = word.lower()
    if w in IRREGULAR:
        w = IRREGULAR[w]
        if len(w) <= 3:
            return w
    if len(w) <= 3 or not w.isalpha():
        return w
    w = american(w)
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is", "ous")) and len(w) > 3:
        w = w[:-1]
    for suf in ("ing", "ed"):
        if w.endswith(suf) and len(w) - len(suf) >= 3 and _VOWEL.search(w[: -len(suf)]):
            w = w[: -len(suf)]
            if len(w) >= 3 and w[-1] == w[-2] and w[-1] not in "sl" and w[-1] not in "aeiou":
                w = w[:-1]
            break
    if len(w) >= 6 and w.endswith("ll"):
        w = w[:-1]
    if len(w) > 3 and w.endswith("y"):
        w = w[:-1] + "i"
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


_CONTRACTIONS = (
    ("n't", " not"),
    ("'re", " are"),
    ("'ve", " have"),
    ("'ll", " will"),
    ("'d", " would"),
    ("'m", " am"),
    ("'s", ""),
)
_TOKEN = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"(?<![a-z0-9])\$?\s?(\d+(?:[.,]\d+)*)(?:\s?(k))?")
_SENTENCE = re.compile(r"(?:[^.?!;\n]|(?<=\d)\.(?=\d))+[.?!;\n]*")
"""A sentence runs to its end mark; a point between digits ($39.99, 10.5) ends nothing."""


def clean(text: str) -> str:
    """Lower-case ``text``, straighten quotes and expand contractions."""
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'").replace("`", "'")
    t = (
        t.replace("e-mail", "email")
        .replace("email address", "email")
        .replace("zip code", "zip")
        .replace("post code", "zip")
    )
    t = (
        t.replace("postal code", "zip")
        .replace("$", " dollar ")
        .replace("#", " number ")
        .replace("yes/no", "yes or no")
        .replace("y/n", "yes or no")
    )
    for a, b in _CONTRACTIONS:
        t = t.replace(a, b)
    return t


DERIVATIONS: tuple[str, ...] = (
    "ation",
    "ment",
    "ness",
    "abl",
    "ibl",
    "anc",
    "enc",
    "ion",
    "ful",
    "les",
    "est",
    "er",
    "ly",
    "al",
    "i",
)
"""Derivational endings tried (on stems) when a word is not in a lexicon as it stands."""


def variants(s: str) -> tuple[str, ...]:
    """Return ``s`` and the shorter stems its derivational endings leave (≥ 3 letters).

    >>> variants("washabl"), variants("payment")
    (('washabl', 'wash'), ('payment', 'pay'))
    """
    out = [s]
    if s.isalpha() and len(s) > 4:
        for suf in DERIVATIONS:
            if s.endswith(suf) and len(s) - len(suf) >= 3:
                out.append(s[: -len(suf)])
    return tuple(dict.fromkeys(out))


def tokens(text: str) -> list[str]:
    """Return the raw tokens of already-cleaned text (letters and digits)."""
    return _TOKEN.findall(text)


def stems(text: str) -> tuple[str, ...]:
    """Return the stems of ``text`` in order (cleaning it first)."""
    return tuple(stem(t) for t in tokens(clean(text)))


def numbers(text: str) -> list[float]:
    """Return the numbers written in ``text`` (``$40``, ``2``, ``12.5``; ``1,200`` → 1200)."""
    out = []
    for m in _NUMBER.finditer(text.lower()):
        raw = m.group(1)
        raw = (
            raw.replace(",", "")
            if re.fullmatch(r"\d{1,3}(,\d{3})+", raw)
            else raw.replace(",", ".")
        )
        try:
            val = float(raw)
        except ValueError:
            continue
        out.append(val * 1000 if m.group(2) else val)
    return out


WORD_NUMBERS: dict[str, int] = {
    **ONE_TO_TEN,
    "no": 0,
    "none": 0,
    "single": 1,
    "couple": 2,
    "pair": 2,
    "twelve": 12,
    "dozen": 12,
}
"""Number words a count may be written with."""


@dataclass(frozen=True)
class Sentence:
    """One sentence of a message: its raw text, stems and whether it asks something."""

    text: str
    stems: tuple[str, ...]
    question: bool


_ASK_OPENERS = frozenset(
    "what which how where when who whom whose why do does did is are was were can could would "
    "will shall should may might have has any anything tell let please confirm share provide "
    "give specify describe list mention name enter state".split()
)


def sentences(text: str) -> list[Sentence]:
    """Split a message into sentences, marking those that ask (``?`` or a question opener)."""
    return list(_sentences(text))


@lru_cache(maxsize=4096)
def _sentences(text: str) -> tuple[Sentence, ...]:
    out = []
    for raw in _SENTENCE.findall(clean(text)):
        toks = tokens(raw)
        if not toks:
            continue
        asks = (
            "?" in raw
            or toks[0] in _ASK_OPENERS
            or (
                len(toks) > 1
                and toks[0] in ("and", "also", "so", "ok", "okay", "great", "thanks")
                and toks[1] in _ASK_OPENERS
            )
        )
        out.append(Sentence(text=raw.strip(), stems=tuple(stem(t) for t in toks), question=asks))
    return tuple(out)
