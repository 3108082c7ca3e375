"""The offline interpreter on the shop: natural phrasings of every slot family."""

from __future__ import annotations

import pytest
from interp_help import find, read

from core.envs.registry import load_world
from core.model.intent import Intent

B = "webshop"


def _with_option(name: str) -> tuple[Intent, str]:
    w = load_world(B)

    def ok(it: Intent) -> bool:
        return any(c.slot.startswith("option:") and w.option_name(c) == name for c in it.conditions)

    it = find(B, ok)
    slot = next(
        c.slot for c in it.conditions if c.slot.startswith("option:") and w.option_name(c) == name
    )
    return it, slot


def _priced() -> Intent:
    return find(B, lambda it: any(c.slot == "price_upper" for c in it.conditions))


@pytest.mark.parametrize(
    "text",
    [
        "What's your budget?",
        "How much are you willing to spend?",
        "What price range are you thinking of?",
        "How much can you afford?",
        "Is there a maximum you'd like to pay?",
        "What's the most you'd spend on this?",
        "Do you have a price limit in mind?",
        "How expensive can it be?",
        "Should I keep it under a certain amount of money?",
        "what r u looking to pay",
    ],
)
def test_budget_phrasings(text: str) -> None:
    got = read(B, text, _priced())
    assert got.act == "slots" and got.slots == ("price_upper",), got


@pytest.mark.parametrize(
    "name,texts",
    [
        (
            "color",
            [
                "Which colour would you like?",
                "What color do you want?",
                "Any preferred colours?",
                "Do you have a shade in mind?",
                "Is there a particular colour you're after?",
                "What colour should it be?",
            ],
        ),
        (
            "size",
            [
                "What size do you need?",
                "Which size?",
                "What sizes are you looking at?",
                "How big should it be?",
                "Do you know your size?",
            ],
        ),
        ("flavor", ["Which flavour do you prefer?", "Any particular flavor?", "What taste?"]),
        (
            "scent",
            ["What scent would you like?", "Do you want a fragrance?", "How should it smell?"],
        ),
        ("pack", ["How many in a pack?", "What pack size?", "What quantity do you need?"]),
        ("roast", ["What roast do you like?", "How dark a roast?"]),
        ("model", ["Which phone model is it for?", "What device do you have?"]),
    ],
)
def test_option_phrasings(name: str, texts: list[str]) -> None:
    it, slot = _with_option(name)
    for t in texts:
        got = read(B, t, it)
        assert got.act == "slots" and slot in got.slots, (t, got)


def test_features_generic_and_specific() -> None:
    it = find(B, lambda x: sum(c.slot.startswith("attr:") for c in x.conditions) >= 2)
    attrs = [c.slot for c in it.conditions if c.slot.startswith("attr:")]
    for t in (
        "Do you need any particular features?",
        "Are there any must-have features?",
        "What specifications matter to you?",
        "Any special requirements for it?",
    ):
        got = read(B, t, it)
        assert got.act == "slots" and set(attrs) <= set(got.slots), (t, got)
    one = attrs[0]
    value = it.slot_map()[one].value
    got = read(B, f"Do you need it to be {value}?", it)
    assert got.act == "slots" and got.slots == (one,), got


def test_question_focus_ignores_restated_values() -> None:
    it, slot = _with_option("size")
    cap = next(c for c in it.conditions if c.slot == "price_upper")
    got = read(B, f"I found a few under ${cap.value}. What size do you need?", it)
    assert got.slots == (slot,), got


def test_side_pockets_and_similar_attribute_questions() -> None:
    it = find(B, lambda x: any(c.slot == "attr:machine wash" for c in x.conditions))
    for t in ("Does it need to be machine washable?", "Should it be washable in the machine?"):
        got = read(B, t, it)
        assert "attr:machine wash" in got.slots, (t, got)


def test_no_requirement_topic_is_not_confusion() -> None:
    it = (
        find(B, lambda x: not any(c.slot.startswith("option:") for c in x.conditions))
        if any(
            not any(c.slot.startswith("option:") for c in x.conditions)
            for x in __import__("interp_help").intents(B)
        )
        else _priced()
    )
    got = read(B, "Do you have a brand preference?", it)
    assert got.act == "slots" and got.slots == () and got.topics == ("brand",)


@pytest.mark.parametrize(
    "text",
    [
        "What are you looking for?",
        "Anything else?",
        "How can I help you today?",
        "Is there anything else I should know?",
        "Any other preferences?",
        "What kind of product do you need?",
    ],
)
def test_open_questions(text: str) -> None:
    assert read(B, text, _priced()).act == "open"


@pytest.mark.parametrize(
    "text", ["What's the weather like?", "Tell me a joke.", "Who won the match last night?", "asdf"]
)
def test_offtopic(text: str) -> None:
    assert read(B, text, _priced()).act == "offtopic"


def test_confirmation_true_and_altered_colour() -> None:
    it, slot = _with_option("color")
    w = load_world(B)
    value = str(it.slot_map()[slot].value)
    lex = w.slot_lexicon(it.slot_map()[slot])
    other = next(a for a in lex.alternatives if a.split()[0] not in value.split())
    yes = read(B, f"I found it in {value}. Shall I go ahead and buy it?", it)
    assert yes.act == "confirm" and yes.confirm is True and slot in yes.slots, yes
    no = read(B, f"I'll buy the {other} one, OK?", it)
    assert no.act == "confirm" and no.confirm is False and no.wrong == (slot,), no


def test_confirmation_price_over_and_under_the_cap() -> None:
    it = _priced()
    cap = float(next(c for c in it.conditions if c.slot == "price_upper").value)
    ok = read(B, f"This one costs ${cap - 5:.0f}. Do you want me to buy it? (yes/no)", it)
    assert ok.act == "confirm" and ok.confirm is True, ok
    bad = read(B, f"It's ${cap + 20:.0f}. Should I place the order?", it)
    assert bad.act == "confirm" and bad.confirm is False and bad.wrong == ("price_upper",), bad


@pytest.mark.parametrize(
    "text",
    [
        "Shall I go ahead?",
        "Do you confirm I should proceed? (yes/no)",
        "Should I buy it?",
        "Want me to place the order?",
        "Is that OK with you?",
        "Ready for me to check out?",
    ],
)
def test_bare_confirmations(text: str) -> None:
    got = read(B, text, _priced())
    assert got.act == "confirm" and got.confirm is True and got.slots == (), got
