"""Quantities in a person's words: digits and number words, with what bounds them.

People write amounts in many ways — ``$40``, ``40 bucks``, ``forty dollars``, ``twenty-five``,
``a hundred and twenty``, ``1.5k``, ``a couple``, ``half a dozen`` — and bound them with words
(``under``, ``no more than``, ``50 max``, ``at least``, ``around``). :func:`quantities` finds
each quantity in a token list and says where it is, what bounds it and whether it is money.

Tokens are the reply reader's (lower-case, contractions expanded, ``$`` already turned into
``dollar``). Everything here is project-written and offline.

>>> [(q.value, q.bound) for q in quantities("under twenty five dollars".split())]
[(25.0, '<=')]
>>> [(q.value, q.money) for q in quantities("a hundred and twenty bucks tops".split())]
[(120.0, True)]
>>> [q.bound for q in quantities("i do not want to spend more than 30 dollars".split())]
['<=']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Bound = Literal["<=", ">=", "~", "="]

UNITS: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
ONE_TO_TEN: dict[str, int] = {w: n for w, n in UNITS.items() if n <= 10}
"""``zero`` … ``ten``: the number words every reader of counts shares (the question interpreter
and the confirmation checker add their own phrasings, ``a couple of``, ``dozen`` …)."""

TENS: dict[str, int] = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fourty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
SCALES: dict[str, int] = {"hundred": 100, "thousand": 1000, "grand": 1000}
COLLECTIVE: dict[str, int] = {"couple": 2, "pair": 2, "dozen": 12, "both": 2, "single": 1}
ORDINALS: dict[str, int] = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
}
MONEY_WORDS = frozenset(
    "dollar dollars buck bucks usd price budget spend spending cost costs pay paying afford "
    "cheaper pricier expensive money".split()
)
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_ORDINAL_DIGITS = re.compile(r"^(\d+)(st|nd|rd|th)$")
_NOT_ONE_AFTER = frozenset(
    "of more another that which who with in on at for to i is was it or and but than".split()
)

_BOUND_BEFORE: tuple[tuple[tuple[str, ...], Bound], ...] = (
    (("no", "more", "than"), "<="),
    (("not", "more", "than"), "<="),
    (("no", "higher", "than"), "<="),
    (("not", "over"), "<="),
    (("not", "above"), "<="),
    (("not", "exceeding"), "<="),
    (("less", "than"), "<="),
    (("lower", "than"), "<="),
    (("cheaper", "than"), "<="),
    (("up", "to"), "<="),
    (("at", "most"), "<="),
    (("at", "the", "most"), "<="),
    (("max", "of"), "<="),
    (("maximum", "of"), "<="),
    (("a", "max", "of"), "<="),
    (("limit", "of"), "<="),
    (("cap", "of"), "<="),
    (("capped", "at"), "<="),
    (("below",), "<="),
    (("under",), "<="),
    (("within",), "<="),
    (("max",), "<="),
    (("maximum",), "<="),
    (("tops",), "<="),
    (("more", "than"), ">="),
    (("at", "least"), ">="),
    (("over",), ">="),
    (("above",), ">="),
    (("minimum",), ">="),
    (("around",), "~"),
    (("about",), "~"),
    (("roughly",), "~"),
    (("approximately",), "~"),
    (("approx",), "~"),
    (("like",), "~"),
    (("ish",), "~"),
    (("exactly",), "="),
    (("just",), "="),
    (("only",), "="),
)
_BOUND_AFTER: tuple[tuple[tuple[str, ...], Bound], ...] = (
    (("or", "less"), "<="),
    (("or", "under"), "<="),
    (("or", "below"), "<="),
    (("or", "cheaper"), "<="),
    (("max",), "<="),
    (("maximum",), "<="),
    (("tops",), "<="),
    (("at", "most"), "<="),
    (("or", "more"), ">="),
    (("or", "above"), ">="),
    (("at", "least"), ">="),
    (("plus",), ">="),
    (("ish",), "~"),
    (("or", "so"), "~"),
)


@dataclass(frozen=True)
class Quantity:
    """One quantity in a token list.

    Attributes:
        value: The number.
        start: Index of its first token.
        end: Index after its last token (bounding words excluded).
        bound: ``<=`` (under, at most, max), ``>=`` (over, at least), ``~`` (around) or ``=``
            (written bare, or "exactly").
        money: Whether money words, a ``$`` or a price bound go with it.
        lo: Index of the first token including the bounding words (for quoting).
        hi: Index after the last token including the bounding words.
    """

    value: float
    start: int
    end: int
    bound: Bound = "="
    money: bool = False
    lo: int = 0
    hi: int = 0


def _word_number(toks: Sequence[str], i: int) -> tuple[float, int] | None:
    """Parse a run of number words starting at ``i``; return (value, tokens used)."""
    total, current, j, seen = 0, 0, i, False
    n = len(toks)
    if toks[i] == "a" and i + 1 < n and toks[i + 1] in ("hundred", "thousand", "grand"):
        current, j, seen = 1, i + 1, True
    if toks[i] == "a" and i + 1 < n and toks[i + 1] in ("couple", "pair", "dozen"):
        j = i + 1
    if toks[j] == "half" and j + 2 < n and toks[j + 1] == "a" and toks[j + 2] == "dozen":
        return 6.0, j + 3 - i
    if toks[j] in COLLECTIVE and not seen:
        if toks[j] == "single" and not (j + 1 < n and toks[j + 1] not in _NOT_ONE_AFTER):
            return None
        nxt = j + 1
        if nxt < n and toks[nxt] == "of" and toks[j] in ("couple", "pair"):
            nxt += 1
        return float(COLLECTIVE[toks[j]]), nxt - i
    while j < n:
        w = toks[j]
        if w in UNITS:
            current += UNITS[w]
        elif w in TENS:
            current += TENS[w]
        elif w in SCALES and (seen or current):
            scale = SCALES[w]
            if scale == 100:
                current = max(current, 1) * 100
            else:
                total += max(current, 1) * scale
                current = 0
        elif w == "and" and seen and j + 1 < n and (toks[j + 1] in UNITS or toks[j + 1] in TENS):
            j += 1
            continue
        else:
            break
        seen = True
        j += 1
    if not seen:
        return None
    if j - i == 1 and toks[i] == "one":
        # "the blue one", "that one": a pronoun, not a count
        if j >= n or toks[j] in _NOT_ONE_AFTER:
            return None
    return float(total + current), j - i


def _digits(toks: Sequence[str], i: int) -> tuple[float, int] | None:
    t = toks[i]
    m = _ORDINAL_DIGITS.match(t)
    if m:
        return float(m.group(1)), 1
    if not _NUMBER.match(t):
        if t.endswith("k") and _NUMBER.match(t[:-1]):
            return float(t[:-1]) * 1000, 1
        return None
    val = float(t)
    if i + 1 < len(toks) and toks[i + 1] == "k":
        return val * 1000, 2
    return val, 1


def _match(toks: Sequence[str], at: int, phrase: tuple[str, ...]) -> bool:
    return tuple(toks[at : at + len(phrase)]) == phrase


_NEGATING = frozenset({"not", "never", "no", "cannot"})


def _bound_before(toks: Sequence[str], start: int) -> tuple[Bound, int]:
    # skip a money word between the bound and the number ("under $40" -> "under dollar 40")
    k = start
    if k > 0 and toks[k - 1] in ("dollar", "usd"):
        k -= 1
    for phrase, bound in _BOUND_BEFORE:
        at = k - len(phrase)
        if at >= 0 and _match(toks, at, phrase):
            if bound == ">=" and _NEGATING.intersection(toks[max(0, at - 4) : at]):
                return "<=", at  # "I don't want to spend more than $30" is a cap
            return bound, at
    return "=", start


def _bound_after(toks: Sequence[str], end: int) -> tuple[Bound, int]:
    k = end
    while k < len(toks) and toks[k] in ("dollar", "dollars", "buck", "bucks", "usd"):
        k += 1
    for phrase, bound in _BOUND_AFTER:
        if _match(toks, k, phrase):
            return bound, k + len(phrase)
    return "=", end


def quantities(toks: Sequence[str]) -> list[Quantity]:
    """Return every quantity in ``toks`` (digits, number words, collective words), in order."""
    out: list[Quantity] = []
    i, n = 0, len(toks)
    while i < n:
        got = _digits(toks, i) or _word_number(toks, i)
        if got is None:
            i += 1
            continue
        value, used = got
        start, end = i, i + used
        bound, lo = _bound_before(toks, start)
        after, hi = _bound_after(toks, end)
        if bound == "=" and after != "=":
            bound = after
        near = set(toks[max(0, start - 2) : min(n, end + 2)])
        money = bool(near & MONEY_WORDS) or (bound in ("<=", ">=") and bool(near & {"dollar"}))
        out.append(
            Quantity(
                value=value,
                start=start,
                end=end,
                bound=bound,
                money=money,
                lo=lo,
                hi=max(hi, end),
            )
        )
        i = end
    return out


def ordinal(word: str) -> int | None:
    """The number an ordinal word or ``19th``-style token names (None otherwise)."""
    if word in ORDINALS:
        return ORDINALS[word]
    m = _ORDINAL_DIGITS.match(word)
    return int(m.group(1)) if m else None
