"""The reply reader: how people answer, per world — paraphrases, synonyms, numbers in words,
units, multi-slot answers, hedges, negations, yes/no with extra words, contradictions — and the
property that it never returns a slot outside the current intent."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.construction.pipeline import load_bundled
from core.envs.registry import load_world
from core.model.intent import Intent
from core.protocol.numwords import quantities
from core.protocol.reply_reader import REPLY_ACTS, ReplyReading, read_reply


@lru_cache(maxsize=8)
def _bundled(benchmark: str):
    return load_bundled(benchmark)


def intent_of(benchmark: str, sample_prefix: str) -> Intent:
    graphs, samples = _bundled(benchmark)
    s = next(x for x in samples if x.sample_id.startswith(sample_prefix))
    g = next(g for g in graphs if g.graph_id == s.graph_id)
    return g.node(s.root_intent_id)


def read(benchmark: str, prefix: str, text: str, asked: tuple[str, ...] = ()) -> ReplyReading:
    it = intent_of(benchmark, prefix)
    full = tuple(next(c.slot for c in it.conditions if c.slot.endswith(a)) for a in asked)
    return read_reply(text, it, load_world(benchmark), asked=full)


def short(slots) -> set[str]:
    return {s.split(":")[-1] if s.startswith("arg:") else s for s in slots}


def said(r: ReplyReading) -> dict[str, str]:
    return {
        (c.slot.split(":")[-1] if c.slot.startswith("arg:") else c.slot): c.said
        for c in r.contradictions
    }


# ------------------------------------------------------------------------- numbers in words
@pytest.mark.parametrize(
    "text,value,bound",
    [
        ("under twenty dollars", 20, "<="),
        ("no more than fifty bucks", 50, "<="),
        ("a hundred and twenty tops", 120, "<="),
        ("forty-five dollars or less", 45, "<="),
        ("around 30", 30, "~"),
        ("at least two", 2, ">="),
        ("1.5k", 1500, "="),
        ("half a dozen", 6, "="),
        ("a couple of bags", 2, "="),
    ],
)
def test_quantities_in_words(text, value, bound):
    from core.protocol.reply_index import raw_tokens

    q = quantities([t for t in raw_tokens(text) if t != ","])
    assert q and q[0].value == value and q[0].bound == bound


def test_the_blue_one_is_not_a_number():
    from core.protocol.reply_index import raw_tokens

    assert quantities(raw_tokens("the blue one")) == []


# ------------------------------------------------------------------------------- WebShop
# men's dress shirt: spread collar, navy, x-large, under $60
WS = "001377b5"


@pytest.mark.parametrize(
    "text,asked,slots",
    [
        ("navy please", (), {"option:0"}),
        ("I'd like it in navy blue, size XL", (), {"option:0", "option:1"}),
        ("extra large", ("option:1",), {"option:1"}),
        ("Under sixty dollars", (), {"price_upper"}),
        ("60 bucks max", (), {"price_upper"}),
        ("it needs to have a spread collar", (), {"attr:spread collar"}),
        ("Sure - navy, XL and no more than $60", (), {"option:0", "option:1", "price_upper"}),
        ("hmm, maybe navy?", ("option:0",), {"option:0"}),
        ("I don't care about the colour but it must be x-large", (), {"option:1"}),
        ("Navy, not the red one", (), {"option:0"}),
    ],
)
def test_webshop_paraphrases_and_multi_slot(text, asked, slots):
    r = read("webshop", WS, text, asked)
    assert r.act == "answer" and set(r.slots) == slots and not r.contradictions


@pytest.mark.parametrize(
    "text,slot,words",
    [
        ("under $80", "price_upper", "under $80"),
        ("twenty dollars max", "price_upper", "twenty dollars max"),
        ("I want it in black", "option:0", "black"),
        ("the red one", "option:0", "red"),
        ("no spread collar please", "attr:spread collar", "no spread collar"),
        ("anything but navy", "option:0", "navy"),
    ],
)
def test_webshop_contradictions(text, slot, words):
    r = read("webshop", WS, text)
    assert slot in said(r) and words in said(r)[slot]
    assert slot not in r.slots


def test_webshop_negated_alternative_is_not_a_contradiction():
    r = read("webshop", WS, "just not the red one, and not black either")
    assert not r.contradictions and not r.slots


@pytest.mark.parametrize(
    "text",
    [
        "not sure",
        "whatever you think is best",
        "No idea, honestly",
        "I'd rather not say",
        "doesn't matter to me",
        "up to you",
        "no preference",
    ],
)
def test_webshop_hedges_decline(text):
    r = read("webshop", WS, text, ("option:0",))
    assert r.act == "decline" and not r.slots and short(r.declined) == {"option:0"}


@pytest.mark.parametrize(
    "text,act",
    [
        ("yes go ahead", "confirm_yes"),
        ("Yeah, that sounds good to me", "confirm_yes"),
        ("Perfect, please do", "confirm_yes"),
        ("no, wait", "confirm_no"),
        ("Nope, that's not what I asked for", "confirm_no"),
        ("thanks!", "other"),
    ],
)
def test_webshop_yes_no_with_extra_words(text, act):
    assert read("webshop", WS, text).act == act


def test_no_with_a_correction_keeps_the_contradiction():
    r = read("webshop", WS, "no, I want it in black")
    assert r.act == "confirm_no" and said(r) == {"option:0": "black"}


# ------------------------------------------------------------------------- τ² retail
# modify pending order items: backpack navy→black/medium/polyester, order #W1850525,
# mastercard ending 4330 (other card ending 1950; other orders W6573944, W7532467)
RT = "00156d4d"


@pytest.mark.parametrize(
    "text,asked,slots",
    [
        ("It's order W1850525", (), {"order_id"}),
        ("#W1850525", ("order_id",), {"order_id"}),
        (
            "order number #W1850525, I want to swap the navy backpack for the black one in medium",
            (),
            {"order_id", "item_ids", "new_item_ids"},
        ),
        ("black, medium, polyester", ("new_item_ids",), {"new_item_ids"}),
        ("Put it on my mastercard ending in 4330", (), {"payment_method_id"}),
        ("the card that ends with 4330 please", (), {"payment_method_id"}),
    ],
)
def test_retail_paraphrases(text, asked, slots):
    r = read("tau2_retail", RT, text, asked)
    assert r.act == "answer" and short(r.slots) == slots and not r.contradictions


@pytest.mark.parametrize(
    "text,asked,slot",
    [
        ("W6573944", ("order_id",), "order_id"),
        ("the green one please", ("new_item_ids",), "new_item_ids"),
        ("use the one ending 1950", (), "payment_method_id"),
    ],
)
def test_retail_contradictions(text, asked, slot):
    r = read("tau2_retail", RT, text, asked)
    assert slot in said(r) and slot not in short(r.slots)


def test_retail_declines_and_confirmations():
    assert read("tau2_retail", RT, "I don't remember the order number", ("order_id",)).act == (
        "decline"
    )
    assert read("tau2_retail", RT, "yes that's right").act == "confirm_yes"
    assert read("tau2_retail", RT, "no, that's the wrong order").act == "confirm_no"


# cancel pending order #W4868018, reason "no longer needed"
RC = "0205297e"


@pytest.mark.parametrize(
    "text", ["I no longer need it", "I don't need it anymore", "changed my mind, don't need it"]
)
def test_retail_reason_in_own_words_is_not_a_negation(text):
    r = read("tau2_retail", RC, text)
    assert short(r.slots) == {"reason"} and not r.contradictions


def test_retail_other_reason_contradicts():
    r = read("tau2_retail", RC, "I ordered it by mistake")
    assert said(r) == {"reason": "mistake"}


# ------------------------------------------------------------------------- τ² airline
# update flights: basic economy, HAT031 on 2024-05-19 + HAT038 on 2024-05-24, mastercard 9986,
# reservation Q6G336 (other reservation CSVMBD)
AF = "00748c4f"


@pytest.mark.parametrize(
    "text,asked,slots",
    [
        ("basic economy please", (), {"cabin"}),
        ("HAT031 on May 19th and HAT038 on the 24th of May", (), {"flights"}),
        ("the reservation is Q6G336", (), {"reservation_id"}),
        ("q6g336", ("reservation_id",), {"reservation_id"}),
        ("not business, basic economy", (), {"cabin"}),
        ("use my mastercard ending 9986, reservation Q6G336", (), {"payment_id", "reservation_id"}),
    ],
)
def test_airline_paraphrases(text, asked, slots):
    r = read("tau2_airline", AF, text, asked)
    assert r.act == "answer" and short(r.slots) == slots and not r.contradictions


def test_airline_contradictions():
    assert said(read("tau2_airline", AF, "I'd rather fly business actually")) == {
        "cabin": "business"
    }
    assert "reservation_id" in said(read("tau2_airline", AF, "reservation CSVMBD"))


# bags: 2 checked in total, 2 of them paid
AB = "0093c76f"


@pytest.mark.parametrize(
    "text,asked,slots",
    [
        ("two checked bags, both paid", (), {"total_baggages", "nonfree_baggages"}),
        ("I want 2 bags in total and 2 of them paid", (), {"total_baggages", "nonfree_baggages"}),
        ("two", ("total_baggages",), {"total_baggages"}),
        ("a couple of suitcases", (), {"total_baggages"}),
    ],
)
def test_airline_numbers_in_words(text, asked, slots):
    r = read("tau2_airline", AB, text, asked)
    assert short(r.slots) == slots and not r.contradictions


def test_airline_wrong_count_is_a_contradiction_with_the_words_used():
    r = read("tau2_airline", AB, "three bags")
    assert said(r) == {"total_baggages": "three bags"}


# ------------------------------------------------------------------------- the property
@lru_cache(maxsize=1)
def _pool() -> tuple[tuple[str, Intent], ...]:
    out = []
    for b in ("webshop", "tau2_retail", "tau2_airline"):
        graphs, _ = _bundled(b)
        for g in graphs[:25]:
            out += [(b, n) for n in g.nodes]
    return tuple(out)


@lru_cache(maxsize=1)
def _words() -> tuple[str, ...]:
    """Words people use, from every world's intents (so readings are not trivially empty)."""
    from core.protocol import hooks

    words: set[str] = set()
    for b, it in _pool()[::7]:
        w = load_world(b)
        for c in it.conditions:
            lex = hooks.slot_lexicon(w, c)
            for p in (*lex.values, *lex.alternatives[:5], lex.label):
                words.update(str(p).split())
    words.update("yes no not never under over twenty fifty $40 XL navy red , . ? maybe".split())
    return tuple(sorted(words))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pick=st.integers(min_value=0, max_value=10**6),
    words=st.lists(st.integers(min_value=0, max_value=10**6), min_size=0, max_size=14),
    asked=st.lists(st.text(min_size=1, max_size=30), max_size=3),
)
def test_never_a_slot_outside_the_current_intent(pick, words, asked):
    pool = _pool()
    benchmark, intent = pool[pick % len(pool)]
    vocab = _words()
    text = " ".join(vocab[i % len(vocab)] for i in words)
    own = [c.slot for c in intent.conditions]
    asked_all = [*asked, *own[: len(asked)]]
    r = read_reply(text, intent, load_world(benchmark), asked=asked_all)
    slots = set(own)
    assert r.act in REPLY_ACTS
    assert set(r.slots) <= slots
    assert {c.slot for c in r.contradictions} <= slots
    assert set(r.declined) <= slots & set(asked_all)
    assert not set(r.slots) & {c.slot for c in r.contradictions}
    for d in r.disclosures:
        assert d.value == intent.slot_map()[d.slot].value
