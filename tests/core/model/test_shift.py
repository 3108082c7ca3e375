"""Properties of the one shift rule (:mod:`core.model.shift`)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.model.intent import Condition, Intent, ShiftOperator
from core.model.shift import classify_shift, delta_slots, render_value, value_key

VALUES = st.one_of(
    st.integers(-3, 3),
    st.integers(-3, 3).map(float),
    st.sampled_from([0.5, 2.5, float("inf")]),
    st.booleans(),
    st.sampled_from(["x", "y", "3", '"x"']),
)
CONDITIONS = st.builds(
    Condition, slot=st.sampled_from(["a", "b", "c"]), op=st.sampled_from(["=", "<="]), value=VALUES
)


def _intent(conds: list[Condition], base: str = "g", env: str = "e") -> Intent:
    return Intent.build(benchmark="b", env_id=env, base=base, conditions=conds)


INTENTS = st.builds(
    _intent,
    st.lists(CONDITIONS, max_size=4),
    base=st.sampled_from(["g", "g", "g", "h"]),
)


def _floaty(i: Intent) -> Intent:
    """The same intent with every integer value written as a float."""
    conds = [
        c.model_copy(update={"value": float(c.value)})
        if isinstance(c.value, int) and not isinstance(c.value, bool)
        else c
        for c in i.conditions
    ]
    return i.model_copy(update={"conditions": tuple(conds)})


def _op(a: Intent, b: Intent) -> ShiftOperator | None:
    s = classify_shift(a, b)
    return None if s is None else s.operator


MIRROR = {
    ShiftOperator.REFINE: ShiftOperator.RELAX,
    ShiftOperator.RELAX: ShiftOperator.REFINE,
    ShiftOperator.SUBSTITUTE: ShiftOperator.SUBSTITUTE,
    ShiftOperator.PIVOT: ShiftOperator.PIVOT,
    None: None,
}


@given(INTENTS)
def test_an_intent_and_its_numeric_twin_are_no_edge(a: Intent) -> None:
    assert classify_shift(a, a) is None
    assert classify_shift(a, _floaty(a)) is None
    assert classify_shift(_floaty(a), a) is None
    assert delta_slots(a, _floaty(a)) == []


@given(INTENTS, INTENTS)
def test_numbers_compare_as_numbers_on_both_sides(a: Intent, b: Intent) -> None:
    want = classify_shift(a, b)
    assert classify_shift(_floaty(a), b) == want
    assert classify_shift(a, _floaty(b)) == want
    assert delta_slots(_floaty(a), b) == delta_slots(a, b)


@given(INTENTS, INTENTS)
def test_refine_mirrors_relax_and_the_rest_is_symmetric(a: Intent, b: Intent) -> None:
    assert _op(b, a) is MIRROR[_op(a, b)]
    assert delta_slots(a, b) == delta_slots(b, a)


@given(INTENTS, INTENTS)
def test_an_edge_within_a_base_is_a_real_difference(a: Intent, b: Intent) -> None:
    s = classify_shift(a, b)
    if s is None or s.operator is ShiftOperator.PIVOT:
        return
    slots = delta_slots(a, b)
    assert slots
    head, _, body = s.delta.partition(" ")
    assert head == {"refine": "added", "relax": "removed", "substitute": "changed"}[s.operator]
    assert body and all(part for part in body.split("; "))
    for slot in slots:
        assert slot in s.delta
    keys_a = {(c.slot, c.op, value_key(c.value)) for c in a.conditions}
    keys_b = {(c.slot, c.op, value_key(c.value)) for c in b.conditions}
    if s.operator is ShiftOperator.REFINE:
        assert keys_a < keys_b and body.count("; ") + 1 == len(keys_b - keys_a)
    elif s.operator is ShiftOperator.RELAX:
        assert keys_b < keys_a and body.count("; ") + 1 == len(keys_a - keys_b)
    else:
        pairs = {k[:2] for k in keys_a ^ keys_b}
        assert body.count("; ") + 1 == len(pairs) and " -> " in body


@given(INTENTS, INTENTS)
def test_pivot_is_exactly_a_change_of_base(a: Intent, b: Intent) -> None:
    assert (_op(a, b) is ShiftOperator.PIVOT) == (a.base != b.base)
    other_env = b.model_copy(update={"env_id": "elsewhere"})
    assert classify_shift(a, other_env) is None


def test_the_forty_and_forty_point_zero_case() -> None:
    p40 = Condition(slot="price_upper", op="<=", value=40)
    p40f = Condition(slot="price_upper", op="<=", value=40.0)
    p30 = Condition(slot="price_upper", op="<=", value=30)
    assert classify_shift(_intent([p40]), _intent([p40f])) is None
    got = classify_shift(_intent([p40f]), _intent([p30]))
    assert got == (ShiftOperator.SUBSTITUTE, "changed price_upper<= 40 -> 30")


def test_kinds_that_are_not_numbers_stay_apart() -> None:
    one, true, text = (Condition(slot="a", value=v) for v in (1, True, "1"))
    for x, y in ((one, true), (one, text), (true, text)):
        s = classify_shift(_intent([x]), _intent([y]))
        assert s is not None and s.operator is ShiftOperator.SUBSTITUTE, (x, y)
        assert s.delta == f"changed a= {render_value(x.value)} -> {render_value(y.value)}"


def test_operator_change_and_mixed_change_are_no_edge() -> None:
    le = Condition(slot="p", op="<=", value=3)
    ge = Condition(slot="p", op=">=", value=3)
    a, b = Condition(slot="a", value="x"), Condition(slot="a", value="y")
    extra = Condition(slot="c", value="z")
    assert classify_shift(_intent([le]), _intent([ge])) is None
    assert classify_shift(_intent([a]), _intent([b, extra])) is None


def test_repeated_slot_substitution_names_every_value() -> None:
    x1, x2, x3 = (Condition(slot="x", value=v) for v in ("1", "2", "3"))
    s = classify_shift(_intent([x1, x2]), _intent([x1, x3]))
    assert s == (ShiftOperator.SUBSTITUTE, 'changed x= "2" -> "3"')
