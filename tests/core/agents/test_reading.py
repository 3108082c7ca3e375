"""How a symbolic agent reads reply text (core.agents.reading): the world's phrasing, no ids."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.agents.reading import (
    ReplyReader,
    _find,
    _PhraseIndex,
    _shop_vocabulary,
    family_slots,
    named_write,
)
from core.envs.mock import load_mock_world
from core.envs.registry import load_world
from core.model.intent import Condition


def _reader(world):  # type: ignore[no-untyped-def]
    return ReplyReader(world, {t.name: t for t in world.tools()})


def test_mock_reply_is_read_by_its_phrasing() -> None:
    w = load_mock_world()
    r = _reader(w)
    slots = {s: ("<=" if s == "price_upper" else "=", []) for s in family_slots(w, [])}
    got = r.read("Right, so the colour should be teal and I can spend up to $40.", slots)
    assert {(c.slot, c.value) for c in got} == {("color", "teal"), ("price_upper", 40)}


def test_a_free_span_ends_where_the_clause_does() -> None:
    r = _reader(load_mock_world())
    got = r.read("the colour should be navy blue, thanks", {"color": ("=", [])})
    assert [(c.slot, c.value) for c in got] == [("color", "navy blue")]


@settings(max_examples=30, deadline=None)
@given(value=st.sampled_from(["teal", "crimson", "navy", "olive green"]))
def test_phrase_round_trip_on_the_mock(value: str) -> None:
    w = load_mock_world()
    text = w.phrase(Condition(slot="color", value=value)) + "."
    got = _reader(w).read(text, {"color": ("=", [])})
    assert [c.value for c in got] == [value]


def test_shop_option_slot_keeps_its_option_kind() -> None:
    w = load_world("webshop")
    r = _reader(w)
    scent = "with a rose scent" if w.catalogue.option_name_of("rose") == "scent" else None
    if scent is None:
        return
    slots = {"option:1": ("=", ["33.8 fl oz"])}
    got = r.read(f"Oh, and I should mention that {scent}, if that matters?", slots)
    assert all(c.slot != "option:1" or c.value != "rose" for c in got)
    assert any(c.value == "rose" for c in got)  # discovered as a new option slot


def test_tau2_ids_come_from_what_the_agent_saw() -> None:
    w = load_world("tau2_retail")
    r = _reader(w)
    slot = "arg:0:cancel_pending_order:order_id"
    got = r.read("Hmm, I think it's about my order #W3859019.", {slot: ("=", [])})
    assert [(c.slot, json.loads(str(c.value))) for c in got] == [(slot, "#W3859019")]
    reason = "arg:0:cancel_pending_order:reason"
    got = r.read("I ordered it by mistake.", {reason: ("=", [])})
    assert [json.loads(str(c.value)) for c in got] == ["ordered by mistake"]


def test_the_request_names_its_write_tool() -> None:
    w = load_world("tau2_retail")
    tools = {t.name: t for t in w.tools()}
    assert named_write("please modify pending order payment for me", tools) == (
        "modify_pending_order_payment"
    )
    assert named_write("hello there", tools) is None


def test_context_facts_in_plain_words() -> None:
    assert ReplyReader.context("Sure, my user id is omar_kowalski_6161.") == {
        "user_id": "omar_kowalski_6161"
    }


def test_flight_legs_are_read_from_their_tokens() -> None:
    w = load_world("tau2_airline")
    slot = "arg:0:update_reservation_flights:flights"
    text = "Hmm, I think the flights should be HAT045 on 2024-05-26 and HAT052 on 2024-05-27."
    (got,) = _reader(w).read(text, {slot: ("=", [])})
    legs = json.loads(str(got.value))
    assert legs == [
        {"date": "2024-05-26", "flight_number": "HAT045"},
        {"date": "2024-05-27", "flight_number": "HAT052"},
    ]


_PHRASE = st.text(alphabet="ab -(#1é", min_size=1, max_size=8).map(str.strip).filter(bool)


@settings(max_examples=200, deadline=None)
@given(
    phrases=st.lists(_PHRASE, max_size=12, unique=True),
    text=st.text(alphabet="ab -(#1é.", max_size=30),
)
def test_phrase_index_finds_what_a_full_scan_finds(phrases: list[str], text: str) -> None:
    index = _PhraseIndex(phrases)
    assert index.found_in(text) == [p for p in phrases if _find(p, text) >= 0]


def test_shop_vocabulary_comes_from_catalogue_aggregates() -> None:
    world = load_world("webshop")
    vocab = _shop_vocabulary(world)
    attrs = {a.lower() for p in world.catalogue.products for a in p.attributes}
    opts = {v.lower() for p in world.catalogue.products for vs in p.options.values() for v in vs}
    assert set(vocab.attributes.phrases) == attrs and set(vocab.options.phrases) == opts
    # a hyphenated feature is found (its first word is 'bpa', not 'bpa-free')
    hyphen = next((a for a in sorted(attrs) if "-" in a.split()[0]), None)
    if hyphen is not None:
        assert hyphen in vocab.attributes_in(f"i want it {hyphen} please")


def test_a_persons_plain_words_are_read_without_the_worlds_phrasing() -> None:
    """A person playing the user answers "Navy." or "130 bucks tops", not in template phrasing."""
    w = load_world("webshop")
    r = _reader(w)
    price = {"price_upper": ("<=", [])}
    for text in ("no more than a hundred and thirty dollars", "130 bucks tops.", "Max $130."):
        assert [(c.slot, c.value) for c in r.read(text, price)] == [("price_upper", 130)], text
    assert r.read("I'd spend whatever it takes, I have 3 kids.", price) == []
    kind = w.catalogue.option_name_of
    if kind("navy") != "color" or kind("large") != "size":
        return
    assert [(c.slot, c.value) for c in r.read("Navy.", {"option:0": ("=", [])})] == [
        ("option:0", "navy")
    ]
    got = r.read("Large.", {"option:1": ("=", ["small"])})  # the held value's kind: a size
    assert [(c.slot, c.value) for c in got] == [("option:1", "large")]
    assert r.read("I don't know.", {"option:0": ("=", []), **price}) == []
