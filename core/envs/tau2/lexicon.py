"""Slot lexicons, actions and "what is unmet" problems of the τ² worlds (retail and airline).

Slots are the arguments of an intent's golden writes (``arg:<i>:<tool>:<arg>``). Each argument
name has a family (items, replacement items, refund/payment method, reason, address lines,
identification, reservation, flights, cabin, passengers, bags, insurance, …) with its cues; the
value vocabulary comes from the database (an item's product name and options, the other
variants as alternatives, a payment method's plain name, the customer's other orders …).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.envs.lexicon import ActionLexicon, Dimension, Family, Problem, SlotLexicon, words_of
from core.errors import ConfigError
from core.model.intent import Condition, Intent

if TYPE_CHECKING:
    from core.envs.base import EnvSession
    from core.envs.tau2.world import Tau2World

ADDRESS_CUES = (
    "address",
    "new address",
    "shipping address",
    "delivery address",
    "mailing address",
    "home address",
    "where should",
    "where do you live",
    "where to ship",
    "ship it to",
    "send it to",
    "deliver it to",
    "deliver to",
    "moved",
    "move to",
)
PAYMENT_CUES = (
    "payment method",
    "pay",
    "payment",
    "pay with",
    "pay by",
    "how would you like to pay",
    "how do you want to pay",
    "how will you pay",
    "how will you be paying",
    "how are you paying",
    "what will you pay with",
    "pay for it",
    "pay for this",
    "card",
    "credit card",
    "debit card",
    "gift card",
    "paypal",
    "which card",
    "method of payment",
    "billing",
    "charge",
    "charged",
    "original payment",
    "payment option",
    "funding source",
    "certificate",
)
REFUND_CUES = (
    "refund",
    "refunded",
    "refund method",
    "refund to",
    "money back",
    "reimburse",
    "reimbursed",
    "reimbursement",
    "credited",
    "credit back",
    "get your money",
    "send the money",
    "receive the refund",
)
_OPTION_NAMES = ("color", "size", "material", "style", "capacity", "type", "version", "option")

FAMILIES: dict[str, Family] = {
    "order": Family(
        "order number",
        (
            "order number",
            "order id",
            "order no",
            "order #",
            "which order",
            "what order",
            "order is it",
            "order is this",
            "order are we",
            "which purchase",
            "order reference",
            "order code",
            "order confirmation",
        ),
        weak=("order", "purchase"),
    ),
    "reason": Family(
        "reason",
        (
            "reason",
            "why",
            "how come",
            "what went wrong",
            "what wrong",
            "what made you",
            "cause",
            "purpose",
            "motivation",
            "what happened",
            "the problem with",
            "issue with",
            "because",
            "explanation",
        ),
        weak=("issue", "problem"),
    ),
    "items": Family(
        "items",
        (
            "which item",
            "what item",
            "which product",
            "what product",
            "which one",
            "which ones",
            "which of the",
            "what would you like to return",
            "what do you want to return",
            "want to return",
            "like to return",
            "need to return",
            "to be returned",
            "want to exchange",
            "like to exchange",
            "need to exchange",
            "to be exchanged",
            "want to change",
            "like to change",
            "want to modify",
            "like to modify",
            "item",
            "product",
            "what are you returning",
            "what are you exchanging",
            "send back",
            "return",
            "exchange",
        ),
        weak=("return", "exchange", "product", "item"),
    ),
    "new_items": Family(
        "replacement",
        (
            "new item",
            "new one",
            "new ones",
            "replacement",
            "replace with",
            "replace it with",
            "exchange for",
            "exchange it for",
            "swap for",
            "swap it for",
            "switch to",
            "change it to",
            "change to",
            "instead",
            "which option",
            "which variant",
            "which version",
            "what option",
            "what variant",
            "in exchange",
            "would you like instead",
            "you want instead",
            "prefer instead",
            "new variant",
            "new version",
            "new option",
            "new model",
            "new color",
            "new size",
            "different",
        ),
        weak=("different", "option", "variant", "version"),
    ),
    "payment": Family(
        "payment method", PAYMENT_CUES, weak=("charge", "card", "certificate", "pay")
    ),
    "refund": Family("refund method", REFUND_CUES + PAYMENT_CUES, weak=("charge", "card", "pay")),
    "address1": Family(
        "street address",
        ADDRESS_CUES + ("street", "street address", "address line 1", "first line", "line one"),
    ),
    "address2": Family(
        "second address line",
        ADDRESS_CUES
        + (
            "apartment",
            "apt",
            "suite",
            "unit",
            "floor",
            "address line 2",
            "second line",
            "line two",
        ),
    ),
    "city": Family("city", ADDRESS_CUES + ("city", "town", "which city")),
    "state": Family("state", ADDRESS_CUES + ("state", "province", "region", "which state")),
    "country": Family("country", ADDRESS_CUES + ("country", "nation", "which country")),
    "zip": Family("zip code", ADDRESS_CUES + ("zip", "postal", "postcode", "zip code")),
    "user": Family(
        "user id",
        (
            "user id",
            "username",
            "user name",
            "account id",
            "account number",
            "customer id",
            "member id",
            "profile",
            "login",
            "which account",
            "your account",
        ),
        weak=("account",),
    ),
    "reservation": Family(
        "reservation number",
        (
            "reservation id",
            "reservation number",
            "reservation code",
            "booking reference",
            "booking number",
            "booking code",
            "booking id",
            "confirmation number",
            "confirmation code",
            "record locator",
            "pnr",
            "which reservation",
            "what reservation",
            "which booking",
            "what booking",
            "which trip",
        ),
        weak=("reservation", "booking", "trip"),
    ),
    "origin": Family(
        "departure city",
        (
            "origin",
            "departing from",
            "depart from",
            "leaving from",
            "flying from",
            "fly from",
            "flying out of",
            "fly out of",
            "leaving out of",
            "departing out of",
            "travel from",
            "traveling from",
            "where from",
            "from where",
            "departure airport",
            "departure city",
            "starting point",
            "where are you leaving",
            "where will you leave",
            "where are you flying from",
            "where are you traveling from",
            "where are you departing",
            "which airport",
            "route",
        ),
        weak=("from", "airport", "route", "depart", "departure", "which airport"),
    ),
    "destination": Family(
        "destination",
        (
            "destination",
            "where to",
            "to where",
            "where are you going",
            "where are you heading",
            "where are you flying",
            "where are you flying to",
            "where are you traveling",
            "where are you traveling to",
            "flying to",
            "fly to",
            "going to",
            "headed",
            "heading to",
            "travel to",
            "traveling to",
            "arrival airport",
            "arrival city",
            "arriving",
            "route",
            "which airport",
        ),
        weak=("to", "airport", "route", "arrive", "arrival", "which airport"),
    ),
    "trip_type": Family(
        "trip type",
        (
            "one way",
            "one-way",
            "round trip",
            "roundtrip",
            "return trip",
            "return flight",
            "trip type",
            "type of trip",
            "both ways",
            "coming back",
            "fly back",
        ),
        weak=("return",),
    ),
    "cabin": Family(
        "cabin class",
        (
            "cabin",
            "class",
            "seat class",
            "fare class",
            "fare",
            "economy",
            "business",
            "first class",
            "basic economy",
            "premium",
            "which class",
            "travel class",
            "seating",
            "seat",
        ),
        weak=("seat", "fare", "premium"),
    ),
    "flights": Family(
        "flights",
        (
            "flight",
            "flights",
            "which flight",
            "flight number",
            "date",
            "dates",
            "when",
            "what day",
            "which day",
            "travel date",
            "departure date",
            "what time",
            "schedule",
            "itinerary",
            "leg",
            "legs",
            "connection",
            "nonstop",
            "direct",
            "layover",
            "rebook",
            "when do you want to",
            "when would you like to",
            "when are you",
            "what day do you",
        ),
        weak=("when", "direct", "time", "schedule"),
    ),
    "passengers": Family(
        "passengers",
        (
            "passenger",
            "passengers",
            "traveler",
            "travelers",
            "who is traveling",
            "who is flying",
            "who will be",
            "who else",
            "who is going",
            "names of",
            "name of the",
            "people",
            "person",
            "how many people",
            "travel companion",
            "companion",
            "companions",
            "guest",
            "adult",
            "adults",
            "date of birth",
            "traveling with",
            "flying with",
        ),
        weak=("person", "people", "adult"),
    ),
    "bags": Family(
        "number of bags",
        (
            "bag",
            "bags",
            "baggage",
            "luggage",
            "checked bag",
            "checked bags",
            "suitcase",
            "suitcases",
            "how many bags",
            "checked",
            "check in",
        ),
    ),
    "paid_bags": Family(
        "paid bags",
        (
            "paid bag",
            "paid bags",
            "extra bag",
            "extra bags",
            "non free",
            "nonfree",
            "additional bag",
            "additional bags",
            "pay for bags",
            "bag fee",
            "baggage fee",
            "paid baggage",
            "free bags",
            "free baggage",
            "allowance",
        ),
        weak=("bag", "bags", "baggage", "luggage"),
    ),
    "insurance": Family(
        "travel insurance",
        (
            "insurance",
            "insure",
            "insured",
            "coverage",
            "travel insurance",
            "trip insurance",
            "protection",
            "cover",
        ),
    ),
    "amount": Family(
        "certificate amount",
        (
            "amount",
            "how much",
            "certificate",
            "voucher",
            "compensation",
            "credit",
            "value",
            "dollars",
            "dollar",
            "worth",
        ),
        weak=("value", "worth", "credit"),
    ),
}

_ARG_FAMILY = {
    "order_id": "order",
    "reason": "reason",
    "item_ids": "items",
    "new_item_ids": "new_items",
    "payment_id": "payment",
    "payment_method_id": "payment",
    "payment_methods": "payment",
    "address1": "address1",
    "address2": "address2",
    "city": "city",
    "state": "state",
    "country": "country",
    "zip": "zip",
    "user_id": "user",
    "reservation_id": "reservation",
    "origin": "origin",
    "destination": "destination",
    "flight_type": "trip_type",
    "cabin": "cabin",
    "flights": "flights",
    "passengers": "passengers",
    "total_baggages": "bags",
    "nonfree_baggages": "paid_bags",
    "insurance": "insurance",
    "amount": "amount",
}
_REASONS: dict[str, tuple[str, ...]] = {
    "no longer needed": (
        "no longer needed",
        "no longer need",
        "do not need",
        "not need it",
        "not needed",
        "need it anymore",
        "changed my mind",
        "unneeded",
    ),
    "ordered by mistake": (
        "ordered by mistake",
        "by mistake",
        "mistake",
        "by accident",
        "accidentally",
        "wrong order",
        "accident",
    ),
}
_TOOL_VERBS: dict[str, tuple[str, ...]] = {
    "cancel_pending_order": ("cancel", "cancellation"),
    "cancel_reservation": ("cancel", "cancellation"),
    "return_delivered_order_items": ("return", "refund", "send back"),
    "exchange_delivered_order_items": ("exchange", "swap", "replace"),
    "modify_pending_order_items": ("modify", "change", "swap", "switch", "replace", "update"),
    "modify_pending_order_address": ("address", "change", "update", "modify"),
    "modify_user_address": ("address", "change", "update", "modify"),
    "modify_pending_order_payment": ("payment", "change", "switch", "update"),
    "book_reservation": ("book", "reserve", "booking"),
    "update_reservation_flights": ("change", "switch", "rebook", "move", "update", "modify"),
    "update_reservation_passengers": ("passenger", "change", "update"),
    "update_reservation_baggages": ("bag", "baggage", "add", "update"),
    "send_certificate": ("certificate", "compensation", "send"),
}
_REFUNDING = frozenset(
    {"return_delivered_order_items", "exchange_delivered_order_items", "modify_pending_order_items"}
)
_DISTINCT_VERBS = ("cancel", "return", "exchange", "book", "refund")
_SCOPE_VERBS: dict[str, tuple[str, ...]] = {
    "cancel_pending_order": ("cancel", "cancellation"),
    "cancel_reservation": ("cancel", "cancellation"),
    "return_delivered_order_items": ("return", "send back"),
    "exchange_delivered_order_items": ("exchange", "swap"),
    "modify_pending_order_items": ("modify", "swap"),
    "book_reservation": ("book", "booking", "reserve"),
}
"""Verbs naming one kind of write only (``refund`` and ``change`` are shared by several)."""


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


_CONTEXT: dict[str, tuple[str, ...]] = {
    "email": ("email", "email address", "mail", "e mail", "contact email"),
    "first_name": (
        "name",
        "first name",
        "full name",
        "your name",
        "who am i speaking",
        "first and last name",
        "given name",
    ),
    "last_name": (
        "name",
        "last name",
        "surname",
        "family name",
        "full name",
        "your name",
        "first and last name",
    ),
    "zip": ("zip", "postal", "postcode", "zip code"),
    "dob": ("date of birth", "birthday", "born", "dob", "birth date", "birthdate"),
    "user_id": ("user id", "username", "user name", "account id", "customer id", "account"),
}


def context_lexicon(key: str) -> SlotLexicon:
    """Return how an agent asks for the context fact ``key`` (identification)."""
    label = key.replace("_", " ")
    return SlotLexicon(
        slot=key,
        label=label,
        family="identity",
        cues=words_of((label,), _CONTEXT.get(key, ())),
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

_NOT_DONE = {
    "cancel_pending_order": "the order still isn't cancelled",
    "cancel_reservation": "my reservation still isn't cancelled",
    "return_delivered_order_items": "the return still isn't done",
    "exchange_delivered_order_items": "the exchange still isn't done",
    "modify_pending_order_items": "the items in my order still haven't been changed",
    "modify_pending_order_address": "the shipping address of my order still hasn't been changed",
    "modify_user_address": "my address still hasn't been updated",
    "modify_pending_order_payment": "the payment method of my order still hasn't been changed",
    "book_reservation": "the flight still isn't booked",
    "update_reservation_flights": "my flights still haven't been changed",
    "update_reservation_passengers": "the passenger details still haven't been updated",
    "update_reservation_baggages": "my bags still haven't been sorted out",
    "send_certificate": "I still haven't received the certificate",
}
_ARG_WRONG = {
    "order_id": "that's the wrong order",
    "reservation_id": "that's the wrong reservation",
    "reason": "the reason isn't right",
    "item_ids": "those aren't the right items",
    "new_item_ids": "the replacement isn't the one I want",
    "payment_method_id": "that's the wrong payment method",
    "payment_id": "that's the wrong payment method",
    "payment_methods": "the payment isn't set up the way I want",
    "address1": "the address isn't right",
    "address2": "the address isn't right",
    "city": "the address isn't right",
    "state": "the address isn't right",
    "country": "the address isn't right",
    "zip": "the address isn't right",
    "user_id": "that's the wrong account",
    "origin": "the route isn't right",
    "destination": "the route isn't right",
    "flight_type": "the trip type isn't right",
    "cabin": "it's the wrong cabin class",
    "flights": "those aren't the flights I want",
    "passengers": "the passenger details aren't right",
    "total_baggages": "the number of bags is wrong",
    "nonfree_baggages": "the number of paid bags is wrong",
    "insurance": "the insurance choice is wrong",
    "amount": "the certificate amount is wrong",
}


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
                text = _ARG_WRONG.get(a, f"the {a.replace('_', ' ')} isn't right")
                if text in seen:
                    continue
                seen.add(text)
                group = tuple(slots[x] for x in diff if _ARG_WRONG.get(x) == text) or (slots[a],)
                out.append(Problem(slots=group, text=text))
            if diff:
                continue
        text = _NOT_DONE.get(g.tool, "one of the things I asked for still isn't done")
        known = ""
        items = g.args.get("item_ids")
        if isinstance(items, list) and items:
            names = sorted({db.items[str(x)][0].lower() for x in items if str(x) in db.items})
            if names:
                known = f"{text} for the {' and the '.join(names)}"
        out.append(Problem(slots=tuple(slots.values()), text=text, known_text=known))
    return out
