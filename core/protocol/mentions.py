"""Values a confirmation names that the user's current intent does not hold.

The slot lexicons list the *other* values a world knows for a slot (other colours of the
catalogue, the customer's other orders). A confirmation can also name a value no list holds —
a colour the shop never had, a made-up order number, another date, a card ending in other
digits, another street — and the user must still say no. This module finds such mentions by
the *kind* of a value, whatever the world:

* **id-like tokens** (a token with a digit, ≥ 4 characters: order and reservation numbers,
  flight numbers, item ids, zip codes, card endings): a token whose shape (letters → ``a``,
  digits → ``9``) is the shape of one of the intent's values, but which is none of the intent's
  or context's tokens;
* **dates** (ISO, ``May 20``, ``20 May 2024``, ``5/20``): a date none of the intent's values
  holds, when the intent holds a date;
* **numbers with a unit** (``12 ounce``, ``2 checked bags``, ``3 pack``): another number with a
  unit the intent's values use;
* **closed vocabularies** (colours, sizes, materials, cabins, payment kinds, trip types,
  reasons; :data:`VOCABULARIES`): a word or phrase of a class the intent's values use that none
  of them holds (longest phrase first, so ``basic economy`` is not ``economy``);
* **street addresses** (``186 River Road``): another house number or street name than the
  intent's.

Each mention is attributed to the slots whose values are of the same kind. What is
contradicted is decided only against values of the *current* intent, so an exchange that
names both the old and the new colour is fine, and a colour the user has no requirement on
contradicts nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from core.errors import ConfigError
from core.model.intent import Condition
from core.paths import DATA_DIR
from core.protocol.numwords import ONE_TO_TEN

KINDS_FILE = DATA_DIR / "protocol" / "value_kinds.yaml"
"""Closed vocabularies of value kinds (colours, sizes, cabins, payment kinds, cities …)."""


def _load_kinds() -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """Read :data:`KINDS_FILE` (ConfigError naming the file and field when malformed)."""
    from core.model.bounds import load_yaml

    data = load_yaml(KINDS_FILE, what="value kinds")
    vocab = data.get("vocabularies") if isinstance(data, dict) else None
    syn = data.get("synonyms") if isinstance(data, dict) else None
    if not isinstance(vocab, dict) or not isinstance(syn, dict):
        raise ConfigError("needs 'vocabularies' and 'synonyms' mappings", file=KINDS_FILE)
    out: dict[str, tuple[str, ...]] = {}
    for kind, words in vocab.items():
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ConfigError("must be a list of phrases", file=KINDS_FILE, field=str(kind))
        out[str(kind)] = tuple(w.lower() for w in words)
    return out, {str(k).lower(): str(v).lower() for k, v in syn.items()}


VOCABULARIES, SYNONYMS = _load_kinds()
"""Closed vocabularies of value kinds (``data/protocol/value_kinds.yaml``), and synonyms."""


_MONTH_NAMES = (
    "january february march april may june july august september october november december"
).split()
_MONTHS: dict[str, int] = {
    **{m: i + 1 for i, m in enumerate(_MONTH_NAMES)},
    **{m[:3]: i + 1 for i, m in enumerate(_MONTH_NAMES)},
    "sept": 9,
}

_ISO = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_MDY = re.compile(
    r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?"
    r"(?:,?\s+(\d{4}))?\b"
)
_DMY = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?("
    + "|".join(sorted(_MONTHS, key=len, reverse=True))
    + r")\.?(?:,?\s+(\d{4}))?\b"
)
_SLASH = re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b")
_TOKEN = re.compile(r"#?[a-z0-9][a-z0-9_\-]*[a-z0-9]|#?[a-z0-9]")
_UNITS = (
    "ounce|ounces|oz|fl oz|inch|inches|in|pack|packs|count|ct|piece|pieces|pcs|ml|liter|liters|"
    "litre|litres|l|lb|lbs|pound|pounds|gb|tb|mm|cm|m|kg|g|hour|hours|watt|watts|w|mah|feet|ft|"
    "bag|bags|checked bag|checked bags|passenger|passengers|traveler|travelers|seat|seats|night|"
    "nights|pair|pairs"
)
_UNIT_NUM = re.compile(rf"\b(\d+(?:\.\d+)?)\s*(?:-\s*)?({_UNITS})\b")
_MONEY = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?|\d[\d,]*(?:\.\d+)?\s?(?:dollars|usd)\b")
_PRE_UNIT = re.compile(r"\b(size|sz|us size|eu size)\s+(\d+(?:\.\d+)?)\b")
_NAME = re.compile(r"\b([A-Z][a-z]+)\s+([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b")
_WORD_NUM = {**ONE_TO_TEN, "no": 0, "a single": 1, "a couple of": 2}
_WORD_UNIT = re.compile(
    r"\b(" + "|".join(sorted(_WORD_NUM, key=len, reverse=True)) + rf")\s+({_UNITS})\b"
)
_STREET_WORDS = (
    "street|st|road|rd|avenue|ave|lane|ln|drive|dr|way|place|pl|court|ct|boulevard|blvd|"
    "terrace|circle|parkway|highway|trail|square|row|crescent"
)

EXACT_CLASSES = frozenset(
    {"cabin", "trip", "reason", "size", "payment", "display", "product", "city"}
)
"""Classes where a shorter phrase is another value (``economy`` is not ``basic economy``); in
the others a part names the same value (``navy`` for ``navy blue``)."""

_STREET = re.compile(rf"\b(\d{{1,6}})\s+((?:[a-z]+\s+){{1,3}}?)({_STREET_WORDS})\b")


def _shape(token: str) -> str:
    return re.sub(r"[a-z]", "a", re.sub(r"\d", "9", token.lstrip("#")))


def _is_idlike(token: str) -> bool:
    """A token with a digit and ≥ 4 characters, or a bare number of ≥ 3 digits (a suite)."""
    t = token.lstrip("#")
    return (len(t) >= 4 and any(ch.isdigit() for ch in t)) or (len(t) == 3 and t.isdigit())


def _flatten(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        text = value
        if value[:1] in ("[", "{", '"'):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if parsed is not None and not isinstance(parsed, str):
                _flatten(parsed, out)
                return
            if isinstance(parsed, str):
                text = parsed
        out.append(text)
    elif isinstance(value, Mapping):
        for v in value.values():
            _flatten(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _flatten(v, out)
    elif isinstance(value, bool) or value is None:
        return
    else:
        out.append(str(value))


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9#/\-.$ ]+", " ", text.lower().replace("_", " ")).split())


def _dates(text: str) -> set[str]:
    out: set[str] = set()
    for y, m, d in _ISO.findall(text):
        out.add(_iso(int(y), int(m), int(d)))
    for mon, d, y in _MDY.findall(text):
        out.add(_iso(int(y) if y else 0, _MONTHS[mon], int(d)))
    for d, mon, y in _DMY.findall(text):
        out.add(_iso(int(y) if y else 0, _MONTHS[mon], int(d)))
    for a, b, y in _SLASH.findall(text):
        year = int(y) if y else 0
        year = year + 2000 if 0 < year < 100 else year
        out.add(_iso(year, int(a), int(b)))
    return {x for x in out if x}


def strip_dates(text: str) -> str:
    """``text`` with its date expressions blanked (their numbers are no counts or amounts)."""
    out = text
    for rx in (_ISO, _DMY, _MDY, _SLASH):
        out = rx.sub(" ", out) if rx is _ISO or rx is _SLASH else _ci(rx).sub(" ", out)
    return out


def _ci(rx: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(rx.pattern, re.IGNORECASE)


def _iso(y: int, m: int, d: int) -> str:
    try:
        date(y or 2000, m, d)
    except ValueError:
        return ""
    return f"{y:04d}-{m:02d}-{d:02d}" if y else f"----{m:02d}-{d:02d}"


def _same_date(a: str, b: str) -> bool:
    return a == b or (a.startswith("----") or b.startswith("----")) and a[-5:] == b[-5:]


_VOCAB_RES: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    cls: [
        (w, re.compile(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])"))
        for w in sorted(words, key=len, reverse=True)
    ]
    for cls, words in VOCABULARIES.items()
}


def _vocab_hits(text: str) -> dict[str, set[str]]:
    """Vocabulary phrases in ``text`` per class, longest first (a phrase masks its words)."""
    out: dict[str, set[str]] = {}
    flat = f" {text.replace('-', ' ')} "
    for cls, pats in _VOCAB_RES.items():
        masked = flat
        for w, pat in pats:
            # the phrase itself must be in the text: a substring test first spares ~300 regex
            # searches per confirmation (the same hits; the pattern adds the word bounds)
            if w in masked and pat.search(masked):
                out.setdefault(cls, set()).add(SYNONYMS.get(w, w))
                masked = pat.sub(" ", masked)
    return out


_MOD_STOP = frozenset(
    "the a an and or of to for with without in on at by your my its this that these those "
    "same per any no not one each every also is are be was it".split()
)
_NEGATORS = frozenset("no not without don't dont skip skipping decline declined none never".split())


def _part(a: str, b: str) -> bool:
    """Whether one phrase is a word-part of the other (``navy`` / ``navy blue``)."""
    wa, wb = a.split(), b.split()
    return set(wa) <= set(wb) or set(wb) <= set(wa)


def _streets(text: str) -> set[tuple[str, str]]:
    out = set()
    for num, name, kind in _STREET.findall(text):
        out.add((num, f"{' '.join(name.split())} {kind}"))
    return out


def _units(text: str) -> set[tuple[float, str]]:
    out: set[tuple[float, str]] = set()
    for num, unit in _UNIT_NUM.findall(text):
        out.add((float(num), _unit(unit)))
    for word, unit in _WORD_UNIT.findall(text):
        out.add((float(_WORD_NUM[word]), _unit(unit)))
    for _, num in _PRE_UNIT.findall(text):
        out.add((float(num), "size"))
    return out


def _people(value: object) -> set[tuple[str, str]]:
    """(first, last) names of the people a value lists (τ² passengers)."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            value = json.loads(value)
        except ValueError:
            return set()
    items = value if isinstance(value, list) else [value]
    out = set()
    for x in items:
        if isinstance(x, dict) and x.get("first_name") and x.get("last_name"):
            out.add((str(x["first_name"]).lower(), str(x["last_name"]).lower()))
    return out


def _unit(u: str) -> str:
    u = u.replace("checked ", "")
    for a, b in (("ounces", "ounce"), ("oz", "ounce"), ("inches", "inch"), ("lbs", "lb")):
        if u == a:
            return b
    return u[:-1] if u.endswith("s") and len(u) > 3 else u


@dataclass(frozen=True)
class Profile:
    """What kinds of value each slot's value is (built once per intent)."""

    tokens: dict[str, set[str]]
    shapes: dict[str, set[str]]
    dates: dict[str, set[str]]
    vocab: dict[str, dict[str, set[str]]]
    units: dict[str, set[tuple[float, str]]]
    streets: dict[str, set[tuple[str, str]]]
    people: dict[str, set[tuple[str, str]]]
    features: dict[str, tuple[tuple[str, ...], str]]
    flags: dict[str, tuple[bool, tuple[str, ...]]]
    context_tokens: frozenset[str]


def profile(
    conditions: Sequence[Condition],
    phrases: Mapping[str, Iterable[str]],
    context: Mapping[str, str],
    labels: Mapping[str, Iterable[str]] | None = None,
) -> Profile:
    """Profile an intent's slot values (raw values plus the phrases that name them).

    ``labels`` are the words that name each slot (its label and cues): a yes/no slot
    (insurance) is contradicted by naming it with the other polarity.
    """
    tokens: dict[str, set[str]] = {}
    shapes: dict[str, set[str]] = {}
    dates: dict[str, set[str]] = {}
    vocab: dict[str, dict[str, set[str]]] = {}
    units: dict[str, set[tuple[float, str]]] = {}
    streets: dict[str, set[tuple[str, str]]] = {}
    people: dict[str, set[tuple[str, str]]] = {}
    features: dict[str, tuple[tuple[str, ...], str]] = {}
    flags: dict[str, tuple[bool, tuple[str, ...]]] = {}
    for c in conditions:
        people[c.slot] = _people(c.value)
        raw = c.value
        if isinstance(raw, str) and raw[:1] == '"':
            try:
                raw = json.loads(raw)
            except ValueError:
                pass
        if isinstance(raw, str) and re.fullmatch(r"[a-z]+(?: [a-z]+){1,2}", raw.lower()):
            words = tuple(raw.lower().split())
            if len(words[-1]) >= 3:
                features[c.slot] = (words[:-1], words[-1])
        polarity = {"yes": True, "no": False, "true": True, "false": False}.get(
            str(raw).lower() if not isinstance(raw, bool) else str(raw).lower()
        )
        names = tuple(x.lower() for x in (labels or {}).get(c.slot, ()) if len(x) >= 4)
        if polarity is not None and names:
            flags[c.slot] = (polarity, names)
        texts: list[str] = []
        _flatten(c.value, texts)
        texts += list(phrases.get(c.slot, ()))
        joined = " | ".join(_norm(t) for t in texts)
        toks = {t.lstrip("#") for t in _TOKEN.findall(joined) if _is_idlike(t)}
        tokens[c.slot] = toks
        shapes[c.slot] = {_shape(t) for t in toks}
        dates[c.slot] = _dates(joined)
        vocab[c.slot] = _vocab_hits(joined)
        units[c.slot] = _units(joined)
        streets[c.slot] = _streets(joined)
    ctx: set[str] = set()
    for v in context.values():
        vals: list[str] = []
        _flatten(v, vals)
        for t in vals:
            ctx |= {x.lstrip("#") for x in _TOKEN.findall(_norm(t)) if _is_idlike(x)}
    return Profile(
        tokens, shapes, dates, vocab, units, streets, people, features, flags, frozenset(ctx)
    )


def contradicted(text: str, prof: Profile, order: Sequence[str]) -> list[str]:
    """The slots (in ``order``) whose kind of value ``text`` names with a value not held.

    Held means: a value of the current intent (any slot) or of the user's context.
    """
    t = _norm(text)
    wrong: set[str] = set()
    all_tokens = set().union(*prof.tokens.values()) if prof.tokens else set()
    known = all_tokens | prof.context_tokens
    undated = _MONEY.sub(" ", strip_dates(t))
    for tok in {x.lstrip("#") for x in _TOKEN.findall(undated) if _is_idlike(x)}:
        if tok in known:
            continue
        # the last digits of a value the intent holds (a card "ending in 4330") name it
        if tok.isdigit() and any(o.endswith(tok) for o in known):
            continue
        shape = _shape(tok)
        owners = [s for s in order if shape in prof.shapes.get(s, set())]
        if not owners and tok.isdigit() and len(tok) == 4:  # a card ending of another card
            owners = [s for s in order if prof.vocab.get(s, {}).get("payment")]
        wrong.update(owners)
    said_dates = _dates(t)
    for s in order:
        own = prof.dates.get(s, set())
        if own and said_dates:
            others = set().union(*(prof.dates[x] for x in order if x in prof.dates))
            if any(not any(_same_date(d, o) for o in others) for d in said_dates):
                wrong.add(s)
    hits = _vocab_hits(t)
    for cls, said in hits.items():
        owners = [s for s in order if prof.vocab.get(s, {}).get(cls)]
        if cls == "size" and not owners:  # a numeric size ("size 11") is a size too
            owners = [s for s in order if any(u == "size" for _, u in prof.units.get(s, ()))]
            if owners:
                wrong.update(owners)
                continue
        if not owners:
            continue  # the user holds no value of this kind: nothing to contradict
        held = set().union(*(prof.vocab[s][cls] for s in owners))
        if cls in EXACT_CLASSES:
            foreign = {w for w in said if w not in held}
        else:
            foreign = {w for w in said if w not in held and not any(_part(w, h) for h in held)}
        if foreign:
            wrong.update(owners)
    said_units = _units(t)
    for s in order:
        own_u = prof.units.get(s, set())
        for num, unit in said_units:
            same_unit = [n for n, u in own_u if u == unit]
            if same_unit and num not in same_unit:
                held_n = {n for x in order for n, u in prof.units.get(x, set()) if u == unit}
                if num not in held_n:
                    wrong.add(s)
    known_people = set().union(*prof.people.values()) if prof.people else set()
    if known_people:
        firsts = {f for f, _ in known_people}
        lasts = {la for _, la in known_people}
        for first, last in _NAME.findall(text):
            pair = (first.lower(), last.lower())
            if pair in known_people or not (pair[0] in firsts or pair[1] in lasts):
                continue
            wrong.update(s for s in order if prof.people.get(s))
    for s, (mods, head) in prof.features.items():
        phrase = " ".join((*mods, head))
        if phrase in t or phrase.replace(" ", "-") in text.lower():
            continue
        for mod in re.findall(rf"\b([a-z]+)[ -]+{re.escape(head)}s?\b", t):
            if mod not in _MOD_STOP and mod not in mods:
                wrong.add(s)
    for s, (polarity, names) in prof.flags.items():
        for name in names:
            for m in re.finditer(rf"\b{re.escape(name)}\b", t):
                before = t[max(0, m.start() - 40) : m.start()].split()[-4:]
                negated = bool(set(before) & _NEGATORS) or bool(
                    re.match(r"\s*(waived|declined|removed|dropped)", t[m.end() :])
                )
                if negated == polarity:
                    wrong.add(s)
    said_streets = _streets(t)
    for s in order:
        own_s = prof.streets.get(s, set())
        if own_s and said_streets and not said_streets <= own_s:
            held_s: set[tuple[str, str]] = set()
            for x in order:
                held_s |= prof.streets.get(x, set())
            if not said_streets <= held_s:
                wrong.add(s)
    return [s for s in order if s in wrong]
