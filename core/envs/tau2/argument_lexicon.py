"""Slot lexicons, actions and "what is unmet" problems of the τ² worlds (retail and airline).

Slots are the arguments of an intent's golden writes (``arg:<i>:<tool>:<arg>``). Each argument
name has a family (items, replacement items, refund/payment method, reason, address lines,
identification, reservation, flights, cabin, passengers, bags, insurance, …) with its cues; the
value vocabulary comes from the database (an item's product name and options, the other
variants as alternatives, a payment method's plain name, the customer's other orders …).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.envs.requirement_lexicon import (
    ActionLexicon,
    Dimension,
    Family,
    Problem,
    SlotLexicon,
    words_of,
)
from core.errors import ConfigError
from core.model.base import Strict
from core.model.datafile import read_yaml_model
from core.model.intent import Condition, Intent
from core.paths import DATA_DIR

if TYPE_CHECKING:
    from core.envs.base import EnvSession
    from core.envs.tau2.world import Tau2World

VOCABULARY_FILE = DATA_DIR / "lexicons" / "tau2.yaml"
"""The τ² argument vocabulary (families, reasons, verbs, problem texts), project-written."""


class _FamilyRow(Strict):
    label: str
    cues: tuple[str, ...]
    values: tuple[str, ...] = ()
    weak: tuple[str, ...] = ()


class _VocabularyFile(Strict):
    cue_groups: dict[str, tuple[str, ...]]
    families: dict[str, _FamilyRow]
    argument_families: dict[str, str]
    reasons: dict[str, tuple[str, ...]]
    tool_verbs: dict[str, tuple[str, ...]]
    refunding_tools: tuple[str, ...]
    distinct_verbs: tuple[str, ...]
    scope_verbs: dict[str, tuple[str, ...]]
    context: dict[str, tuple[str, ...]]
    not_done: dict[str, str]
    argument_wrong: dict[str, str]


def _read_vocabulary(path: Path) -> _VocabularyFile:
    """Read and validate the vocabulary file (ConfigError naming the file and field)."""
    got = read_yaml_model(path, _VocabularyFile)
    for name, row in got.families.items():
        for cue in row.cues:
            if cue.startswith("@") and cue[1:] not in got.cue_groups:
                raise ConfigError(f"unknown cue group {cue!r}", file=path, field=f"families.{name}")
    return got


def _family(row: _FamilyRow, groups: dict[str, tuple[str, ...]]) -> Family:
    cues: list[str] = []
    for cue in row.cues:
        cues += groups[cue[1:]] if cue.startswith("@") else [cue]
    return Family(row.label, tuple(cues), values=row.values, weak=row.weak)


_VOCABULARY = _read_vocabulary(VOCABULARY_FILE)
FAMILIES: dict[str, Family] = {
    k: _family(row, _VOCABULARY.cue_groups) for k, row in _VOCABULARY.families.items()
}
"""Argument family → how customers talk about it."""
_ARG_FAMILY = _VOCABULARY.argument_families
_REASONS = _VOCABULARY.reasons
_TOOL_VERBS = _VOCABULARY.tool_verbs
_REFUNDING = frozenset(_VOCABULARY.refunding_tools)
_DISTINCT_VERBS = _VOCABULARY.distinct_verbs
_SCOPE_VERBS = _VOCABULARY.scope_verbs


def _arg(slot: str) -> tuple[int, str, str] | None:
    parts = slot.split(":")
    if len(parts) != 4 or parts[0] != "arg" or not parts[1].isdigit():
        return None
    return int(parts[1]), parts[2], parts[3]


def _value(condition: Condition) -> Any:
    try:
        return json.loads(condition.value) if isinstance(condition.value, str) else condition.value
    except json.JSONDecodeError:
        return condition.value


class _Db:
    """Lookups over a world's database, built once per world."""

    def __init__(self, world: Tau2World) -> None:
        rec = world.base.records
        self.records = rec
        self.items: dict[str, tuple[str, dict[str, str], str]] = {}
        self.variants: dict[str, list[dict[str, str]]] = {}
        for pid, p in rec.get("products", {}).items():
            opts = []
            for iid, v in p.get("variants", {}).items():
                o = {str(k): str(x) for k, x in dict(v.get("options", {})).items()}
                self.items[iid] = (str(p.get("name", "")), o, pid)
                opts.append(o)
            self.variants[pid] = opts
        self.payments: dict[str, tuple[str, str]] = {}
        for uid, u in rec.get("users", {}).items():
            for pmid, pm in dict(u.get("payment_methods", {})).items():
                self.payments[pmid] = (uid, _payment_words(pm))
        from core.envs.tau2.airline import AIRPORTS

        self.airports = dict(AIRPORTS)


def _payment_words(pm: dict[str, Any]) -> str:
    src = str(pm.get("source", ""))
    if src == "credit_card":
        return f"{pm.get('brand', '')} credit card {pm.get('last_four', '')}"
    return {"paypal": "paypal", "gift_card": "gift card", "certificate": "certificate"}.get(
        src, src.replace("_", " ")
    )


DB_MEMO = "tau2.lexicon.db"
"""The world's memo table holding its lexicon view of the database (one entry)."""


def _db(world: Tau2World) -> _Db:
    memo = world.memo(DB_MEMO, size=1)
    got: _Db | None = memo.get("db")
    if got is None:
        got = _Db(world)
        memo.put("db", got)
    return got


def _item_dims(db: _Db, ids: list[Any], *, options: bool) -> tuple[list[str], list[Dimension]]:
    names: list[str] = []
    dims: list[Dimension] = []
    for iid in ids:
        got = db.items.get(str(iid))
        if got is None:
            names.append(str(iid))
            continue
        name, opts, pid = got
        names += [name.lower(), str(iid)]
        if not options:
            continue
        for k, v in opts.items():
            others = {o.get(k, "") for o in db.variants.get(pid, [])} - {v, ""}
            dims.append(Dimension(values=(v.lower(),), alternatives=tuple(sorted(others))))
    return names, dims


def _option_cues(db: _Db, ids: list[Any]) -> tuple[str, ...]:
    keys: list[str] = []
    for iid in ids:
        got = db.items.get(str(iid))
        if got is not None:
            keys += [k.lower() for k in got[1]]
    return words_of(keys, (f"which {k}" for k in keys))


def slot_lexicon(world: Tau2World, condition: Condition) -> SlotLexicon:
    """Return the lexicon of one τ² argument condition."""
    parsed = _arg(condition.slot)
    if parsed is None:
        label = condition.slot
        return SlotLexicon(slot=condition.slot, label=label, family=label, cues=(label,))
    _, tool, arg = parsed
    fam_id = _ARG_FAMILY.get(arg, arg)
    if fam_id == "payment" and tool in _REFUNDING:
        fam_id = "refund"
    fam = FAMILIES.get(fam_id, Family(arg.replace("_", " "), (arg.replace("_", " "),)))
    if fam_id == "refund" and tool != "return_delivered_order_items":
        fam = Family("payment method", fam.cues, weak=fam.weak)
    v = _value(condition)
    db = _db(world)
    values: tuple[str, ...] = ()
    alts: tuple[str, ...] = ()
    dims: tuple[Dimension, ...] = ()
    cues: tuple[str, ...] = fam.cues
    number: float | None = None
    if arg in ("item_ids", "new_item_ids") and isinstance(v, list):
        new = arg == "new_item_ids"
        names, dl = _item_dims(db, v, options=new)
        values, dims = words_of(names), tuple(dl)
        if new:
            cues = words_of(cues, _option_cues(db, v))
    elif arg in ("payment_method_id", "payment_id") and isinstance(v, str):
        uid, words = db.payments.get(v, ("", v.replace("_", " ")))
        values = words_of((words, v))
        alts = words_of(w for pm, (u, w) in db.payments.items() if u == uid and w != words)
    elif arg == "payment_methods" and isinstance(v, list):
        ids = [str(p.get("payment_id", "")) for p in v if isinstance(p, dict)]
        values = words_of(db.payments.get(i, ("", i))[1] for i in ids)
    elif arg == "reason" and isinstance(v, str):
        values = _REASONS.get(v, (v,))
        alts = words_of(x for k, xs in _REASONS.items() if k != v for x in xs)
    elif arg == "order_id" and isinstance(v, str):
        values = (v.lstrip("#").lower(),)
        order = db.records.get("orders", {}).get(v)
        if order is not None:
            user = db.records.get("users", {}).get(order.get("user_id"), {})
            alts = tuple(o.lstrip("#").lower() for o in user.get("orders", []) if o != v)
    elif arg == "reservation_id" and isinstance(v, str):
        values = (v.lower(),)
        res = db.records.get("reservations", {}).get(v)
        if res is not None:
            user = db.records.get("users", {}).get(res.get("user_id"), {})
            alts = tuple(r.lower() for r in user.get("reservations", []) if r != v)
    elif arg in ("origin", "destination") and isinstance(v, str):
        values = words_of((v.lower(), db.airports.get(v, "").lower()))
        alts = words_of(
            x.lower() for code, city in db.airports.items() if code != v for x in (code, city)
        )
    elif arg == "cabin" and isinstance(v, str):
        cabins = ("basic_economy", "economy", "business")
        values = (v.replace("_", " "),)
        alts = tuple(c.replace("_", " ") for c in cabins if c != v and not v.endswith(c))
    elif arg == "flight_type" and isinstance(v, str):
        kinds = {"round_trip": ("round trip", "roundtrip", "return"), "one_way": ("one way",)}
        values = kinds.get(v, (v.replace("_", " "),))
        alts = tuple(x for k, xs in kinds.items() if k != v for x in xs)
    elif arg == "flights" and isinstance(v, list):
        values = words_of(
            part
            for f in v
            if isinstance(f, dict)
            for part in (str(f.get("flight_number", "")).lower(), str(f.get("date", "")))
        )
    elif arg == "passengers" and isinstance(v, list):
        values = words_of(
            f"{p.get('first_name', '')} {p.get('last_name', '')}".lower()
            for p in v
            if isinstance(p, dict)
        )
    elif arg == "insurance" and isinstance(v, str):
        yes = ("with insurance", "add insurance", "include insurance", "insured")
        no = ("without insurance", "no insurance", "skip insurance", "decline insurance")
        values, alts = (yes, no) if v == "yes" else (no, yes)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        number = float(v)
    elif isinstance(v, str) and v:
        values = (v.lower(),)
    return SlotLexicon(
        slot=condition.slot,
        label=fam.label,
        family=fam_id,
        cues=words_of(cues),
        values=values,
        alternatives=alts,
        number=number,
        op=condition.op,
        weak=fam.weak,
        dimensions=dims,
    )


def context_lexicon(key: str) -> SlotLexicon:
    """Return how an agent asks for the context fact ``key`` (identification)."""
    label = key.replace("_", " ")
    return SlotLexicon(
        slot=key,
        label=label,
        family="identity",
        cues=words_of((label,), _VOCABULARY.context.get(key, ())),
    )


def families(domain: str) -> tuple[SlotLexicon, ...]:
    """Return the domain's slot families (topics a customer may have no requirement on)."""
    keys = (
        ("order", "reason", "items", "new_items", "payment", "refund", "address1", "city", "zip")
        if domain == "retail"
        else (
            "reason",
            "reservation",
            "origin",
            "destination",
            "trip_type",
            "cabin",
            "flights",
            "passengers",
            "bags",
            "insurance",
            "payment",
        )
    )
    return tuple(
        SlotLexicon(
            slot="", label=FAMILIES[k].label, family=k, cues=FAMILIES[k].cues, weak=FAMILIES[k].weak
        )
        for k in keys
    )


def action_lexicon(intent: Intent) -> ActionLexicon | None:
    """Return which actions an intent asks for (its write tools' verbs)."""
    tools: dict[str, list[Condition]] = {}
    for c in intent.conditions:
        parsed = _arg(c.slot)
        if parsed is not None:
            tools.setdefault(parsed[1], []).append(c)
    if not tools:
        return None
    verbs = words_of(v for t in tools for v in _TOOL_VERBS.get(t, ()))
    others = tuple(v for v in _DISTINCT_VERBS if v not in verbs)
    first = next(iter(tools.values()))
    slot = next((c.slot for c in first if c.slot.endswith((":item_ids", ":reason"))), first[0].slot)
    scopes = tuple(
        (c.slot, _SCOPE_VERBS.get(tool, ())) for tool, conds in tools.items() for c in conds
    )
    return ActionLexicon(verbs=verbs, others=others, slot=slot, scopes=scopes)


# --------------------------------------------------------------------------- problems


def problems(world: Tau2World, intent: Intent, session: EnvSession) -> list[Problem]:
    """Return what the session still gets wrong against ``intent``, in plain words.

    A golden write that was not executed but whose tool was called with other arguments names
    the arguments that differ ("that's the wrong payment method"); one never attempted says
    what is still not done ("the exchange still isn't done", naming the items only in
    ``known_text``).
    """
    from core.envs.tau2 import adapter

    try:
        golden = adapter.compile_intent(intent)
    except ConfigError:
        return []
    done = adapter.executed_golden(intent, session)
    prop = session.proposal() or {}
    executed = [w for w in prop.get("executed_writes", []) if isinstance(w, dict)]
    db = _db(world)
    out: list[Problem] = []
    for i, (g, ok) in enumerate(zip(golden, done, strict=True)):
        if ok:
            continue
        slots = {arg: adapter.slot_name(i, g.tool, arg) for arg in g.args}
        tried = [w for w in executed if w.get("tool") == g.tool]
        if tried:
            args = dict(tried[-1].get("args") or {})
            diff = [a for a, v in g.args.items() if adapter.canon(args.get(a)) != adapter.canon(v)]
            seen: set[str] = set()
            for a in diff:
                text = _VOCABULARY.argument_wrong.get(a, f"the {a.replace('_', ' ')} isn't right")
                if text in seen:
                    continue
                seen.add(text)
                group = tuple(
                    slots[x] for x in diff if _VOCABULARY.argument_wrong.get(x) == text
                ) or (slots[a],)
                out.append(Problem(slots=group, text=text))
            if diff:
                continue
        text = _VOCABULARY.not_done.get(g.tool, "one of the things I asked for still isn't done")
        known = ""
        items = g.args.get("item_ids")
        if isinstance(items, list) and items:
            names = sorted({db.items[str(x)][0].lower() for x in items if str(x) in db.items})
            if names:
                known = f"{text} for the {' and the '.join(names)}"
        out.append(Problem(slots=tuple(slots.values()), text=text, known_text=known))
    return out
