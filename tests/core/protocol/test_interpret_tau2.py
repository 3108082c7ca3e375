"""The offline interpreter on τ² Retail and Airline: natural phrasings of every slot family."""

from __future__ import annotations

import pytest
from interp_help import find, read, slot_of, with_arg

R, A = "tau2_retail", "tau2_airline"

RETAIL = [
    (
        ("item_ids",),
        "return_delivered_order_items",
        "item_ids",
        [
            "Which items would you like to return?",
            "What would you like to send back?",
            "Which of the products do you want to return?",
        ],
    ),
    (
        ("new_item_ids",),
        "exchange_delivered_order_items",
        "new_item_ids",
        [
            "What would you like instead?",
            "Which size would you like instead?",
            "What colour do you want for the replacement?",
            "Which option do you want to exchange it for?",
        ],
    ),
    (
        ("payment_method_id",),
        "return_delivered_order_items",
        "payment_method_id",
        [
            "How would you like to be refunded?",
            "Where should the refund go?",
            "Should the money go back to your original payment method or a gift card?",
            "Which card should I refund it to?",
        ],
    ),
    (
        ("reason",),
        "cancel_pending_order",
        "reason",
        [
            "Why do you want to cancel the order?",
            "What's the reason for the cancellation?",
            "May I ask why?",
            "Did you order it by mistake or do you no longer need it?",
        ],
    ),
    (
        ("order_id",),
        None,
        "order_id",
        [
            "What's the order number?",
            "Which order is this about?",
            "Could you give me the order ID?",
        ],
    ),
    (
        ("address1",),
        "modify_user_address",
        "address1",
        ["What's the new address?", "Where should we ship it?", "What is your street address?"],
    ),
    (("zip",), "modify_user_address", "zip", ["And the postcode?", "What's the new zip code?"]),
    (("city",), "modify_user_address", "city", ["Which city?"]),
    (("address2",), "modify_user_address", "address2", ["Is there an apartment or suite number?"]),
    (("user_id",), "modify_user_address", "user_id", ["What's your user ID?"]),
]


@pytest.mark.parametrize("args,tool,arg,texts", RETAIL, ids=[r[2] for r in RETAIL])
def test_retail_families(args, tool, arg, texts) -> None:
    it = with_arg(R, *args, tool=tool)
    slot = slot_of(it, arg)
    for t in texts:
        got = read(R, t, it)
        assert got.act == "slots" and slot in got.slots, (t, got)


def test_identification_is_context_not_a_slot() -> None:
    it = with_arg(R, "reason", tool="cancel_pending_order")
    for t, keys in (
        ("Can I have your email address, please?", {"email"}),
        ("Could you give me your name and zip code to find your account?", {"zip"}),
        ("For verification, what's your first and last name?", {"first_name", "last_name"}),
    ):
        got = read(R, t, it)
        assert got.act == "slots" and got.slots == () and keys <= set(got.context), (t, got)


AIRLINE = [
    (
        ("total_baggages",),
        "total_baggages",
        [
            "How many bags?",
            "How many checked bags will you bring?",
            "How much luggage are you checking?",
        ],
    ),
    (
        ("insurance",),
        "insurance",
        ["Would you like travel insurance?", "Do you want to insure the trip?"],
    ),
    (
        ("cabin",),
        "cabin",
        ["Which cabin class?", "Economy or business?", "What class do you want to fly?"],
    ),
    (
        ("reservation_id",),
        "reservation_id",
        [
            "What's your reservation number?",
            "Could you share the booking reference?",
            "Which reservation is this about?",
        ],
    ),
    (
        ("flights",),
        "flights",
        ["Which flights do you want?", "What date do you want to fly?", "Which flight number?"],
    ),
    (
        ("passengers",),
        "passengers",
        [
            "Who is travelling?",
            "What are the passengers' names?",
            "Could you give me each traveller's name and date of birth?",
        ],
    ),
    (("origin",), "origin", ["Where are you flying from?", "What's your departure city?"]),
    (("destination",), "destination", ["Where are you flying to?", "What's your destination?"]),
    (("flight_type",), "flight_type", ["Is it a round trip or one way?"]),
    (
        ("payment_methods",),
        "payment_methods",
        ["How would you like to pay?", "Which payment method should I use?"],
    ),
    (("amount",), "amount", ["How much was the certificate for?"]),
]


@pytest.mark.parametrize("args,arg,texts", AIRLINE, ids=[r[1] for r in AIRLINE])
def test_airline_families(args, arg, texts) -> None:
    it = with_arg(A, *args)
    slot = slot_of(it, arg)
    for t in texts:
        got = read(A, t, it)
        assert got.act == "slots" and slot in got.slots, (t, got)


def test_yes_never_maps_to_insurance() -> None:
    it = with_arg(A, "insurance")
    got = read(A, "Do you confirm I should proceed? (yes/no)", it)
    assert got.act == "confirm" and slot_of(it, "insurance") not in got.slots


def test_confirm_cancellation_reason_true_and_altered() -> None:
    it = with_arg(R, "reason", tool="cancel_pending_order")
    slot = slot_of(it, "reason")
    reason = str(it.slot_map()[slot].value).strip('"')
    right, wrong = (
        ("you no longer need it", "you ordered it by mistake")
        if reason == "no longer needed"
        else ("you ordered it by mistake", "you no longer need it")
    )
    yes = read(R, f"I'll cancel the order because {right}. Shall I proceed?", it)
    assert yes.act == "confirm" and yes.confirm is True, yes
    no = read(R, f"I'll cancel the order because {wrong}. Shall I proceed?", it)
    assert no.act == "confirm" and no.confirm is False and slot in no.wrong, no


def _exchange_only(it) -> bool:
    """An exchange whose intent has no other write (so "cancel instead" is a different action)."""
    tools = {c.slot.split(":")[2] for c in it.conditions if c.slot.count(":") == 3}
    return tools == {"exchange_delivered_order_items"}


def test_confirm_bag_count_and_wrong_action() -> None:
    it = with_arg(A, "total_baggages")
    slot = slot_of(it, "total_baggages")
    n = int(it.slot_map()[slot].value)
    yes = read(A, f"I'll set {n} checked bags on the reservation, OK?", it)
    assert yes.act == "confirm" and yes.confirm is True, yes
    no = read(A, f"I'll set {n + 1} checked bags on the reservation, OK?", it)
    assert no.act == "confirm" and no.confirm is False and slot in no.wrong, no
    ex = find(R, _exchange_only)
    got = read(R, "I will cancel the whole order instead. Do you want me to go ahead?", ex)
    assert got.act == "confirm" and got.confirm is False, got


def test_refund_method_confirmation() -> None:
    it = with_arg(R, "payment_method_id", tool="return_delivered_order_items")
    slot = slot_of(it, "payment_method_id")
    from core.envs.registry import load_world

    lex = load_world(R).slot_lexicon(it.slot_map()[slot])
    yes = read(R, f"I'll refund it to your {lex.values[0]}. Is that correct?", it)
    assert yes.act == "confirm" and yes.confirm is True, yes
    if lex.alternatives:
        no = read(R, f"I'll refund it to your {lex.alternatives[0]}. Is that correct?", it)
        assert no.act == "confirm" and no.confirm is False and no.wrong == (slot,), no


@pytest.mark.parametrize(
    "text", ["How can I help you today?", "Is there anything else?", "What else can I do for you?"]
)
def test_open(text: str) -> None:
    assert read(R, text, with_arg(R, "reason")).act == "open"


@pytest.mark.parametrize("text", ["Lovely weather today, isn't it?", "Do you like football?"])
def test_offtopic(text: str) -> None:
    assert read(A, text, with_arg(A, "cabin")).act == "offtopic"


def _two_writes(first: str, second: str):
    """One intent holding a ``first`` write and a ``second`` write (renumbered to arg 9)."""
    a = with_arg(R, "item_ids", tool=first)
    b = with_arg(R, "item_ids", tool=second)
    moved = [
        c.model_copy(update={"slot": "arg:9:" + c.slot.split(":", 2)[2]})
        for c in b.conditions
        if c.slot.count(":") == 3 and c.slot.split(":")[2] == second
    ]
    return a.model_copy(update={"conditions": (*a.conditions, *moved)})


def test_a_verb_scopes_the_question_to_its_own_write() -> None:
    it = _two_writes("return_delivered_order_items", "exchange_delivered_order_items")
    ret = next(
        c.slot for c in it.conditions if c.slot.endswith("return_delivered_order_items:item_ids")
    )
    exc = next(
        c.slot for c in it.conditions if c.slot.endswith("exchange_delivered_order_items:item_ids")
    )
    got = read(R, "Which items would you like to return?", it)
    assert got.act == "slots" and ret in got.slots and exc not in got.slots, got
    got = read(R, "Which items do you want to exchange?", it)
    assert exc in got.slots and ret not in got.slots, got
    # no verb of either write: both stay asked
    got = read(R, "Which items is this about?", it)
    assert {ret, exc} <= set(got.slots), got
    # both verbs: both writes
    got = read(R, "Which items should I return, and which should I exchange?", it)
    assert {ret, exc} <= set(got.slots), got
