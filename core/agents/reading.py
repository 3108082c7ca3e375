"""How a symbolic agent reads the user's words: reply text in, conditions out.

A symbolic agent sees only its agent view (the opening request, its own actions, the user's
reply *text* and the environment's observation text). It never sees a structured disclosure, so
it recovers what a reply says the way a careful reader would: it knows how people of this world
phrase a requirement (the host's public ``phrase`` hook, the same words a template voice uses)
and tries candidate values for the slots it knows about, keeping those whose phrasing occurs in
the reply. Candidates come only from what the agent can see or already holds:

* its own belief (the literal reading of the request, earlier replies);
* the tool schemas (enumerated argument values);
* id-like tokens and spans of the texts in its view (request, replies, observations);
* for a shop world, the catalogue's public vocabulary (features and option values a shopper
  sees on product pages).

What it cannot read stays unknown (a list of structured objects, such as flight legs, is read
only when the agent's belief already holds a candidate for it). Nothing here touches an event
log, an intent of the user or a slot id the agent did not form itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from core.envs.base import HostWorld
from core.model.intent import Condition
from core.model.world import ToolSpec
from core.protocol.numwords import quantities
from core.protocol.reply_index import raw_tokens

MAX_NGRAM = 4
"""Longest span of a reply (in words) tried as a free-text value."""

_TOKEN = re.compile(r"[#\w][\w#\-./@]*\w|\w")
_ID_LIKE = re.compile(r"^(?=.*\d)[#\w][\w#\-]{3,}$|^[a-z]+_[a-z0-9_]+$")
_MONEY = re.compile(r"\$\s?(\d+(?:\.\d{1,2})?)")
_CONTEXT = re.compile(
    r"\bmy (user id|first name|last name|date of birth|zip code|zip|email|e-mail)"
    r"(?: address)? is ([^\s,;!?]+(?:\s[^\s,;!?]+)?)",
    re.I,
)
_CONTEXT_KEYS = {
    "user id": "user_id",
    "first name": "first_name",
    "last name": "last_name",
    "date of birth": "dob",
    "zip code": "zip",
    "zip": "zip",
    "email": "email",
    "e-mail": "email",
}


def norm(text: str) -> str:
    """Lower-case ``text`` and collapse its whitespace (what phrase matching compares)."""
    return " ".join(text.lower().split())


def tokens(text: str) -> list[str]:
    """Word-like tokens of ``text`` (ids such as ``#W123`` or ``credit_card_9`` stay whole)."""
    return _TOKEN.findall(text)


def id_tokens(texts: Iterable[str]) -> list[str]:
    """Id-like tokens (a digit or an underscore inside) of ``texts``, first occurrence order."""
    out: dict[str, None] = {}
    for t in texts:
        for tok in tokens(t):
            if _ID_LIKE.match(tok):
                out.setdefault(tok, None)
    return list(out)


def ngrams(text: str, n: int = MAX_NGRAM) -> list[str]:
    """Every span of 1..``n`` words of ``text`` (case kept), in order, deduplicated."""
    words = [w.strip(".,;:!?'\"()") for w in text.split()]
    words = [w for w in words if w]
    out: dict[str, None] = {}
    for i in range(len(words)):
        for k in range(1, n + 1):
            if i + k <= len(words):
                out.setdefault(" ".join(words[i : i + k]), None)
    return list(out)


def parse_slot(slot: str) -> tuple[int, str, str] | None:
    """``arg:<i>:<tool>:<param>`` → (i, tool, param); None for other slots."""
    if not slot.startswith("arg:"):
        return None
    parts = slot.split(":", 3)
    if len(parts) != 4 or not parts[1].isdigit():
        return None
    return int(parts[1]), parts[2], parts[3]


def param_schema(tools: dict[str, ToolSpec], slot: str) -> dict[str, Any]:
    """The JSON schema of a τ²-style argument slot's parameter ({} when unknown)."""
    got = parse_slot(slot)
    if got is None:
        return {}
    spec = tools.get(got[1])
    if spec is None:
        return {}
    props = spec.parameters.get("properties") or {}
    schema = props.get(got[2]) if isinstance(props, dict) else None
    return schema if isinstance(schema, dict) else {}


@dataclass(frozen=True)
class Match:
    """One value read from a reply: the condition and the span its phrasing covers."""

    condition: Condition
    start: int
    end: int

    @property
    def length(self) -> int:
        """Characters the phrasing covers (longer readings win overlaps)."""
        return self.end - self.start


def _find(phrase: str, text: str) -> int:
    """Position of ``phrase`` in ``text`` on word boundaries, or -1."""
    if not phrase or phrase not in text:  # cheap test first: most candidates miss
        return -1
    m = re.search(r"(?<![\w#])" + re.escape(phrase) + r"(?![\w])", text)
    return m.start() if m else -1


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class ReplyReader:
    """Reads reply text into conditions over the slots an agent knows (see the module doc).

    Args:
        world: The host world (its public ``phrase`` hook and, for a shop, its catalogue).
        tools: The tools of the agent view, by name.
    """

    def __init__(self, world: HostWorld, tools: dict[str, ToolSpec]) -> None:
        self.world = world
        self.tools = tools
        self._phrases: dict[tuple[str, str, str], str] = {}
        self._vocab = _shop_vocabulary(world)
        self._free: set[int] = set()

    # -- phrasing ------------------------------------------------------------------------------
    def phrase(self, cond: Condition) -> str:
        """The world's phrasing of ``cond``, normalised ('' when the world cannot phrase it)."""
        key = (cond.slot, cond.op, repr(cond.value))
        got = self._phrases.get(key)
        if got is None:
            try:
                got = norm(self.world.phrase(cond))
            except Exception:  # noqa: BLE001 - a candidate the world cannot phrase is no reading
                got = ""
            if len(self._phrases) > 50_000:
                self._phrases.clear()
            self._phrases[key] = got
        return got

    def _label(self, cond: Condition) -> str:
        """The world's plain-word label of a condition's slot ('' when it cannot give one)."""
        try:
            return self.world.slot_label(cond)
        except Exception:  # noqa: BLE001 - a label the world cannot give
            return ""

    def _value_words(self, cond: Condition) -> str:
        """The part of a phrasing that names the value (the world's fixed wording removed)."""
        full = self.phrase(cond)
        blank = self.phrase(cond.model_copy(update={"value": _blank(cond.value)}))
        return full[_common_prefix(full, blank) :].strip(" ,.")

    # -- candidates ----------------------------------------------------------------------------
    def candidates(
        self, slot: str, op: str, raw: str, seen: Sequence[str], held: Sequence[Any]
    ) -> list[Condition]:
        """Candidate conditions for ``slot`` given the reply ``raw`` and the visible texts."""
        text = norm(raw)
        values: list[Any] = list(held)
        schema = param_schema(self.tools, slot)
        if schema:
            kind = schema.get("type")
            enum = schema.get("enum") or []
            if kind == "array":
                return self._array_candidates(slot, op, schema, raw, seen, held)
            values += [json.dumps(v) for v in enum]
            # values the schema spells in its description ("Either 'a' or 'b'.")
            desc = str(schema.get("description") or "")
            values += [json.dumps(v) for v in re.findall(r"'([^'#]{3,40})'", desc)]
            ids = id_tokens([raw, *seen])
            values += [json.dumps(t) for t in ids]
            if not enum and not (slot.endswith("_id") or slot.endswith("id")):
                values += [_Free(json.dumps(g)) for g in ngrams(raw)]
        elif slot.startswith("price"):
            values += [_number(m) for m in _MONEY.findall(text)]
        elif slot.startswith("attr:"):
            values.append(slot.split(":", 1)[1])
        elif slot.startswith("option:"):
            if self._vocab.active:
                kind = self._label(Condition(slot=slot, value=held[0])) if held else ""
                values += [
                    v
                    for v in self._vocab.options_in(text)
                    if not kind or self._label(Condition(slot=slot, value=v)) == kind
                ]
            else:
                values += [_Free(g) for g in ngrams(raw)]
        else:
            values += [_Free(g) for g in ngrams(raw)]
        out: list[Condition] = []
        seen_v: set[str] = set()
        for v in values:
            raw = v.value if isinstance(v, _Free) else v
            key = repr(raw)
            if key in seen_v:
                continue
            seen_v.add(key)
            cond = Condition(slot=slot, op=op, value=raw)
            if isinstance(v, _Free):
                self._free.add(id(cond))
            out.append(cond)
        return out

    def _array_candidates(
        self,
        slot: str,
        op: str,
        schema: dict[str, Any],
        raw: str,
        seen: Sequence[str],
        held: Sequence[Any],
    ) -> list[Condition]:
        text = norm(raw)
        items = schema.get("items") or {}
        out = [Condition(slot=slot, op=op, value=v) for v in held]
        if isinstance(items, dict) and items.get("type") == "object":
            got = self._object_list(slot, op, items, raw, text)
            return out + ([got] if got is not None else [])
        if not isinstance(items, dict) or items.get("type") not in (None, "string"):
            return out
        found: list[tuple[int, str]] = []
        for tok in id_tokens([raw, *seen]):
            one = Condition(slot=slot, op=op, value=json.dumps([tok]))
            words = self._value_words(one)
            pos = _find(words, text) if words else -1
            if pos < 0:
                pos = _find(tok.lower(), text)
            if pos >= 0:
                found.append((pos, tok))
        if found:
            found.sort()
            out.append(Condition(slot=slot, op=op, value=json.dumps([t for _, t in found])))
        return out

    def _object_list(
        self, slot: str, op: str, items: dict[str, Any], raw: str, text: str
    ) -> Condition | None:
        """A list of small objects (e.g. flight legs) named by id-like tokens of the reply.

        Items with at most two required string fields are assembled from the reply's id-like
        tokens; an item is read when the world's words for a one-item list occur in the reply,
        and the items keep the order in which the reply names them.
        """
        props = items.get("properties") or {}
        req = [str(k) for k in (items.get("required") or list(props))]
        if (
            not req
            or len(req) > 2
            or any((props.get(k) or {}).get("type") not in (None, "string") for k in req)
        ):
            return None
        toks = id_tokens([raw])[:8]
        found: list[tuple[int, dict[str, str]]] = []
        taken: list[tuple[int, int]] = []
        combos: list[tuple[str, ...]] = (
            [(t,) for t in toks]
            if len(req) == 1
            else [(a, b) for a in toks for b in toks if a != b]
        )
        for combo in combos:
            item = dict(zip(req, combo, strict=True))
            words = self._value_words(Condition(slot=slot, op=op, value=json.dumps([item])))
            pos = _find(words, text) if words else -1
            if pos < 0 or any(pos < e and s < pos + len(words) for s, e in taken):
                continue
            taken.append((pos, pos + len(words)))
            found.append((pos, item))
        if not found:
            return None
        found.sort(key=lambda x: x[0])
        value = json.dumps([item for _, item in found], separators=(",", ":"), sort_keys=True)
        return Condition(slot=slot, op=op, value=value)

    # -- reading -------------------------------------------------------------------------------
    def read(
        self,
        reply: str,
        slots: Mapping[str, tuple[str, Sequence[Any]]],
        seen: Sequence[str] = (),
    ) -> list[Condition]:
        """Read ``reply`` over ``slots`` (slot → (operator, values the agent holds)).

        Returns one condition per slot whose phrasing occurs in the reply; where two readings
        cover the same words, the longer phrasing wins. Shop worlds also discover features,
        option values and a price cap the agent did not know to ask about.
        """
        text = norm(reply)
        matches: list[Match] = []
        for slot, (op, held) in slots.items():
            best: Match | None = None
            self._free = set()
            for cand in self.candidates(slot, op, reply, seen, held):
                ph = self.phrase(cand)
                pos = _find(ph, text)
                if pos < 0:
                    continue
                if id(cand) in self._free and not _ends_clause(text, pos + len(ph)):
                    continue  # a free span must end where the clause does
                if best is None or len(ph) > best.length:
                    best = Match(cand, pos, pos + len(ph))
            if best is None:
                best = self._plain_value(slot, op, reply, text, held)
            if best is not None:
                matches.append(best)
        matches += self._discover(text, set(slots), [m.condition for m in matches])
        taken: list[tuple[int, int]] = []
        out: list[Condition] = []
        for m in sorted(matches, key=lambda m: -m.length):
            if any(m.start < e and s < m.end for s, e in taken):
                continue
            taken.append((m.start, m.end))
            out.append(m.condition)
        return out

    def _plain_value(
        self, slot: str, op: str, reply: str, text: str, held: Sequence[Any]
    ) -> Match | None:
        """A value a person names without the world's phrasing ("Navy.", "130 bucks tops").

        Tried only when no phrasing of the slot occurs in the reply: a shop option or feature
        named by its bare value (an option must be one the catalogue knows, of the same kind as
        the one held), and a price cap written in words or digits with money words ("no more
        than a hundred and thirty dollars"), read as people write amounts
        (:mod:`core.protocol.numwords`).
        """
        if slot.startswith("price"):
            tokens = raw_tokens(reply)
            for q in quantities(tokens):
                if not q.money or q.bound not in ("=", op):
                    continue
                value = _number(str(q.value))
                first = tokens[q.start]
                pos = _find(first, text)
                pos = len(text) if pos < 0 else pos
                return Match(Condition(slot=slot, op=op, value=value), pos, pos + len(first))
            return None
        if not (slot.startswith("option:") or slot.startswith("attr:")) or not self._vocab.active:
            return None
        best: Match | None = None
        for cand in self.candidates(slot, op, reply, (), held):
            if slot.startswith("option:") and not self._vocab.options_in(str(cand.value)):
                continue
            words = norm(str(cand.value))
            pos = _find(words, text) if len(words) >= 3 else -1
            if pos >= 0 and (best is None or len(words) > best.length):
                best = Match(cand, pos, pos + len(words))
        return best

    def _discover(self, text: str, known: set[str], found: list[Condition]) -> list[Match]:
        """Shop worlds: features, option values and a price cap named outside known slots."""
        if not self._vocab.active:
            return []
        out: list[Match] = []
        have = {str(c.value) for c in found}
        for attr in self._vocab.attributes_in(text):
            slot = f"attr:{attr}"
            if slot in known or attr in have:
                continue
            pos = _find(self.phrase(Condition(slot=slot, value=attr)), text)
            if pos >= 0:
                out.append(Match(Condition(slot=slot, value=attr), pos, pos + len(attr)))
        if "price_upper" not in known:
            for m in _MONEY.finditer(text):
                cond = Condition(slot="price_upper", op="<=", value=_number(m.group(1)))
                pos = _find(self.phrase(cond), text)
                if pos >= 0:
                    out.append(Match(cond, pos, pos + len(self.phrase(cond))))
                    break
        used = [int(s.split(":", 1)[1]) for s in known if _idx(s)]
        nxt = max(used, default=-1) + 1
        for v in self._vocab.options_in(text):
            if v in have:
                continue
            cond = Condition(slot=f"option:{nxt}", value=v)
            ph = self.phrase(cond)
            pos = _find(ph, text)
            if pos >= 0 and ph != v:
                out.append(Match(cond, pos, pos + len(ph)))
                nxt += 1
        return out

    @staticmethod
    def context(reply: str) -> dict[str, str]:
        """Context facts a reply states in the plain form "my <fact> is <value>"."""
        out: dict[str, str] = {}
        for m in _CONTEXT.finditer(reply):
            key = _CONTEXT_KEYS.get(m.group(1).lower())
            if key is not None:
                out[key] = m.group(2).strip(".,;!?").split()[0]
        return out


@dataclass(frozen=True)
class _Free:
    """A value read from a free span of the reply (it must end where a clause ends)."""

    value: Any


_CLAUSE_END = re.compile(r"\s*(?:$|[,.;:!?)]|(?:and|but|if|so|please|thanks|thank)\b)")


def _ends_clause(text: str, end: int) -> bool:
    return _CLAUSE_END.match(text, end) is not None


def family_slots(world: HostWorld, held: Iterable[str]) -> tuple[str, ...]:
    """Slot ids a plain world's public slot families name (none for τ² or shop worlds).

    Worlds whose requirements are plain named slots (``color``, ``size``) publish them as
    interpreter families; τ² argument slots come from the tool schemas and shop features and
    options from the catalogue, so those worlds add nothing here.
    """
    if _shop_vocabulary(world).active or any(parse_slot(s) for s in held):
        return ()
    out: list[str] = []
    for lex in world.lexicon_families():
        fam = lex.slot or lex.family
        if fam:
            out.append("price_upper" if fam == "price" else fam)
    return tuple(dict.fromkeys(out))


def named_write(text: str, tools: Mapping[str, ToolSpec]) -> str | None:
    """The write tool whose name the request spells out best (its words in ``text``), if any.

    A request such as "modify pending order payment: …" names ``modify_pending_order_payment``;
    at least two of a tool name's words must occur, and the best share of its words wins.
    """
    words = set(re.findall(r"[a-z]+", text.lower()))
    best: tuple[float, int, str] | None = None
    for name, spec in sorted(tools.items()):
        if spec.kind != "write" or not spec.parameters.get("required"):
            continue
        parts = [w for w in name.lower().split("_") if w]
        hit = sum(1 for w in parts if w in words)
        if hit < 2:
            continue
        key = (hit / len(parts), hit, name)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


def _number(text: str) -> float | int:
    val = float(text)
    return int(val) if val.is_integer() else val


def _idx(slot: str) -> bool:
    return slot.startswith("option:") and slot.split(":", 1)[1].isdigit()


def _blank(value: Any) -> Any:
    if isinstance(value, str):
        try:
            v = json.loads(value)
        except json.JSONDecodeError:
            return ""
        return json.dumps([] if isinstance(v, list) else "")
    return value


_WORD = re.compile(r"\w+")


class _PhraseIndex:
    """Phrases keyed by their first word, so a text is only tested against phrases it could hold.

    A phrase found on word boundaries (:func:`_find`) always contains its first word token
    as a whole token of the text, so looking up the text's tokens loses no match; phrases with
    no word character are always tested.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        self.phrases = tuple(phrases)
        by_word: dict[str, list[int]] = {}
        loose: list[int] = []
        for i, ph in enumerate(self.phrases):
            m = _WORD.search(ph)
            if m is None:
                loose.append(i)
            else:
                by_word.setdefault(m.group(0), []).append(i)
        self._by_word = {w: tuple(ix) for w, ix in by_word.items()}
        self._loose = tuple(loose)

    def found_in(self, text: str) -> list[str]:
        """The phrases found in ``text`` on word boundaries, in the index's phrase order."""
        picked = set(self._loose)
        for w in set(_WORD.findall(text)):
            picked.update(self._by_word.get(w, ()))
        return [self.phrases[i] for i in sorted(picked) if _find(self.phrases[i], text) >= 0]


@dataclass(frozen=True)
class _Vocabulary:
    """A shop's public vocabulary: features and option values shown on product pages.

    Attributes:
        attributes: Feature phrases, sorted.
        options: Option values, longest first.
        active: False for worlds without a catalogue.
    """

    attributes: _PhraseIndex
    options: _PhraseIndex
    active: bool

    def attributes_in(self, text: str) -> list[str]:
        """Feature phrases named in ``text``."""
        return self.attributes.found_in(text)

    def options_in(self, text: str) -> list[str]:
        """Option values named in ``text``, longest first."""
        return self.options.found_in(text)


_EMPTY = _Vocabulary(_PhraseIndex(()), _PhraseIndex(()), False)
VOCABULARY_MEMO = "agents.reading.vocabulary"
"""The world's memo table holding its reader vocabulary (one entry)."""


def _shop_vocabulary(world: HostWorld) -> _Vocabulary:
    """The catalogue vocabulary of a shop world (empty for worlds without a catalogue).

    Read from the catalogue's option and attribute counts (aggregates a catalogue file keeps),
    so an agent on a million-product shop does not read every product; built once per world.
    """
    memo = world.memo(VOCABULARY_MEMO, size=1)
    got = memo.get("vocabulary")
    if got is not None:
        return cast(_Vocabulary, got)
    words = world.catalogue_words()
    if words is None:
        vocab = _EMPTY
    else:
        vocab = _Vocabulary(
            _PhraseIndex(sorted(words.attributes)),
            _PhraseIndex(sorted(words.options, key=lambda v: (-len(v), v))),
            active=True,
        )
    memo.put("vocabulary", vocab)
    return vocab


def harvest_fields(text: str, out: dict[str, Any]) -> None:
    """Remember scalar fields of a JSON observation (first value per key wins)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return
    stack = [data]
    while stack:
        cur = stack.pop(0)
        if isinstance(cur, dict):
            for k, v in cur.items():
                if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    out.setdefault(str(k), v)
                else:
                    stack.append(v)
        elif isinstance(cur, list):
            stack.extend(cur)
